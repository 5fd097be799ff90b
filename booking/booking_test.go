package booking_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// rowCounts counts the rows of every table a booking call may write.
func rowCounts(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"clients", "bookings", "booking_events", "idempotency_keys", "shifts", "master_services"} {
		var n int
		if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// fieldOf returns the fields a validation error names.
func fieldsOf(err error) []string {
	var ve *booking.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	return slices.Sorted(maps.Keys(ve.Fields))
}

func TestBookValidation(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a, b := f.masters[0], f.masters[1]
	other := f.Service(t, f.salon, booking.SalonService{Name: "Nails", DurationMin: 30})
	if err := f.Svc.SetOffers(ctx, f.salon.ID, b.ID, []booking.Offer{{ServiceID: f.svc.ID}, {ServiceID: other.ID}}); err != nil {
		t.Fatal(err)
	}
	// Another salon's service and master must be invisible here.
	foreign := f.Salon(t, booking.Salon{})
	foreignSvc := f.Service(t, foreign, booking.SalonService{})
	foreignMaster := f.Master(t, foreign, foreignSvc)
	f.Shift(t, foreign, foreignMaster, f.day, 1, "10:00", "20:00")
	if err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 600, End: 1200, BreakStart: 780, BreakEnd: 840}}); err != nil {
		t.Fatal(err)
	}
	f.mustBook(t, f.req(a, "16:00")) // something to collide with below

	before := rowCounts(t, f)
	var asWho booking.Caller // who asks in a case: a visitor unless it says
	cases := []struct {
		name     string
		mod      func(r *booking.BookRequest)
		kind     error
		fields   []string
		notFound bool
	}{
		{"nothing", func(r *booking.BookRequest) { *r = booking.BookRequest{SalonID: f.salon.ID} }, booking.ErrInvalid,
			[]string{"client.phone", "client.name", "master_id", "service_id", "starts_at"}, false},
		{"no caller", func(r *booking.BookRequest) { asWho = booking.Caller{} }, booking.ErrForbidden, nil, false},
		{"a token cannot book", func(r *booking.BookRequest) { asWho = booking.ByToken("x") }, booking.ErrInvalid, []string{"caller"}, false},
		{"visitor as panel", func(r *booking.BookRequest) { r.Source = booking.SourcePanel }, booking.ErrInvalid, []string{"source"}, false},
		{"visitor verifies", func(r *booking.BookRequest) { r.Client.Verified = true }, booking.ErrInvalid, []string{"client.phone"}, false},
		{"unknown salon", func(r *booking.BookRequest) { r.SalonID = 999999 }, booking.ErrNotFound, nil, true},
		{"unknown service", func(r *booking.BookRequest) { r.ServiceID = 999999 }, booking.ErrInvalid, []string{"service_id"}, true},
		{"other salon's service", func(r *booking.BookRequest) { r.ServiceID = foreignSvc.ID }, booking.ErrInvalid, []string{"service_id"}, true},
		{"unknown master", func(r *booking.BookRequest) { r.MasterID = 999999 }, booking.ErrInvalid, []string{"master_id"}, true},
		{"other salon's master", func(r *booking.BookRequest) { r.MasterID = foreignMaster.ID }, booking.ErrInvalid, []string{"master_id"}, true},
		{"master does not do it", func(r *booking.BookRequest) { r.ServiceID = other.ID }, booking.ErrInvalid, []string{"master_id"}, false},
		{"past", func(r *booking.BookRequest) { r.StartsAt = bookingtest.DefaultNow.Add(-time.Hour) }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"before shift", func(r *booking.BookRequest) { r.StartsAt = f.at("09:00") }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"runs past shift end", func(r *booking.BookRequest) { r.StartsAt = f.at("19:30") }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"in the break", func(r *booking.BookRequest) { r.StartsAt = f.at("13:15") }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"runs into the break", func(r *booking.BookRequest) { r.StartsAt = f.at("12:30") }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"off the grid", func(r *booking.BookRequest) { r.StartsAt = f.at("10:07") }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"seconds", func(r *booking.BookRequest) { r.StartsAt = f.at("10:00").Add(time.Second) }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"day without shift", func(r *booking.BookRequest) { r.StartsAt = f.at("11:00").Add(24 * time.Hour) }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"beyond horizon", func(r *booking.BookRequest) { r.StartsAt = f.at("11:00").AddDate(0, 0, 90) }, booking.ErrInvalid, []string{"starts_at"}, false},
		{"bad phone", func(r *booking.BookRequest) { r.Client.Phone = "12ab" }, booking.ErrInvalid, []string{"client.phone"}, false},
		{"short phone", func(r *booking.BookRequest) { r.Client.Phone = "+7 123" }, booking.ErrInvalid, []string{"client.phone"}, false},
		{"no name", func(r *booking.BookRequest) { r.Client.Name = "  " }, booking.ErrInvalid, []string{"client.name"}, false},
		{"invisible name", func(r *booking.BookRequest) { r.Client.Name = "\u200b\u3164" }, booking.ErrInvalid, []string{"client.name"}, false},
		{"bidi name", func(r *booking.BookRequest) { r.Client.Name = "Anna\u202Egnp.exe" }, booking.ErrInvalid, []string{"client.name"}, false},
		{"NUL in notes", func(r *booking.BookRequest) { r.Notes = "a\x00b" }, booking.ErrInvalid, []string{"notes"}, false},
		{"key of spaces", func(r *booking.BookRequest) { r.IdempotencyKey = "   " }, booking.ErrInvalid, []string{"idempotency_key"}, false},
		{"key not UTF-8", func(r *booking.BookRequest) { r.IdempotencyKey = "k\xff" }, booking.ErrInvalid, []string{"idempotency_key"}, false},
		{"bad source", func(r *booking.BookRequest) { r.Source = "fax" }, booking.ErrInvalid, []string{"source"}, false},
		{"long key", func(r *booking.BookRequest) { r.IdempotencyKey = string(make([]byte, 300)) }, booking.ErrInvalid, []string{"idempotency_key"}, false},
		{"taken", func(r *booking.BookRequest) { r.StartsAt = f.at("16:30") }, booking.ErrSlotTaken, nil, false},
		{"taken, with a key", func(r *booking.BookRequest) { r.StartsAt = f.at("16:00"); r.IdempotencyKey = "k1" }, booking.ErrSlotTaken, nil, false},
	}
	for _, c := range cases {
		r := f.req(a, "11:00")
		asWho = booking.Visitor()
		c.mod(&r)
		_, err := f.Svc.Book(booking.As(context.Background(), asWho), r)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
			continue
		}
		if c.notFound != errors.Is(err, booking.ErrNotFound) {
			t.Errorf("%s: ErrNotFound is %v, want %v (%v)", c.name, !c.notFound, c.notFound, err)
		}
		if c.fields != nil {
			want := slices.Sorted(slices.Values(c.fields))
			if got := fieldsOf(err); !slices.Equal(got, want) {
				t.Errorf("%s: fields %v, want %v (%v)", c.name, got, want, err)
			}
		}
	}
	if after := rowCounts(t, f); !maps.Equal(before, after) {
		t.Fatalf("failed calls wrote rows: before %v, after %v", before, after)
	}

	// The admin panel may book off the grid and sooner than the notice.
	r := f.req(a, "10:07")
	if _, err := f.Svc.Book(booking.As(ctx, f.admin(1)), r); err != nil {
		t.Fatalf("panel booking off the grid: %v", err)
	}
}

