package booking_test

import (
	"context"
	"errors"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestABroadcastOfferGoesToTheFirstTap: ten clients wait for master 0's
// day; the 14:00 booking is cancelled; the freed time is offered to the
// first three in join order (the salon's broadcast number); all ten tap at
// once: one booking, the others told it is taken (with alternatives), no
// overlap, and those without an offer get nothing to accept. A client who
// left is never offered; a time that matches nobody stays open.
func TestABroadcastOfferGoesToTheFirstTap(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	m := f.masters[0]
	// The day is full for master 0 from 10:00: the waiting clients want it.
	var booked []*booking.Booking
	for _, hhmm := range []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00"} {
		booked = append(booked, f.mustBook(t, f.req(m, hhmm)))
	}
	left, err := f.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: m.ID,
		From: f.day, To: f.day, Client: booking.ClientInput{Name: "Gone", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.LeaveWaitlist(booking.As(context.Background(), booking.ByToken(left.ManageToken)), left.ID); err != nil {
		t.Fatal(err)
	}
	var entries []*booking.WaitEntry
	for range 10 {
		e, err := f.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: m.ID,
			From: f.day, To: f.day, Client: booking.ClientInput{Name: "Waiting", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	// Someone waiting for the morning only is not offered 14:00.
	morning, err := f.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: f.salon.ID, ServiceID: f.svc.ID, From: f.day, To: f.day,
		Times: []booking.TimeWindow{{From: 9 * 60, To: 12 * 60}}, Client: booking.ClientInput{Name: "Early", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Cancel(sys, booking.CancelRequest{BookingID: booked[4].ID}); err != nil {
		t.Fatal(err)
	}
	n, err := f.Svc.OfferFreed(sys)
	if err != nil || n != 3 {
		t.Fatalf("offered %d (%v), want 3 (the broadcast number)", n, err)
	}
	if again, _ := f.Svc.OfferFreed(sys); again != 0 {
		t.Fatalf("a second run offered %d more", again)
	}
	read := func(e *booking.WaitEntry) *booking.WaitEntry {
		t.Helper()
		got, err := f.Svc.WaitlistEntry(booking.As(context.Background(), booking.ByToken(e.ManageToken)), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i, e := range append(append([]*booking.WaitEntry{left}, entries...), morning) {
		offers := len(read(e).Offers)
		want := 0
		if i >= 1 && i <= 3 {
			want = 1 // the first three who still wait, in join order
		}
		if offers != want {
			t.Fatalf("entry %d has %d offers, want %d", i, offers, want)
		}
	}
	errs := race(len(entries), func(i int) error {
		e := read(entries[i])
		if len(e.Offers) == 0 {
			return booking.ErrNotFound
		}
		_, err := f.Svc.AcceptOffer(booking.As(context.Background(), booking.ByToken(entries[i].ManageToken)), e.ID, e.Offers[0].ID)
		return err
	})
	ok, taken := 0, 0
	for i, err := range errs {
		var st *booking.SlotTakenError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &st):
			taken++
			if len(st.Alternatives) == 0 {
				t.Errorf("entry %d: taken without alternatives", i)
			}
		case errors.Is(err, booking.ErrNotFound) && i >= 3:
		case errors.Is(err, booking.ErrConflict):
			taken++ // the offer was gone before the tap reached it
		default:
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if ok != 1 || taken != 2 {
		t.Fatalf("%d booked and %d told it is taken, want 1 and 2", ok, taken)
	}
	if got := activeBookings(t, f.Pool, m.ID); got != 6 {
		t.Fatalf("%d active bookings of the master, want 6 (the freed time booked again once)", got)
	}
	assertNoOverlap(t, f.Pool)
	var statuses []string
	for _, e := range entries[:3] {
		statuses = append(statuses, read(e).Status)
	}
	booked1 := 0
	for _, s := range statuses {
		if s == booking.WaitBooked {
			booked1++
		}
	}
	if booked1 != 1 {
		t.Fatalf("entries %v: want exactly one booked, the others still waiting", statuses)
	}
}
