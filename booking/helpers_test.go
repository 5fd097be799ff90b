package booking_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
	"salon/booking/bookingtest"
)

// fixture is the usual test world: a Moscow salon, a 60-minute service and
// three masters who do it, working 10:00-20:00 on the test day.
type fixture struct {
	*bookingtest.Env
	salon   *booking.Salon
	svc     *booking.SalonService
	masters []*booking.Master
	day     booking.Date
}

// testDay is the day most tests book on: the day after the pinned clock.
var testDay = booking.Date{Year: 2026, Month: 3, Day: 3}

func setup(t *testing.T, opts ...booking.Option) *fixture {
	t.Helper()
	t.Parallel()
	e := bookingtest.New(t, opts...)
	f := &fixture{Env: e, day: testDay}
	f.salon = e.Salon(t, booking.Salon{})
	f.svc = e.Service(t, f.salon, booking.SalonService{Name: "Haircut", DurationMin: 60})
	for range 3 {
		m := e.Master(t, f.salon, f.svc)
		e.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
		f.masters = append(f.masters, m)
	}
	return f
}

// at is wall-clock hh:mm on the test day in the salon's zone.
func (f *fixture) at(hhmm string) time.Time { return bookingtest.At(f.salon, f.day, hhmm) }

// req is a widget booking request for a new client.
func (f *fixture) req(m *booking.Master, hhmm string) booking.BookRequest {
	return booking.BookRequest{
		SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: m.ID, StartsAt: f.at(hhmm),
		Client: booking.ClientInput{Name: "Client", Phone: bookingtest.Phone()},
	}
}

// web is a context in which a visitor of the widget asks.
func web() context.Context { return booking.As(context.Background(), booking.Visitor()) }

// mustBook books r for a visitor of the widget.
func (f *fixture) mustBook(t *testing.T, r booking.BookRequest) *booking.Booking {
	t.Helper()
	return f.mustBookAs(t, booking.Visitor(), r)
}

// mustBookAs books r for the caller.
func (f *fixture) mustBookAs(t *testing.T, c booking.Caller, r booking.BookRequest) *booking.Booking {
	t.Helper()
	b, err := f.Svc.Book(booking.As(context.Background(), c), r)
	if err != nil {
		t.Fatalf("book %s: %v", r.StartsAt, err)
	}
	return b
}

// race runs fn(i) for i in [0, n) in n goroutines released at once from a
// barrier, and returns their errors by i.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	bookingtest.Race(n, func(i int) { errs[i] = fn(i) })
	return errs
}

// count splits errors into successes, slot-taken refusals and others.
func count(errs []error) (ok, taken int, other []error) {
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, booking.ErrSlotTaken):
			taken++
		default:
			other = append(other, err)
		}
	}
	return ok, taken, other
}