func TestBookMinNotice(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	s := e.Salon(t, booking.Salon{MinNoticeMin: 120})
	sv := e.Service(t, s, booking.SalonService{})
	m := e.Master(t, s, sv)
	today := s.Today(e.Clock.Now()) // clock: 09:00 local
	e.Shift(t, s, m, today, 1, "09:00", "20:00")
	r := booking.BookRequest{SalonID: s.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(s, today, "10:45"),
		Client: booking.ClientInput{Name: "A", Phone: bookingtest.Phone()}}
	if _, err := e.Svc.Book(web(), r); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("booking 105 minutes ahead with 120 notice: %v", err)
	}
	r.StartsAt = bookingtest.At(s, today, "11:00")
	if _, err := e.Svc.Book(web(), r); err != nil {
		t.Fatalf("booking 120 minutes ahead: %v", err)
	}
	slots, err := e.Svc.Slots(web(), booking.SlotQuery{SalonID: s.ID, ServiceID: sv.ID, From: today})
	if err != nil {
		t.Fatal(err)
	}
	if !slots[0].Start.Equal(bookingtest.At(s, today, "12:00")) {
		t.Fatalf("first free slot %v, want 12:00 (11:00 is booked, earlier is too soon)", slots[0].Start)
	}
}

func TestBookResult(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	r := f.req(f.masters[0], "11:00")
	r.Client.Phone = "8 (999) 123-45-67"
	b := f.mustBook(t, r)
	if b.ID == 0 || b.Status != booking.StatusConfirmed || b.Source != booking.SourceWidget || b.DurationMin != 60 ||
		!b.EndsAt().Equal(f.at("12:00")) || b.Price != f.svc.Price || len(b.ManageToken) < 22 {
		t.Fatalf("booking: %+v", b)
	}
	c, err := f.Svc.Client(ctx, f.salon.ID, b.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Phone != "+79991234567" || c.Name != "Client" {
		t.Fatalf("client: %+v", c)
	}
	// The same phone in another form is the same client.
	r2 := f.req(f.masters[1], "11:00")
	r2.Client.Phone = "+7 999 123 45 67"
	if b2 := f.mustBook(t, r2); b2.ClientID != b.ClientID {
		t.Fatalf("second booking made client %d, want %d", b2.ClientID, b.ClientID)
	}
	got, err := f.Svc.BookingView(booking.As(ctx, booking.ByToken(b.ManageToken)), 0, b.ID)
	if err != nil || got.ID != b.ID || got.ClientName != "" || got.ContactName != "Client" {
		t.Fatalf("by token: %+v %v", got, err)
	}
	for _, c := range []booking.Caller{booking.ByToken(b.ManageToken + "x"), booking.ByToken(strings.Repeat("A", 32)),
		booking.ByIdentity(booking.TelegramUser(1)), booking.ByStaff(booking.User{ID: 1, SalonID: f.salon.ID + 1, Role: booking.RoleOwner})} {
		if _, err := f.Svc.BookingView(booking.As(ctx, c), 0, b.ID); !errors.Is(err, booking.ErrNotFound) {
			t.Fatalf("%+v reads another's booking: %v", c, err)
		}
	}
	var actorKind string
	var actorID int64
	if err := f.Pool.QueryRow(ctx, `SELECT created_by_kind, created_by_id FROM bookings WHERE id = $1`, b.ID).
		Scan(&actorKind, &actorID); err != nil {
		t.Fatal(err)
	}
	if actorKind != "client" || actorID != b.ClientID {
		t.Fatalf("created by %s:%d, want client:%d", actorKind, actorID, b.ClientID)
	}
}

func TestCancelRules(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	if _, err := f.Pool.Exec(ctx, `UPDATE salons SET cutoff_hours = 3 WHERE id = $1`, f.salon.ID); err != nil {
		t.Fatal(err)
	}
	b := f.mustBook(t, f.req(f.masters[0], "15:00"))
	other := f.mustBook(t, f.req(f.masters[1], "15:00"))
	cancel := func(c booking.Caller) (*booking.Booking, error) {
		return f.Svc.Cancel(booking.As(ctx, c), booking.CancelRequest{SalonID: f.salon.ID, BookingID: b.ID})
	}
	if _, err := cancel(booking.ByToken(other.ManageToken)); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("another client cancels: %v", err)
	}
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.BySystem()), booking.CancelRequest{SalonID: 999999, BookingID: b.ID}); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("wrong salon: %v", err)
	}
	f.Clock.Set(f.at("12:01")) // 2h59m before
	if _, err := cancel(booking.ByToken(b.ManageToken)); !errors.Is(err, booking.ErrTooLate) {
		t.Fatalf("client cancels past the cutoff: %v", err)
	}
	f.Clock.Set(f.at("11:59"))
	c, err := cancel(booking.ByToken(b.ManageToken))
	if err != nil || c.Status != booking.StatusCancelled {
		t.Fatalf("client cancels in time: %v %v", c, err)
	}
	if c2, err := cancel(booking.ByToken(b.ManageToken)); err != nil || c2.Status != booking.StatusCancelled {
		t.Fatalf("cancel again is a no-op: %v %v", c2, err)
	}
	// Defect: a cancelled booking was returned to whoever asked. Now
	// another client's credential finds nothing, cancelled or not.
	if got, err := cancel(booking.ByToken(other.ManageToken)); !errors.Is(err, booking.ErrNotFound) || got != nil {
		t.Fatalf("another client cancels a cancelled booking: %v %v", got, err)
	}
	f.Clock.Set(f.at("14:59"))
	if _, err := f.Svc.Cancel(booking.As(ctx, f.admin(7)), booking.CancelRequest{SalonID: f.salon.ID, BookingID: other.ID}); err != nil {
		t.Fatalf("admin cancels past the cutoff: %v", err)
	}
	var actorKind string
	var actorID int64
	if err := f.Pool.QueryRow(ctx, `SELECT actor_kind, actor_id FROM booking_events WHERE booking_id = $1 AND action = 'cancelled'`, other.ID).
		Scan(&actorKind, &actorID); err != nil || actorKind != "admin" || actorID != 7 {
		t.Fatalf("cancel event: %s %d %v", actorKind, actorID, err)
	}
}

