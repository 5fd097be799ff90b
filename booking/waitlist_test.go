package booking_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// waitWorld is the fixture with master 0's day full from 10:00 to 16:00.
type waitWorld struct {
	*fixture
	booked []*booking.Booking
}

func newWaitWorld(t *testing.T, mode string, broadcast int) *waitWorld {
	t.Helper()
	f := setup(t)
	if _, err := f.Pool.Exec(context.Background(), `UPDATE salons SET waitlist_mode = $2, waitlist_broadcast_n = $3 WHERE id = $1`,
		f.salon.ID, mode, broadcast); err != nil {
		t.Fatal(err)
	}
	w := &waitWorld{fixture: f}
	for _, hhmm := range []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00"} {
		w.booked = append(w.booked, f.mustBook(t, f.req(f.masters[0], hhmm)))
	}
	return w
}

// join puts a new client on master 0's list for the test day.
func (w *waitWorld) join(t *testing.T, name string, times ...booking.TimeWindow) *booking.WaitEntry {
	t.Helper()
	e, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.masters[0].ID,
		From: w.day, To: w.day, Times: times, Client: booking.ClientInput{Name: name, Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// read reads an entry as its manage token's holder.
func (w *waitWorld) read(t *testing.T, e *booking.WaitEntry) *booking.WaitEntry {
	t.Helper()
	got, err := w.Svc.WaitlistEntry(booking.As(context.Background(), booking.ByToken(e.ManageToken)), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (w *waitWorld) accept(e *booking.WaitEntry, offer int64) (*booking.Booking, error) {
	return w.Svc.AcceptOffer(booking.As(context.Background(), booking.ByToken(e.ManageToken)), e.ID, offer)
}

// TestBroadcastOffersTheFirstInLine: a freed time is offered to the first
// three who wait for it (the salon's broadcast number), in join order;
// a client who left, or who waits for other hours, is never offered it;
// a freed time nobody waits for stays open, offered to no one.
func TestBroadcastOffersTheFirstInLine(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	sys := bookingtest.System()
	left := w.join(t, "Gone")
	if _, err := w.Svc.LeaveWaitlist(booking.As(context.Background(), booking.ByToken(left.ManageToken)), left.ID); err != nil {
		t.Fatal(err)
	}
	morning := w.join(t, "Early", booking.TimeWindow{From: 9 * 60, To: 12 * 60})
	var line []*booking.WaitEntry
	for range 5 {
		line = append(line, w.join(t, "Waiting"))
	}
	// Master 1's cancelled time: nobody waits for master 1.
	other := w.mustBook(t, w.req(w.masters[1], "14:00"))
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: other.ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 0 {
		t.Fatalf("master 1's freed time: %d offers (%v), want none", n, err)
	}
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: w.booked[4].ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 3 {
		t.Fatalf("offered %d (%v), want 3 (the broadcast number)", n, err)
	}
	if again, _ := w.Svc.OfferFreed(sys); again != 0 {
		t.Fatalf("a second run offered %d more", again)
	}
	for i, e := range append([]*booking.WaitEntry{left, morning}, line...) {
		got := w.read(t, e)
		want := 0
		if i >= 2 && i < 5 {
			want = 1 // the first three who still wait and want 14:00, in join order
		}
		if len(got.Offers) != want {
			t.Fatalf("entry %d has %d offers, want %d", i, len(got.Offers), want)
		}
		if want == 1 && (!got.Offers[0].Start.Equal(w.at("14:00")) || got.Offers[0].Status != booking.OfferOpen) {
			t.Fatalf("entry %d was offered %+v, want 14:00, open", i, got.Offers[0])
		}
	}
	// Nobody took master 1's 14:00: it is still free for anyone.
	w.mustBook(t, w.req(w.masters[1], "14:00"))
}

// TestABroadcastOfferGoesToTheFirstTap: ten clients wait for one time; the
// booking is cancelled; all ten are offered it (the salon's number is 10)
// in join order, and tap at once: one booking, nine answers "taken" with
// alternatives, no overlap; those nine still wait. An offer of a time
// that is gone answers "taken" too.
func TestABroadcastOfferGoesToTheFirstTap(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 10)
	sys := bookingtest.System()
	var entries []*booking.WaitEntry
	for range 10 {
		entries = append(entries, w.join(t, "Waiting"))
	}
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: w.booked[4].ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 10 {
		t.Fatalf("offered %d (%v), want 10", n, err)
	}
	offers := make([]int64, len(entries))
	for i, e := range entries {
		got := w.read(t, e)
		if len(got.Offers) != 1 {
			t.Fatalf("entry %d: %d offers", i, len(got.Offers))
		}
		offers[i] = got.Offers[0].ID
	}
	if !slices.IsSorted(offers) {
		t.Fatalf("offers %v were not made in join order", offers)
	}
	errs := race(len(entries), func(i int) error {
		_, err := w.accept(entries[i], offers[i])
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
		default:
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if ok != 1 || taken != 9 {
		t.Fatalf("%d booked and %d told it is taken, want 1 and 9", ok, taken)
	}
	if got := activeBookings(t, w.Pool, w.masters[0].ID); got != 6 {
		t.Fatalf("%d active bookings of the master, want 6 (the freed time booked again once)", got)
	}
	assertNoOverlap(t, w.Pool)
	waiting, bookedN := 0, 0
	for i, e := range entries {
		got := w.read(t, e)
		switch got.Status {
		case booking.WaitBooked:
			bookedN++
		case booking.WaitWaiting:
			waiting++
			if got.Offers[0].Status != booking.OfferGone {
				t.Errorf("entry %d: its offer is %s, want gone", i, got.Offers[0].Status)
			}
			// Tapping again: still taken, with alternatives.
			var st *booking.SlotTakenError
			if _, err := w.accept(e, offers[i]); !errors.As(err, &st) {
				t.Errorf("entry %d tapping a gone offer: %v, want taken", i, err)
			}
		}
	}
	if bookedN != 1 || waiting != 9 {
		t.Fatalf("%d booked, %d waiting; want 1 and 9", bookedN, waiting)
	}
}

// TestAHoldBlocksEveryoneUntilItEnds: in hold mode the first in line gets
// the freed time held (a pending booking): the widget, the bot, the panel
// and an import are refused it; the second in line is offered nothing
// meanwhile. When the hold ends untaken, the time goes to the second in
// line, held for them; the first's offer has expired (and cannot be
// taken); the second, tapping eight times at once, gets one booking.
func TestAHoldBlocksEveryoneUntilItEnds(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistHold, 3)
	sys := bookingtest.System()
	first, second := w.join(t, "First"), w.join(t, "Second")
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: w.booked[4].ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 1 {
		t.Fatalf("offered %d (%v), want 1 (the first in line)", n, err)
	}
	got := w.read(t, first)
	if len(got.Offers) != 1 || got.Offers[0].Status != booking.OfferHeld || got.Offers[0].BookingID == 0 {
		t.Fatalf("the first in line has %+v, want one held offer", got.Offers)
	}
	hold := got.Offers[0]
	if v := w.get(t, hold.BookingID); v.Status != booking.StatusPending || !v.StartsAt.Equal(w.at("14:00")) {
		t.Fatalf("the hold is %s at %v", v.Status, v.StartsAt)
	}
	if len(w.read(t, second).Offers) != 0 {
		t.Fatal("the second in line was offered the held time")
	}
	r := w.req(w.masters[0], "14:00")
	idn := booking.ByIdentity(booking.Identity{Channel: booking.ChannelTelegram, ExternalID: "777"})
	for i, c := range []booking.Caller{booking.Visitor(), idn, w.admin(1), booking.ByImport(w.salon.ID, "bookings.csv")} {
		rr := r
		if i == 3 {
			rr.Source = booking.SourceImport
		}
		if _, err := w.Svc.Book(booking.As(context.Background(), c), rr); !errors.Is(err, booking.ErrSlotTaken) {
			t.Fatalf("booking the held time as caller %d: %v, want taken", i, err)
		}
	}
	// The hold ends untaken: the time goes to the second in line.
	w.Clock.Advance(16 * time.Minute)
	if n, err := w.Svc.ExpireHolds(sys); err != nil || n != 1 {
		t.Fatalf("expired %d holds (%v), want 1", n, err)
	}
	if v := w.get(t, hold.BookingID); v.Status != booking.StatusCancelled {
		t.Fatalf("the hold is %s after its end", v.Status)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 1 {
		t.Fatalf("offered %d (%v) after the hold ended, want 1", n, err)
	}
	if o := w.read(t, first).Offers[0]; o.Status != booking.OfferExpired {
		t.Fatalf("the first's offer is %s, want expired", o.Status)
	}
	if _, err := w.accept(first, hold.ID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("taking an expired hold: %v, want a conflict", err)
	}
	got = w.read(t, second)
	if len(got.Offers) != 1 || got.Offers[0].Status != booking.OfferHeld {
		t.Fatalf("the second in line has %+v, want one held offer", got.Offers)
	}
	errs := race(8, func(int) error {
		_, err := w.accept(second, got.Offers[0].ID)
		return err
	})
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, booking.ErrConflict):
		default:
			t.Fatalf("taking the hold: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of 8 taps took the hold, want 1", ok)
	}
	v := w.get(t, got.Offers[0].BookingID)
	if v.Status != booking.StatusConfirmed || !v.StartsAt.Equal(w.at("14:00")) {
		t.Fatalf("the taken hold is %s at %v", v.Status, v.StartsAt)
	}
	var taken int
	if err := w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM booking_events WHERE booking_id = $1 AND action = 'waitlist_taken'`,
		v.ID).Scan(&taken); err != nil || taken != 1 {
		t.Fatalf("%d waitlist_taken events (%v), want 1", taken, err)
	}
	if got := activeBookings(t, w.Pool, w.masters[0].ID); got != 6 {
		t.Fatalf("%d active bookings of the master, want 6", got)
	}
	assertNoOverlap(t, w.Pool)
}

// TestFreedTimeFromEveryCause: a move, a longer shift and a hold expired
// each free time that the waitlist is offered.
func TestFreedTimeFromEveryCause(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	sys := bookingtest.System()
	e := w.join(t, "Waiting")
	offered := func(want ...string) {
		t.Helper()
		if _, err := w.Svc.OfferFreed(sys); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range w.read(t, e).Offers {
			got = append(got, o.Start.In(w.salon.Location()).Format("15:04"))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("offers at %v, want %v", got, want)
		}
	}
	// A move to master 1 frees 11:00.
	if _, err := w.Svc.Reschedule(sys, booking.RescheduleRequest{BookingID: w.booked[1].ID, StartsAt: w.at("11:00"),
		MasterID: w.masters[1].ID}); err != nil {
		t.Fatal(err)
	}
	offered("11:00")
	// Another client takes 11:00 from the widget; the entry's offer of it
	// is then dropped, and a later tap answers taken.
	w.mustBook(t, w.req(w.masters[0], "11:00"))
	var st *booking.SlotTakenError
	if _, err := w.accept(e, w.read(t, e).Offers[0].ID); !errors.As(err, &st) {
		t.Fatalf("taking a time booked meanwhile: %v, want taken", err)
	}
	// The shift ends at 20:00; the day is booked to 20:00 after 16:00, then
	// the shift grows to 21:00.
	for _, hhmm := range []string{"16:00", "17:00", "18:00", "19:00"} {
		w.mustBook(t, w.req(w.masters[0], hhmm))
	}
	w.Shift(t, w.salon, w.masters[0], w.day, 1, "10:00", "21:00")
	offered("11:00", "20:00")
}

// TestAnOfferReachesTheClient: the client waiting gets the freed time by
// e-mail (in the mailbox of a real SMTP server) and by SMS (at the fake
// SMS.ru), each with a link; the link's page shows the offer, and taking
// it books the time, which the client is then told of like any booking.
// An offer whose time was booked before its message went is dropped.
func TestAnOfferReachesTheClient(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	set, err := w.Svc.MessageSettingsOf(sys, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	set.SMSKinds = append(set.SMSKinds, booking.KindWaitlistOffer)
	if _, err := w.Svc.UpdateMessageSettings(sys, w.salon.ID, *set); err != nil {
		t.Fatal(err)
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "12:00"))
	b := w.book(w.anna, w.day, "12:00", "")
	phone := bookingtest.Phone()
	e, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		From: w.day, To: w.day, Client: booking.ClientInput{Name: "Ольга", Phone: phone, Email: "olga@example.com", Lang: "ru"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 1 {
		t.Fatalf("offered %d (%v), want 1", n, err)
	}
	w.sendAll()
	if !w.mailTo("olga@example.com", "Освободилось время: Стрижка") {
		t.Fatalf("no offer in the mailbox: %+v", w.mail.Messages(t))
	}
	// The e-mail can be stopped, like every e-mail: its List-Unsubscribe
	// link stops e-mail from the salon to the address.
	var unsub string
	for _, m := range w.mail.Messages(t) {
		if strings.HasPrefix(m.Subject, "Освободилось время") {
			if u := m.Headers["List-Unsubscribe"]; len(u) == 1 {
				unsub = u[0]
			}
			if !strings.Contains(m.Text, msgBase+"/o/") || strings.Contains(m.Text, "потому что у вас запись") {
				t.Errorf("the offer's e-mail has no link that takes it, or says the client has a booking:\n%s", m.Text)
			}
			if price := "Цена: " + w.haircut.Price.Format("RUB", "ru"); !strings.Contains(m.Text, price) {
				t.Errorf("the offer's e-mail does not say what it costs (%s):\n%s", price, m.Text)
			}
		}
	}
	tok := regexp.MustCompile(`/a/([A-Za-z0-9_-]+)>$`).FindStringSubmatch(unsub)
	if tok == nil {
		t.Fatalf("the offer's e-mail has List-Unsubscribe %q", unsub)
	}
	if l, err := w.Svc.OpenLink(web(), tok[1]); err != nil || l.Action != booking.LinkUnsubscribe || l.Booking.Salon.ID != w.salon.ID {
		t.Fatalf("the unsubscribe link: %+v (%v)", l, err)
	}
	texts := w.smsTo(phone)
	if len(texts) != 1 {
		t.Fatalf("%d SMS to the client, want the offer", len(texts))
	}
	link := regexp.MustCompile(regexp.QuoteMeta(msgBase) + `/o/([A-Za-z0-9_-]+)`).FindStringSubmatch(texts[0].Text)
	if link == nil {
		t.Fatalf("the SMS has no offer link: %q", texts[0].Text)
	}
	l, err := w.Svc.OpenOfferLink(web(), link[1])
	if err != nil || l.Expired || l.Offer.Status != booking.OfferOpen || !l.View.StartsAt.Equal(bookingtest.At(w.salon, w.day, "12:00")) ||
		l.View.ServiceName != "Стрижка" {
		t.Fatalf("the link's offer: %+v (%v)", l, err)
	}
	got, err := w.Svc.AcceptOfferLink(web(), link[1])
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != booking.StatusConfirmed || got.ManageToken == "" || !got.StartsAt.Equal(bookingtest.At(w.salon, w.day, "12:00")) {
		t.Fatalf("the offer booked %+v", got)
	}
	if entry, _ := w.Svc.WaitlistEntry(sys, e.ID); entry.Status != booking.WaitBooked || entry.BookingID != got.ID {
		t.Fatalf("the entry is %s with booking %d", entry.Status, entry.BookingID)
	}
	w.sendAll()
	if !w.mailTo("olga@example.com", "Вы записаны") {
		t.Fatal("no confirmation of the booking the offer became")
	}
	// A second freed time, booked by someone else before its offer went:
	// the offer's messages are dropped, not sent.
	b2 := w.book(w.anna, w.day, "15:00", "")
	e2, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		From: w.day, To: w.day, Client: booking.ClientInput{Name: "Ира", Phone: bookingtest.Phone(), Email: "ira@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "22:00")) // the night: the SMS waits for the morning
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: b2.ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 1 {
		t.Fatalf("offered %d (%v), want 1", n, err)
	}
	w.book(w.anna, w.day, "15:00", "")
	w.Clock.Set(bookingtest.At(w.salon, w.day, "09:30"))
	w.sendAll()
	var states []string
	if err := w.Pool.QueryRow(context.Background(), `SELECT array_agg(m.state || ':' || m.channel ORDER BY m.channel) FROM messages m
		JOIN waitlist_offers o ON o.id = m.offer_id WHERE o.entry_id = $1`, e2.ID).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(states, []string{"sent:email", "dropped:sms"}) && !slices.Equal(states, []string{"dropped:email", "dropped:sms"}) {
		t.Fatalf("the second offer's messages: %v, want the SMS dropped", states)
	}
}

// TestOneEntryBooksOnce: a client offered two times (two freed times)
// taps both at once: one booking, and the entry is booked; a client who
// joins the same list again keeps one place (its days joined).
func TestOneEntryBooksOnce(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	sys := bookingtest.System()
	e := w.join(t, "Twice")
	for _, b := range []*booking.Booking{w.booked[1], w.booked[4]} {
		if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: b.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 2 {
		t.Fatalf("offered %d (%v), want 2", n, err)
	}
	offers := w.read(t, e).Offers
	errs := race(8, func(i int) error {
		_, err := w.accept(e, offers[i%2].ID)
		return err
	})
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, booking.ErrConflict):
		default:
			t.Fatalf("tap: %v", err)
		}
	}
	var mine int
	if err := w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE client_id = $1 AND status = 'confirmed'`,
		e.ClientID).Scan(&mine); err != nil {
		t.Fatal(err)
	}
	if ok != 1 || mine != 1 {
		t.Fatalf("%d taps booked, the client has %d bookings; want 1 and 1", ok, mine)
	}
	// Joining again for the same: the same place, a new token.
	phone := bookingtest.Phone()
	first, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, From: w.day, To: w.day,
		Client: booking.ClientInput{Name: "Again", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, From: w.day, To: w.day.AddDays(2),
		Client: booking.ClientInput{Name: "Again", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.To != w.day.AddDays(2) || again.ManageToken == first.ManageToken {
		t.Fatalf("joined again: entry %d to %v (first %d)", again.ID, again.To, first.ID)
	}
}

// TestATapWhileAnotherBooksTheEntryWaits: while one tap of an entry's
// offer books it (its booking made, the entry not yet marked booked), a
// second tap of the same offer, whose time now reads taken, is told
// another tap is booking (a conflict), not that someone was faster.
func TestATapWhileAnotherBooksTheEntryWaits(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	e := w.join(t, "Twice")
	w.cancel(t, true, w.booked[1].ID)
	w.offerFreed(t, 1, "11:00")
	o := w.read(t, e).Offers[0]
	// The first tap, halfway: the entry claimed, its booking made.
	if _, err := w.Pool.Exec(context.Background(), `UPDATE waitlist_entries SET accepting_at = $2 WHERE id = $1`, e.ID, w.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Book(web(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: o.MasterID, StartsAt: o.Start,
		Client: booking.ClientInput{Name: "Twice", Phone: bookingtest.Phone()}}); err != nil {
		t.Fatal(err)
	}
	_, err := w.accept(e, o.ID)
	var st *booking.SlotTakenError
	if !errors.Is(err, booking.ErrConflict) || errors.As(err, &st) {
		t.Fatalf("a second tap while the first books: %v", err)
	}
}

// TestSchedulesFreeOnlyWhatTheyAdd: saving a day's shifts unchanged frees
// nothing; a longer shift frees only what it adds; a hold let go is not
// held for the same client again a few minutes later; leaving releases a
// hold at once, as a released hold (not an unpaid deposit).
func TestSchedulesFreeOnlyWhatTheyAdd(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistHold, 3)
	sys := bookingtest.System()
	m := w.masters[0]
	freed := func() int {
		t.Helper()
		var n int
		if err := w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM waitlist_freed WHERE master_id = $1 AND cause = 'shift'`,
			m.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	a := w.join(t, "A")
	w.Shift(t, w.salon, m, w.day, 1, "10:00", "20:00") // as it was
	if n := freed(); n != 0 {
		t.Fatalf("an unchanged schedule freed %d stretches", n)
	}
	if n, _ := w.Svc.OfferFreed(sys); n != 0 {
		t.Fatalf("an unchanged schedule made %d offers", n)
	}
	// 16:00-20:00 is free already; 20:00-22:00 is new.
	w.Shift(t, w.salon, m, w.day, 1, "10:00", "22:00")
	var from, to time.Time
	if err := w.Pool.QueryRow(context.Background(), `SELECT starts_at, ends_at FROM waitlist_freed WHERE master_id = $1 AND cause = 'shift'`,
		m.ID).Scan(&from, &to); err != nil {
		t.Fatal(err)
	}
	if !from.Equal(w.at("20:00")) || !to.Equal(w.at("22:00")) {
		t.Fatalf("the longer shift freed %v-%v, want 20:00-22:00", from, to)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 1 {
		t.Fatalf("offered %d (%v), want 1", n, err)
	}
	o := w.read(t, a).Offers[0]
	if o.Status != booking.OfferHeld || !o.Start.Equal(w.at("20:00")) {
		t.Fatalf("A's offer: %+v", o)
	}
	// C joins; A lets the hold go; the time frees again: it is held for C,
	// not for A again (at 20:15, or any start overlapping what A let go).
	c := w.join(t, "C")
	w.Clock.Advance(16 * time.Minute)
	if _, err := w.Svc.ExpireHolds(sys); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.OfferFreed(sys); err != nil {
		t.Fatal(err)
	}
	if got := w.read(t, a).Offers; len(got) != 1 {
		t.Fatalf("A was held a time again: %+v", got)
	}
	if got := w.read(t, c).Offers; len(got) != 1 || got[0].Status != booking.OfferHeld || !got[0].Start.Equal(w.at("20:00")) {
		t.Fatalf("C, next in line, has %+v, want 20:00 held", got)
	}
	// B joins and is held it; B leaves: the hold is released at once.
	b := w.join(t, "B")
	if _, err := w.Svc.OfferTime(booking.As(context.Background(), w.admin(1)), b.ID, m.ID, w.at("21:00")); err != nil {
		t.Fatal(err)
	}
	hold := w.read(t, b).Offers[0]
	if _, err := w.Svc.LeaveWaitlist(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID); err != nil {
		t.Fatal(err)
	}
	if v := w.get(t, hold.BookingID); v.Status != booking.StatusCancelled || v.CancelReason != "waitlist offer not taken" {
		t.Fatalf("B's hold after leaving: %s (%q)", v.Status, v.CancelReason)
	}
	if got := w.read(t, b); got.Status != booking.WaitLeft || got.Offers[0].Status != booking.OfferExpired {
		t.Fatalf("B after leaving: %s, offer %s", got.Status, got.Offers[0].Status)
	}
	assertNoOverlap(t, w.Pool)
}

// TestAVisitWaits: a client waits for a visit (a haircut with master 0,
// then a beard with any master); master 0's 14:00 frees; the offer is the
// whole visit, and taking it books both services.
func TestAVisitWaits(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	sys := bookingtest.System()
	beard := w.Service(t, w.salon, booking.SalonService{Name: "Beard", DurationMin: 30})
	if err := w.Svc.SetOffers(sys, w.salon.ID, w.masters[1].ID, []booking.Offer{{ServiceID: w.svc.ID}, {ServiceID: beard.ID}}); err != nil {
		t.Fatal(err)
	}
	e, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, From: w.day, To: w.day,
		Items:  []booking.VisitItem{{ServiceID: w.svc.ID, MasterID: w.masters[0].ID}, {ServiceID: beard.ID}},
		Client: booking.ClientInput{Name: "Visit", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{BookingID: w.booked[4].ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Svc.OfferFreed(sys); err != nil || n != 1 {
		t.Fatalf("offered %d (%v), want 1", n, err)
	}
	o := w.read(t, e).Offers[0]
	if !o.Start.Equal(w.at("14:00")) || !o.End.Equal(w.at("15:30")) {
		t.Fatalf("the visit offered %v-%v, want 14:00-15:30", o.Start, o.End)
	}
	b, err := w.accept(e, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	var segs int
	if err := w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE visit_id = $1 AND status = 'confirmed'`,
		b.ID).Scan(&segs); err != nil || segs != 2 {
		t.Fatalf("%d segments booked (%v), want 2", segs, err)
	}
	assertNoOverlap(t, w.Pool)
}

// staff is a context in which an admin of the salon asks.
func (w *waitWorld) staff() context.Context {
	return booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
}

// cancel cancels bookings at the desk, saying whose cancellation it is:
// the client's (their time is offered) or the salon's own (it is not).
func (w *waitWorld) cancel(t *testing.T, forClient bool, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if _, err := w.Svc.Cancel(w.staff(), booking.CancelRequest{SalonID: w.salon.ID, BookingID: id, ForClient: forClient, Stated: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// offerFreed offers the time freed since the last run, wanting n offers.
func (w *waitWorld) offerFreed(t *testing.T, n int, what string) {
	t.Helper()
	if got, err := w.Svc.OfferFreed(bookingtest.System()); err != nil || got != n {
		t.Fatalf("%s: %d offers (%v), want %d", what, got, err, n)
	}
}

// offers are entry e's offers by their start on the salon's clock (15:04).
func (w *waitWorld) offers(t *testing.T, e *booking.WaitEntry) map[string]booking.WaitOffer {
	t.Helper()
	out := map[string]booking.WaitOffer{}
	for _, o := range w.read(t, e).Offers {
		out[o.Start.In(w.salon.Location()).Format("15:04")] = o
	}
	return out
}

// TestASalonsOwnCancellationIsNotOffered: the desk cancelling of the
// salon's own accord (a master ill) frees no time for the waitlist, in
// either mode: nothing is offered or held, and the master's day can then
// be taken off. A cancellation at the client's request is offered as
// ever.
func TestASalonsOwnCancellationIsNotOffered(t *testing.T) {
	for _, mode := range []string{booking.WaitlistBroadcast, booking.WaitlistHold} {
		t.Run(mode, func(t *testing.T) {
			w := newWaitWorld(t, mode, 3)
			e := w.join(t, "Waiting")
			w.cancel(t, false, w.booked[4].ID)
			w.offerFreed(t, 0, "the salon's own cancellation")
			if got := w.read(t, e); len(got.Offers) != 0 {
				t.Fatalf("offered %+v", got.Offers)
			}
			var freed int
			if err := w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM waitlist_freed WHERE salon_id = $1`, w.salon.ID).Scan(&freed); err != nil || freed != 0 {
				t.Fatalf("%d freed times (%v), want none", freed, err)
			}
			// The client asked: offered.
			w.cancel(t, true, w.booked[2].ID)
			w.offerFreed(t, 1, "a cancellation at the client's request")
			if got := w.read(t, e); len(got.Offers) != 1 || !got.Offers[0].Start.Equal(w.at("12:00")) {
				t.Fatalf("offered %+v, want 12:00", got.Offers)
			}
		})
	}
}

// TestASalonsOwnMoveKeepsTheClientsTerms: the desk moving a booking of
// the salon's own accord (its master ill) to a dearer master keeps the
// price the client booked, and offers the time it frees to nobody on the
// waitlist (what the client is told: TestTheSalonsOwnMoveIsSaid); a move
// at the client's request takes the new master's price and offers the
// time.
func TestASalonsOwnMoveKeepsTheClientsTerms(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	ctx := context.Background()
	if _, err := w.Pool.Exec(ctx, `UPDATE services SET price = 1000 WHERE id = $1`, w.svc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE master_services SET price = 1500 WHERE master_id = $1 AND service_id = $2`, w.masters[1].ID, w.svc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE salons SET catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	e := w.join(t, "Waiting")
	moved, err := w.Svc.Reschedule(w.staff(), booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: w.booked[4].ID,
		StartsAt: w.booked[4].StartsAt, MasterID: w.masters[1].ID, BySalon: true})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Price != w.booked[4].Price || moved.MasterID != w.masters[1].ID {
		t.Fatalf("the salon's own move: price %v with master %d, want %v kept", moved.Price, moved.MasterID, w.booked[4].Price)
	}
	w.offerFreed(t, 0, "the salon's own move")
	// At the client's request: the new master's price, and the time
	// offered.
	asked, err := w.Svc.Reschedule(w.staff(), booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: w.booked[2].ID,
		StartsAt: w.booked[2].StartsAt, MasterID: w.masters[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Price != 150000 {
		t.Fatalf("a move at the client's request: price %v, want the new master's 1500", asked.Price)
	}
	w.offerFreed(t, 1, "a move at the client's request")
	if got := w.read(t, e); len(got.Offers) != 1 || !got.Offers[0].Start.Equal(w.at("12:00")) {
		t.Fatalf("offered %+v, want 12:00", got.Offers)
	}
}

// TestAnOfferOfATimeNoLongerFreeReadsGone: an open offer reads as gone
// once its start is no longer free: booked from the widget (taking it
// then answers taken), or its master's day taken off (the master fell ill
// after it was offered: taking it says the master no longer works then).
func TestAnOfferOfATimeNoLongerFreeReadsGone(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	ctx := context.Background()
	e := w.join(t, "Waiting")
	w.cancel(t, true, w.booked[1].ID, w.booked[4].ID) // 11:00 and 14:00
	w.offerFreed(t, 2, "11:00 and 14:00")
	if got := w.offers(t, e); got["11:00"].Status != booking.OfferOpen || got["14:00"].Status != booking.OfferOpen {
		t.Fatalf("offers %v, want both open", got)
	}
	// 11:00 is booked from the widget.
	w.mustBook(t, w.req(w.masters[0], "11:00"))
	if got := w.offers(t, e); got["11:00"].Status != booking.OfferGone || got["14:00"].Status != booking.OfferOpen {
		t.Fatalf("after 11:00 was booked: %v, want it gone and 14:00 open", got)
	}
	// The master falls ill: the salon cancels the rest of the day of its
	// own accord and takes the day off.
	var rest []int64
	if err := w.Pool.QueryRow(ctx, `SELECT array_agg(id) FROM bookings WHERE master_id = $1 AND status = 'confirmed'`, w.masters[0].ID).Scan(&rest); err != nil {
		t.Fatal(err)
	}
	w.cancel(t, false, rest...)
	if err := w.Svc.SetShifts(w.staff(), w.salon.ID, w.masters[0].ID, w.day, nil); err != nil {
		t.Fatal(err)
	}
	got := w.offers(t, e)
	if got["14:00"].Status != booking.OfferGone {
		t.Fatalf("after the master's day was taken off: %v, want 14:00 gone", got)
	}
	if _, err := w.accept(e, got["14:00"].ID); !errors.Is(err, booking.ErrConflict) || !strings.Contains(err.Error(), "no longer works") {
		t.Fatalf("taking an offer of a day taken off: %v, want the master no longer works then", err)
	}
	w.offerFreed(t, 0, "the ill master's day")
}

// TestAnOfferOfATimePartlyTakenReadsGone: an open offer reads as gone when
// any of its time is booked (not only its start), or its start falls in
// the master's break; taking the first answers taken.
func TestAnOfferOfATimePartlyTakenReadsGone(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	ctx := context.Background()
	e := w.join(t, "Waiting")
	w.cancel(t, true, w.booked[1].ID, w.booked[4].ID) // 11:00 and 14:00
	w.offerFreed(t, 2, "11:00 and 14:00")
	// A 30-minute service at 11:30 takes the second half of 11:00's hour.
	short := w.Service(t, w.salon, booking.SalonService{Name: "Fringe", DurationMin: 30})
	if _, err := w.Pool.Exec(ctx, `INSERT INTO master_services (salon_id, master_id, service_id) VALUES ($3, $1, $2)`, w.masters[0].ID, short.ID, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE salons SET catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	r := w.req(w.masters[0], "11:30")
	r.ServiceID = short.ID
	w.mustBook(t, r)
	// 14:00 falls in a break put into the day.
	if err := w.Svc.SetShifts(w.staff(), w.salon.ID, w.masters[0].ID, w.day, []booking.ShiftInput{{Start: 10 * 60, End: 20 * 60,
		BreakStart: 14 * 60, BreakEnd: 15 * 60}}); err != nil {
		t.Fatal(err)
	}
	got := w.offers(t, e)
	if got["11:00"].Status != booking.OfferGone || got["14:00"].Status != booking.OfferGone {
		t.Fatalf("offers %+v, want 11:00 (half booked) and 14:00 (in a break) gone", got)
	}
	var st *booking.SlotTakenError
	if _, err := w.accept(e, got["11:00"].ID); !errors.As(err, &st) {
		t.Fatalf("taking an offer half booked: %v, want taken", err)
	}
	if _, err := w.accept(e, got["14:00"].ID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("taking an offer in a break: %v, want the master no longer works then", err)
	}
}

// TestAClientWaitsOnlyForDaysTheyCouldBook: a client's entry may not start
// past the salon's booking window (nothing could be offered to it for
// months); one starting on its last day may, and staff may note a caller's
// wish further on.
func TestAClientWaitsOnlyForDaysTheyCouldBook(t *testing.T) {
	w := newWaitWorld(t, booking.WaitlistBroadcast, 3)
	today := w.salon.Today(bookingtest.DefaultNow)
	join := func(ctx context.Context, from booking.Date) error {
		_, err := w.Svc.JoinWaitlist(ctx, booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, From: from, To: from.AddDays(2),
			Client: booking.ClientInput{Name: "Far", Phone: bookingtest.Phone()}})
		return err
	}
	var ve *booking.ValidationError
	if err := join(web(), today.AddDays(w.salon.HorizonDays)); !errors.As(err, &ve) || ve.Fields["from_date"].String() == "" {
		t.Fatalf("a client waiting from past the window: %v, want from_date refused", err)
	}
	if err := join(web(), booking.Date{Year: 2099, Month: 1, Day: 1}); !errors.As(err, &ve) || ve.Fields["from_date"].String() == "" {
		t.Fatalf("a client waiting in 2099: %v, want from_date refused", err)
	}
	if first, days := w.salon.Window(bookingtest.DefaultNow); first.AddDays(days-1) != today.AddDays(w.salon.HorizonDays-1) {
		t.Fatalf("the window from %s, %d days, does not end the day before today+horizon", first, days)
	}
	if err := join(web(), today.AddDays(w.salon.HorizonDays-1)); err != nil {
		t.Fatalf("a client waiting from the window's last day: %v", err)
	}
	if err := join(w.staff(), today.AddDays(w.salon.HorizonDays+30)); err != nil {
		t.Fatalf("staff noting a caller's wish past the window: %v", err)
	}
}

// TestAClientIsNotOfferedTheTimeSheGaveUp: a client who waits on the list
// for an earlier time, and cancels the booking she has, is not offered
// that booking's time back (she just gave it up); the next in line is.
// In hold mode nothing is held for her either.
func TestAClientIsNotOfferedTheTimeSheGaveUp(t *testing.T) {
	for _, mode := range []string{booking.WaitlistBroadcast, booking.WaitlistHold} {
		t.Run(mode, func(t *testing.T) {
			w := newWaitWorld(t, mode, 3)
			var phone string
			if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone FROM clients c JOIN bookings b ON b.client_id = c.id
				WHERE b.id = $1`, w.booked[3].ID).Scan(&phone); err != nil {
				t.Fatal(err)
			}
			hers, err := w.Svc.JoinWaitlist(web(), booking.WaitRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.masters[0].ID,
				From: w.day, To: w.day, Client: booking.ClientInput{Name: "Client", Phone: phone}})
			if err != nil {
				t.Fatal(err)
			}
			next := w.join(t, "Next")
			w.cancel(t, true, w.booked[3].ID)
			w.offerFreed(t, 1, "her own 13:00")
			if got := w.read(t, hers); len(got.Offers) != 0 {
				t.Fatalf("she was offered the time she cancelled: %+v", got.Offers)
			}
			if got := w.offers(t, next); len(got) != 1 || got["13:00"].ID == 0 {
				t.Fatalf("the next in line was offered %v, want 13:00", got)
			}
			// Another client's cancellation is offered to her as ever (and,
			// in broadcast mode, to the next, who holds nothing).
			w.cancel(t, true, w.booked[1].ID)
			w.offerFreed(t, map[string]int{booking.WaitlistBroadcast: 2, booking.WaitlistHold: 1}[mode], "another client's 11:00")
			if got := w.offers(t, hers); len(got) != 1 || got["11:00"].ID == 0 {
				t.Fatalf("she was offered %v, want 11:00", got)
			}
		})
	}
}
