package bot_test

import (
	"context"
	"fmt"
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
	w.toDays(u, "Anna")
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
	var take string // the button's data, to tap it again once it is gone
	for _, row := range offer.Inline {
		for _, b := range row {
			if b.Text == "✅ Book this time" {
				take = b.Data
			}
		}
	}
	// Tapped twice at once: booked once, said once, and the offer loses
	// its button.
	u.TapData(offer, take)
	u.TapData(offer, take)
	done := w.see(u, "✅ You are booked!")
	if !strings.Contains(done.Text, "Tue 3 Mar, 15:00") || len(done.Inline) == 0 || done.Inline[0][0].Text != "✅ I'll be there" {
		t.Fatalf("booked: %q %v, want it with Confirm, Move and Cancel", done.Text, done.Inline)
	}
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id
		WHERE c.phone = '+79997000001' AND b.status = 'confirmed' AND b.starts_at = $1 AND b.source = 'bot'`,
		bookingtest.At(w.salon, testDay, "15:00")); n != 1 {
		t.Fatalf("%d bookings of the offer, want 1", n)
	}
	// The same button again: nothing more is booked.
	u.TapData(offer, take)
	w.allAnswered()
	w.until("the offer's button gone, and 'booked already' said twice", func() bool {
		again := 0
		for _, c := range w.tg.Calls() {
			if c.Method == "answerCallbackQuery" && strings.Contains(c.Params["text"], "You have booked this time already") {
				again++
			}
		}
		for _, m := range u.Messages() {
			if m.ID == offer.ID && len(m.Inline) == 0 {
				return again == 2
			}
		}
		return false
	})
	if n := strings.Count(u.Dump(), "✅ You are booked!"); n != 1 {
		t.Fatalf("'You are booked' said %d times, want once:%s", n, u.Dump())
	}
	// A turn that made the booking but failed before saying it (its outbox
	// rows rolled back with it) is run again: it says the booking.
	if _, err := w.Pool.Exec(context.Background(), `DELETE FROM tg_outbox WHERE dedupe_key = $1`, fmt.Sprintf("screen:%d:%d", u.ID, offer.ID)); err != nil {
		t.Fatal(err)
	}
	u.TapData(offer, take)
	w.until("the booking said by the turn run again", func() bool { return strings.Count(u.Dump(), "✅ You are booked!") == 2 })
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE master_id = $1 AND status = 'confirmed'`, w.anna.ID); n != 10 {
		t.Fatalf("%d of Anna's bookings, want 10", n)
	}
}

// TestJoiningAHoldListSaysTheTimeIsHeld: a salon that holds a freed time
// for the first in line says so when a chat joins (not that the first to
// tap gets it).
func TestJoiningAHoldListSaysTheTimeIsHeld(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if _, err := w.Pool.Exec(context.Background(), `UPDATE salons SET waitlist_mode = 'hold' WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	u := w.tg.NewUser("Rita", "en")
	w.toDays(u, "Anna")
	w.tap(u, "🔔 Wait for a time")
	u.ShareContact("+7 999 700-00-02")
	if m := w.see(u, "🔔 You are on the waiting list"); !strings.Contains(m.Text, "held for whoever is first in line") {
		t.Fatalf("joined a hold list: %q", m.Text)
	}
}