func TestRescheduleRules(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a, b := f.masters[0], f.masters[1]
	x := f.mustBook(t, f.req(a, "10:00"))
	f.mustBook(t, f.req(a, "12:00"))
	move := func(at string, master int64, c booking.Caller) (*booking.Booking, error) {
		return f.Svc.Reschedule(booking.As(ctx, c), booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: x.ID, StartsAt: f.at(at), MasterID: master})
	}
	client := booking.ByToken(x.ManageToken)
	// Into its own old time, half an hour later: the booking does not collide with itself.
	got, err := move("10:30", 0, client)
	if err != nil || !got.StartsAt.Equal(f.at("10:30")) {
		t.Fatalf("move within own time: %v %v", got, err)
	}
	// Into a taken time: refused with alternatives, old time kept; its own
	// current time counts as free among the alternatives.
	_, err = move("11:45", 0, client)
	var st *booking.SlotTakenError
	if !errors.As(err, &st) || len(st.Alternatives) == 0 {
		t.Fatalf("move into taken time: %v", err)
	}
	if !slices.ContainsFunc(st.Alternatives, func(s booking.Slot) bool { return s.MasterID == a.ID && s.Start.Equal(f.at("11:00")) }) {
		t.Errorf("alternatives %v lack 11:00, which only the moving booking occupies", st.Alternatives)
	}
	if now := f.get(t, x.ID); !now.StartsAt.Equal(f.at("10:30")) || now.MasterID != a.ID {
		t.Fatalf("refused move changed the booking: %+v", now)
	}
	// To another master.
	got, err = move("12:00", b.ID, f.admin(1))
	if err != nil || got.MasterID != b.ID {
		t.Fatalf("move to another master: %v %v", got, err)
	}
	// Clients stay on the grid; outside shifts is refused for everyone.
	if _, err := move("12:05", 0, client); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("client off the grid: %v", err)
	}
	if _, err := move("21:00", 0, f.admin(1)); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("outside shift: %v", err)
	}
	// Cutoff.
	if _, err := f.Pool.Exec(ctx, `UPDATE salons SET cutoff_hours = 2 WHERE id = $1`, f.salon.ID); err != nil {
		t.Fatal(err)
	}
	f.Clock.Set(f.at("10:30"))
	if _, err := move("15:00", 0, client); !errors.Is(err, booking.ErrTooLate) {
		t.Fatalf("client past cutoff: %v", err)
	}
	var n int
	if err := f.Pool.QueryRow(ctx, `SELECT count(*) FROM booking_events WHERE booking_id = $1 AND action = 'rescheduled'`, x.ID).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rescheduled events, want 2 (%v)", n, err)
	}
}

