package booking_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/mail"
	"salon/booking/mail/mailtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/booking/sms"
	"salon/booking/sms/smstest"
	"salon/i18n"
	"salon/internal/courier"
)

// msgWorld is a salon whose clients hear by e-mail (a real SMTP server,
// Mailpit) and SMS (a fake SMS.ru), served by one or more replicas of the
// core on one database.
type msgWorld struct {
	*bookingtest.Env
	t        *testing.T
	replicas []*booking.Service
	mail     *mailtest.Server
	sms      *smstest.Server
	salon    *booking.Salon
	haircut  *booking.SalonService
	anna     *booking.Master
	night    *booking.Master // works round the clock
	day      booking.Date    // the day after the clock's
}

const msgBase = "https://booking.example"

func newMsgWorld(t *testing.T, replicas int, opts ...booking.Option) *msgWorld {
	t.Helper()
	mp := mailtest.Start(t)
	fake := smstest.New(t)
	sender, err := mail.New("smtp://salon:secret@"+mp.SMTP, "booking@studio.example") // (no name: the salon's is given)
	if err != nil {
		t.Fatal(err)
	}
	couriers := func() []booking.Option {
		return append([]booking.Option{
			booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			booking.WithCourier(booking.ChannelEmail, &courier.Email{Mail: sender, Base: msgBase}, 0),
			booking.WithCourier(booking.ChannelSMS, &courier.SMS{Provider: &sms.SMSRU{APIID: fake.APIID, BaseURL: fake.URL}, Base: msgBase}, 0),
		}, opts...)
	}
	e := bookingtest.New(t, couriers()...)
	w := &msgWorld{Env: e, t: t, mail: mp, sms: fake, replicas: []*booking.Service{e.Svc}}
	for range replicas - 1 {
		w.replicas = append(w.replicas, booking.New(e.Pool, append(couriers(), booking.WithClock(e.Clock.Now))...))
	}
	w.salon = e.Salon(t, booking.Salon{Name: "Studio Anna", Address: "Tverskaya 1", Phone: "+74951234567", CutoffHours: 3, Locale: "ru"})
	if _, err := e.Svc.UpdateMessageSettings(bookingtest.System(), w.salon.ID, booking.MessageSettings{
		QuietFrom: "21:00", QuietTo: "09:00", ReminderOffsets: []time.Duration{24 * time.Hour, 2 * time.Hour},
		EmailKinds: booking.ClientKinds,
		SMSKinds:   []booking.MessageKind{booking.KindConfirmation, booking.KindChanged, booking.KindCancelled, booking.KindReminder},
	}); err != nil {
		t.Fatal(err)
	}
	w.haircut = e.Service(t, w.salon, booking.SalonService{Name: "Стрижка", DurationMin: 60})
	w.anna = e.Master(t, w.salon, w.haircut)
	w.night = e.Master(t, w.salon, w.haircut)
	w.day = booking.DateOf(e.Clock.Now().In(w.salon.Location())).AddDays(1)
	e.Shift(t, w.salon, w.anna, w.day.AddDays(-1), 4, "10:00", "20:00")
	e.AllDay(t, w.salon, w.night, w.day.AddDays(-1), 4)
	return w
}

// book books as a visitor of the widget would, with an e-mail and a phone.
func (w *msgWorld) book(m *booking.Master, day booking.Date, at, email string) *booking.Booking {
	w.t.Helper()
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		ServiceID: w.haircut.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, day, at),
		Client: booking.ClientInput{Name: "Мария", Phone: bookingtest.Phone(), Email: email, Lang: "ru"}})
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// jobs runs River's workers on every replica, as salon serve does.
func (w *msgWorld) jobs() { w.t.Helper(); _ = runJobs(w.t, w.Pool, w.replicas...) }

// sendAll has every replica send due messages at once, until none is due.
func (w *msgWorld) sendAll() {
	w.t.Helper()
	var wg sync.WaitGroup
	for _, svc := range w.replicas {
		wg.Go(func() {
			if _, err := svc.SendMessages(bookingtest.System()); err != nil {
				w.t.Error(err)
			}
		})
	}
	wg.Wait()
}

// mailed waits (with a deadline, every replica sending) for the e-mail
// whose subject begins with subject, to to ("": anyone), as the mailbox
// has it, and returns its text and HTML.
func (w *msgWorld) mailed(subject, to string) string {
	w.t.Helper()
	var text string
	bookingtest.WaitFor(w.t, 30*time.Second, "the e-mail "+subject, func() bool {
		w.sendAll()
		for _, x := range w.mail.Messages(w.t) {
			if strings.HasPrefix(x.Subject, subject) && (to == "" || len(x.To) == 1 && x.To[0].Address == to) {
				text = x.Text + x.HTML
				return true
			}
		}
		return false
	})
	return text
}

