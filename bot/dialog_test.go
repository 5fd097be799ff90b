package bot_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

func TestBookInEnglishTypingThePhone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Anna", "en")
	u.Send("/start studio")
	w.see(u, "Welcome to Studio")
	w.tap(u, "Haircut · 60 min · 2,500")
	w.see(u, "Haircut. Choose a master")
	w.tap(u, "Anna")
	w.tap(u, "Tue 3 Mar")
	w.see(u, "Tue 3 Mar. Choose a time")
	w.tap(u, "11:00")
	w.see(u, "share your phone")
	// A typed phone is checked; a bad one is asked again.
	u.Send("call me maybe")
	w.see(u, "does not look like a phone number: call me maybe")
	u.Send("8 (999) 123-45-67")
	m := w.see(u, "Check your booking")
	for _, want := range []string{"Service: Haircut", "Master: Anna", "When: Tue 3 Mar, 11:00", "Price: 2,500", "Phone: +79991234567"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("confirm screen lacks %q:\n%s", want, m.Text)
		}
	}
	w.tap(u, "Confirm")
	done := w.see(u, "You are booked")
	if !strings.Contains(done.Text, "Tue 3 Mar, 11:00") || !strings.Contains(done.Text, "Anna") || len(done.Inline) != 2 ||
		done.Inline[0][0].Text != "✅ I'll be there" || done.Inline[1][0].Text != "Move" || done.Inline[1][1].Text != "Cancel" {
		t.Fatalf("confirmation: %q %v, want Confirm, Move and Cancel", done.Text, done.Inline)
	}
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id
		WHERE c.phone = '+79991234567' AND b.origin_channel = 'telegram' AND b.origin_ref = $1 AND b.source = 'bot' AND b.master_id = $2 AND b.status = 'confirmed'
		AND b.lang = 'en'`, fmt.Sprint(u.ID), w.anna.ID); n != 1 { // (its e-mail and SMS in English)
		t.Fatalf("%d bookings in the database", n)
	}
	w.allAnswered()
	// Screens were edited in place: the service list message became the
	// confirmation... of its own flow; only typed input got new messages.
	if got := len(u.Messages()); got > 5 {
		t.Errorf("%d messages for one booking; keyboards should be edited in place:%s", got, u.Dump())
	}
}

func TestBookInRussianSharingTheContact(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Мария", "ru")
	u.Send("/start studio")
	w.see(u, "Добро пожаловать в Studio")
	w.tap(u, "Haircut · 60 мин · 2\u00a0500\u00a0₽")
	w.tap(u, "Любой мастер")
	w.tap(u, "вт, 3 мар.")
	w.tap(u, "15:30")
	w.see(u, "поделитесь номером")
	w.must(u.WaitButton("Поделиться номером", wait))
	// Someone else's contact card is refused; one's own is taken.
	u.ShareOthersContact("+79990000000")
	w.see(u, "поделитесь своим номером")
	u.ShareContact("+7 916 000-11-22")
	w.see(u, "Проверьте запись")
	w.tap(u, "Подтвердить")
	m := w.see(u, "Вы записаны")
	if !strings.Contains(m.Text, "вт, 3 мар., 15:30") {
		t.Fatalf("confirmation: %q", m.Text)
	}
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79160001122' AND b.lang = 'ru'`); n != 1 {
		t.Fatalf("%d bookings", n)
	}
	// The next booking does not ask for the phone again.
	u.Send("/book")
	w.tap(u, "Haircut")
	w.tap(u, "Любой мастер")
	w.tap(u, "вт, 3 мар.")
	w.tap(u, "17:00")
	w.see(u, "Телефон: +79160001122")
	w.allAnswered()
	// Nothing the bot said or offered was in English, but the salon's own
	// names (Studio, Haircut, Master).
	latin := regexp.MustCompile(`[A-Za-z]{3,}`)
	for _, m := range u.Messages() {
		texts := []string{m.Text}
		for _, row := range append(m.Inline, m.Reply...) {
			for _, b := range row {
				texts = append(texts, b.Text)
			}
		}
		for _, s := range texts {
			for _, word := range latin.FindAllString(s, -1) {
				if !slices.Contains([]string{"Studio", "Haircut", "Anna", "Boris", "Telegram"}, word) {
					t.Errorf("the Russian dialog shows %q in %q", word, s)
				}
			}
		}
	}
}