func TestOutcomes(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	b := f.mustBook(t, f.req(f.masters[0], "10:00"))
	if _, err := f.Svc.MarkCompleted(booking.As(ctx, booking.ByToken(b.ManageToken)), b.ID); !errors.Is(err, booking.ErrForbidden) {
		t.Fatalf("client marks completed: %v", err)
	}
	if _, err := f.Svc.MarkCompleted(booking.As(ctx, f.admin(1)), b.ID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("completed before it started: %v", err)
	}
	f.Clock.Set(f.at("11:00"))
	got, err := f.Svc.MarkCompleted(booking.As(ctx, f.admin(1)), b.ID)
	if err != nil || got.Status != booking.StatusCompleted {
		t.Fatalf("mark completed: %v %v", got, err)
	}
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.BySystem()), booking.CancelRequest{SalonID: f.salon.ID, BookingID: b.ID}); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("cancel completed: %v", err)
	}
	if _, err := f.Svc.MarkNoShow(booking.As(ctx, f.admin(1)), b.ID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("no-show after completed: %v", err)
	}
	b2 := f.mustBook(t, f.req(f.masters[1], "11:00"))
	f.Clock.Set(f.at("11:20"))
	if got, err := f.Svc.MarkNoShow(booking.As(ctx, booking.BySystem()), b2.ID); err != nil || got.Status != booking.StatusNoShow {
		t.Fatalf("no-show: %v %v", got, err)
	}
	// A no-show frees nothing retroactively but no longer occupies time.
	f.Clock.Set(bookingtest.DefaultNow)
	if activeBookings(t, f.Pool, f.masters[1].ID) != 0 {
		t.Fatal("no-show booking still active")
	}
}

