package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/bot/tgtest"
)

// jobsDone waits until no notification or reminder job is left to run now.
func (w *world) jobsDone() {
	w.t.Helper()
	w.until("jobs to finish", func() bool {
		return w.count(w.t, `SELECT count(*) FROM river_job WHERE state IN ('available', 'running', 'retryable')`) == 0
	})
}

func TestMasterLinksAndIsNotified(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	code, _, err := w.Svc.NewLinkCode(ctx, w.salon.ID, w.anna.ID)
	w.must(err)
	master := w.tg.NewUser("Anna", "ru")
	master.Send("/link " + strings.ToLower(code))
	w.see(master, "Вы подключены как мастер Anna салона Studio")
	other := w.tg.NewUser("Boris", "ru")
	other.Send("/link " + code)
	w.see(other, "Код недействителен")

	client := w.tg.NewUser("Client", "en")
	w.toConfirm(client, "Anna", "11:00", "+7 999 800-00-01")
	w.tap(client, "Confirm")
	w.see(client, "You are booked")
	m := w.see(master, "🆕 Новая запись")
	if !strings.Contains(m.Text, "вт, 3 мар., 11:00") || !strings.Contains(m.Text, "Клиент: Client") {
		t.Fatalf("master's notification: %q", m.Text)
	}
	client.Send("/my")
	w.tap(client, "❌ Cancel 1")
	w.tap(client, "Yes, cancel")
	w.see(master, "❌ Запись отменена")
	w.jobsDone()
	// The client made both changes in the bot: the dialog told them, no
	// notification repeats it.
	if n := countText(client, "You are booked"); n != 1 {
		t.Fatalf("%d booked messages to the client:%s", n, client.Dump())
	}
}

// A client who proved their phone to the bot (by sharing their contact)
// books on the website, and the salon moves the booking: Telegram tells
// them both times.
func TestClientNotifiedOfChangesMadeElsewhere(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	client := w.tg.NewUser("Web client", "en")
	w.toContact(client, "Boris", "10:00")
	client.ShareContact("+7 999 900-00-01")
	w.tap(client, "Confirm")
	w.see(client, "You are booked")

	b, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "15:00"), Client: booking.ClientInput{Name: "Web", Phone: "+79999000001"}})
	w.must(err)
	m := w.see(client, "✅ You are booked\nWhen: Tue 3 Mar, 15:00")
	if !strings.Contains(m.Text, "Salon: Studio") {
		t.Fatalf("notification: %q", m.Text)
	}
	_, err = w.Svc.Reschedule(booking.As(ctx, booking.BySystem()), booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: b.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "16:00")})
	w.must(err)
	m = w.see(client, "🔁 Your booking is moved")
	if !strings.Contains(m.Text, "Tue 3 Mar, 16:00") || !strings.Contains(m.Text, "(was: Tue 3 Mar, 15:00)") {
		t.Fatalf("moved notification: %q", m.Text)
	}
	// One service of a visit moved: the notice says which, and where to.
	gloss := w.Service(t, w.salon, booking.SalonService{Name: "Gloss", DurationMin: 30})
	for _, who := range []*booking.Master{w.anna, w.boris} {
		w.must(w.Svc.SetOffers(ctx, w.salon.ID, who.ID, []booking.Offer{{ServiceID: w.haircut.ID}, {ServiceID: gloss.ID}}))
	}
	v, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, StartsAt: bookingtest.At(w.salon, testDay, "12:00"),
		Items:  []booking.VisitItem{{ServiceID: w.haircut.ID, MasterID: w.anna.ID}, {ServiceID: gloss.ID, MasterID: w.anna.ID}},
		Client: booking.ClientInput{Name: "Web", Phone: "+79999000001"}})
	w.must(err)
	w.see(client, "✅ You are booked\nWhen: Tue 3 Mar, 12:00")
	_, err = w.Svc.Reschedule(booking.As(ctx, booking.BySystem()), booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: v.Segments[1].ID,
		Segment: true, StartsAt: bookingtest.At(w.salon, testDay, "13:30"), MasterID: w.boris.ID})
	w.must(err)
	m = w.see(client, "🔁 Your booking is moved\nWhen: Tue 3 Mar, 12:00")
	if !strings.Contains(m.Text, "Gloss now starts at 13:30 (was 13:00), with Boris.") || strings.Contains(m.Text, "(was: ") {
		t.Fatalf("the notice of a move of one service: %q", m.Text)
	}
}

