package bot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/bot"
)

// Tests of the defects of issue 7 seen through the bot.

// Defect 1: a Telegram user who typed someone else's phone got their
// client record: /my listed the victim's web bookings, with cancel and
// move buttons, and the victim's notifications came to the attacker.
func TestTypedPhoneShowsOnlyYourOwn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	const phone = "+79995550011"
	web, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "10:00"), Client: booking.ClientInput{Name: "Victim", Phone: phone}})
	w.must(err)
	attacker := w.tg.NewUser("Eve", "en")
	w.toConfirm(attacker, "Boris", "16:00", "+7 999 555-00-11")
	w.tap(attacker, "Confirm")
	w.see(attacker, "You are booked")
	attacker.Send("/my")
	m := w.see(attacker, "Your bookings:")
	if strings.Contains(m.Text, "10:00") || !strings.Contains(m.Text, "16:00") || len(m.Inline) != 1 {
		t.Fatalf("the attacker's /my shows the victim's booking:%s", attacker.Dump())
	}
	// The salon moves the victim's booking: the attacker hears nothing.
	_, err = w.Svc.Reschedule(booking.As(ctx, booking.BySystem()), booking.RescheduleRequest{BookingID: web.ID, StartsAt: bookingtest.At(w.salon, testDay, "11:00")})
	w.must(err)
	w.jobsDone()
	if n := countText(attacker, "moved"); n != 0 {
		t.Fatalf("the attacker was told about the victim's booking:%s", attacker.Dump())
	}
	// A contact card of someone else is refused; one without a user id
	// books like a typed number, and proves nothing either.
	other := w.tg.NewUser("Mallory", "en")
	w.toContact(other, "Anna", "17:00")
	other.ShareOthersContact(phone)
	w.see(other, "share your own phone number")
	other.Push(map[string]any{"contact": map[string]any{"phone_number": "79995550011", "first_name": "Victim"}})
	w.see(other, "Check your booking")
	w.tap(other, "Confirm")
	w.see(other, "You are booked")
	if n := w.count(t, `SELECT count(*) FROM client_identities`); n != 0 {
		t.Fatalf("%d identities joined a client without proof", n)
	}
	other.Send("/my")
	if m := w.see(other, "Your bookings:"); strings.Contains(m.Text, "11:00") || len(m.Inline) != 1 {
		t.Fatalf("/my after a card without user id:%s", other.Dump())
	}
}

// Defect 6: one update that could not be stored (a \u0000 in a text,
// which jsonb refuses) failed the polling batch, so the offset never
// moved and nobody was answered again. Updates are stored as received;
// what cannot be read is quarantined and counted, and the others go on.
func TestUnreadableUpdatesDoNotStopOthers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	before := testutil.ToFloat64(bot.QuarantinedTotal())
	nul := w.tg.NewUser("Nul", "en")
	nul.Send("hello\x00world")
	nul.Send("/help\x00")
	w.tg.PushRaw(`{"message": "not a message"}`)
	w.tg.PushRaw(`{"callback_query": 42}`)
	u := w.tg.NewUser("Next", "en")
	u.Send("/start studio")
	w.see(u, "Welcome to Studio")
	w.see(nul, "/my — your bookings")
	if n := w.count(t, `SELECT count(*) FROM tg_quarantine`); n != 2 {
		t.Fatalf("%d updates quarantined, want 2", n)
	}
	if got := testutil.ToFloat64(bot.QuarantinedTotal()) - before; got < 2 {
		t.Fatalf("quarantine counter rose by %v, want at least 2", got)
	}
}