func TestDepositHoldExpires(t *testing.T) {
	f := setup(t, booking.WithOnlineDeposits())
	ctx := bookingtest.System()
	dep := f.Service(t, f.salon, booking.SalonService{Name: "Colour", DurationMin: 120, Price: 500000, Deposit: 100000})
	m := f.masters[0]
	if err := f.Svc.SetOffers(ctx, f.salon.ID, m.ID, []booking.Offer{{ServiceID: dep.ID}}); err != nil {
		t.Fatal(err)
	}
	r := f.req(m, "10:00")
	r.ServiceID = dep.ID
	b := f.mustBook(t, r)
	if b.Status != booking.StatusPending || !b.HoldExpiresAt.Equal(f.Clock.Now().Add(15*time.Minute)) || b.Deposit != 100000 {
		t.Fatalf("deposit booking: %+v", b)
	}
	// Without online deposits, the client's booking is confirmed (paid in the salon).
	plain := booking.New(f.Pool, booking.WithClock(f.Clock.Now))
	r3 := f.req(m, "16:00")
	r3.ServiceID = dep.ID
	if b3, err := plain.Book(booking.As(ctx, booking.Visitor()), r3); err != nil || b3.Status != booking.StatusConfirmed || b3.Deposit != 100000 {
		t.Fatalf("deposit booking without online deposits: %+v %v", b3, err)
	}
	// Admins book deposit services confirmed (paid in the salon).
	r2 := f.req(m, "14:00")
	r2.ServiceID = dep.ID
	if b2 := f.mustBookAs(t, f.admin(1), r2); b2.Status != booking.StatusConfirmed {
		t.Fatalf("panel deposit booking: %+v", b2)
	}
	if n, err := f.Svc.ExpireHolds(ctx); err != nil || n != 0 {
		t.Fatalf("expire before the hold ends: %d %v", n, err)
	}
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), r); !errors.Is(err, booking.ErrSlotTaken) {
		t.Fatalf("held slot: %v", err)
	}
	f.Clock.Advance(15 * time.Minute)
	if n, err := f.Svc.ExpireHolds(ctx); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	got := f.get(t, b.ID)
	if got.Status != booking.StatusCancelled || !got.HoldExpiresAt.IsZero() {
		t.Fatalf("expired booking: %+v", got)
	}
	r.Client.Phone = bookingtest.Phone()
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), r); err != nil {
		t.Fatalf("slot after hold expiry: %v", err)
	}
}

