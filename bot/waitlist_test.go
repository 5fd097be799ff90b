package bot_test

import (
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestWaitForATimeInTheChat: Anna's Tuesday is full; a client joins the
// waiting list from the day list (sharing their phone when asked); a
// booking is cancelled; the freed time comes to the chat as a notice with
// a button, and one tap books it. A second tap of the same button books
// nothing more.
func TestWaitForATimeInTheChat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := bookingtest.System()
	var at15 *booking.Booking
	for _, hhmm := range []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00", "17:00", "18:00", "19:00"} {
		b, err := w.Svc.Book(sys, booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
			StartsAt: bookingtest.At(w.salon, testDay, hhmm), Client: booking.ClientInput{Name: "Busy", Phone: bookingtest.Phone()}})
		w.must(err)
		if hhmm == "15:00" {
			at15 = b
		}
	}
	u := w.tg.NewUser("Vera", "en")
	u.Send("/start studio")
	w.tap(u, "Haircut · 60 min")
	w.tap(u, "Anna")
	w.tap(u, "🔔 Wait for a time")
	w.see(u, "To tell you when a time frees up, we need your phone")
	u.ShareContact("+7 999 700-00-01")
	joined := w.see(u, "🔔 You are on the waiting list: Haircut, Anna")
	if !strings.Contains(joined.Text, "the first to tap books it") {
		t.Fatalf("joined: %q", joined.Text)
	}
	if n := w.count(t, `SELECT count(*) FROM waitlist_entries w JOIN clients c ON c.id = w.client_id
		WHERE c.phone = '+79997000001' AND w.status = 'waiting' AND w.master_id = $1 AND w.origin_channel = 'telegram'`, w.anna.ID); n != 1 {
		t.Fatalf("%d entries in the database, want 1", n)
	}
	_, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: at15.ID})
	w.must(err)
	n, err := w.Svc.OfferFreed(sys)
	w.must(err)
	if n != 1 {
		t.Fatalf("%d offers, want 1", n)
	}
	offer := w.see(u, "🔔 A time you are waiting for is free")
	if !strings.Contains(offer.Text, "When: Tue 3 Mar, 15:00") || !strings.Contains(offer.Text, "Master: Anna") {
		t.Fatalf("the offer: %q", offer.Text)
	}
	w.tap(u, "✅ Book this time")
	done := w.see(u, "✅ You are booked!")
	if !strings.Contains(done.Text, "Tue 3 Mar, 15:00") {
		t.Fatalf("booked: %q", done.Text)
	}
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id
		WHERE c.phone = '+79997000001' AND b.status = 'confirmed' AND b.starts_at = $1 AND b.source = 'bot'`,
		bookingtest.At(w.salon, testDay, "15:00")); n != 1 {
		t.Fatalf("%d bookings of the offer, want 1", n)
	}
	// The same button again: nothing more is booked.
	w.tap(u, "✅ Book this time")
	w.allAnswered()
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE master_id = $1 AND status = 'confirmed'`, w.anna.ID); n != 10 {
		t.Fatalf("%d of Anna's bookings, want 10", n)
	}
}
