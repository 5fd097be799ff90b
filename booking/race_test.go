package booking_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"salon/booking"
	"salon/booking/bookingtest"
)

func TestRaceSameSlotOneWinner(t *testing.T) {
	f := setup(t)
	const n = 50
	a := f.masters[0]
	errs := race(n, func(i int) error {
		_, err := f.Svc.Book(web(), f.req(a, "14:00"))
		return err
	})
	ok, taken, other := count(errs)
	if ok != 1 || taken != n-1 || len(other) > 0 {
		t.Fatalf("ok=%d taken=%d other=%v; want 1, %d, none", ok, taken, other, n-1)
	}
	if got := activeBookings(t, f.Pool, a.ID); got != 1 {
		t.Fatalf("%d active bookings in the database, want 1", got)
	}
	assertNoOverlap(t, f.Pool)

	seen := map[booking.Slot]bool{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var st *booking.SlotTakenError
		if !errors.As(err, &st) {
			t.Fatalf("error %v is not a *SlotTakenError", err)
		}
		if len(st.Alternatives) < 3 {
			t.Fatalf("only %d alternatives: %v", len(st.Alternatives), st.Alternatives)
		}
		if st.Alternatives[0].MasterID != a.ID {
			t.Errorf("first alternative %v is not the same master", st.Alternatives[0])
		}
		for _, s := range st.Alternatives {
			if s.MasterID == a.ID && s.Start.Equal(f.at("14:00")) {
				t.Errorf("the taken slot is offered as an alternative")
			}
			seen[s] = true
		}
	}
	for s := range seen {
		assertReallyFree(t, f, s)
	}
	// The nearest same-master times around a 14:00-15:00 booking, then the
	// other two masters at 14:00.
	var st *booking.SlotTakenError
	for _, err := range errs {
		if errors.As(err, &st) {
			break
		}
	}
	want := []string{"12:45", "13:00", "15:00", "15:15"}
	for i, w := range want {
		if got := st.Alternatives[i]; got.MasterID != a.ID || !got.Start.Equal(f.at(w)) {
			t.Errorf("alternative %d = %v, want master %d at %s", i, got, a.ID, w)
		}
	}
	for i, m := range f.masters[1:] {
		if got := st.Alternatives[4+i]; got.MasterID != m.ID || !got.Start.Equal(f.at("14:00")) {
			t.Errorf("alternative %d = %v, want master %d at 14:00", 4+i, got, m.ID)
		}
	}
}

func TestRaceOverlappingUnequalIntervals(t *testing.T) {
	f := setup(t)
	a := f.masters[0]
	ctx := bookingtest.System()
	// Services of different lengths whose intervals all contain 13:00-13:15.
	var reqs []booking.BookRequest
	offers := []booking.Offer{{ServiceID: f.svc.ID}}
	for i, c := range []struct {
		dur   int
		start string
	}{{60, "12:15"}, {60, "13:00"}, {30, "12:45"}, {90, "12:00"}, {120, "11:30"}, {15, "13:00"}, {45, "12:30"}, {180, "10:15"}} {
		sv := f.Service(t, f.salon, booking.SalonService{Name: fmt.Sprintf("S%d", i), DurationMin: c.dur})
		offers = append(offers, booking.Offer{ServiceID: sv.ID})
		r := f.req(a, c.start)
		r.ServiceID = sv.ID
		reqs = append(reqs, r)
	}
	if err := f.Svc.SetOffers(ctx, f.salon.ID, a.ID, offers); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		errs := race(len(reqs), func(i int) error {
			_, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), reqs[i])
			return err
		})
		ok, taken, other := count(errs)
		if ok != 1 || taken != len(reqs)-1 || len(other) > 0 {
			t.Fatalf("round %d: ok=%d taken=%d other=%v", round, ok, taken, other)
		}
		assertNoOverlap(t, f.Pool)
		if _, err := f.Pool.Exec(ctx, `UPDATE bookings SET status = 'cancelled' WHERE master_id = $1`, a.ID); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRaceAdjacentIntervalsAllAccepted(t *testing.T) {
	f := setup(t)
	a := f.masters[0]
	times := []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00", "17:00", "18:00", "19:00"}
	errs := race(len(times), func(i int) error {
		_, err := f.Svc.Book(web(), f.req(a, times[i]))
		return err
	})
	if ok, _, _ := count(errs); ok != len(times) {
		t.Fatalf("%d of %d adjacent bookings accepted: %v", ok, len(times), errs)
	}
	if got := activeBookings(t, f.Pool, a.ID); got != len(times) {
		t.Fatalf("%d bookings in the database", got)
	}
	assertNoOverlap(t, f.Pool)
}