func TestSetShiftsKeepsBookingsCovered(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	a := f.masters[0]
	f.mustBook(t, f.req(a, "18:00"))
	before := rowCounts(t, f)
	err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 600, End: 1080}}) // 10-18
	if !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("shortening the day under a booking: %v", err)
	}
	if after := rowCounts(t, f); !maps.Equal(before, after) {
		t.Fatalf("refused schedule change wrote: %v -> %v", before, after)
	}
	// A break over the booking is refused too; a change that keeps it covered is fine.
	if err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 600, End: 1200, BreakStart: 1080, BreakEnd: 1110}}); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("break over a booking: %v", err)
	}
	if err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 720, End: 1260}}); err != nil {
		t.Fatalf("later day still covering the booking: %v", err)
	}
	// Overlapping shifts on one day, and a bad break, are invalid.
	if err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 600, End: 900}, {Start: 840, End: 1260}}); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("overlapping shifts: %v", err)
	}
	if err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 600, End: 900, BreakStart: 850, BreakEnd: 950}}); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("break outside shift: %v", err)
	}
	// An overnight shift that runs into the next day's shift.
	f.Shift(t, f.salon, a, f.day.AddDays(1), 1, "01:00", "09:00")
	if err := f.Svc.SetShifts(ctx, f.salon.ID, a.ID, f.day, []booking.ShiftInput{{Start: 720, End: 24*60 + 180}}); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("overnight shift into the next day's: %v", err)
	}
}