// Two hours before, the client is reminded; a reminder that would come
// far too late (the day-before one, for a booking made at short notice)
// is not sent.
func TestReminders(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	client := w.tg.NewUser("Forgetful", "en")
	client.Send("/help") // the chat exists, in English
	w.see(client, "/help")
	w.Clock.Set(bookingtest.At(w.salon, testDay, "09:00"))
	b, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "11:00"),
		Client:   booking.ClientInput{Name: "Forgetful", Phone: "+79990000777"}})
	w.must(err)
	// The salon knows this client's Telegram (as an import would say).
	_, err = w.Pool.Exec(ctx, `INSERT INTO client_identities (salon_id, client_id, channel, external_id, verified_by)
		VALUES ($1, $2, 'telegram', $3, 'admin')`, w.salon.ID, b.ClientID, fmt.Sprint(client.ID))
	w.must(err)
	// The sweep (River runs it every minute) finds the reminder due; a
	// second sweep sends nothing again.
	n, err := w.Svc.Remind(ctx)
	w.must(err)
	if n != 1 {
		t.Fatalf("%d reminders sent, want 1", n)
	}
	if n, err := w.Svc.Remind(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v", n, err)
	}
	m := w.see(client, "⏰ Reminder: in two hours you are booked")
	if !strings.Contains(m.Text, "Tue 3 Mar, 11:00") {
		t.Fatalf("reminder: %q", m.Text)
	}
	w.jobsDone()
	if n := countText(client, "tomorrow"); n != 0 {
		t.Fatalf("a stale day-before reminder was sent:%s", client.Dump())
	}
	if n := countText(client, "⏰"); n != 1 {
		t.Fatalf("%d reminders", n)
	}
}

var _ = tgtest.MaxPerWindow

