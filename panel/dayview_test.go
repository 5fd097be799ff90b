package panel_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"salon/booking"
	"salon/booking/bookingtest"
)

// counter counts the statements sent on a pool, batched ones included.
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (c *counter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) { c.n.Add(1) }
func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// countedWorld is the demo world on a pool whose statements are counted.
func countedWorld(t testing.TB) (*world, *counter) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(bookingtest.ConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{}
	cfg.ConnConfig.Tracer = cnt
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now))}
	return newWorldOn(t, e), cnt
}

// addMasters adds n masters to the demo salon, each working day 08:00-22:00
// with per bookings of 30 minutes.
func addMasters(t testing.TB, w *world, day booking.Date, n, per int) {
	t.Helper()
	ctx := bookingtest.System()
	sv := w.Service(t, w.salon, booking.SalonService{Name: fmt.Sprintf("Bench cut %d", time.Now().UnixNano()), DurationMin: 30})
	for range n {
		m := w.Master(t, w.salon, sv)
		w.Shift(t, w.salon, m, day, 1, "08:00", "22:00")
		for k := range per {
			at := bookingtest.At(w.salon, day, "08:00").Add(time.Duration(k) * 40 * time.Minute)
			if _, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: at,
				Client: booking.ClientInput{Name: fmt.Sprintf("Client %d", k), Phone: bookingtest.Phone()}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDayViewQueriesDoNotGrowWithMasters counts the statements one day
// view sends: the same with the 4 demo masters and with 20 more, each
// with 20 bookings (no N+1).
func TestDayViewQueriesDoNotGrowWithMasters(t *testing.T) {
	t.Parallel()
	w, cnt := countedWorld(t)
	b := w.owner()
	day := w.today().AddDays(1)
	path := "/panel/day/" + day.String()
	count := func() (int64, answer) {
		b.get(path) // warm: the catalogue cache, prepared statements
		before := cnt.n.Load()
		a := b.get(path)
		return cnt.n.Load() - before, a
	}
	small, a := count()
	if a.status != http.StatusOK {
		t.Fatalf("day view: %d", a.status)
	}
	addMasters(t, w, day, 20, 20)
	large, a := count()
	if a.status != http.StatusOK || strings.Count(a.body, `class="b `) < 400 {
		t.Fatalf("day view of 24 masters: %d, %d bookings shown", a.status, strings.Count(a.body, `class="b `))
	}
	t.Logf("statements per day view: %d with 4 masters, %d with 24 masters and 400 more bookings", small, large)
	if large != small {
		t.Errorf("the day view sends %d statements with 24 masters, %d with 4: it grows with the masters", large, small)
	}
	// The poll of an unchanged view is one statement beside the session's.
	v := pollURL(t, a.body)
	before := cnt.n.Load()
	if p := b.get(v); p.status != http.StatusNoContent {
		t.Fatalf("poll of an unchanged day: %d", p.status)
	}
	t.Logf("statements per unchanged poll: %d", cnt.n.Load()-before)
}

func pollURL(t testing.TB, body string) string {
	i := strings.Index(body, `hx-get="`)
	if i < 0 {
		t.Fatal("no poll URL on the day view")
	}
	rest := body[i+len(`hx-get="`):]
	return strings.ReplaceAll(rest[:strings.Index(rest, `"`)], "&amp;", "&")
}

// BenchmarkDayView renders the day view of a salon with 20 masters and
// 400 bookings that day, through HTTP on a loopback port (session, salon,
// the calendar's queries, the grid, the template), against a bare SELECT of
// the same 400 bookings on the same pool, interleaved. Reported: the
// median of the per-round ratios view-time / select-time, and each side's
// median time.
func BenchmarkDayView(b *testing.B) {
	w, _ := countedWorld(b)
	day := w.today().AddDays(1)
	addMasters(b, w, day, 20, 20)
	c := w.owner()
	loc := w.salon.Location()
	path := "/panel/day/" + day.String()
	if a := c.get(path); strings.Count(a.body, `class="b `) < 400 {
		b.Fatalf("the day view shows %d bookings", strings.Count(a.body, `class="b `))
	}
	ctx := bookingtest.System()
	bare := func() {
		rows, err := w.Pool.Query(ctx, `SELECT * FROM bookings WHERE salon_id = $1 AND starts_at >= $2 AND starts_at < $3`,
			w.salon.ID, day.Start(loc), day.AddDays(1).Start(loc))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				b.Fatal(err)
			}
			n++
		}
		rows.Close()
		if n < 400 {
			b.Fatalf("%d bookings", n)
		}
	}
	view := func() {
		if a := c.get(path); a.status != http.StatusOK {
			b.Fatalf("day view: %d", a.status)
		}
	}
	const per = 20
	var ratios, views, selects []float64
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		for range per {
			bare()
		}
		t1 := time.Now()
		for range per {
			view()
		}
		t2 := time.Now()
		s, v := t1.Sub(t0).Seconds()/per, t2.Sub(t1).Seconds()/per
		ratios, views, selects = append(ratios, v/s), append(views, v*1000), append(selects, s*1000)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(ratios), "view/select")
	b.ReportMetric(median(views), "view-ms")
	b.ReportMetric(median(selects), "select-ms")
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