// messages are the booking's rows, as the panel lists them.
func (w *msgWorld) messages(id int64) []booking.Message {
	w.t.Helper()
	list, err := w.Svc.MessagesOf(bookingtest.System(), w.salon.ID, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return list
}

// texted waits (with a deadline, every replica sending) for the SMS to
// phone that begins with prefix, as the fake SMS.ru took it, and returns
// its text.
func (w *msgWorld) texted(phone, prefix string) string {
	w.t.Helper()
	var text string
	bookingtest.WaitFor(w.t, 30*time.Second, "the SMS "+prefix, func() bool {
		w.sendAll()
		for _, x := range w.smsTo(phone) {
			if strings.HasPrefix(x.Text, prefix) {
				text = x.Text
				return true
			}
		}
		return false
	})
	return text
}

// smsTo lists the texts the fake SMS.ru took for a phone.
func (w *msgWorld) smsTo(phone string) []smstest.Message {
	var out []smstest.Message
	for _, m := range w.sms.Sent() {
		if m.To == strings.TrimPrefix(phone, "+") {
			out = append(out, m)
		}
	}
	return out
}

// remindersTo lists the reminders the fake SMS.ru took for a phone.
func (w *msgWorld) remindersTo(phone string) []smstest.Message {
	var out []smstest.Message
	for _, m := range w.smsTo(phone) {
		if strings.HasPrefix(m.Text, "Напоминание") {
			out = append(out, m)
		}
	}
	return out
}

func (w *msgWorld) phoneOf(b *booking.Booking) string {
	w.t.Helper()
	var phone string
	if err := w.Pool.QueryRow(context.Background(), `SELECT phone FROM clients WHERE id = $1`, b.ClientID).Scan(&phone); err != nil {
		w.t.Fatal(err)
	}
	return phone
}

var linkRE = regexp.MustCompile(msgBase + `/a/([A-Za-z0-9_-]{22})`)

// A widget booking with an e-mail and a phone, made while three replicas
// run the jobs and send: one confirmation in the mailbox (both parts, the
// .ics, the salon's address, the manage link, List-Unsubscribe) and one
// SMS (its parts counted), whichever replica sent them.
func TestConfirmationOncePerChannelAcrossReplicas(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 3)
	w.jobs()
	ctx, cancel := context.WithCancel(bookingtest.System())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, svc := range w.replicas {
		wg.Go(func() { _ = svc.RunMessages(ctx, 20*time.Millisecond) })
	}
	defer cancel()
	b := w.book(w.anna, w.day, "12:00", "maria@example.com")
	phone := w.phoneOf(b)
	bookingtest.WaitFor(t, 30*time.Second, "the confirmation on both channels", func() bool {
		list := w.messages(b.ID)
		if len(list) != 2 {
			return false
		}
		for _, m := range list {
			if m.State != booking.MessageSent {
				return false
			}
		}
		return true
	})
	cancel()
	wg.Wait()
	if n := w.mail.Count(t); n != 1 {
		t.Fatalf("%d e-mails in the mailbox, want 1", n)
	}
	if got := w.smsTo(phone); len(got) != 1 {
		t.Fatalf("%d SMS to %s, want 1: %v", len(got), phone, got)
	}
	m := w.mail.Messages(t)[0]
	if !strings.HasPrefix(m.Subject, "Вы записаны: Стрижка, ") || !strings.Contains(m.Subject, "12:00") || m.To[0].Address != "maria@example.com" {
		t.Errorf("subject %q to %v", m.Subject, m.To)
	}
	manage := fmt.Sprintf("%s/w/%s/manage/%d?lang=ru#t=", msgBase, w.salon.Slug, b.ID)
	for _, part := range []string{m.Text, m.HTML} {
		for _, want := range []string{"Здравствуйте, Мария!", "Tverskaya 1", "7 495 123-45-67", "Я приду", "Отменить", "Перенести"} {
			if !strings.Contains(part, want) {
				t.Errorf("the e-mail lacks %q:\n%s", want, part)
			}
		}
	}
	if !strings.Contains(m.Text, manage) || !strings.Contains(m.HTML, strings.ReplaceAll(manage, "&", "&amp;")) {
		t.Errorf("no manage link %s in:\n%s", manage, m.Text)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].FileName != fmt.Sprintf("booking-%d.ics", b.ID) {
		t.Errorf("attachments: %+v", m.Attachments)
	} else if ics := string(w.mail.Part(t, m.ID, m.Attachments[0].PartID)); !strings.Contains(ics, "BEGIN:VEVENT") || !strings.Contains(ics, "Tverskaya 1") {
		t.Errorf(".ics: %s", ics)
	}
	if u := m.Headers["List-Unsubscribe"]; len(u) != 1 || !linkRE.MatchString(u[0]) {
		t.Errorf("List-Unsubscribe: %v", u)
	} else if link := u[0][1 : len(u[0])-1]; !strings.Contains(m.Text, "Отписаться от писем: "+link) {
		t.Errorf("the plain-text part has no unsubscribe link %s:\n%s", link, m.Text)
	}
	if m.From.Name != "Studio Anna" || m.From.Address != "booking@studio.example" {
		t.Errorf("from %+v, want the salon's name", m.From)
	}
	for _, row := range w.messages(b.ID) {
		if row.Kind != booking.KindConfirmation {
			t.Errorf("a %s message", row.Kind)
		}
		if row.Channel == booking.ChannelSMS && (row.Segments < 2 || row.ProviderID == "") {
			t.Errorf("the SMS row: %+v", row)
		}
	}
	sent := w.smsTo(phone)[0].Text
	if !strings.Contains(sent, "Вы записаны: Стрижка") || len(linkRE.FindAllString(sent, -1)) != 2 {
		t.Errorf("the SMS: %q", sent)
	}
	if parts, ucs2 := sms.Segments(sent); !ucs2 || parts < 2 {
		t.Errorf("the SMS is %d parts (ucs2 %v): %q", parts, ucs2, sent)
	}
}

