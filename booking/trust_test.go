package booking_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// Tests of the defects of issue 7, each failing on the code before it.

// ids lists the ids of views.
func ids(vs []booking.View) []int64 {
	var out []int64
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}

// Defect 1: a chat user who typed someone else's phone got that person's
// client record: their bookings, the right to change them, their
// notifications. A typed phone books and reveals nothing; only a proven
// phone (a contact shared by its owner) joins the identity to the record.
func TestTypedPhoneHandsNothingOver(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	const phone = "+79991112233"
	victim := f.req(f.masters[0], "11:00")
	victim.Client = booking.ClientInput{Name: "Victim", Phone: phone}
	web := f.mustBook(t, victim)

	attacker := booking.TelegramUser(666)
	r := f.req(f.masters[1], "12:00")
	r.Client = booking.ClientInput{Name: "Eve", Phone: phone}
	own := f.mustBookAs(t, booking.ByIdentity(attacker), r)
	if own.ClientID != web.ClientID || own.ContactName != "Eve" || own.Origin != attacker {
		t.Fatalf("typed-phone booking: %+v", own)
	}
	as := booking.ByIdentity(attacker)
	list, err := f.Svc.UpcomingBookings(booking.As(ctx, as), f.Clock.Now())
	if err != nil || !slices.Equal(ids(list), []int64{own.ID}) {
		t.Fatalf("the attacker's list: %v %v, want only their own booking %d", ids(list), err, own.ID)
	}
	if _, err := f.Svc.BookingView(booking.As(ctx, as), 0, web.ID); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("the attacker reads the victim's booking: %v", err)
	}
	if _, err := f.Svc.Cancel(booking.As(ctx, as), booking.CancelRequest{BookingID: web.ID}); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("the attacker cancels the victim's booking: %v", err)
	}
	if _, err := f.Svc.Reschedule(booking.As(ctx, as), booking.RescheduleRequest{BookingID: web.ID, StartsAt: f.at("15:00")}); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("the attacker moves the victim's booking: %v", err)
	}
	if c, _ := f.Svc.Client(ctx, f.salon.ID, web.ClientID); c.Name != "Victim" {
		t.Fatalf("the client record was renamed to %q", c.Name)
	}
	if _, err := f.Svc.IdentityClient(booking.As(ctx, booking.ByIdentity(attacker)), f.salon.ID); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("the attacker's identity joined a client: %v", err)
	}
	// The victim's booking changes: nobody is told on the attacker's chat
	// (no job at all: nobody is reachable).
	if _, err := f.Svc.Reschedule(booking.As(ctx, f.admin(1)), booking.RescheduleRequest{BookingID: web.ID, StartsAt: f.at("16:00")}); err != nil {
		t.Fatal(err)
	}
	if n := jobsFor(t, f, web.ID); n != 0 {
		t.Fatalf("%d notification jobs for the victim's booking, whose client is reachable nowhere", n)
	}

	// The owner of the phone proves it (a Telegram contact shared by its
	// owner): from then on their identity sees and may change every
	// booking of that client, and hears about them.
	owner := booking.TelegramUser(777)
	r = f.req(f.masters[2], "13:00")
	r.Client = booking.ClientInput{Name: "Victim", Phone: phone, Verified: true}
	mine := f.mustBookAs(t, booking.ByIdentity(owner), r)
	list, err = f.Svc.UpcomingBookings(booking.As(ctx, booking.ByIdentity(owner)), f.Clock.Now())
	if err != nil || !slices.Equal(ids(list), []int64{own.ID, mine.ID, web.ID}) {
		t.Fatalf("the owner's list: %v %v", ids(list), err)
	}
	// ... and the attacker still sees only their own.
	if list, _ := f.Svc.UpcomingBookings(booking.As(ctx, as), f.Clock.Now()); !slices.Equal(ids(list), []int64{own.ID}) {
		t.Fatalf("the attacker's list after the owner's proof: %v", ids(list))
	}
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.ByIdentity(owner)), booking.CancelRequest{BookingID: web.ID}); err != nil {
		t.Fatalf("the owner cancels their web booking: %v", err)
	}
	// The owner made the change in their chat: nobody else is reachable,
	// so no notification (defect 9: it used to be told twice).
	if n := jobsFor(t, f, web.ID); n != 0 {
		t.Fatalf("%d notification jobs for a change whose only listener made it", n)
	}
	// When the salon moves the attacker's booking, the attacker (its
	// maker) and the owner (the client) are told: one job.
	if _, err := f.Svc.Reschedule(booking.As(ctx, f.admin(1)), booking.RescheduleRequest{BookingID: own.ID, StartsAt: f.at("18:00")}); err != nil {
		t.Fatal(err)
	}
	if n := jobsFor(t, f, own.ID); n != 1 {
		t.Fatalf("%d notification jobs for a salon's change of a chat booking, want 1", n)
	}
	// A web visitor typing the same phone books, and learns nothing
	// either: the answer carries only their own booking and token.
	v := f.req(f.masters[0], "17:00")
	v.Client = booking.ClientInput{Name: "Someone", Phone: phone}
	vb := f.mustBook(t, v)
	if vb.ContactName != "Someone" {
		t.Fatalf("contact name %q", vb.ContactName)
	}
	if _, err := f.Svc.BookingView(booking.As(ctx, booking.ByToken(vb.ManageToken)), 0, web.ID); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("a token opens another booking of the same phone: %v", err)
	}
}

