package booking_test

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/mail"
	"salon/booking/mail/mailtest"
	"salon/booking/sms"
	"salon/booking/sms/smstest"
	"salon/internal/courier"
)

// 10,000 reminders due at once (5,000 bookings of one salon with 20
// masters, each reminded two days before by e-mail and SMS), sent by three
// replicas together: every one goes once (Mailpit's count, the fake
// SMS.ru's list of numbers), no second hands the SMS provider more than
// its limit (the provider's own clock, give or take the sends in flight at
// a second's edge), and another salon's confirmation made meanwhile goes
// among the first, not behind the backlog. Figures are logged.
func TestTenThousandRemindersAtOnce(t *testing.T) {
	const (
		masters  = 20
		bookings = 5000
		limit    = 250 // messages a second each provider takes
	)
	mp := mailtest.Start(t)
	fake := smstest.New(t)
	sender, err := mail.New("smtp://salon:secret@"+mp.SMTP, "Studio <booking@studio.example>")
	if err != nil {
		t.Fatal(err)
	}
	opts := func() []booking.Option {
		return []booking.Option{booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			booking.WithCourier(booking.ChannelEmail, &courier.Email{Mail: sender, Base: msgBase}, limit),
			booking.WithCourier(booking.ChannelSMS, &courier.SMS{Provider: &sms.SMSRU{APIID: fake.APIID, BaseURL: fake.URL}, Base: msgBase}, limit)}
	}
	e := bookingtest.New(t, opts()...)
	replicas := []*booking.Service{e.Svc}
	for range 2 {
		replicas = append(replicas, booking.New(e.Pool, append(opts(), booking.WithClock(e.Clock.Now))...))
	}
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Name: "Studio", Locale: "ru"})
	if _, err := e.Svc.UpdateMessageSettings(ctx, salon.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00",
		ReminderOffsets: []time.Duration{48 * time.Hour}, EmailKinds: []booking.MessageKind{booking.KindReminder},
		SMSKinds: []booking.MessageKind{booking.KindReminder}}); err != nil {
		t.Fatal(err)
	}
	svc := e.Service(t, salon, booking.SalonService{Name: "Экспресс", DurationMin: 5})
	for range masters {
		e.Master(t, salon, svc)
	}
	// 250 back-to-back 5-minute bookings a master, 25 to 46 hours from now,
	// and a reminder two days before (a salon's setting): every one is due
	// (its time has come, half its lead has not passed).
	start := e.Clock.Now().Add(25 * time.Hour)
	// (Clients who came before: 5,000 new clients a day would be a flood
	// of bookings, whose SMS the salon's caps hold back.)
	if _, err := e.Pool.Exec(ctx, `INSERT INTO clients (salon_id, name, phone, created_at)
		SELECT $1, 'Клиент ' || g, '+7903' || lpad(g::text, 7, '0'), $3::timestamptz - interval '1 week' FROM generate_series(1, $2) g`,
		salon.ID, bookings, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `
		INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source, price, contact_email)
		SELECT $1, m.id, $2, c.id, $3::timestamptz + ((c.rn - 1) / $4) * interval '5 minutes', 5, 'confirmed', 'widget', 0,
		       'client' || c.rn || '@example.com'
		FROM (SELECT id, row_number() OVER (ORDER BY id) rn FROM clients WHERE salon_id = $1) c
		JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 k FROM masters WHERE salon_id = $1) m ON m.k = (c.rn - 1) % $4`,
		salon.ID, svc.ID, start, masters); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	n, err := e.Svc.Remind(ctx)
	if err != nil || n != bookings {
		t.Fatalf("the sweep planned %d reminders (%v), want %d", n, err, bookings)
	}
	planned := time.Since(began)
	// Another salon's client books meanwhile: their confirmation does not
	// wait behind the first salon's 10,000 reminders.
	other := e.Salon(t, booking.Salon{Name: "Другой"})
	if _, err := e.Svc.UpdateMessageSettings(ctx, other.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00",
		SMSKinds: []booking.MessageKind{booking.KindConfirmation}}); err != nil {
		t.Fatal(err)
	}
	osvc := e.Service(t, other, booking.SalonService{Name: "Стрижка", DurationMin: 30})
	om := e.Master(t, other, osvc)
	e.AllDay(t, other, om, booking.DateOf(e.Clock.Now().In(other.Location())), 2)
	_, err = e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: other.ID, ServiceID: osvc.ID, MasterID: om.ID,
		StartsAt: e.Clock.Now().Add(3 * time.Hour).Truncate(time.Hour),
		Client:   booking.ClientInput{Name: "Ольга", Phone: "+79161112233", Email: "olga@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, r := range replicas {
		wg.Go(func() {
			for {
				n, err := r.SendMessages(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	var sent, notSent int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'sent'), count(*) FILTER (WHERE state <> 'sent') FROM messages`).
		Scan(&sent, &notSent); err != nil {
		t.Fatal(err)
	}
	if sent != 2*bookings+1 || notSent != 0 {
		t.Errorf("%d messages sent, %d not", sent, notSent)
	}
	// The other salon's SMS confirmation went among the first, not after
	// the 5,000 reminder SMS.
	at := -1
	for i, m := range fake.Sent() {
		if m.To == "79161112233" {
			at = i
		}
	}
	if at < 0 || at > 2*limit {
		t.Errorf("the other salon's confirmation was SMS number %d of %d", at+1, len(fake.Sent()))
	}
	var texts []smstest.Message
	for _, m := range fake.Sent() {
		if m.To != "79161112233" {
			texts = append(texts, m)
		}
	}
	seen := map[string]bool{}
	for _, m := range texts {
		if seen[m.To] {
			t.Errorf("%s got two SMS", m.To)
		}
		seen[m.To] = true
		if !strings.HasPrefix(m.Text, "Напоминание: Экспресс") {
			t.Errorf("an SMS: %q", m.Text)
			break
		}
	}
	if len(texts) != bookings {
		t.Errorf("the provider took %d SMS, want %d", len(texts), bookings)
	}
	if got := mp.Count(t); got != bookings {
		t.Errorf("the mailbox has %d e-mails, want %d", got, bookings)
	}
	peak := fake.PeakPerSecond()
	if peak > limit+24 { // 3 replicas x 8 sends in flight
		t.Errorf("the SMS provider took %d in one second; its limit is %d", peak, limit)
	}
	t.Logf("%d reminders (%d e-mails, %d SMS): planned in %v by one sweep, all sent in %v by 3 replicas; SMS provider's peak %d a second (limit %d); "+
		"another salon's confirmation was SMS number %d", 2*bookings, bookings, len(texts), planned.Round(time.Millisecond), took.Round(time.Millisecond),
		peak, limit, at+1)
	if n, err := e.Svc.Remind(ctx); err != nil || n != 0 {
		t.Errorf("a second sweep planned %d (%v)", n, err)
	}
}