// Reminders are planned ahead and rebuilt when sent: a booking cancelled
// before its reminder gets none, a moved one hears of its new time, the
// night holds SMS back to the morning edge (or to the evening before, when
// the morning is too late), e-mail goes at once, and an unsubscribed
// address hears no more.
func TestRemindersFollowTheBooking(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	loc := w.salon.Location()
	a := w.book(w.anna, w.day, "12:00", "a@example.com")
	moved := w.book(w.anna, w.day, "14:00", "moved@example.com")
	early := w.book(w.anna, w.day, "16:00", "early@example.com")
	late := w.book(w.night, w.day, "23:00", "late@example.com")
	evening := w.book(w.night, w.day, "21:00", "evening@example.com")
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{SalonID: w.salon.ID, BookingID: early.ID}); err != nil {
		t.Fatal(err)
	}
	// At 09:00 the day before, the sweep plans what comes due within 13
	// hours; nothing is due yet.
	if _, err := w.Svc.Remind(sys); err != nil {
		t.Fatal(err)
	}
	w.sendAll()
	for _, m := range w.sms.Sent() {
		if !strings.HasPrefix(m.Text, "Вы записаны") {
			t.Fatalf("sent before it was due: %q", m.Text)
		}
	}
	// The 14:00 booking moves to 15:00 before its reminder's time.
	if _, err := w.Svc.Reschedule(sys, booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: moved.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "15:00")}); err != nil {
		t.Fatal(err)
	}
	at := func(day booking.Date, hhmm string) {
		w.Clock.Set(bookingtest.At(w.salon, day, hhmm))
		if _, err := w.Svc.Remind(sys); err != nil {
			t.Fatal(err)
		}
		w.sendAll()
	}
	at(w.day.AddDays(-1), "12:00")
	if got := w.remindersTo(w.phoneOf(a)); len(got) != 1 || !strings.Contains(got[0].Text, "Напоминание: Стрижка") || !strings.Contains(got[0].Text, "12:00") {
		t.Fatalf("the 12:00 booking's reminder: %v", got)
	}
	at(w.day.AddDays(-1), "14:00")
	if got := w.remindersTo(w.phoneOf(moved)); len(got) != 0 {
		t.Fatalf("a reminder of the old time: %v", got)
	}
	for _, m := range w.messages(moved.ID) {
		if m.Kind == booking.KindReminder && m.StartsAt.Equal(moved.StartsAt) && m.State != booking.MessageDropped {
			t.Errorf("the old time's reminder is %s", m.State)
		}
	}
	at(w.day.AddDays(-1), "15:00")
	if got := w.remindersTo(w.phoneOf(moved)); len(got) != 1 || !strings.Contains(got[0].Text, "15:00") {
		t.Fatalf("the moved booking's reminder: %v", got)
	}
	at(w.day.AddDays(-1), "16:00")
	if got := w.remindersTo(w.phoneOf(early)); len(got) != 0 {
		t.Fatalf("a reminder of a cancelled booking: %v", got)
	}
	// 21:00 is the night: the 21:00 booking's day-before reminder waits for
	// the morning edge; the 23:00 one's too; their e-mails go now.
	at(w.day.AddDays(-1), "23:00")
	if got := w.remindersTo(w.phoneOf(late)); len(got) != 0 {
		t.Fatalf("an SMS at 23:00: %v", got)
	}
	if !w.mailTo("late@example.com", "Напоминание") || !w.mailTo("evening@example.com", "Напоминание") {
		t.Fatal("the e-mail reminders did not go at their time")
	}
	// Unsubscribe from the 12:00 booking's reminder e-mail: its 2-hour
	// reminder (planned already) comes by SMS only.
	var token string
	for _, m := range w.mail.Messages(t) {
		if m.To[0].Address == "a@example.com" && strings.HasPrefix(m.Subject, "Напоминание") {
			token = linkRE.FindStringSubmatch(m.Headers["List-Unsubscribe"][0])[1]
		}
	}
	visitor := booking.As(context.Background(), booking.Visitor())
	if l, err := w.Svc.OpenLink(visitor, token); err != nil || l.Action != booking.LinkUnsubscribe || l.Address != "a@example.com" {
		t.Fatalf("open the unsubscribe link: %+v %v", l, err)
	}
	if r, err := w.Svc.UseLink(visitor, token); err != nil || r.Already {
		t.Fatalf("unsubscribe: %+v %v", r, err)
	}
	at(w.day, "08:59")
	if got := w.remindersTo(w.phoneOf(late)); len(got) != 0 {
		t.Fatalf("an SMS before the morning edge: %v", got)
	}
	at(w.day, "09:00")
	for _, b := range []*booking.Booking{late, evening} {
		got := w.remindersTo(w.phoneOf(b))
		if len(got) != 1 {
			t.Fatalf("at the morning edge: %v", got)
		}
		for _, m := range w.messages(b.ID) {
			if m.Channel == booking.ChannelSMS && m.Lead == 24*time.Hour && m.SentAt.In(loc).Format("15:04") != "09:00" {
				t.Errorf("sent at %s", m.SentAt.In(loc))
			}
		}
	}
	at(w.day, "10:00")
	if got := w.remindersTo(w.phoneOf(a)); len(got) != 2 || !strings.Contains(got[1].Text, "12:00") {
		t.Errorf("the 2-hour SMS: %v", got)
	}
	n := 0
	for _, m := range w.mail.Messages(t) {
		if m.To[0].Address == "a@example.com" && strings.HasPrefix(m.Subject, "Напоминание") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d reminder e-mails to the unsubscribed address, want the 1 before", n)
	}
	// The 21:00 booking's 2-hour reminder is due at 19:00; the 23:00 one's
	// at 21:00, in the night, and the morning is after it: it goes at the
	// evening edge, 20:59.
	at(w.day, "19:00")
	if got := w.remindersTo(w.phoneOf(evening)); len(got) != 2 {
		t.Fatalf("the 2-hour reminder at 19:00: %v", got)
	}
	at(w.day, "20:58")
	if got := w.remindersTo(w.phoneOf(late)); len(got) != 1 {
		t.Fatalf("too early: %v", got)
	}
	at(w.day, "20:59")
	if got := w.remindersTo(w.phoneOf(late)); len(got) != 2 || !strings.Contains(got[1].Text, "23:00") {
		t.Fatalf("the 2-hour reminder of the 23:00 booking at the evening edge: %v", got)
	}
}

// mailTo reports whether the mailbox has a message to addr whose subject
// starts with prefix.
func (w *msgWorld) mailTo(addr, prefix string) bool {
	for _, m := range w.mail.Messages(w.t) {
		if m.To[0].Address == addr && strings.HasPrefix(m.Subject, prefix) {
			return true
		}
	}
	return false
}

// One tap: the confirm links of an e-mail and of an SMS confirm once
// (through their channel), a GET of any link changes nothing, a used or
// expired link says so, and a cancellation past the cutoff is refused.
func TestOneTapLinks(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	visitor := booking.As(context.Background(), booking.Visitor())
	a := w.book(w.anna, w.day, "12:00", "a@example.com")
	b := w.book(w.anna, w.day, "15:00", "b@example.com")
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "15:00"))
	if _, err := w.Svc.Remind(sys); err != nil {
		t.Fatal(err)
	}
	w.sendAll()
	links := func(addr string) []string {
		for _, m := range w.mail.Messages(t) {
			if m.To[0].Address == addr && strings.HasPrefix(m.Subject, "Напоминание") {
				var out []string
				for _, x := range linkRE.FindAllStringSubmatch(m.Text, -1) {
					out = append(out, x[1])
				}
				if len(out) == 4 && strings.Contains(m.Headers["List-Unsubscribe"][0], out[3]) {
					out = out[:3] // (the last: unsubscribe, as List-Unsubscribe says)
				}
				return out // confirm, move, cancel
			}
		}
		t.Fatalf("no e-mail to %s", addr)
		return nil
	}
	la := links("a@example.com")
	if len(la) != 3 {
		t.Fatalf("links: %v", la)
	}
	// A mail scanner opens every link: nothing changes.
	for _, tok := range la {
		if _, err := w.Svc.OpenLink(visitor, tok); err != nil {
			t.Fatal(err)
		}
	}
	v, err := w.Svc.BookingView(sys, w.salon.ID, a.ID)
	if err != nil || v.Status != booking.StatusConfirmed || !v.ConfirmedAt.IsZero() {
		t.Fatalf("after the GETs: %+v %v", v, err)
	}
	r, err := w.Svc.UseLink(visitor, la[0])
	if err != nil || r.Action != booking.LinkConfirm || r.Already {
		t.Fatalf("confirm: %+v %v", r, err)
	}
	if again, err := w.Svc.UseLink(visitor, la[0]); err != nil || !again.Already {
		t.Fatalf("confirm again: %+v %v", again, err)
	}
	if v, _ := w.Svc.BookingView(sys, w.salon.ID, a.ID); v.ConfirmedAt.IsZero() || v.ConfirmedVia != booking.ChannelEmail {
		t.Errorf("confirmed %v via %q", v.ConfirmedAt, v.ConfirmedVia)
	}
	// The SMS of b: its confirm link.
	sent := w.remindersTo(w.phoneOf(b))
	if len(sent) != 1 {
		t.Fatalf("SMS: %v", sent)
	}
	lb := linkRE.FindAllStringSubmatch(sent[0].Text, -1)
	if _, err := w.Svc.UseLink(visitor, lb[0][1]); err != nil {
		t.Fatal(err)
	}
	if v, _ := w.Svc.BookingView(sys, w.salon.ID, b.ID); v.ConfirmedVia != booking.ChannelSMS {
		t.Errorf("b confirmed via %q", v.ConfirmedVia)
	}
	// Cancel b by its e-mail link, before the cutoff; the link is then used.
	lbm := links("b@example.com")
	if c, err := w.Svc.UseLink(visitor, lbm[2]); err != nil || c.Booking.Status != booking.StatusCancelled {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	if _, err := w.Svc.UseLink(visitor, lbm[2]); !errors.Is(err, booking.ErrLinkUsed) {
		t.Errorf("a used cancel link: %v", err)
	}
	// Two hours before a (cutoff 3 h): too late to cancel online.
	w.Clock.Set(bookingtest.At(w.salon, w.day, "10:00"))
	if _, err := w.Svc.UseLink(visitor, la[2]); !errors.Is(err, booking.ErrTooLate) {
		t.Errorf("a cancel past the cutoff: %v", err)
	}
	if v, _ := w.Svc.BookingView(sys, w.salon.ID, a.ID); v.Status != booking.StatusConfirmed {
		t.Errorf("a is %s", v.Status)
	}
	// After the start, the links have expired.
	w.Clock.Set(bookingtest.At(w.salon, w.day, "12:30"))
	if l, err := w.Svc.OpenLink(visitor, la[1]); err != nil || l.State != booking.LinkExpired {
		t.Errorf("an old move link: %+v %v", l, err)
	}
	if _, err := w.Svc.UseLink(visitor, la[1]); !errors.Is(err, booking.ErrLinkExpired) {
		t.Errorf("an expired link: %v", err)
	}
	if _, err := w.Svc.OpenLink(visitor, "AAAAAAAAAAAAAAAAAAAAAA"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("a made-up link: %v", err)
	}
}

