package booking_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// The reminder sweep's query costs the same whatever the salons' history:
// finding the same 60 due reminders among 5,000 bookings and among
// 5,000,000 (of 20 salons, most of them past, a client for every five;
// half the salons send SMS, so their clients' phones are read, and
// Telegram runs) takes at most half as long again (the median of 21
// rounds, each timing both databases one after the other, so the shared
// machine's load falls on both), and reads the same few pages of
// bookings. SALON_SCALE_BOOKINGS sets the larger count (CI runs
// 5,000,000).
func TestReminderSweepCostIsFlat(t *testing.T) {
	big := 5_000_000
	if v := os.Getenv("SALON_SCALE_BOOKINGS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		big = n
	}
	small := sweepWorld(t, 5000)
	began := time.Now()
	large := sweepWorld(t, big)
	loaded := time.Since(began)
	var ratios []float64
	var smallT, largeT []time.Duration
	for round := range 21 {
		var a, b sweepCost
		if round%2 == 0 {
			a, b = small.cost(t), large.cost(t)
		} else {
			b, a = large.cost(t), small.cost(t)
		}
		if a.rows != 60 || b.rows != 60 {
			t.Fatalf("%d and %d due, want 60", a.rows, b.rows)
		}
		ratios = append(ratios, b.took.Seconds()/a.took.Seconds())
		smallT, largeT = append(smallT, a.took), append(largeT, b.took)
		if round == 0 {
			t.Logf("buffers: %d (%d on bookings) among 5,000; %d (%d on bookings) among %d", a.buffers, a.onBookings, b.buffers, b.onBookings, big)
			// It reads the window's bookings only: a few pages, however
			// long the history.
			if b.onBookings > 3*max(a.onBookings, 4) {
				t.Errorf("the sweep read %d buffers of bookings among %d, %d among 5,000", b.onBookings, big, a.onBookings)
			}
		}
	}
	median := func(v []time.Duration) time.Duration { slices.Sort(v); return v[len(v)/2] }
	slices.Sort(ratios)
	ratio := ratios[len(ratios)/2]
	t.Logf("the sweep's query for 60 due: %v among 5,000 bookings, %v among %d (medians of 21); the median ratio x%.2f; %d bookings loaded in %v",
		median(smallT), median(largeT), big, ratio, big, loaded.Round(time.Second))
	// (A scan of the history would be x1000; the buffers above are the
	// exact measure, this the clock's, which a busy machine moves: a
	// CI run beside a browser read x1.61.)
	if ratio > 2 {
		t.Errorf("the sweep takes x%.2f as long with %d bookings", ratio, big)
	}
}

// sweepTest is a database of 20 salons with 60 reminders due and n
// bookings in all.
type sweepTest struct {
	e   *bookingtest.Env
	now time.Time
}

func sweepWorld(t *testing.T, n int) *sweepTest {
	t.Helper()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	var salons []*booking.Salon
	var services, masters []int64
	for range 20 {
		s := e.Salon(t, booking.Salon{})
		sv := e.Service(t, s, booking.SalonService{DurationMin: 30})
		m := e.Master(t, s, sv)
		salons, services, masters = append(salons, s), append(services, sv.ID), append(masters, m.ID)
		if len(salons)%2 == 0 { // half the salons send SMS reminders: their clients' phones are read
			if _, err := e.Svc.UpdateMessageSettings(ctx, s.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00",
				ReminderOffsets: []time.Duration{24 * time.Hour, 2 * time.Hour}, SMSKinds: []booking.MessageKind{booking.KindReminder}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := e.Clock.Now()
	// The due reminders: three bookings of each salon tomorrow (its
	// offsets, 24 h and 2 h, make the day-before one due within the
	// planning window).
	for i, s := range salons {
		for k := range 3 {
			if _, err := e.Svc.Book(ctx, booking.BookRequest{SalonID: s.ID, ServiceID: services[i], MasterID: masters[i],
				StartsAt: now.Add(20*time.Hour + time.Duration(k)*time.Hour), Source: booking.SourceImport,
				Client: booking.ClientInput{Name: "Due", Phone: bookingtest.Phone()}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// History: completed bookings before now, spread over the salons, a
	// client record for every five, loaded as a restore would (without the
	// audit trigger and key checks per row).
	conn, err := e.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), `SET session_replication_role = DEFAULT`) //nolint:errcheck
	ids := make([]int64, 0, 20)
	for _, s := range salons {
		ids = append(ids, s.ID)
	}
	past := n - 60
	var firstClient int64
	if err := conn.QueryRow(ctx, `
		WITH c AS (
		    INSERT INTO clients (salon_id, name, phone)
		    SELECT s.salon, 'Past', '+7906' || lpad(g::text, 7, '0')
		    FROM generate_series(0, $2::bigint / 5) g
		    JOIN unnest($1::bigint[]) WITH ORDINALITY AS s(salon, k) ON s.k = g % 20 + 1
		    RETURNING id)
		SELECT min(id) FROM c`, ids, past).Scan(&firstClient); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `
		INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source, price)
		SELECT s.salon, s.master, s.service, $6::bigint + g / 5,
		       $4::timestamptz - (g / 20 + 1) * interval '30 minutes', 30, 'completed', 'import', 0
		FROM generate_series(0, $5::bigint - 1) g
		JOIN unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS s(salon, master, service, k) ON s.k = g % 20 + 1`,
		ids, masters, services, now, past, firstClient); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE bookings, clients`); err != nil {
		t.Fatal(err)
	}
	return &sweepTest{e: e, now: now}
}

// sweepCost is one run of the sweep's query: its execution time, the
// buffers of its plan and of those on bookings (the table and its
// indexes), and its rows.
type sweepCost struct {
	took                      time.Duration
	buffers, onBookings, rows int
}

func (w *sweepTest) cost(t *testing.T) sweepCost {
	t.Helper()
	var plan []map[string]any
	if err := w.e.Pool.QueryRow(bookingtest.System(), `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+booking.DueSQL,
		w.now, 13*time.Hour, 20000, true, true).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	top := plan[0]["Plan"].(map[string]any)
	buffers := func(n map[string]any) int {
		return int(n["Shared Hit Blocks"].(float64) + n["Shared Read Blocks"].(float64))
	}
	c := sweepCost{took: time.Duration(plan[0]["Execution Time"].(float64) * float64(time.Millisecond)),
		buffers: buffers(top), rows: int(top["Actual Rows"].(float64))}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["Relation Name"] == "bookings" {
			c.onBookings += buffers(n) // its index scans are counted in it
		}
		if kids, ok := n["Plans"].([]any); ok {
			for _, k := range kids {
				walk(k.(map[string]any))
			}
		}
	}
	walk(top)
	return c
}