func TestMyCancelAndReschedule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Ivan", "en")
	w.bookInChat(u, "Boris", "12:00", "+7 999 111-22-33")

	u.Send("/my")
	w.see(u, "Your bookings:\n1. Tue 3 Mar, 12:00 — Haircut, Boris (Studio)")
	w.tap(u, "🔁 Move 1")
	w.see(u, "Moving Haircut")
	// The booking's own hour counts as free: half an hour later is
	// offered (it overlaps 12:00-13:00), 12:00 itself is not.
	w.tap(u, "Tue 3 Mar")
	w.see(u, "Choose a time")
	var times []string
	for _, row := range u.Last().Inline {
		for _, b := range row {
			times = append(times, b.Text)
		}
	}
	if !slices.Contains(times, "11:15") || !slices.Contains(times, "12:30") || slices.Contains(times, "12:00") {
		t.Errorf("moving 12:00 offers %v: want 11:15 and 12:30, which overlap its own hour, and not 12:00", times)
	}
	w.tap(u, "« Back")
	w.tap(u, "Wed 4 Mar")
	w.tap(u, "14:00")
	w.tap(u, "Move here")
	w.see(u, "Your booking is moved:\nService: Haircut\nMaster: Boris\nWhen: Wed 4 Mar, 14:00")
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'confirmed' AND starts_at = $1 AND master_id = $2`,
		bookingtest.At(w.salon, testDay.AddDays(1), "14:00"), w.boris.ID); n != 1 {
		t.Fatal("booking not moved")
	}

	u.Send("/my")
	w.see(u, "1. Wed 4 Mar, 14:00")
	w.tap(u, "❌ Cancel 1")
	w.see(u, "Cancel this booking?")
	w.tap(u, "Yes, cancel")
	w.see(u, "Your booking is cancelled")
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'cancelled'`); n != 1 {
		t.Fatal("booking not cancelled")
	}
	u.Send("/my")
	w.see(u, "no upcoming bookings")
	w.allAnswered()
}

// Past the salon's cutoff (3 hours here) the bot says so and changes nothing.
func TestCutoffRefusal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Olga", "en")
	w.bookInChat(u, "Anna", "13:00", "+7 999 222-33-44")
	w.Clock.Set(bookingtest.At(w.salon, testDay, "10:30"))
	u.Send("/my")
	w.see(u, "1. Tue 3 Mar, 13:00")
	w.tap(u, "❌ Cancel 1")
	if m := w.see(u, "too late to change this booking online: changes close 3 hours before"); !strings.Contains(m.Text, "Your bookings:\n1. Tue 3 Mar, 13:00") {
		t.Fatalf("the refusal: %q, want it above the list", m.Text)
	}
	u.Send("/my")
	w.see(u, "1. Tue 3 Mar, 13:00")
	w.tap(u, "🔁 Move 1")
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'confirmed'`); n != 1 {
		t.Fatal("the booking changed")
	}
	w.allAnswered()
}

func TestHelpLangAndNonsense(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Pat", "de") // not ru: English
	u.Send("/help")
	w.see(u, "/my — your bookings")
	u.Send("hello?")
	w.see(u, "I did not understand that")
	u.Send("/lang")
	w.tap(u, "Русский")
	w.see(u, "Буду говорить по-русски")
	u.Send("/help")
	w.see(u, "/my — ваши записи")
	u.Send("/start nowhere")
	w.see(u, "Я не знаю салон \"nowhere\".\nВыберите салон:")
	w.tap(u, "Studio")
	w.see(u, "Добро пожаловать в Studio")
	w.allAnswered()
}

// Stale and forged taps do nothing but are answered.
func TestStaleAndForgedTaps(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Max", "en")
	u.Send("/start studio")
	w.must(u.WaitButton("Haircut", wait))
	first := u.Last()
	w.tap(u, "Haircut")
	w.see(u, "Choose a master")
	// The old keyboard's nonce is gone; forged data is not ours.
	old := *first
	for _, data := range []string{first.Inline[0][0].Data, "x", "abc:99", strings.Repeat("9", 64), first.Inline[0][0].Data[:8] + ":-1"} {
		u.TapData(&old, data)
	}
	w.allAnswered()
	if n := w.count(t, `SELECT count(*) FROM tg_updates WHERE processed_at IS NULL OR error IS NOT NULL`); n != 0 {
		t.Fatalf("%d updates failed or pending", n)
	}
	m := u.Last()
	if !strings.Contains(m.Text, "Choose a master") {
		t.Fatalf("a stale tap changed the screen: %q", m.Text)
	}
}

var _ = fmt.Sprint
var _ = context.Background
var _ = time.Second

// A master with a price of their own: the service button says where its
// prices start, the masters say theirs, and the confirm screen and the
// booking carry the chosen master's (the bot once showed the service's).
func TestTheMastersOwnPriceIsShownAndBooked(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.must(w.Svc.SetOffers(bookingtest.System(), w.salon.ID, w.boris.ID, []booking.Offer{{ServiceID: w.haircut.ID, Price: 450000, DurationMin: 90}}))
	u := w.tg.NewUser("Client", "en")
	u.Send("/start studio")
	w.tap(u, "Haircut · 60–90 min · from 2,500")
	w.tap(u, "Boris · 4,500")
	w.must(u.WaitButton("Anna · 2,500", wait))
	w.tap(u, "Tue 3 Mar")
	w.tap(u, "11:00")
	w.see(u, "share your phone")
	u.Send("+7 999 765-43-21")
	m := w.see(u, "Check your booking")
	if !strings.Contains(m.Text, "Price: 4,500") {
		t.Fatalf("the confirm screen does not show Boris's price:\n%s", m.Text)
	}
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id
		WHERE c.phone = '+79997654321' AND b.price = 4500 AND b.duration_min = 90`); n != 1 {
		t.Fatalf("%d bookings at Boris's price and duration", n)
	}
}