// assertNoOverlap checks the database itself: no two active bookings of one
// master overlap (service plus buffer), nor any two busy intervals (the
// finish after a processing gap too, computed here from the bookings
// rows, not read from master_busy), and master_busy holds exactly those
// intervals.
func assertNoOverlap(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var n, busy, missing int
	err := pool.QueryRow(context.Background(), `
		SELECT count(*) FROM bookings a JOIN bookings b
		  ON a.id < b.id AND a.salon_id = b.salon_id AND a.master_id = b.master_id
		 AND a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')
		 AND tstzrange(a.starts_at, booking_slot_end(a.starts_at, a.duration_min + a.buffer_min))
		  && tstzrange(b.starts_at, booking_slot_end(b.starts_at, b.duration_min + b.buffer_min))`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d overlapping pairs of active bookings in the database", n)
	}
	err = pool.QueryRow(context.Background(), `
		WITH busy AS (
		    SELECT id, 0 AS part, salon_id, master_id, starts_at s,
		           starts_at + make_interval(mins => duration_min + CASE WHEN finish_min > 0 THEN least(buffer_min, processing_min) ELSE buffer_min END) e
		    FROM bookings WHERE status IN ('pending', 'confirmed')
		    UNION ALL
		    SELECT id, 1, salon_id, master_id, starts_at + make_interval(mins => duration_min + processing_min),
		           starts_at + make_interval(mins => duration_min + processing_min + finish_min + buffer_min)
		    FROM bookings WHERE status IN ('pending', 'confirmed') AND finish_min > 0
		)
		SELECT (SELECT count(*) FROM busy a JOIN busy b ON (a.id, a.part) < (b.id, b.part) AND a.salon_id = b.salon_id
		          AND a.master_id = b.master_id AND tstzrange(a.s, a.e) && tstzrange(b.s, b.e)),
		       (SELECT count(*) FROM (
		          SELECT id, part, master_id, s, e FROM busy
		          EXCEPT SELECT booking_id, part, master_id, starts_at, booking_slot_end(starts_at, duration_min) FROM master_busy) x)
		     + (SELECT count(*) FROM master_busy) - (SELECT count(*) FROM busy)`).Scan(&busy, &missing)
	if err != nil {
		t.Fatal(err)
	}
	if busy != 0 || missing != 0 {
		t.Fatalf("%d overlapping pairs of busy intervals; master_busy differs from the bookings by %d rows", busy, missing)
	}
}

// activeBookings counts active bookings of a master.
func activeBookings(t *testing.T, pool *pgxpool.Pool, masterID int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings
		WHERE master_id = $1 AND status IN ('pending', 'confirmed')`, masterID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// assertReallyFree proves a slot free by inserting a booking there with raw
// SQL (so the constraint judges, not our code) and rolling back; it also
// checks that the slot lies inside a shift of the master.
func assertReallyFree(t *testing.T, f *fixture, s booking.Slot) {
	t.Helper()
	ctx := bookingtest.System()
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var inShift bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM shifts WHERE master_id = $1 AND starts_at <= $2 AND ends_at >= $3)`,
		s.MasterID, s.Start, s.End).Scan(&inShift); err != nil {
		t.Fatal(err)
	}
	if !inShift {
		t.Errorf("alternative %v is outside the master's shifts", s)
	}
	var clientID int64
	if err := tx.QueryRow(ctx, `INSERT INTO clients (salon_id, name, phone) VALUES ($1, 'probe', $2) RETURNING id`,
		f.salon.ID, bookingtest.Phone()).Scan(&clientID); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source)
		VALUES ($1, $2, $3, $4, $5, $6, 'confirmed', 'panel')`,
		f.salon.ID, s.MasterID, f.svc.ID, clientID, s.Start, int(s.End.Sub(s.Start).Minutes()))
	if err != nil {
		t.Errorf("alternative %v is not free: %v", s, err)
	}
}

// admin is a panel user (an admin) of the fixture's salon.
func (f *fixture) admin(id int64) booking.Caller {
	return booking.ByStaff(booking.User{ID: id, SalonID: f.salon.ID, Role: booking.RoleAdmin})
}

// get reads a booking as the system.
func (f *fixture) get(t *testing.T, id int64) *booking.View {
	t.Helper()
	v, err := f.Svc.BookingView(booking.As(context.Background(), booking.BySystem()), f.salon.ID, id)
	if err != nil {
		t.Fatalf("booking %d: %v", id, err)
	}
	return v
}

// runJobs runs River's workers of each service (a replica each), as salon
// serve does, until the test ends or the returned stop is called.
func runJobs(t testing.TB, pool *pgxpool.Pool, replicas ...*booking.Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stops []func()
	for _, svc := range replicas {
		workers := river.NewWorkers()
		booking.AddWorkers(workers, svc)
		c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}}, Workers: workers,
			FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		stops = append(stops, func() {
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			_ = c.Stop(sctx)
		})
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			for _, s := range stops {
				s()
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