// Defect 6, in webhook mode: a webhook bot stores what it cannot read and
// answers 200.
func TestWebhookStoresWhatItCannotRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *bot.Config) { c.WebhookSecret, c.PublicURL = "s3cr3t", "http://127.0.0.1:1" })
	hook := w.bot.Webhook()
	for i, body := range []string{`{"update_id": 999001, "message": {"message_id": 1, "date": 1, "chat": {"id": 77, "type": "private"}, "from": {"id": 77, "is_bot": false, "first_name": "x"}, "text": "a\u0000b"}}`,
		`not json at all`, `{"no": "update id"}`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, bot.WebhookPath, strings.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "s3cr3t")
		hook.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("webhook body %d: %d", i, rec.Code)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM tg_updates WHERE update_id = 999001`); n != 1 {
		t.Fatal("the update with a NUL was not stored")
	}
	if n := w.count(t, `SELECT count(*) FROM tg_quarantine`); n != 2 {
		t.Fatalf("%d quarantined, want 2", n)
	}
}

// Defect 7: Telegram shares a contact's phone without its +; outside
// Russia the bot refused it and asked again forever.
func TestSharedContactWithoutPlus(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Olivia", "en")
	w.toContact(u, "Anna", "11:00")
	u.ShareContact("447911123456")
	m := w.see(u, "Check your booking")
	if !strings.Contains(m.Text, "Phone: +447911123456") {
		t.Fatalf("confirm screen: %q", m.Text)
	}
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	if n := w.count(t, `SELECT count(*) FROM clients WHERE phone = '+447911123456'`); n != 1 {
		t.Fatal("no client with the international number")
	}
	// A typed number in the national format of the salon's country (Russia).
	v := w.tg.NewUser("Ivan", "en")
	w.toContact(v, "Boris", "11:00")
	v.Send("8 916 000-11-22")
	w.see(v, "Phone: +79160001122")
}

// Defect 8: a Telegram name longer than 100 characters could never book,
// and the refusal was shown as "this time is no longer available".
func TestLongTelegramNameBooks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	long := strings.Repeat("Я", 150) + "\u202e"
	u := w.tg.NewUser(long, "en")
	w.bookInChat(u, "Anna", "12:00", "+7 999 555-00-88")
	var name string
	if err := w.Pool.QueryRow(context.Background(), `SELECT name FROM clients WHERE phone = '+79995550088'`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if utf8.RuneCountInString(name) != booking.MaxNameLen || strings.ContainsRune(name, '\u202e') {
		t.Fatalf("stored name of %d characters: %q", utf8.RuneCountInString(name), name)
	}
}

// Defect 9: cancelling in the bot a booking made on the web sent two
// "cancelled" messages: the notification carried the booking's creation
// source, not the channel of the change.
func TestCancelInBotOfWebBookingTellsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	u := w.tg.NewUser("Owner", "en")
	w.toContact(u, "Anna", "10:00")
	u.ShareContact("+79995550022") // proves the phone: the web booking becomes theirs to see
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	_, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.boris.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "15:00"), Client: booking.ClientInput{Name: "Owner", Phone: "+79995550022"}})
	w.must(err)
	w.see(u, "✅ You are booked\nWhen: Tue 3 Mar, 15:00") // told of the web booking
	u.Send("/my")
	w.see(u, "2. Tue 3 Mar, 15:00")
	w.tap(u, "❌ Cancel 2")
	w.tap(u, "Yes, cancel")
	w.see(u, "Your booking is cancelled")
	w.jobsDone()
	if n := countText(u, "cancelled"); n != 1 {
		t.Fatalf("%d cancellation messages, want 1:%s", n, u.Dump())
	}
}

// Defect 11: messages Telegram had accepted while the bot was stopping
// were never recorded as sent, so a restart sent them again.
func TestStoppingRecordsMessagesInFlight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Slow", "en")
	entered := w.tg.SlowNext("sendMessage", 1, 700*time.Millisecond)
	u.Send("/help")
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the help message was never sent")
	}
	w.stop() // while Telegram is still answering
	if n := w.count(t, `SELECT count(*) FROM tg_outbox WHERE state = 'queued'`); n != 0 {
		t.Fatalf("%d messages left queued: the one in flight was not recorded", n)
	}
	w.start()
	u.Send("/lang")
	w.must(u.WaitButton("English", wait))
	if n := countText(u, "/my — your bookings"); n != 1 {
		t.Fatalf("the help was sent %d times:%s", n, u.Dump())
	}
}

// A Telegram contact shared by its owner is one Telegram has seen: a
// number libphonenumber calls possible but not valid (its metadata lags
// real allocations) is taken; +447700900123 was refused and asked for
// again, forever. A shared number that cannot be read at all is asked for
// typed, with an example of its country, and without the share button
// that would only send it again.
func TestSharedContactIsTakenWhenPossible(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Oliver", "en")
	w.toContact(u, "Anna", "11:00")
	u.ShareContact("447700900123")
	m := w.see(u, "Check your booking")
	if !strings.Contains(m.Text, "Phone: +447700900123") {
		t.Fatalf("confirm screen: %q", m.Text)
	}
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	if n := w.count(t, `SELECT count(*) FROM client_identities i JOIN clients c ON c.id = i.client_id
		WHERE c.phone = '+447700900123' AND i.external_id = $1`, fmt.Sprint(u.ID)); n != 1 {
		t.Fatalf("the proven phone is not the client's: %d", n)
	}

	v := w.tg.NewUser("Vera", "ru")
	v.Send("/start studio")
	w.tap(v, "Haircut")
	w.tap(v, "Anna")
	w.tap(v, "вт, 3 мар.")
	w.tap(v, "12:00")
	w.see(v, "поделитесь номером")
	v.ShareContact("4477")
	m = w.see(v, "не получается прочитать как телефон")
	if !strings.Contains(m.Text, "+44 7400 123456") || len(m.Reply) != 0 {
		t.Fatalf("a shared number that is no number: %q (reply keyboard %v)", m.Text, m.Reply)
	}
	// A typed number is still checked for validity, with the salon's example.
	v.Send("+7 999 000")
	m = w.see(v, "Это не похоже на номер телефона")
	if !strings.Contains(m.Text, "+7 912 345-67-89") {
		t.Fatalf("a typed bad number: %q", m.Text)
	}
	v.Send("+7 999 000-11-22")
	w.see(v, "Проверьте запись")
}