// TestBookAVisit books a haircut with Anna and a beard trim with any
// master as one visit, then moves it from /my: whole-visit days and times,
// one confirmation, both segments in the database.
func TestBookAVisit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	beard := w.Service(t, w.salon, booking.SalonService{Name: "Beard", DurationMin: 30, Price: 90000})
	if err := w.Svc.SetOffers(bookingtest.System(), w.salon.ID, w.boris.ID,
		[]booking.Offer{{ServiceID: w.haircut.ID}, {ServiceID: beard.ID}}); err != nil {
		t.Fatal(err)
	}
	u := w.tg.NewUser("Oleg", "en")
	w.toDays(u, "Anna")
	w.tap(u, "➕ Add another service")
	w.see(u, "Your visit: Haircut (Anna)")
	w.tap(u, "Beard · 30 min")
	w.tap(u, "Any master")
	w.see(u, "Choose a day for the whole visit")
	w.tap(u, "Tue 3 Mar")
	w.tap(u, "11:00")
	u.Send("+7 999 444-55-66")
	m := w.see(u, "Check your booking")
	for _, want := range []string{"• Haircut · Anna", "• Beard · Boris", "When: Tue 3 Mar, 11:00", "Price: 3,400"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("confirm screen lacks %q:\n%s", want, m.Text)
		}
	}
	w.tap(u, "Confirm")
	done := w.see(u, "You are booked")
	if !strings.Contains(done.Text, "• Beard · Boris · 12:00–12:30") {
		t.Fatalf("confirmation: %q", done.Text)
	}
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id
		WHERE c.phone = '+79994445566' AND b.status = 'confirmed' AND b.visit_id = (SELECT min(id) FROM bookings x WHERE x.client_id = c.id)`); n != 2 {
		t.Fatalf("%d segments of one visit in the database, want 2", n)
	}
	u.Send("/my")
	w.see(u, "1. Tue 3 Mar, 11:00 — Haircut + Beard, Anna, Boris (Studio)")
	w.tap(u, "🔁 Move 1")
	w.tap(u, "Wed 4 Mar")
	w.tap(u, "14:00")
	w.tap(u, "Move here")
	w.see(u, "Your booking is moved:")
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'confirmed' AND starts_at IN ($1, $2)`,
		bookingtest.At(w.salon, testDay.AddDays(1), "14:00"), bookingtest.At(w.salon, testDay.AddDays(1), "15:00")); n != 2 {
		t.Fatalf("%d segments moved, want 2", n)
	}
	// Cancelling it names each service and says the whole visit's price.
	u.Send("/my")
	w.tap(u, "❌ Cancel 1")
	names := func(text string) {
		t.Helper()
		for _, want := range []string{"• Haircut · Anna · 14:00–15:00", "• Beard · Boris · 15:00–15:30", "Price: 3,400"} {
			if !strings.Contains(text, want) {
				t.Errorf("%q lacks %q", text, want)
			}
		}
	}
	names(w.see(u, "Cancel this booking?").Text)
	w.tap(u, "Yes, cancel")
	names(w.see(u, "Your booking is cancelled").Text)
	w.allAnswered()
}