// jobsFor counts the notification jobs written for a booking.
func jobsFor(t *testing.T, f *fixture, bookingID int64) int {
	t.Helper()
	var n int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'booking_notify'
		AND (args->>'booking_id')::bigint = $1`, bookingID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Defect 3: moving one booking to different masters at once (and
// cancelling it meanwhile) deadlocked and answered 500: the retry took a
// new master's lock while holding the old one. Locks are now taken all at
// once, in one order; contention queues or answers a kind, never an
// internal error.
func TestRaceMovesBetweenMastersNeverDeadlock(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	ms := f.masters
	for round := range 6 {
		x := f.mustBook(t, f.req(ms[0], "10:00"))
		y := f.mustBook(t, f.req(ms[1], "11:00"))
		z := f.mustBook(t, f.req(ms[2], "12:00"))
		bks := []*booking.Booking{x, y, z}
		times := []string{"13:00", "14:00", "15:00", "16:00"}
		const n = 24
		errs := race(n, func(i int) error {
			b := bks[i%len(bks)]
			if i%8 == 7 {
				_, err := f.Svc.Cancel(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID})
				return err
			}
			_, err := f.Svc.Reschedule(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.RescheduleRequest{BookingID: b.ID, MasterID: ms[(i/3)%len(ms)].ID, StartsAt: f.at(times[i%len(times)])})
			return err
		})
		for i, err := range errs {
			switch {
			case err == nil, errors.Is(err, booking.ErrSlotTaken), errors.Is(err, booking.ErrConflict):
			default:
				t.Fatalf("round %d, request %d: %v (want success, slot taken or conflict)", round, i, err)
			}
		}
		assertNoOverlap(t, f.Pool)
		if _, err := f.Pool.Exec(ctx, `UPDATE bookings SET status = 'cancelled' WHERE salon_id = $1`, f.salon.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// Defect 4: moving a booking to another master kept the old master's price.
func TestRescheduleTakesTheNewMastersPrice(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	cheap, dear := f.masters[0], f.masters[1]
	if err := f.Svc.SetOffers(ctx, f.salon.ID, cheap.ID, []booking.Offer{{ServiceID: f.svc.ID, Price: 100000}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.SetOffers(ctx, f.salon.ID, dear.ID, []booking.Offer{{ServiceID: f.svc.ID, Price: 300000, DurationMin: 90}}); err != nil {
		t.Fatal(err)
	}
	b := f.mustBook(t, f.req(cheap, "10:00"))
	if b.Price != 100000 {
		t.Fatalf("booked at %v", b.Price)
	}
	moved, err := f.Svc.Reschedule(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.RescheduleRequest{BookingID: b.ID, MasterID: dear.ID, StartsAt: f.at("12:00")})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Price != 300000 || moved.DurationMin != 90 || moved.MasterID != dear.ID {
		t.Fatalf("moved to the dear master: price %v, %d min", moved.Price, moved.DurationMin)
	}
	// Another time with the same master keeps the agreed price.
	again, err := f.Svc.Reschedule(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.RescheduleRequest{BookingID: b.ID, StartsAt: f.at("14:00")})
	if err != nil || again.Price != 300000 {
		t.Fatalf("same master, other time: %v %v", again, err)
	}
}

// Defect 12: text that reaches the database as a 500 (a NUL in a reason),
// and text that is no name, are refused in the core, naming the field.
func TestTextIsCheckedInTheCore(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	b := f.mustBook(t, f.req(f.masters[0], "10:00"))
	for _, reason := range []string{"a\x00b", "\xff\xfe", "ok\u202egnp", strings.Repeat("x", 501)} {
		_, err := f.Svc.Cancel(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID, Reason: reason})
		if !slices.Equal(fieldsOf(err), []string{"reason"}) {
			t.Errorf("reason %q: %v", reason, err)
		}
	}
	for _, name := range []string{"\u200b", "\u3164\u3164", "A\u2028B", "x\u2066y\u2069", "\x00"} {
		r := f.req(f.masters[1], "10:00")
		r.Client.Name = name
		if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), r); !slices.Equal(fieldsOf(err), []string{"client.name"}) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := f.Svc.CreateMaster(ctx, f.salon.ID, booking.Master{Name: "\u202eevil"}); !slices.Equal(fieldsOf(err), []string{"name"}) {
		t.Errorf("master name: %v", err)
	}
}

// Defect 13: manage tokens were kept readable (in the idempotency record)
// for a day. Nothing that grants access is stored readable: the key is a
// hash, and a replay derives the same token again.
func TestNothingThatGrantsAccessIsStoredReadable(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	r := f.req(f.masters[0], "10:00")
	r.IdempotencyKey = "key-0123456789-abcdef"
	b := f.mustBook(t, r)
	again := f.mustBook(t, r)
	if again.ID != b.ID || again.ManageToken != b.ManageToken || b.ManageToken == "" {
		t.Fatalf("replay: %v %q, first %v %q", again.ID, again.ManageToken, b.ID, b.ManageToken)
	}
	if _, err := f.Svc.BookingView(booking.As(ctx, booking.ByToken(again.ManageToken)), 0, b.ID); err != nil {
		t.Fatalf("the replayed token does not open the booking: %v", err)
	}
	var dump []byte
	if err := f.Pool.QueryRow(ctx, `SELECT convert_to(
		(SELECT string_agg(t::text, ' ') FROM idempotency_keys t) || (SELECT string_agg(t::text, ' ') FROM bookings t), 'UTF8')`).
		Scan(&dump); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{b.ManageToken, r.IdempotencyKey} {
		if bytes.Contains(dump, []byte(secret)) {
			t.Fatalf("%q is stored readable: %s", secret, dump)
		}
	}
}

// Speed defect: a loser near the booking horizon got 2 alternatives while
// 6 were free, because the same master was searched only forward. The
// search goes both ways and widens to the whole window.
func TestAlternativesSearchBothWays(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	s := e.Salon(t, booking.Salon{HorizonDays: 10})
	sv := e.Service(t, s, booking.SalonService{DurationMin: 60})
	m := e.Master(t, s, sv)
	today := s.Today(e.Clock.Now())
	last := today.AddDays(9) // the horizon's last day
	// The master works one hour a day on the last day and on six days
	// before it, far apart: only looking backwards finds them.
	for _, d := range []int{0, 1, 2, 3, 4, 5} {
		e.Shift(t, s, m, today.AddDays(1+d), 1, "10:00", "11:00")
	}
	e.Shift(t, s, m, last, 1, "10:00", "11:00")
	at := bookingtest.At(s, last, "10:00")
	r := booking.BookRequest{SalonID: s.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: at,
		Client: booking.ClientInput{Name: "A", Phone: bookingtest.Phone()}}
	if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), r); err != nil {
		t.Fatal(err)
	}
	r.Client.Phone = bookingtest.Phone()
	_, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), r)
	var st *booking.SlotTakenError
	if !errors.As(err, &st) {
		t.Fatalf("want slot taken, got %v", err)
	}
	if len(st.Alternatives) != booking.MaxAlternatives {
		t.Fatalf("%d alternatives (%v), want %d: six free starts exist before", len(st.Alternatives), st.Alternatives, booking.MaxAlternatives)
	}
	for i, a := range st.Alternatives {
		if i > 0 && a.Start.Before(st.Alternatives[i-1].Start) {
			t.Fatalf("alternatives not in time order: %v", st.Alternatives)
		}
	}
}

// Defect 10: a request waited for a busy master without bound. The lock
// wait is bounded: past it the request answers ErrUnavailable and wrote
// nothing; a deadline does the same.
func TestLockWaitIsBounded(t *testing.T) {
	f := setup(t, booking.WithLockWait(200*time.Millisecond))
	ctx := bookingtest.System()
	m := f.masters[0]
	bookingtest.HoldMaster(t, f.Pool, m.ID)
	before := rowCounts(t, f)
	start := time.Now()
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), f.req(m, "10:00")); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("booking a master someone holds: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("answered after %v", took)
	}
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := booking.New(f.Pool, booking.WithClock(f.Clock.Now)).Book(booking.As(dctx, booking.Visitor()), f.req(m, "11:00")); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("past the deadline: %v", err)
	}
	if after := rowCounts(t, f); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("timed-out requests wrote: %v -> %v", before, after)
	}
	// Other masters are not held up.
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), f.req(f.masters[1], "10:00")); err != nil {
		t.Fatal(err)
	}
}

// Staff book past the clients' horizon and notice, and so are offered
// alternatives there: a taken 10:00 a hundred days ahead (horizon 60) is
// answered with that day's free times, not with times near the horizon or
// none; a client's alternatives stay within the horizon.
func TestStaffAlternativesPastTheHorizon(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	s := e.Salon(t, booking.Salon{HorizonDays: 60, MinNoticeMin: 120})
	sv := e.Service(t, s, booking.SalonService{DurationMin: 60})
	m := e.Master(t, s, sv)
	today := s.Today(e.Clock.Now())
	far := today.AddDays(100)
	e.Shift(t, s, m, today.AddDays(30), 1, "10:00", "12:00")
	e.Shift(t, s, m, far, 1, "09:00", "13:00")
	u, err := e.Svc.CreateUser(ctx, s.ID, "desk@alts.test", "password-desk", booking.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	staff := booking.As(context.Background(), booking.ByStaff(*u))
	r := booking.BookRequest{SalonID: s.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(s, far, "10:00"),
		Client: booking.ClientInput{Name: "A", Phone: bookingtest.Phone()}}
	if _, err := e.Svc.Book(staff, r); err != nil {
		t.Fatal(err)
	}
	r.Client.Phone = bookingtest.Phone()
	_, err = e.Svc.Book(staff, r)
	var st *booking.SlotTakenError
	if !errors.As(err, &st) || len(st.Alternatives) == 0 {
		t.Fatalf("staff, a taken time past the horizon: %v", err)
	}
	for _, a := range st.Alternatives {
		if booking.DateOf(a.Start.In(s.Location())) != far {
			t.Errorf("staff's alternative %s is not on %s", a.Start.In(s.Location()), far)
		}
	}
	// A client asking for a taken time inside the horizon is offered
	// times inside it only.
	r.StartsAt, r.Client.Phone = bookingtest.At(s, today.AddDays(30), "10:00"), bookingtest.Phone()
	if _, err := e.Svc.Book(staff, r); err != nil {
		t.Fatal(err)
	}
	r.Client.Phone = bookingtest.Phone()
	_, err = e.Svc.Book(booking.As(ctx, booking.Visitor()), r)
	if !errors.As(err, &st) {
		t.Fatalf("a client, a taken time: %v", err)
	}
	for _, a := range st.Alternatives {
		if !a.Start.Before(today.AddDays(60).Start(s.Location())) {
			t.Errorf("a client's alternative %s is past the horizon", a.Start.In(s.Location()))
		}
	}
}