// A provider failing half its calls, with 503s (nothing taken), 500s and
// lost answers (taken, or maybe, the caller never told): every message is sent once or
// failed with its reason, none twice, with three replicas sending.
func TestFailingProviderSendsNothingTwice(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 3)
	var mu sync.Mutex
	calls := 0
	w.sms.Fail(func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		calls++
		switch calls % 6 {
		case 0:
			return 503 // not now: tried again
		case 1:
			return smstest.LoseAnswer
		case 2:
			return 500 // it may have taken it
		}
		return 0
	})
	var list []*booking.Booking
	for i := range 8 {
		list = append(list, w.book(w.anna, w.day, fmt.Sprintf("%02d:00", 10+i), ""))
		list = append(list, w.book(w.night, w.day, fmt.Sprintf("%02d:00", 10+i), ""))
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "18:00"))
	if _, err := w.Svc.Remind(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	for range 10 { // each round after the longest backoff
		w.sendAll()
		w.Clock.Advance(17 * time.Minute)
	}
	sent, failed := 0, 0
	for _, b := range list {
		texts := w.remindersTo(w.phoneOf(b))
		for _, m := range w.messages(b.ID) {
			if m.Kind != booking.KindReminder || m.Lead != 24*time.Hour {
				continue
			}
			switch m.State {
			case booking.MessageSent:
				sent++
				if len(texts) != 1 {
					t.Errorf("booking %d: sent, and the provider took %d texts", b.ID, len(texts))
				}
			case booking.MessageFailed:
				failed++
				if !strings.Contains(m.Error, "may or may not have gone") || len(texts) > 1 {
					t.Errorf("booking %d: failed with %q, %d texts", b.ID, m.Error, len(texts))
				}
			default:
				t.Errorf("booking %d: %s", b.ID, m.State)
			}
		}
	}
	t.Logf("%d reminders sent once, %d failed (their answers lost), %d provider calls", sent, failed, calls)
	if sent+failed != len(list) || sent == 0 || failed == 0 {
		t.Errorf("%d sent, %d failed of %d", sent, failed, len(list))
	}
}

