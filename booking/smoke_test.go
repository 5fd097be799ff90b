package booking_test

import (
	"context"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

func TestSmoke(t *testing.T) {
	e := bookingtest.New(t)
	s := e.Salon(t, booking.Salon{})
	sv := e.Service(t, s, booking.SalonService{})
	m := e.Master(t, s, sv)
	day := booking.Date{2026, 3, 3}
	e.Shift(t, s, m, day, 1, "10:00", "20:00")
	b, err := e.Svc.Book(context.Background(), booking.BookRequest{SalonID: s.ID, ServiceID: sv.ID, MasterID: m.ID,
		StartsAt: bookingtest.At(s, day, "10:00"), Client: booking.ClientInput{Name: "Ann", Phone: "+79990001122"}, Source: booking.SourceWidget})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", b)
	slots, err := e.Svc.Slots(context.Background(), booking.SlotQuery{SalonID: s.ID, ServiceID: sv.ID, From: day})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(len(slots), slots[0])
}
