package bookingtest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"salon/booking"
)

// Clock is a settable clock for booking.WithClock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Env is a booking service on a database of its own, with a clock.
type Env struct {
	Pool  *pgxpool.Pool
	Svc   *booking.Service
	Clock *Clock
}

// DefaultNow is where Env's clock starts: a Monday morning in Moscow.
var DefaultNow = time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC) // 09:00 MSK

// New returns an Env on a fresh database with its clock at DefaultNow; opts
// are passed on to booking.New.
func New(t testing.TB, opts ...booking.Option) *Env {
	t.Helper()
	pool := Pool(t)
	clock := NewClock(DefaultNow)
	return &Env{Pool: pool, Clock: clock, Svc: booking.New(pool, append([]booking.Option{booking.WithClock(clock.Now)}, opts...)...)}
}

// System is a context in which the platform itself asks (booking.BySystem):
// for setting up a test's world, and for tests that act as the jobs do.
func System() context.Context { return booking.As(context.Background(), booking.BySystem()) }

var uniq atomic.Int64

// Salon creates a salon; zero fields of in take test defaults (a unique
// slug, Europe/Moscow) or CreateSalon's (no minimum notice, no cutoff).
func (e *Env) Salon(t testing.TB, in booking.Salon) *booking.Salon {
	t.Helper()
	if in.Slug == "" {
		in.Slug = fmt.Sprintf("salon-%d", uniq.Add(1))
	}
	if in.Name == "" {
		in.Name = "Salon " + in.Slug
	}
	if in.Timezone == "" {
		in.Timezone = "Europe/Moscow"
	}
	s, err := e.Svc.CreateSalon(System(), in)
	if err != nil {
		t.Fatalf("create salon: %v", err)
	}
	return s
}

// Service creates a service; zero fields take a 60-minute, 1500 default.
func (e *Env) Service(t testing.TB, salon *booking.Salon, in booking.SalonService) *booking.SalonService {
	t.Helper()
	if in.Name == "" {
		in.Name = fmt.Sprintf("Service %d", uniq.Add(1))
	}
	if in.DurationMin == 0 {
		in.DurationMin = 60
	}
	if in.Price == 0 {
		in.Price = 150000
	}
	sv, err := e.Svc.CreateService(System(), salon.ID, in)
	if err != nil {
		t.Fatalf("create service: %v", err)
	}
	return sv
}

// Master creates a master who does the given services.
func (e *Env) Master(t testing.TB, salon *booking.Salon, services ...*booking.SalonService) *booking.Master {
	t.Helper()
	offers := make([]booking.Offer, len(services))
	for i, sv := range services {
		offers[i] = booking.Offer{ServiceID: sv.ID}
	}
	m, err := e.Svc.CreateMaster(System(), salon.ID, booking.Master{Name: fmt.Sprintf("Master %d", uniq.Add(1))}, offers...)
	if err != nil {
		t.Fatalf("create master: %v", err)
	}
	return m
}

// Shift gives the master one shift a day on days [from, from+days), from
// start to end wall-clock ("10:00", "20:00"; "+02:00" ends the next day).
func (e *Env) Shift(t testing.TB, salon *booking.Salon, m *booking.Master, from booking.Date, days int, start, end string) {
	t.Helper()
	s, err1 := booking.ParseClock(start)
	en, err2 := booking.ParseShiftEnd(end)
	if err1 != nil || err2 != nil {
		t.Fatalf("shift times: %v %v", err1, err2)
	}
	for i := range days {
		if err := e.Svc.SetShifts(System(), salon.ID, m.ID, from.AddDays(i),
			[]booking.ShiftInput{{Start: s, End: en}}); err != nil {
			t.Fatalf("set shifts: %v", err)
		}
	}
}

// At returns the instant of wall-clock hh:mm on day in the salon's zone.
func At(salon *booking.Salon, day booking.Date, hhmm string) time.Time {
	c, err := booking.ParseClock(hhmm)
	if err != nil {
		panic(err)
	}
	return day.At(salon.Location(), int(c))
}

// Phone returns a distinct valid phone number.
func Phone() string { return fmt.Sprintf("+7900%07d", uniq.Add(1)) }

// Race runs fn(i) for i in [0, n) in n goroutines released at once from a
// barrier (all are started and waiting before any runs), and returns when
// all are done.
func Race(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// RoundTheClock creates n masters who do the services and work all day,
// every day of [from, from+days): capacity for load tests.
func (e *Env) RoundTheClock(t testing.TB, salon *booking.Salon, n int, from booking.Date, days int, services ...*booking.SalonService) []*booking.Master {
	t.Helper()
	ms := make([]*booking.Master, n)
	for i := range ms {
		ms[i] = e.Master(t, salon, services...)
		e.AllDay(t, salon, ms[i], from, days)
	}
	return ms
}

// AllDay makes the master work 00:00-24:00 on days [from, from+days). The
// core refuses a shift that long (over booking.MaxShift: a likely typing
// mistake), so the shifts are written to the table, as a salon's history
// from before that rule would be.
func (e *Env) AllDay(t testing.TB, salon *booking.Salon, m *booking.Master, from booking.Date, days int) {
	t.Helper()
	loc := salon.Location()
	for i := range days {
		d := from.AddDays(i)
		if _, err := e.Pool.Exec(context.Background(), `
			INSERT INTO shifts (salon_id, master_id, work_date, starts_at, ends_at) VALUES ($1, $2, $3, $4, $5)`,
			salon.ID, m.ID, d.String(), d.At(loc, 0), d.At(loc, 24*60)); err != nil {
			t.Fatalf("all-day shift: %v", err)
		}
	}
}

// HoldMaster takes the master's booking lock in a transaction of its own,
// as a long write on that master's calendar would, until release (or the
// end of t).
func HoldMaster(t testing.TB, pool *pgxpool.Pool, masterID int64) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('booking-master:' || $1::bigint, 0))`, masterID); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback(ctx) }) }
	t.Cleanup(release)
	return release
}

// WaitFor checks cond every 20 ms until it holds, or fails the test when
// d passes first.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// FreeAddr is a loopback address with a port nothing listens on now, for a
// server a test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