// The reminders' effect, by month: of the reminded bookings, those
// confirmed by a tap, those not, and the hold-out (plain reminders, no
// answers), each with its no-shows and late cancellations.
func TestReminderEffectByGroup(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	if _, err := w.Svc.UpdateMessageSettings(sys, w.salon.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00",
		ReminderOffsets: []time.Duration{24 * time.Hour}, EmailKinds: booking.ClientKinds, HoldoutPct: 50}); err != nil {
		t.Fatal(err)
	}
	var list []*booking.Booking
	for i := range 8 {
		list = append(list, w.book(w.night, w.day, fmt.Sprintf("%02d:00", 10+i), fmt.Sprintf("c%d@example.com", i)))
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "18:00"))
	if _, err := w.Svc.Remind(sys); err != nil {
		t.Fatal(err)
	}
	w.sendAll()
	plain := map[int64]bool{}
	for _, b := range list {
		for _, m := range w.messages(b.ID) {
			if m.Kind == booking.KindReminder {
				plain[b.ID] = m.Plain
				if m.Plain == strings.Contains(m.Body, "Я приду") { // plain: no answers; else the confirm link
					t.Errorf("booking %d: plain %v, yet %q", b.ID, m.Plain, m.Body)
				}
			}
		}
	}
	// Of those with answers, two confirm; then one of them and one
	// unconfirmed do not come, one of the hold-out cancels late, and the
	// salon cancels the other confirmed one late, of its own accord (a
	// master ill): not the client's late cancellation.
	visitor := booking.As(context.Background(), booking.Visitor())
	var confirmed, unconfirmed, holdout []*booking.Booking
	for _, b := range list {
		switch {
		case plain[b.ID]:
			holdout = append(holdout, b)
		case len(confirmed) < 2:
			for _, m := range w.mail.Messages(t) {
				if m.To[0].Address == b.ContactEmail && strings.HasPrefix(m.Subject, "Напоминание") {
					if _, err := w.Svc.UseLink(visitor, linkRE.FindStringSubmatch(m.Text)[1]); err != nil {
						t.Fatal(err)
					}
				}
			}
			confirmed = append(confirmed, b)
		default:
			unconfirmed = append(unconfirmed, b)
		}
	}
	if len(confirmed) != 2 || len(unconfirmed) == 0 || len(holdout) == 0 {
		t.Fatalf("groups %d/%d/%d", len(confirmed), len(unconfirmed), len(holdout))
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day, "09:30")) // within the 3-hour cutoff of 10:00
	if _, err := w.Svc.Cancel(sys, booking.CancelRequest{SalonID: w.salon.ID, BookingID: holdout[0].ID}); err != nil {
		t.Fatal(err)
	}
	w.Clock.Set(confirmed[1].StartsAt.Add(-time.Hour))
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
	if _, err := w.Svc.Cancel(staff, booking.CancelRequest{SalonID: w.salon.ID, BookingID: confirmed[1].ID, Stated: true}); err != nil {
		t.Fatal(err)
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(1), "09:00"))
	for _, b := range []*booking.Booking{confirmed[0], unconfirmed[0]} {
		if _, err := w.Svc.MarkNoShow(sys, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Svc.CompletePast(sys); err != nil {
		t.Fatal(err)
	}
	rows, err := w.Svc.ReminderEffect(sys, w.salon.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := map[booking.EffectGroup]booking.EffectRow{}
	for _, r := range rows {
		got[r.Group] = r
	}
	want := map[booking.EffectGroup][3]int{
		booking.EffectConfirmed:   {2, 1, 0},
		booking.EffectUnconfirmed: {len(unconfirmed), 1, 0},
		booking.EffectHoldout:     {len(holdout), 0, 1},
	}
	for g, n := range want {
		r := got[g]
		if r.Bookings != n[0] || r.NoShows != n[1] || r.LateCancels != n[2] || r.Month != (booking.Date{Year: 2026, Month: 3, Day: 1}) {
			t.Errorf("%s: %+v, want %v", g, r, n)
		}
	}
	if r := got[booking.EffectConfirmed]; r.NoShowRate() != 0.5 {
		t.Errorf("confirmed no-show rate %v", r.NoShowRate())
	}
}

// SMS.ru reports delivery: a text it delivered becomes delivered, one the
// operator did not deliver fails with that reason (and shows among the
// failed messages).
func TestSMSDeliveryIsReported(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	a := w.book(w.anna, w.day, "12:00", "")
	b := w.book(w.anna, w.day, "14:00", "")
	w.sendAll() // their confirmations
	ids := map[int64]string{}
	for _, bk := range []*booking.Booking{a, b} {
		for _, m := range w.messages(bk.ID) {
			if m.Channel == booking.ChannelSMS && m.State == booking.MessageSent {
				ids[bk.ID] = m.ProviderID
			}
		}
	}
	if len(ids) != 2 {
		t.Fatalf("sent: %v", ids)
	}
	w.sms.SetStatus(ids[a.ID], 103)
	w.sms.SetStatus(ids[b.ID], 105)
	w.Clock.Advance(time.Minute)
	if n, err := w.Svc.TrackDeliveries(sys); err != nil || n != 2 {
		t.Fatalf("tracked %d: %v", n, err)
	}
	states := func(id int64) booking.Message {
		for _, m := range w.messages(id) {
			if m.Channel == booking.ChannelSMS {
				return m
			}
		}
		return booking.Message{}
	}
	if m := states(a.ID); m.State != booking.MessageDelivered || m.DeliveredAt.IsZero() {
		t.Errorf("a: %s", m.State)
	}
	if m := states(b.ID); m.State != booking.MessageFailed || !strings.Contains(m.Error, "did not deliver") {
		t.Errorf("b: %s %q", m.State, m.Error)
	}
	failed, err := w.Svc.FailedMessages(sys, w.salon.ID, 10)
	if err != nil || len(failed) != 1 || failed[0].BookingID != b.ID {
		t.Errorf("failed: %+v %v", failed, err)
	}
	if n, err := w.Svc.TrackDeliveries(sys); err != nil || n != 0 {
		t.Errorf("tracked again: %d %v", n, err)
	}
}

// A booking made in the salon's night, for the next day: its confirmation
// by SMS waits for the morning, and its day-before reminder (due already)
// goes by e-mail at once, not by SMS at all (by the morning it would be
// too late to be that reminder; the 2-hour one comes); a message retried
// into the night waits for the morning too.
func TestNothingByChatOrSMSAtNight(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "22:30"))
	b := w.book(w.anna, w.day, "18:00", "late@example.com")
	if _, err := w.Svc.Remind(sys); err != nil {
		t.Fatal(err)
	}
	w.sendAll()
	if got := w.smsTo(w.phoneOf(b)); len(got) != 0 {
		t.Fatalf("SMS at 22:30: %v", got)
	}
	if !w.mailTo("late@example.com", "Вы записаны") || !w.mailTo("late@example.com", "Напоминание") {
		t.Error("the e-mails did not go at once")
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day, "08:59"))
	w.sendAll()
	if got := w.smsTo(w.phoneOf(b)); len(got) != 0 {
		t.Fatalf("SMS at 08:59: %v", got)
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day, "09:00"))
	w.sendAll()
	got := w.smsTo(w.phoneOf(b))
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "Вы записаны") {
		t.Fatalf("at the morning edge: %v", got)
	}
	for _, m := range w.messages(b.ID) {
		if m.Channel == booking.ChannelSMS && m.Kind == booking.KindReminder && m.Lead == 24*time.Hour && m.State != booking.MessageDropped {
			t.Errorf("the day-before SMS is %s", m.State)
		}
	}
	// A failed SMS retried by the admin at 23:00 waits for the morning.
	if _, err := w.Pool.Exec(sys, `UPDATE messages SET state = 'failed', error = 'x' WHERE booking_id = $1 AND channel = 'sms' AND kind = 'confirmation'`, b.ID); err != nil {
		t.Fatal(err)
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day, "16:00"))
	if _, err := w.Svc.Remind(sys); err != nil {
		t.Fatal(err)
	}
	w.sendAll()
	w.Clock.Set(bookingtest.At(w.salon, w.day, "23:00"))
	var id int64
	if err := w.Pool.QueryRow(sys, `SELECT id FROM messages WHERE booking_id = $1 AND channel = 'sms' AND kind = 'confirmation'`, b.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := w.Svc.RetryMessage(sys, w.salon.ID, id); err != nil {
		t.Fatal(err)
	}
	w.sendAll()
	if got := w.remindersTo(w.phoneOf(b)); len(got) != 1 { // the 2-hour reminder, at 16:00
		t.Errorf("reminders: %v", got)
	}
	if got := w.smsTo(w.phoneOf(b)); len(got) != 2 {
		t.Errorf("a retry went at 23:00: %v", got)
	}
	// By the morning the visit is past: the retried confirmation is
	// dropped, not sent.
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(1), "09:00"))
	w.sendAll()
	if got := w.smsTo(w.phoneOf(b)); len(got) != 2 {
		t.Errorf("the retry in the morning: %v", got)
	}
	var state, why string
	if err := w.Pool.QueryRow(sys, `SELECT state, error FROM messages WHERE id = $1`, id).Scan(&state, &why); err != nil || state != "dropped" || why != "its time has passed" {
		t.Errorf("the retry: %s %q %v", state, why, err)
	}
}

// Erasing a client erases their messages too: the addresses and words go,
// the links in what was sent stop working, and what was still queued is
// not sent.
func TestErasureReachesMessages(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	sys := bookingtest.System()
	b := w.book(w.anna, w.day, "12:00", "gone@example.com")
	w.sendAll() // the confirmation, by e-mail and SMS
	if _, err := w.Svc.Remind(sys); err != nil {
		t.Fatal(err)
	}
	var link string
	for _, m := range w.mail.Messages(t) {
		if m.To[0].Address == "gone@example.com" {
			link = linkRE.FindStringSubmatch(m.Text)[1]
		}
	}
	visitor := booking.As(context.Background(), booking.Visitor())
	if _, err := w.Svc.OpenLink(visitor, link); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.EraseClient(sys, w.salon.ID, "", b.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.OpenLink(visitor, link); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("a link of the erased client's booking: %v", err)
	}
	for _, m := range w.messages(b.ID) {
		if m.Recipient != "" || m.Body != "" || m.State == booking.MessageQueued {
			t.Errorf("a message kept: %+v", m)
		}
	}
	before := len(w.sms.Sent()) + w.mail.Count(t)
	w.Clock.Set(bookingtest.At(w.salon, w.day.AddDays(-1), "12:00")) // the reminder's time
	w.sendAll()
	if after := len(w.sms.Sent()) + w.mail.Count(t); after != before {
		t.Errorf("%d more messages after the erasure", after-before)
	}
}