// A reminder in Telegram carries Confirm, Move and Cancel: a tap on
// Confirm records the confirmation (through Telegram) once; a second tap
// says it was done; a stranger's forged tap on the booking finds nothing.
func TestReminderConfirmsWithOneTap(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	client, b := w.bookedInTelegram("Forgetful", "+79990000778")
	if _, err := w.Svc.Remind(ctx); err != nil {
		t.Fatal(err)
	}
	w.see(client, "⏰ Reminder: in two hours you are booked")
	if _, err := client.Tap("✅ I'll be there"); err != nil {
		t.Fatal(err)
	}
	w.see(client, "✅ Thank you! The salon knows you will come.")
	v, err := w.Svc.BookingView(ctx, w.salon.ID, b.ID)
	if err != nil || v.ConfirmedAt.IsZero() || v.ConfirmedVia != booking.ChannelTelegram {
		t.Fatalf("confirmed %v via %q: %v", v.ConfirmedAt, v.ConfirmedVia, err)
	}
	first := v.ConfirmedAt
	if _, err := client.Tap("✅ I'll be there"); err != nil {
		t.Fatal(err)
	}
	w.see(client, "You have confirmed already")
	if v, _ := w.Svc.BookingView(ctx, w.salon.ID, b.ID); !v.ConfirmedAt.Equal(first) {
		t.Errorf("a second tap moved the confirmation: %v -> %v", first, v.ConfirmedAt)
	}
	// Cancel, then keep it: the question and the list come below, and the
	// reminder stays as it was.
	reminder := w.see(client, "⏰ Reminder: in two hours you are booked")
	if _, err := w.Pool.Exec(context.Background(), `UPDATE salons SET cutoff_hours = 0 WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err) // (two hours before, cancelling is past the cutoff of 3)
	}
	w.tap(client, "Cancel")
	w.see(client, "Cancel this booking?")
	w.tap(client, "Keep it")
	w.see(client, "Your bookings:")
	for _, m := range client.Messages() {
		if m.ID == reminder.ID && m.Text != reminder.Text {
			t.Fatalf("the reminder became %q", m.Text)
		}
	}
	// Someone else forges the tap for this booking: not theirs.
	stranger := w.tg.NewUser("Stranger", "en")
	stranger.Send("/help")
	help := w.see(stranger, "/help")
	stranger.TapData(help, fmt.Sprintf("r:x:%d:%d", w.salon.ID, b.ID))
	w.jobsDone()
	if v, _ := w.Svc.BookingView(ctx, w.salon.ID, b.ID); v.Status != booking.StatusConfirmed {
		t.Errorf("a stranger's tap: %s", v.Status)
	}
	if countText(stranger, "Cancel this booking") != 0 {
		t.Errorf("the stranger was offered the booking:%s", stranger.Dump())
	}
}

// A Telegram message the admin sends again goes again (a new call of the
// bot's outbox, not the first one's key), and its row says sent.
func TestRetriedMessageGoesAgainInTelegram(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	client, b := w.bookedInTelegram("Again", "+79990000779")
	_, err := w.Svc.Remind(ctx)
	w.must(err)
	w.see(client, "⏰ Reminder")
	var id int64
	bookingtest.WaitFor(t, 10*time.Second, "the reminder's row to say sent", func() bool {
		err := w.Pool.QueryRow(ctx, `SELECT id FROM messages WHERE booking_id = $1 AND kind = 'reminder' AND state = 'sent'`, b.ID).Scan(&id)
		return err == nil
	})
	// As if Telegram had refused it.
	_, err = w.Pool.Exec(ctx, `UPDATE messages SET state = 'failed', error = 'Forbidden: bot was blocked by the user' WHERE id = $1`, id)
	w.must(err)
	w.must(w.Svc.RetryMessage(ctx, w.salon.ID, id))
	bookingtest.WaitFor(t, 10*time.Second, "the reminder again", func() bool { return countText(client, "⏰ Reminder") == 2 })
	bookingtest.WaitFor(t, 10*time.Second, "the row to say sent again", func() bool {
		var state string
		_ = w.Pool.QueryRow(ctx, `SELECT state FROM messages WHERE id = $1`, id).Scan(&state)
		return state == "sent"
	})
}

// bookedInTelegram is a client whose chat the salon knows (as an import
// would say) booked at 11:00 on the test day, the clock at 09:00: their
// two-hour reminder is due.
func (w *world) bookedInTelegram(name, phone string) (*tgtest.User, *booking.Booking) {
	w.t.Helper()
	ctx := bookingtest.System()
	client := w.tg.NewUser(name, "en")
	client.Send("/help")
	w.see(client, "/help")
	w.Clock.Set(bookingtest.At(w.salon, testDay, "09:00"))
	b, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "11:00"), Client: booking.ClientInput{Name: name, Phone: phone}})
	w.must(err)
	_, err = w.Pool.Exec(ctx, `INSERT INTO client_identities (salon_id, client_id, channel, external_id, verified_by)
		VALUES ($1, $2, 'telegram', $3, 'admin')`, w.salon.ID, b.ClientID, fmt.Sprint(client.ID))
	w.must(err)
	return client, b
}

// TestNoticesSayWhatABalancePaid: a chat client's bookings made elsewhere
// and paid with a certificate or a package: the notice says what it paid,
// what is left on it and what is left to pay at the salon; the salon's
// cancellation, what went back to it.
func TestNoticesSayWhatABalancePaid(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	client := w.tg.NewUser("Vera", "en")
	w.toContact(client, "Boris", "10:00")
	client.ShareContact("+7 999 900-00-07")
	w.tap(client, "Confirm")
	w.see(client, "You are booked")
	cert, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 50000})
	w.must(err)
	pkg, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{w.haircut.ID},
		Visits: 3, Client: booking.ClientInput{Phone: "+79999000007"}})
	w.must(err)
	book := func(hhmm string, pay booking.PayWith) *booking.Booking {
		t.Helper()
		b, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
			StartsAt: bookingtest.At(w.salon, testDay, hhmm), Client: booking.ClientInput{Name: "Vera", Phone: "+79999000007"}, PayWith: &pay})
		w.must(err)
		return b
	}
	b := book("15:00", booking.PayWith{Code: cert.Code})
	m := w.see(client, "✅ You are booked\nWhen: Tue 3 Mar, 15:00")
	price := b.Price - 50000
	for _, want := range []string{"💳 500\u00a0₽ paid with the certificate: 0\u00a0₽ left on it", "To pay at the salon: " + price.Format("RUB", "en")} {
		if !strings.Contains(m.Text, want) {
			t.Fatalf("the notice of a booking paid in part with a certificate lacks %q: %q", want, m.Text)
		}
	}
	b = book("17:00", booking.PayWith{Code: pkg.Code})
	m = w.see(client, "✅ You are booked\nWhen: Tue 3 Mar, 17:00")
	if !strings.Contains(m.Text, "💳 Paid with the package …"+pkg.Hint+": 1 visit, 2 visits left") || strings.Contains(m.Text, "To pay") {
		t.Fatalf("the notice of a booking paid with a package: %q", m.Text)
	}
	_, err = w.Svc.Cancel(booking.As(ctx, booking.BySystem()), booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID})
	w.must(err)
	m = w.see(client, "❌ Your booking is cancelled")
	if !strings.Contains(m.Text, "Given back to the package …"+pkg.Hint+": 1 visit.\nLeft on it: 3 visits.") {
		t.Fatalf("the notice of the salon's cancellation: %q", m.Text)
	}
	// Booked without it, then paid with it at the desk: the chat hears so.
	b, err = w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "18:00"), Client: booking.ClientInput{Name: "Vera", Phone: "+79999000007"}})
	w.must(err)
	w.see(client, "✅ You are booked\nWhen: Tue 3 Mar, 18:00")
	desk := booking.As(ctx, booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin, Email: "desk@salon.test"}))
	_, err = w.Svc.ApplyBalance(desk, w.salon.ID, b.ID, booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID})
	w.must(err)
	m = w.see(client, "💳 The salon paid your booking with your package or certificate\nWhen: Tue 3 Mar, 18:00")
	if !strings.Contains(m.Text, "💳 Paid with the package …"+pkg.Hint+": 1 visit, 2 visits left") {
		t.Fatalf("the notice of the desk's payment: %q", m.Text)
	}
}

// TestTheNoticeOfACancellationSaysTheDepositWasKept: a booking made on
// the web, its deposit paid online, cancelled at the desk at the client's
// request under a policy that keeps deposits: the client's chat is told
// the deposit was not refunded; under one that refunds, it is not told so.
func TestTheNoticeOfACancellationSaysTheDepositWasKept(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	w := newWorldWith(t, []booking.Option{booking.WithPayments(&psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret})})
	ctx := bookingtest.System()
	_, err := w.Svc.UpdateService(ctx, w.salon.ID, booking.SalonService{ID: w.haircut.ID, Name: "Haircut", DurationMin: 60,
		Price: 250000, Deposit: 50000, Active: true})
	w.must(err)
	client := w.tg.NewUser("Vera", "en")
	w.toContact(client, "Boris", "10:00")
	client.ShareContact("+7 999 900-00-08")
	w.tap(client, "Confirm")
	w.see(client, "The deposit of 500")
	for _, c := range []struct {
		policy, hhmm string
		kept         bool
	}{{"never", "15:00", true}, {"always", "17:00", false}} {
		_, err := w.Pool.Exec(ctx, `UPDATE salons SET refund_policy = $2, catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID, c.policy)
		w.must(err)
		b, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
			StartsAt: bookingtest.At(w.salon, testDay, c.hhmm), Client: booking.ClientInput{Name: "Vera", Phone: "+79999000008"}})
		w.must(err)
		p, err := w.Svc.StartPayment(booking.As(ctx, booking.ByToken(b.ManageToken)), b.ID, nil)
		w.must(err)
		fake.Pay(p.ExternalID)
		_, err = w.Svc.PaymentNotified(ctx, "yookassa", p.ExternalID)
		w.must(err)
		// The desk cancels it: the client phoned.
		desk := booking.As(ctx, booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
		_, err = w.Svc.Cancel(desk, booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID, ForClient: true})
		w.must(err)
		m := w.see(client, "❌ Your booking is cancelled\nWhen: Tue 3 Mar, "+c.hhmm)
		if strings.Contains(m.Text, "By the salon's cancellation policy, the deposit of 500\u00a0₽ was not refunded.") != c.kept {
			t.Errorf("%s: the notice of the cancellation: %q", c.policy, m.Text)
		}
	}
	// The salon's own cancellation (a master ill): said so, with an apology.
	b, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "19:00"), Client: booking.ClientInput{Name: "Vera", Phone: "+79999000008"}})
	w.must(err)
	desk := booking.As(ctx, booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
	_, err = w.Svc.Cancel(desk, booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID, Stated: true})
	w.must(err)
	w.see(client, "❌ The salon had to cancel your booking. We are sorry\nWhen: Tue 3 Mar, 19:00")
	// The salon's own move: said so, with an apology.
	moved, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "16:00"), Client: booking.ClientInput{Name: "Vera", Phone: "+79999000008"}})
	w.must(err)
	_, err = w.Svc.Reschedule(desk, booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: moved.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "17:00"), BySalon: true})
	w.must(err)
	w.see(client, "🔁 The salon had to change your booking. We are sorry\nWhen: Tue 3 Mar, 17:00")
}