func TestRaceDifferentMastersInParallel(t *testing.T) {
	f := setup(t)
	const n = 20
	var ms []*booking.Master
	for range n {
		m := f.Master(t, f.salon, f.svc)
		f.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
		ms = append(ms, m)
	}
	errs := race(n, func(i int) error {
		_, err := f.Svc.Book(web(), f.req(ms[i], "15:00"))
		return err
	})
	if ok, _, other := count(errs); ok != n {
		t.Fatalf("%d of %d accepted; errors %v", ok, n, other)
	}
	for _, m := range ms {
		if got := activeBookings(t, f.Pool, m.ID); got != 1 {
			t.Fatalf("master %d has %d bookings", m.ID, got)
		}
	}
}

// The constraint, not the lock, is the guarantee: writers that skip the lock
// (raw SQL, a forgetful future path) are refused too, even when they race.
func TestRawInsertWithoutLockIsRejected(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a := f.masters[0]
	b := f.mustBook(t, f.req(a, "10:00"))

	var clientID int64
	if err := f.Pool.QueryRow(ctx, `INSERT INTO clients (salon_id, name, phone) VALUES ($1, 'raw', $2) RETURNING id`,
		f.salon.ID, bookingtest.Phone()).Scan(&clientID); err != nil {
		t.Fatal(err)
	}
	insert := func(start string, status string) error {
		_, err := f.Pool.Exec(ctx, `INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source)
			VALUES ($1, $2, $3, $4, $5, 60, $6, 'panel')`, f.salon.ID, a.ID, f.svc.ID, clientID, f.at(start), status)
		return err
	}
	err := insert("10:30", "confirmed")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23P01" || pgErr.ConstraintName != "bookings_master_no_overlap" {
		t.Fatalf("raw overlapping insert: %v; want 23P01 on bookings_master_no_overlap", err)
	}
	if err := insert("10:30", "pending"); err == nil {
		t.Fatal("a pending booking overlapping a confirmed one was accepted")
	}
	for _, st := range []string{"cancelled", "completed", "no_show"} {
		if err := insert("10:30", st); err != nil {
			t.Fatalf("an inactive (%s) booking must not occupy time: %v", st, err)
		}
	}
	if err := insert("11:00", "confirmed"); err != nil {
		t.Fatalf("adjacent raw insert: %v", err)
	}

	// Racing raw inserts for one slot: the constraint alone lets one through.
	errs := race(20, func(int) error { return insert("15:00", "confirmed") })
	var ok int
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.As(err, &pgErr) || pgErr.Code != "23P01" {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d racing raw inserts succeeded, want 1", ok)
	}
	assertNoOverlap(t, f.Pool)
	_ = b
}

func TestCancelFreesSlot(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a := f.masters[0]
	b := f.mustBook(t, f.req(a, "12:00"))
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), f.req(a, "12:00")); !errors.Is(err, booking.ErrSlotTaken) {
		t.Fatalf("second booking: %v, want ErrSlotTaken", err)
	}
	c, err := f.Svc.Cancel(booking.As(ctx, booking.BySystem()), booking.CancelRequest{SalonID: f.salon.ID, BookingID: b.ID, Reason: "sick"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != booking.StatusCancelled || c.CancelReason != "sick" {
		t.Fatalf("cancelled booking: %+v", c)
	}
	// The freed slot is offered again and goes to exactly one of the racers.
	slots, err := f.Svc.Slots(ctx, booking.SlotQuery{SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: a.ID, From: f.day})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range slots {
		found = found || s.Start.Equal(f.at("12:00"))
	}
	if !found {
		t.Fatal("12:00 is not offered after the cancellation")
	}
	errs := race(20, func(int) error {
		_, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), f.req(a, "12:00"))
		return err
	})
	if ok, taken, other := count(errs); ok != 1 || taken != 19 || other != nil {
		t.Fatalf("ok=%d taken=%d other=%v", ok, taken, other)
	}
	assertNoOverlap(t, f.Pool)
}