// TestTheEMailSaysWhatACertificatePaid: the booking's e-mails, as the
// mailbox has them, name the certificate that paid part of it, what is
// left on it and what is left to pay at the salon; the cancellation's,
// what went back to it (the salon's own cancellation: with an apology,
// the certificate's line said once).
func TestTheEMailSaysWhatACertificatePaid(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	w.jobs()
	colour := w.Service(t, w.salon, booking.SalonService{Name: "Окрашивание", DurationMin: 60, Price: 300000})
	m := w.Master(t, w.salon, colour)
	w.Shift(t, w.salon, m, w.day, 1, "10:00", "20:00")
	cert, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 200000})
	if err != nil {
		t.Fatal(err)
	}
	phone := bookingtest.Phone()
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		ServiceID: colour.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, w.day, "12:00"), PayWith: &booking.PayWith{Code: cert.Code},
		Client: booking.ClientInput{Name: "Ольга", Phone: phone, Email: "olga@example.com", Lang: "ru"}})
	if err != nil {
		t.Fatal(err)
	}
	mailed := func(subject string) string { t.Helper(); return w.mailed(subject, "") }
	got := mailed("Вы записаны")
	for _, want := range []string{"Цена: 3\u00a0000\u00a0₽", "сертификатом …" + cert.Hint + ": 2\u00a0000\u00a0₽",
		"Осталось на нём: 0\u00a0₽", "К оплате в салоне: 1\u00a0000\u00a0₽"} {
		if !strings.Contains(got, want) {
			t.Errorf("the confirmation lacks %q:\n%s", want, got)
		}
	}
	// The SMS, as the provider took it, says it in a line.
	texted := func(want string) {
		t.Helper()
		bookingtest.WaitFor(t, 30*time.Second, "the SMS "+want, func() bool {
			w.sendAll()
			for _, x := range w.smsTo(phone) {
				if strings.Contains(x.Text, want) {
					return true
				}
			}
			return false
		})
	}
	texted("Сертификат: оплачено 2\u00a0000\u00a0₽, осталось 0\u00a0₽; в салоне к оплате 1\u00a0000\u00a0₽")
	// The desk cancels it of the salon's own accord (a master ill).
	desk := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
	if _, err := w.Svc.Cancel(desk, booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID, Stated: true}); err != nil {
		t.Fatal(err)
	}
	got = mailed("Запись отменена")
	for _, want := range []string{"Было зарезервировано для записи: сертификат …" + cert.Hint, "Вернулось на него: 2\u00a0000\u00a0₽",
		"Салону пришлось отменить вашу запись. Приносим извинения."} {
		if !strings.Contains(got, want) {
			t.Errorf("the cancellation lacks %q:\n%s", want, got)
		}
	}
	texted("Сертификат: возвращено — 2\u00a0000\u00a0₽")
	texted("Салону пришлось отменить вашу запись. Приносим извинения.\nСертификат: возвращено — 2\u00a0000\u00a0₽")
}