func TestSlotsQueries(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	buf := f.Service(t, f.salon, booking.SalonService{Name: "Buffered", DurationMin: 45, BufferMin: 15})
	a, b := f.masters[0], f.masters[1]
	if err := f.Svc.SetOffers(ctx, f.salon.ID, a.ID, []booking.Offer{{ServiceID: f.svc.ID}, {ServiceID: buf.ID, DurationMin: 30}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.SetOffers(ctx, f.salon.ID, b.ID, []booking.Offer{{ServiceID: buf.ID}}); err != nil {
		t.Fatal(err)
	}
	r := f.req(a, "10:00")
	r.ServiceID = buf.ID
	bk := f.mustBook(t, r)
	if bk.DurationMin != 30 || bk.BufferMin != 15 {
		t.Fatalf("per-master duration and buffer: %+v", bk)
	}
	slots, err := f.Svc.Slots(ctx, booking.SlotQuery{SalonID: f.salon.ID, ServiceID: buf.ID, MasterID: a.ID, From: f.day})
	if err != nil {
		t.Fatal(err)
	}
	// 10:00-10:30 plus a 15-minute buffer: next start 10:45; last 19:30.
	if !slots[0].Start.Equal(f.at("10:45")) || !slots[0].End.Equal(f.at("11:15")) || !slots[len(slots)-1].Start.Equal(f.at("19:30")) {
		t.Fatalf("slots %v ... %v", slots[0], slots[len(slots)-1])
	}
	any, err := f.Svc.Slots(ctx, booking.SlotQuery{SalonID: f.salon.ID, ServiceID: buf.ID, From: f.day, Days: 2})
	if err != nil {
		t.Fatal(err)
	}
	masters := map[int64]int{}
	for i, s := range any {
		masters[s.MasterID]++
		if i > 0 && s.Start.Before(any[i-1].Start) {
			t.Fatal("slots not ordered by time")
		}
	}
	if len(masters) != 2 || masters[f.masters[2].ID] != 0 {
		t.Fatalf("any-master slots by master: %v", masters)
	}
	for _, q := range []booking.SlotQuery{
		{SalonID: f.salon.ID, ServiceID: buf.ID, From: f.day, Days: 32},
		{SalonID: f.salon.ID, ServiceID: buf.ID},
		{SalonID: f.salon.ID, From: f.day},
		{SalonID: f.salon.ID, ServiceID: buf.ID, MasterID: f.masters[2].ID, From: f.day},
		{SalonID: f.salon.ID, ServiceID: 999999, From: f.day},
	} {
		if _, err := f.Svc.Slots(ctx, q); !errors.Is(err, booking.ErrInvalid) {
			t.Errorf("slots %+v: %v, want ErrInvalid", q, err)
		}
	}
	if _, err := f.Svc.Slots(ctx, booking.SlotQuery{SalonID: 999999, ServiceID: buf.ID, From: f.day}); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("unknown salon: %v", err)
	}
}

func TestCatalogValidation(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	if _, err := e.Svc.CreateSalon(ctx, booking.Salon{Slug: "A b", Name: "", Timezone: "Mars/Olympus"}); !slices.Equal(fieldsOf(err), []string{"name", "slug", "timezone"}) {
		t.Fatalf("salon fields: %v", err)
	}
	s := e.Salon(t, booking.Salon{Slug: "dup"})
	if _, err := e.Svc.CreateSalon(ctx, booking.Salon{Slug: "dup", Name: "x", Timezone: "UTC"}); !slices.Equal(fieldsOf(err), []string{"slug"}) {
		t.Fatalf("duplicate slug: %v", err)
	}
	if _, err := e.Svc.CreateService(ctx, s.ID, booking.SalonService{Name: "x", DurationMin: 1, Price: 100, Deposit: 200}); !slices.Equal(fieldsOf(err), []string{"deposit", "duration_min"}) {
		t.Fatalf("service fields: %v", err)
	}
	if _, err := e.Svc.CreateMaster(ctx, s.ID, booking.Master{Name: "M"}, booking.Offer{ServiceID: 999999}); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("master with unknown service: %v", err)
	}
	if ms, _ := e.Svc.Masters(ctx, s.ID, 0); len(ms) != 0 {
		t.Fatalf("failed CreateMaster left %v", ms)
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	s := e.Salon(t, booking.Salon{})
	u, err := e.Svc.CreateUser(ctx, s.ID, " Admin@Example.COM ", "correct horse", booking.RoleAdmin)
	if err != nil || u.Email != "admin@example.com" {
		t.Fatalf("create user: %v %v", u, err)
	}
	var hash string
	if err := e.Pool.QueryRow(ctx, `SELECT password_hash FROM users WHERE id = $1`, u.ID).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$") || strings.Contains(hash, "correct horse") {
		t.Fatalf("stored hash %q", hash)
	}
	if _, got, err := e.Svc.Login(web(), "admin@example.com", "correct horse", "192.0.2.1"); err != nil || got.ID != u.ID {
		t.Fatalf("log in: %v %v", got, err)
	}
	for _, c := range [][2]string{{"admin@example.com", "wrong horse"}, {"nobody@example.com", "correct horse"}, {"admin@example.com", ""}} {
		if _, _, err := e.Svc.Login(web(), c[0], c[1], "192.0.2.1"); !errors.Is(err, booking.ErrForbidden) {
			t.Errorf("authenticate %v: %v", c, err)
		}
	}
	if _, err := e.Svc.CreateUser(ctx, s.ID, "admin@example.com", "another one", booking.RoleOwner); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("duplicate email: %v", err)
	}
	if _, err := e.Svc.CreateUser(ctx, s.ID, "not an email", "short", "root"); !slices.Equal(fieldsOf(err), []string{"email", "password", "role"}) {
		t.Fatalf("bad user: %v", err)
	}
}
