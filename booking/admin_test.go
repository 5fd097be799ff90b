package booking_test

import (
	"errors"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestCompletePast: confirmed bookings become completed once their day has
// ended in the salon's zone; no-shows, cancellations and today's stay.
func TestCompletePast(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{})
	sv := e.Service(t, salon, booking.SalonService{DurationMin: 60})
	m := e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now())
	e.Shift(t, salon, m, day, 2, "10:00", "20:00")
	book := func(d booking.Date, hhmm string) *booking.Booking {
		b, err := e.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID,
			StartsAt: bookingtest.At(salon, d, hhmm), Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	done, noShow, gone, later := book(day, "12:00"), book(day, "14:00"), book(day, "16:00"), book(day.AddDays(1), "12:00")
	// The evening of the day: nothing yet (the day has not ended).
	e.Clock.Set(bookingtest.At(salon, day, "23:30"))
	if n, err := e.Svc.CompletePast(ctx); err != nil || n != 0 {
		t.Fatalf("before midnight: %d %v", n, err)
	}
	if _, err := e.Svc.MarkNoShow(booking.As(ctx, booking.BySystem()), noShow.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.Cancel(booking.As(ctx, booking.BySystem()), booking.CancelRequest{BookingID: gone.ID}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Set(bookingtest.At(salon, day.AddDays(1), "00:10"))
	if n, err := e.Svc.CompletePast(ctx); err != nil || n != 1 {
		t.Fatalf("after midnight: %d %v, want 1", n, err)
	}
	want := map[int64]booking.Status{done.ID: booking.StatusCompleted, noShow.ID: booking.StatusNoShow,
		gone.ID: booking.StatusCancelled, later.ID: booking.StatusConfirmed}
	for id, st := range want {
		v, err := e.Svc.BookingView(booking.As(ctx, booking.BySystem()), 0, id)
		if err != nil || v.Status != st {
			t.Errorf("booking %d: %v %v, want %s", id, v.Status, err, st)
		}
	}
	// Its history says the platform did it.
	h, err := e.Svc.History(booking.As(ctx, booking.BySystem()), 0, done.ID)
	if err != nil || h[len(h)-1].Action != "completed" || h[len(h)-1].Actor.Kind != booking.ActorSystem {
		t.Errorf("history: %+v %v", h, err)
	}
	// Twice is once.
	if n, _ := e.Svc.CompletePast(ctx); n != 0 {
		t.Errorf("second sweep: %d", n)
	}
}

// TestApplyWeekIsAllOrNothing: a weekly template that would leave a booking
// outside working hours changes no day, and names every such booking.
func TestApplyWeekIsAllOrNothing(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{})
	sv := e.Service(t, salon, booking.SalonService{DurationMin: 60})
	m := e.Master(t, salon, sv)
	first := salon.Today(e.Clock.Now()).AddDays(1)
	e.Shift(t, salon, m, first, 14, "10:00", "20:00")
	var late []int64
	for _, d := range []int{2, 9} {
		b, err := e.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID,
			StartsAt: bookingtest.At(salon, first.AddDays(d), "18:00"), Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		late = append(late, b.ID)
	}
	var week [7][]booking.ShiftInput
	for d := range week {
		week[d] = []booking.ShiftInput{{Start: 9 * 60, End: 17 * 60}}
	}
	before, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, first, 14)
	err := e.Svc.ApplyWeek(ctx, salon.ID, m.ID, first, first.AddDays(13), week)
	var lb *booking.LostBookingsError
	if !errors.As(err, &lb) || !errors.Is(err, booking.ErrConflict) || len(lb.Bookings) != 2 ||
		lb.Bookings[0].ID != late[0] || lb.Bookings[1].ID != late[1] {
		t.Fatalf("ApplyWeek: %v, want both late bookings named", err)
	}
	after, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, first, 14)
	if len(after) != len(before) || !after[0].Start.Equal(before[0].Start) {
		t.Fatal("a refused template changed shifts")
	}
	// Ending at 19:00 keeps them: every day is replaced.
	for d := range week {
		week[d] = []booking.ShiftInput{{Start: 9 * 60, End: 19 * 60}}
	}
	week[time.Sunday] = nil
	if err := e.Svc.ApplyWeek(ctx, salon.ID, m.ID, first, first.AddDays(13), week); err != nil {
		t.Fatal(err)
	}
	after, _ = e.Svc.Shifts(ctx, salon.ID, m.ID, first, 14)
	if len(after) != 12 || after[0].Start.In(salon.Location()).Hour() != 9 {
		t.Errorf("after the template: %d shifts", len(after))
	}
}

// TestStaffAreHeldToTheirSalonAndRole: catalogue methods read the caller
// from the context.
func TestStaffAreHeldToTheirSalonAndRole(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	a, b := e.Salon(t, booking.Salon{}), e.Salon(t, booking.Salon{})
	owner, err := e.Svc.CreateUser(ctx, a.ID, "owner@a.test", "password-1", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := e.Svc.CreateUser(ctx, a.ID, "admin@a.test", "password-1", booking.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	asOwner, asAdmin := booking.As(ctx, booking.ByStaff(*owner)), booking.As(ctx, booking.ByStaff(*admin))
	if _, err := e.Svc.CreateService(asOwner, b.ID, booking.SalonService{Name: "X", DurationMin: 30}); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("owner of A creates a service in B: %v", err)
	}
	if _, err := e.Svc.CreateService(asAdmin, a.ID, booking.SalonService{Name: "X", DurationMin: 30}); !errors.Is(err, booking.ErrForbidden) {
		t.Errorf("admin creates a service: %v", err)
	}
	if _, err := e.Svc.CreateService(asOwner, a.ID, booking.SalonService{Name: "X", DurationMin: 30}); err != nil {
		t.Errorf("owner creates a service: %v", err)
	}
	if err := e.Svc.DeleteUser(asOwner, a.ID, owner.ID); !errors.Is(err, booking.ErrConflict) {
		t.Errorf("owner removes themselves: %v", err)
	}
	if err := e.Svc.DeleteUser(asOwner, a.ID, admin.ID); err != nil {
		t.Errorf("owner removes an admin: %v", err)
	}
	if _, err := e.Svc.SessionUser(ctx, "x"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}