// Two bookings rescheduled into each other's slots at the same moment: the
// moves serialise on the master locks, each finds its target taken, and
// neither booking is lost or moved.
func TestRaceRescheduleIntoEachOther(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a, b := f.masters[0], f.masters[1]
	for round := range 10 {
		var x, y *booking.Booking
		var to [2]booking.RescheduleRequest
		if round%2 == 0 { // same master, swapping times
			x, y = f.mustBook(t, f.req(a, "10:00")), f.mustBook(t, f.req(a, "11:00"))
			to[0] = booking.RescheduleRequest{StartsAt: y.StartsAt}
			to[1] = booking.RescheduleRequest{StartsAt: x.StartsAt}
		} else { // two masters, swapping masters at one time
			x, y = f.mustBook(t, f.req(a, "10:00")), f.mustBook(t, f.req(b, "10:00"))
			to[0] = booking.RescheduleRequest{StartsAt: x.StartsAt, MasterID: b.ID}
			to[1] = booking.RescheduleRequest{StartsAt: y.StartsAt, MasterID: a.ID}
		}
		ids := [2]int64{x.ID, y.ID}
		errs := race(2, func(i int) error {
			r := to[i]
			r.SalonID, r.BookingID = f.salon.ID, ids[i]
			_, err := f.Svc.Reschedule(ctx, r)
			return err
		})
		for i, err := range errs {
			if !errors.Is(err, booking.ErrSlotTaken) {
				t.Fatalf("round %d: reschedule %d: %v, want ErrSlotTaken", round, i, err)
			}
		}
		for _, want := range []*booking.Booking{x, y} {
			got := f.get(t, want.ID)
			if !got.Status.Active() || !got.StartsAt.Equal(want.StartsAt) || got.MasterID != want.MasterID {
				t.Fatalf("round %d: booking %d changed: %+v", round, want.ID, got)
			}
		}
		assertNoOverlap(t, f.Pool)
		if _, err := f.Pool.Exec(ctx, `UPDATE bookings SET status = 'cancelled' WHERE salon_id = $1`, f.salon.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// Racing moves into free time and into each other's freed slots: whatever
// the interleaving, every booking survives and nothing overlaps.
func TestRaceRescheduleChain(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a := f.masters[0]
	for round := range 10 {
		x, y := f.mustBook(t, f.req(a, "10:00")), f.mustBook(t, f.req(a, "11:00"))
		targets := []struct {
			id int64
			at string
		}{{x.ID, "12:00"}, {y.ID, "10:00"}}
		errs := race(2, func(i int) error {
			_, err := f.Svc.Reschedule(booking.As(ctx, booking.BySystem()), booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: targets[i].id,
				StartsAt: f.at(targets[i].at)})
			return err
		})
		if errs[0] != nil {
			t.Fatalf("round %d: moving x to free 12:00: %v", round, errs[0])
		}
		if errs[1] != nil && !errors.Is(errs[1], booking.ErrSlotTaken) {
			t.Fatalf("round %d: moving y: %v", round, errs[1])
		}
		if got := activeBookings(t, f.Pool, a.ID); got != 2 {
			t.Fatalf("round %d: %d active bookings, want 2", round, got)
		}
		assertNoOverlap(t, f.Pool)
		if _, err := f.Pool.Exec(ctx, `UPDATE bookings SET status = 'cancelled' WHERE salon_id = $1`, f.salon.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRaceOneNewClientManyMasters: one new phone booked with twenty
// masters at once: every booking is made, for one client record (the
// bookings that lose the client's insert find it and book again).
func TestRaceOneNewClientManyMasters(t *testing.T) {
	f := setup(t)
	ms := f.RoundTheClock(t, f.salon, 20, f.day, 1, f.svc)
	const phone = "+79997770000"
	errs := race(len(ms), func(i int) error {
		r := f.req(ms[i], "12:00")
		r.Client.Phone = phone
		_, err := f.Svc.Book(web(), r)
		return err
	})
	if ok, taken, other := count(errs); ok != len(ms) || taken != 0 || other != nil {
		t.Fatalf("ok=%d taken=%d other=%v", ok, taken, other)
	}
	var clients, bookings int
	if err := f.Pool.QueryRow(bookingtest.System(), `SELECT (SELECT count(*) FROM clients WHERE phone = $1),
		(SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = $1)`, phone).Scan(&clients, &bookings); err != nil {
		t.Fatal(err)
	}
	if clients != 1 || bookings != len(ms) {
		t.Fatalf("%d client records and %d bookings for one phone, want 1 and %d", clients, bookings, len(ms))
	}
}