// TestTheCancellationSaysWhatBecameOfTheDeposit: a client's cancellation
// of a booking whose deposit was paid online, as the mailbox and the SMS
// provider have it: under a policy that keeps it, the e-mail and the SMS
// say the deposit was kept; under one that refunds it, they do not (the
// refund's e-mail says it came back). The salon's own cancellation, under
// the policy that keeps, refunds it and says sorry; of a booking whose
// deposit was never paid, it says sorry and no more.
func TestTheCancellationSaysWhatBecameOfTheDeposit(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	w := newMsgWorld(t, 1, booking.WithPayments(&psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}))
	w.jobs()
	ctx := bookingtest.System()
	colour := w.Service(t, w.salon, booking.SalonService{Name: "Окрашивание", DurationMin: 60, Price: 300000, Deposit: 100000})
	m := w.Master(t, w.salon, colour)
	w.Shift(t, w.salon, m, w.day, 1, "10:00", "20:00")
	for _, c := range []struct {
		policy  booking.RefundPolicy
		hhmm    string
		kept    bool
		then    string // the e-mail after the cancellation's
		bySalon bool   // the desk cancels of the salon's own accord
		unpaid  bool   // the deposit is never paid
	}{
		{booking.RefundNever, "12:00", true, "", false, false},
		{booking.RefundBeforeCutoff, "15:00", false, "Предоплата возвращается", false, false},
		{booking.RefundNever, "17:00", false, "Предоплата возвращается", true, false},
		{booking.RefundNever, "19:00", false, "", true, true},
	} {
		if _, err := w.Pool.Exec(ctx, `UPDATE salons SET refund_policy = $2, catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID, c.policy); err != nil {
			t.Fatal(err)
		}
		phone, email := bookingtest.Phone(), fmt.Sprintf("olga-%s-%s@example.com", c.policy, c.hhmm[:2])
		b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
			ServiceID: colour.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, w.day, c.hhmm),
			Client: booking.ClientInput{Name: "Ольга", Phone: phone, Email: email, Lang: "ru"}})
		if err != nil {
			t.Fatal(err)
		}
		client := booking.As(context.Background(), booking.ByToken(b.ManageToken))
		if !c.unpaid {
			p, err := w.Svc.StartPayment(client, b.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			fake.Pay(p.ExternalID)
			if _, err := w.Svc.PaymentNotified(ctx, "yookassa", p.ExternalID); err != nil {
				t.Fatal(err)
			}
		}
		cancel := booking.CancelRequest{BookingID: b.ID}
		by := client
		if c.bySalon {
			by = booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
			cancel.SalonID, cancel.Stated = w.salon.ID, true
		}
		if _, err := w.Svc.Cancel(by, cancel); err != nil {
			t.Fatal(err)
		}
		mailed := func(subject string) string { t.Helper(); return w.mailed(subject, email) }
		said := "Предоплата: 1\u00a0000\u00a0₽, не возвращена по правилам отмены"
		sorry := "Салону пришлось отменить вашу запись. Приносим извинения. Оплаченное онлайн вернётся к вам."
		if c.unpaid {
			sorry = "Салону пришлось отменить вашу запись. Приносим извинения."
		}
		paid := func(text string) bool { return strings.Contains(text, "Оплаченное") }
		got := mailed("Запись отменена")
		if strings.Contains(got, said) != c.kept || strings.Contains(got, sorry) != c.bySalon || paid(got) != (c.bySalon && !c.unpaid) {
			t.Errorf("%s (by the salon %v): the cancellation's e-mail:\n%s", c.policy, c.bySalon, got)
		}
		// The salon's own: the way to another time.
		if back := msgBase + "/w/" + w.salon.Slug + "?lang=ru"; strings.Contains(got, back) != c.bySalon || strings.Contains(got, "Выбрать другое время") != c.bySalon {
			t.Errorf("%s (by the salon %v): the link to book another time (%s):\n%s", c.policy, c.bySalon, back, got)
		}
		sms := w.texted(phone, "Запись отменена")
		if strings.Contains(sms, said) != c.kept || strings.Contains(sms, sorry) != c.bySalon || paid(sms) != (c.bySalon && !c.unpaid) {
			t.Errorf("%s (by the salon %v): the cancellation's SMS: %q", c.policy, c.bySalon, sms)
		}
		if c.then != "" {
			mailed(c.then)
		}
	}
}

// TestTheSalonsOwnMoveIsSaid: a move the desk says is the salon's own (a
// master ill) tells the client so, with an apology, by e-mail (in the
// mailbox) and SMS (at the fake SMS.ru), naming the new master; a move to
// another master and time says both.
func TestTheSalonsOwnMoveIsSaid(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	w.jobs()
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
	for _, c := range []struct {
		at, to string
		lead   string
	}{
		{"12:00", "12:00", "Салону пришлось изменить вашу запись. Приносим извинения. У вашей записи другой мастер."},
		{"14:00", "15:00", "Салону пришлось изменить вашу запись. Приносим извинения. У вашей записи новое время и другой мастер."},
	} {
		email := "moved-" + c.at[:2] + "@example.com"
		b := w.book(w.anna, w.day, c.at, email)
		if _, err := w.Svc.Reschedule(staff, booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: b.ID,
			StartsAt: bookingtest.At(w.salon, w.day, c.to), MasterID: w.night.ID, BySalon: true}); err != nil {
			t.Fatal(err)
		}
		if got := w.mailed("Запись перенесена", email); !strings.Contains(got, c.lead) {
			t.Errorf("the e-mail of the salon's own move to %s:\n%s", c.to, got)
		}
		sms := w.texted(w.phoneOf(b), "Запись перенесена")
		was := "Было: " + i18n.When("ru", bookingtest.At(w.salon, w.day, c.at), w.salon.Location())
		if !strings.Contains(sms, "Мастер: "+w.night.Name) || !strings.Contains(sms, "Салону пришлось изменить вашу запись. Приносим извинения.") ||
			strings.Contains(sms, was) != (c.at != c.to) {
			t.Errorf("the SMS of the salon's own move to %s: %q", c.to, sms)
		}
	}
}

// TestAMoveOfOneServiceSaysWhichMoved: the desk moves one service of a
// visit (Стрижка, then Окрашивание); the client's e-mail (in the mailbox)
// and SMS (at the fake SMS.ru) say which service moved and where to, not
// that the visit has a new time or master: its start and first master
// did not change.
func TestAMoveOfOneServiceSaysWhichMoved(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	w.jobs()
	ctx := bookingtest.System()
	colour := w.Service(t, w.salon, booking.SalonService{Name: "Окрашивание", DurationMin: 30})
	for _, m := range []*booking.Master{w.anna, w.night} {
		if err := w.Svc.SetOffers(ctx, w.salon.ID, m.ID, []booking.Offer{{ServiceID: w.haircut.ID}, {ServiceID: colour.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
	for _, c := range []struct {
		at, to string
		master *booking.Master
		said   string
	}{
		{"10:00", "11:30", w.anna, "Окрашивание: теперь в 11:30 (было в 11:00)."},
		{"13:00", "14:00", w.night, "Окрашивание: теперь мастер " + w.night.Name + "."},
		{"16:00", "17:30", w.night, "Окрашивание: теперь в 17:30 (было в 17:00), мастер " + w.night.Name + "."},
		// Past midnight, to the master who works the night: the dates are said.
		{"18:00", "+02:00", w.night, "Окрашивание: теперь в " + i18n.When("ru", bookingtest.At(w.salon, w.day.AddDays(1), "02:00"), w.salon.Location()) +
			" (было в " + i18n.When("ru", bookingtest.At(w.salon, w.day, "19:00"), w.salon.Location()) + "), мастер " + w.night.Name + "."},
	} {
		email, phone := "visit-"+c.at[:2]+"@example.com", bookingtest.Phone()
		b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
			Items:    []booking.VisitItem{{ServiceID: w.haircut.ID, MasterID: w.anna.ID}, {ServiceID: colour.ID, MasterID: w.anna.ID}},
			StartsAt: bookingtest.At(w.salon, w.day, c.at), Client: booking.ClientInput{Name: "Мария", Phone: phone, Email: email, Lang: "ru"}})
		if err != nil {
			t.Fatal(err)
		}
		// Moved to where it is: nothing changes, nobody is told.
		if _, err := w.Svc.Reschedule(staff, booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: b.Segments[1].ID, Segment: true,
			StartsAt: b.Segments[1].StartsAt}); err != nil {
			t.Fatal(err)
		}
		var moves int
		if err := w.Pool.QueryRow(ctx, `SELECT count(*) FROM booking_events WHERE booking_id = $1 AND action = 'rescheduled'`, b.ID).Scan(&moves); err != nil || moves != 0 {
			t.Errorf("a move to where it was recorded %d moves (%v)", moves, err)
		}
		day, to := w.day, c.to
		if next, ok := strings.CutPrefix(to, "+"); ok {
			day, to = day.AddDays(1), next
		}
		if _, err := w.Svc.Reschedule(staff, booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: b.Segments[1].ID, Segment: true,
			StartsAt: bookingtest.At(w.salon, day, to), MasterID: c.master.ID}); err != nil {
			t.Fatal(err)
		}
		got := w.mailed("Запись перенесена", email)
		if !strings.Contains(got, c.said) || strings.Contains(got, "другой мастер") || strings.Contains(got, "новое время") {
			t.Errorf("the e-mail of the colour moved to %s:\n%s", c.to, got)
		}
		sms := w.texted(phone, "Запись перенесена")
		if !strings.Contains(sms, c.said) || strings.Contains(sms, "Мастер: ") {
			t.Errorf("the SMS of the colour moved to %s: %q", c.to, sms)
		}
	}
}

// TestTheClientHearsTheDeskPaidWithAPackage: the desk pays a booking made
// on the widget (told its price) with the client's package: the client is
// e-mailed and texted what it paid and what is left to pay at the salon
// (they heard nothing, and still thought the whole price was due).
func TestTheClientHearsTheDeskPaidWithAPackage(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 1)
	w.jobs()
	colour := w.Service(t, w.salon, booking.SalonService{Name: "Окрашивание", DurationMin: 60, Price: 300000})
	m := w.Master(t, w.salon, colour)
	w.Shift(t, w.salon, m, w.day, 1, "10:00", "20:00")
	phone := bookingtest.Phone()
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		ServiceID: colour.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, w.day, "12:00"),
		Client: booking.ClientInput{Name: "Ольга", Phone: phone, Email: "olga@example.com", Lang: "ru"}})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{colour.ID}, Visits: 5, Client: booking.ClientInput{Name: "Ольга", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	desk := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin, Email: "desk@studio.example"}))
	if _, err := w.Svc.ApplyBalance(desk, w.salon.ID, b.ID, booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}); err != nil {
		t.Fatal(err)
	}
	got := w.mailed("Оплачено вашим абонементом или сертификатом: Окрашивание", "olga@example.com")
	for _, want := range []string{"Салон оплатил вашу запись вашим абонементом или сертификатом.", "абонементом …" + pkg.Hint,
		"К оплате в салоне: ничего"} {
		if !strings.Contains(got, want) {
			t.Errorf("the e-mail lacks %q:\n%s", want, got)
		}
	}
	sms := w.texted(phone, "Оплачено вашим абонементом или сертификатом: Окрашивание")
	if !strings.Contains(sms, "Абонемент: оплачено 1 визит, осталось 4 визита") || strings.Contains(sms, "/a/") {
		t.Errorf("the SMS (what it paid, no links to pay for): %q", sms)
	}
}

// TestAFloodOfBookingsCannotHaveTheSalonPayForSMS: bookings anyone can
// make online (a name and a phone) must not have the salon pay for texts
// wherever a flood of them asks (SMS pumping). A client new online is
// texted only in the salon's country (or its country code: Kazakhstan's
// +7 in Russia); a number gets at most smsPerNumberPerDay; clients new
// online at most smsToNewClientsPerHour; one over a cap fails, for staff
// to send again (past the caps), and its e-mail still goes. Three
// replicas send at once, eight sends each: the caps hold exactly.
func TestAFloodOfBookingsCannotHaveTheSalonPayForSMS(t *testing.T) {
	t.Parallel()
	w := newMsgWorld(t, 3)
	sys := bookingtest.System()
	visitor := booking.As(context.Background(), booking.Visitor())
	w.AllDay(t, w.salon, w.night, w.day.AddDays(3), 2) // (76 bookings of an hour)
	day, slot := w.day, 0
	book := func(phone, email string) *booking.Booking {
		t.Helper()
		at := fmt.Sprintf("%02d:00", slot%24)
		if slot++; slot%24 == 0 {
			day = day.AddDays(1)
		}
		b, err := w.Svc.Book(visitor, booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.night.ID,
			StartsAt: bookingtest.At(w.salon, day, at), Client: booking.ClientInput{Name: "Мария", Phone: phone, Email: email, Lang: "ru"}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	smsOf := func(b *booking.Booking) booking.Message {
		t.Helper()
		for _, m := range w.messages(b.ID) {
			if m.Channel == booking.ChannelSMS && m.Kind == booking.KindConfirmation {
				return m
			}
		}
		t.Fatalf("booking %d has no SMS confirmation", b.ID)
		return booking.Message{}
	}
	textsTo := func(phone string) (n int) {
		for _, m := range w.sms.Sent() {
			if "+"+m.To == phone {
				n++
			}
		}
		return n
	}
	// Abroad: held back, saying why; the e-mail goes.
	comoros, intl, kazakh := "+2693212345", "+88213000123", "+77012345678"
	far := []*booking.Booking{book(comoros, "far@example.com"), book(intl, "")}
	kz := book(kazakh, "")
	w.sendAll()
	for _, b := range far {
		if m := smsOf(b); m.State != booking.MessageFailed || !strings.HasPrefix(m.Error, "an SMS abroad to a client new online") {
			t.Errorf("an SMS to %s: %s %q", m.Recipient, m.State, m.Error)
		}
	}
	if textsTo(comoros)+textsTo(intl) != 0 {
		t.Errorf("the provider took %d SMS abroad", textsTo(comoros)+textsTo(intl))
	}
	w.mailed("", "far@example.com")
	if m := smsOf(kz); m.State != booking.MessageSent || textsTo(kazakh) != 1 {
		t.Errorf("an SMS to Kazakhstan's +7 from a Russian salon: %s %q, the provider took %d", m.State, m.Error, textsTo(kazakh))
	}
	// One number: ten a day.
	one := bookingtest.Phone()
	var last *booking.Booking
	for range 11 {
		last = book(one, "")
		w.sendAll()
	}
	if n := textsTo(one); n != 10 {
		t.Errorf("one number got %d SMS in a day, want 10", n)
	}
	if m := smsOf(last); m.State != booking.MessageFailed || !strings.HasPrefix(m.Error, "too many SMS to this number in a day") {
		t.Errorf("the 11th SMS to one number: %s %q", m.State, m.Error)
	}
	// Staff look, and send it again: it goes.
	if err := w.Svc.RetryMessage(sys, w.salon.ID, smsOf(last).ID); err != nil {
		t.Fatal(err)
	}
	bookingtest.WaitFor(t, 30*time.Second, "the SMS sent again", func() bool { w.sendAll(); return textsTo(one) == 11 })
	// SMS to new clients: sixty in an hour; twelve went above (to
	// Kazakhstan, and eleven to the one number, a new client too).
	var flood []*booking.Booking
	for range 60 {
		flood = append(flood, book(bookingtest.Phone(), ""))
	}
	w.sendAll()
	sent, capped := 0, 0
	for _, b := range flood {
		switch m := smsOf(b); {
		case m.State == booking.MessageSent:
			sent++
		case m.State == booking.MessageFailed && strings.HasPrefix(m.Error, "too many SMS to new clients in an hour"):
			capped++
		default:
			t.Errorf("a new client's SMS: %s %q", m.State, m.Error)
		}
	}
	if sent != 48 || capped != 12 {
		t.Errorf("of 60 new clients' SMS in an hour %d went and %d were held back, want 48 and 12 (60 in all with the 12 before)", sent, capped)
	}
	failed, err := w.Svc.FailedMessages(sys, w.salon.ID, 100)
	if err != nil || len(failed) != 14 {
		t.Fatalf("the attention page lists %d failed messages (%v), want the 12 held back and the 2 abroad", len(failed), err)
	}
	// A client the desk books, abroad: texted (the salon knows her).
	desk := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
	minsk := "+375291234567"
	if _, err := w.Svc.Book(desk, booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.anna.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "15:00"), Client: booking.ClientInput{Name: "Алеся", Phone: minsk}}); err != nil {
		t.Fatal(err)
	}
	bookingtest.WaitFor(t, 30*time.Second, "the desk's client abroad texted", func() bool { w.sendAll(); return textsTo(minsk) == 1 })
	// An hour later the salon's new clients are texted again.
	w.Clock.Advance(61 * time.Minute)
	if err := w.Svc.RetryMessage(sys, w.salon.ID, failed[0].ID); err != nil {
		t.Fatal(err)
	}
	later := book(bookingtest.Phone(), "")
	w.sendAll()
	if m := smsOf(later); m.State != booking.MessageSent {
		t.Errorf("a new client's SMS an hour later: %s %q", m.State, m.Error)
	}
}