// TestTheHourShownTwiceIsToldApart: on the night New York's clocks are
// put back, 01:30 comes twice; the time list names each by its zone, and
// the one tapped is the one booked and confirmed.
func TestTheHourShownTwiceIsToldApart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ny := w.Salon(t, booking.Salon{Slug: "nyc", Name: "NYC", Timezone: "America/New_York", CutoffHours: 1})
	svc := w.Service(t, ny, booking.SalonService{Name: "Trim", DurationMin: 30, Price: 3000})
	m := mustMaster(t, w.Env, ny, "Sam", svc)
	night := booking.Date{Year: 2026, Month: 11, Day: 1}
	w.Shift(t, ny, m, night, 1, "01:00", "03:00")
	w.Clock.Set(time.Date(2026, 10, 30, 12, 0, 0, 0, time.UTC))
	u := w.tg.NewUser("Ann", "en")
	u.Send("/start nyc")
	w.tap(u, "Trim · 30 min")
	w.tap(u, "Sam")
	w.tap(u, "Sun 1 Nov")
	times := w.see(u, "Sun 1 Nov. Choose a time")
	var labels []string
	for _, row := range times.Inline {
		for _, b := range row {
			labels = append(labels, b.Text)
		}
	}
	want := []string{"01:00 GMT-4", "01:15 GMT-4", "01:30 GMT-4", "01:45 GMT-4", "01:00 GMT-5", "01:15 GMT-5", "01:30 GMT-5", "01:45 GMT-5",
		"02:00", "02:15", "02:30", "« Back"}
	if !slices.Equal(labels, want) {
		t.Fatalf("times %q, want %q", labels, want)
	}
	w.tap(u, "01:30 GMT-5")
	w.see(u, "share your phone")
	u.Send("+1 212 555 0100")
	c := w.see(u, "Check your booking")
	if !strings.Contains(c.Text, "When: Sun 1 Nov, 01:30 GMT-5") {
		t.Fatalf("confirm screen: %q", c.Text)
	}
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE master_id = $1 AND starts_at = '2026-11-01T06:30:00Z'`, m.ID); n != 1 {
		t.Fatalf("%d bookings at 01:30 GMT-5 (06:30 UTC), want 1", n)
	}
}

// TestAnotherPhoneAtTheConfirmation: a phone typed wrong is not kept for
// good: the confirmation takes another, typed, shared, or asked for anew
// with its button, and the booking is made with the last one; the chat's
// next booking starts from it.
func TestAnotherPhoneAtTheConfirmation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Nina", "en")
	w.toConfirm(u, "Boris", "12:00", "+1 212 555 0100")
	w.see(u, "Phone: +12125550100")
	w.tap(u, "📞 Another phone number")
	w.until("the confirmation become the time chosen, and the phone asked again", func() bool {
		asked, chosen := 0, false
		for _, m := range u.Messages() {
			if strings.Contains(m.Text, "share your phone") {
				asked++
			}
			chosen = chosen || m.Text == "✓ Tue 3 Mar, 12:00" && len(m.Inline) == 0
		}
		return asked == 2 && chosen
	})
	u.Send("+7 999 111-22-44")
	w.see(u, "Phone: +79991112244")
	u.Send("8 999 111 22 55") // typed on the confirmation itself
	w.see(u, "Phone: +79991112255")
	// Someone else's contact is refused there, the confirmation kept.
	u.ShareOthersContact("+7 999 111-22-77")
	if m := w.see(u, "This is someone else's contact"); !strings.Contains(m.Text, "Phone: +79991112255") || len(m.Inline) == 0 {
		t.Fatalf("another's contact on the confirmation: %q", m.Text)
	}
	u.ShareContact("+7 999 111-22-66") // her own contact, shared there
	w.see(u, "Phone: +79991112266")
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79991112266' AND b.status = 'confirmed'`); n != 1 {
		t.Fatalf("%d bookings with the last phone, want 1", n)
	}
	if n := w.count(t, `SELECT count(*) FROM clients WHERE phone IN ('+12125550100', '+79991112244', '+79991112255')`); n != 0 {
		t.Fatalf("%d clients made of the phones given up, want none", n)
	}
	w.pick(u, "Haircut", "Anna", "Tue 3 Mar", "15:00")
	w.see(u, "Phone: +79991112266")
	w.allAnswered()
}

// TestAStaleListKeepsTheOtherBookings: a booking of the /my list cancelled
// at the desk meanwhile is said to be no longer changeable above the list
// read anew, whose other bookings keep their buttons.
func TestAStaleListKeepsTheOtherBookings(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Lena", "en")
	w.bookInChat(u, "Anna", "13:00", "+7 999 222-33-55")
	w.pick(u, "Haircut", "Boris", "Tue 3 Mar", "15:00")
	w.tap(u, "Confirm")
	w.see(u, "You are booked!\nService: Haircut\nMaster: Boris")
	u.Send("/my")
	w.see(u, "2. Tue 3 Mar, 15:00")
	var first int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT id FROM bookings WHERE master_id = $1`, w.anna.ID).Scan(&first); err != nil {
		t.Fatal(err)
	}
	_, err := w.Svc.Cancel(bookingtest.System(), booking.CancelRequest{SalonID: w.salon.ID, BookingID: first})
	w.must(err)
	w.tap(u, "🔁 Move 1")
	m := w.see(u, "This booking can no longer be changed.")
	if !strings.Contains(m.Text, "Your bookings:\n1. Tue 3 Mar, 15:00 — Haircut, Boris") || len(m.Inline) == 0 {
		t.Fatalf("after a stale tap: %q %v", m.Text, m.Inline)
	}
	w.tap(u, "🔁 Move 1")
	w.see(u, "Moving Haircut")
	w.allAnswered()
}
