package widget_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/i18n"
	"salon/internal/courier"
	"salon/widget"

	"github.com/chromedp/chromedp"
)

// payLinkSite is the widget with the sandbox taking deposits and e-mail
// and SMS written to the development outbox, with links to the site.
func payLinkSite(t *testing.T) (*site, func(id int64) (string, bool)) {
	t.Helper()
	pool := bookingtest.Pool(t)
	sb := &psp.Sandbox{Pool: pool}
	mail, text := &lateBase{ch: booking.ChannelEmail}, &lateBase{ch: booking.ChannelSMS}
	e := &bookingtest.Env{Pool: pool, Clock: bookingtest.NewClock(bookingtest.DefaultNow)}
	e.Svc = booking.New(pool, booking.WithClock(e.Clock.Now), booking.WithPayments(sb),
		booking.WithCourier(booking.ChannelEmail, mail, 0), booking.WithCourier(booking.ChannelSMS, text, 0))
	sb.Notify = widget.SandboxNotifier(e.Svc)
	s := &site{Env: e, t: t, client: &http.Client{}, router: openapiRouter(t)}
	s.salon = e.Salon(t, booking.Salon{Slug: "studio", Name: "Studio", CutoffHours: 3, Locale: "en", HoldMin: 60})
	if _, err := pool.Exec(context.Background(), `UPDATE salons SET sms_kinds = '{payment_due}', quiet_from = '00:00', quiet_to = '00:00'
		WHERE id = $1`, s.salon.ID); err != nil {
		t.Fatal(err)
	}
	s.svc = e.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	m := e.Master(t, s.salon, s.svc)
	e.Shift(t, s.salon, m, testDay, 1, "10:00", "20:00")
	s.masters = []*booking.Master{m}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.base = serve(t, widget.New(e.Svc, widget.Config{Log: log}), log)
	sb.BaseURL = s.base
	mail.x.Store(&courier.Outbox{Base: s.base, Channel: booking.ChannelEmail})
	text.x.Store(&courier.Outbox{Base: s.base, Channel: booking.ChannelSMS})
	return s, func(id int64) (string, bool) {
		if w, ok := mail.x.Load().Text(id); ok {
			return w, true
		}
		return text.x.Load().Text(id)
	}
}

// count runs a count query.
func (s *site) count(sql string, args ...any) int {
	s.t.Helper()
	var n int
	if err := s.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// TestAPaymentLinkFromTheSalonPays: a booking the salon makes asking its
// deposit online holds its time; the client's e-mail and SMS each carry a
// link whose page says what is due and by when, changes nothing on GET,
// and on POST opens the payment's page; paid there, the booking is
// confirmed. A link staff make for a chat does the same.
func TestAPaymentLinkFromTheSalonPays(t *testing.T) {
	t.Parallel()
	s, outbox := payLinkSite(t)
	ctx := bookingtest.System()
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleAdmin}))
	b, err := s.Svc.Book(staff, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: s.masters[0].ID,
		StartsAt: bookingtest.At(s.salon, testDay, "12:00"), AskDeposit: true,
		Client: booking.ClientInput{Name: "Maria", Phone: bookingtest.Phone(), Email: "maria@example.com", Lang: "en"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != booking.StatusPending || b.HoldExpiresAt.IsZero() {
		t.Fatalf("asked online: %s, hold %v", b.Status, b.HoldExpiresAt)
	}
	if _, err := s.Svc.SendMessages(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Svc.MessagesOf(ctx, s.salon.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	links := map[booking.Channel]string{}
	for _, m := range msgs {
		if m.Kind != booking.KindPaymentDue || m.State != booking.MessageSent {
			continue
		}
		words, ok := outbox(m.ID)
		if !ok {
			t.Fatalf("message %d is not in the outbox", m.ID)
		}
		i := strings.Index(words, s.base+"/a/")
		if i < 0 {
			t.Fatalf("the %s asking for the deposit has no link to pay: %q", m.Channel, words)
		}
		links[m.Channel] = actionRE.FindStringSubmatch(words[i:])[1]
		if m.Channel == booking.ChannelSMS && !strings.Contains(words, "Pay: ") {
			t.Errorf("the SMS: %q", words)
		}
	}
	if len(links) != 2 {
		t.Fatalf("payment links by %v, want e-mail and SMS (messages %+v)", links, msgs)
	}
	token, _, err := s.Svc.PayLink(staff, s.salon.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	links[booking.ChannelPanel] = token
	for ch, tok := range links {
		code, body, _ := s.page("GET", "/a/"+tok)
		if code != 200 || !strings.Contains(body, `id="action-do"`) || !strings.Contains(body, "1,000") ||
			!strings.Contains(body, "Pay by "+i18n.When("en", b.HoldExpiresAt, s.salon.Location())) {
			t.Errorf("the %s link's page: %d %s", ch, code, body[strings.Index(body, "<main"):])
		}
	}
	if n := s.count(`SELECT count(*) FROM payment_sessions WHERE booking_id = $1`, b.ID); n != 0 {
		t.Errorf("GETs of the page made %d payments", n)
	}
	code, _, h := s.page("POST", "/a/"+links[booking.ChannelSMS])
	pay := h.Get("Location")
	if code != http.StatusSeeOther || !strings.HasPrefix(pay, s.base+psp.SandboxPath) {
		t.Fatalf("POST the pay link: %d to %q", code, pay)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(pay, map[string][]string{"do": {"pay"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay: %v %v", resp, err)
	}
	resp.Body.Close()
	bookingtest.WaitFor(t, 5*time.Second, "the booking confirmed", func() bool {
		return s.count(`SELECT count(*) FROM bookings WHERE id = $1 AND status = 'confirmed'`, b.ID) == 1
	})
	// Paid: the links say so.
	code, body, _ := s.page("POST", "/a/"+links[booking.ChannelEmail])
	if code != http.StatusConflict || !strings.Contains(body, "Nothing is due now") {
		t.Errorf("the pay link after paying: %d %.300s", code, body)
	}
}

// TestTheDifferenceAMoveAsksIsPaidOnTheBookingsPage: a paid booking the
// salon moves to a master whose service asks a larger deposit reads the
// difference due; the page's payment is of the difference, paid through
// the provider like the deposit; then nothing is due.
func TestTheDifferenceAMoveAsksIsPaidOnTheBookingsPage(t *testing.T) {
	t.Parallel()
	s, _ := payLinkSite(t)
	ctx := bookingtest.System()
	r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], "11:00"))
	if r.status != 201 {
		t.Fatalf("book: %d %s", r.status, r.raw)
	}
	token, id := r.str("manage_token"), r.id()
	pay := func(url string) {
		t.Helper()
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.PostForm(url, map[string][]string{"do": {"pay"}})
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("pay: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	pay(r.body["payment"].(map[string]any)["url"].(string))
	bookingtest.WaitFor(t, 5*time.Second, "the booking confirmed", func() bool {
		return s.count(`SELECT count(*) FROM bookings WHERE id = $1 AND status = 'confirmed'`, id) == 1
	})
	other := s.Master(t, s.salon, s.svc)
	s.Shift(t, s.salon, other, testDay, 1, "10:00", "20:00")
	if _, err := s.Svc.UpdateService(ctx, s.salon.ID, booking.SalonService{ID: s.svc.ID, Name: s.svc.Name, DurationMin: s.svc.DurationMin,
		Price: s.svc.Price, Deposit: 150000, Active: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: id, MasterID: other.ID,
		StartsAt: bookingtest.At(s.salon, testDay, "15:00")}); err != nil {
		t.Fatal(err)
	}
	g := s.do("GET", "/api/v1/bookings/"+itoa(id), nil, "X-Manage-Token", token)
	if g.status != 200 || g.str("status") != "confirmed" || g.body["deposit_due"] != 500.0 || g.body["deposit"] != 1500.0 {
		t.Fatalf("moved: %d %s", g.status, g.raw)
	}
	p := s.do("POST", "/api/v1/bookings/"+itoa(id)+"/payment", map[string]any{}, "X-Manage-Token", token)
	payment, _ := p.body["payment"].(map[string]any)
	url, _ := payment["url"].(string)
	if p.status != 200 || payment["amount"] != 500.0 || !strings.HasPrefix(url, s.base+psp.SandboxPath) {
		t.Fatalf("pay the difference: %d %s", p.status, p.raw)
	}
	pay(url)
	bookingtest.WaitFor(t, 5*time.Second, "the difference paid", func() bool {
		return s.count(`SELECT count(*) FROM ledger_entries WHERE booking_id = $1 AND entry_type = 'deposit_received'`, id) == 2
	})
	g = s.do("GET", "/api/v1/bookings/"+itoa(id), nil, "X-Manage-Token", token)
	if _, due := g.body["deposit_due"]; due || g.str("status") != "confirmed" {
		t.Errorf("after paying the difference: %s", g.raw)
	}
	// The client reads what was paid in all, not the newest payment alone.
	if pay, _ := g.body["payment"].(map[string]any); pay["paid"] != 1500.0 || pay["amount"] != 500.0 {
		t.Errorf("after paying the difference, the payment reads %v; want paid 1500 (of which this payment 500)", pay)
	}
	if again := s.do("POST", "/api/v1/bookings/"+itoa(id)+"/payment", map[string]any{}, "X-Manage-Token", token); again.status != 409 {
		t.Errorf("nothing owed, pay again: %d %s", again.status, again.raw)
	}
	var got int64
	if err := s.Pool.QueryRow(context.Background(), `SELECT sum(amount) FROM sandbox_payments WHERE status = 'succeeded'`).Scan(&got); err != nil || got != 150000 {
		t.Errorf("the provider took %d (%v), want 1500 in two payments", got, err)
	}
}

// TestTheLinkToPayIsNotHeldForTheMorning: a deposit due while the time is
// held goes by SMS at once even in the salon's quiet hours (the hold is
// minutes long); the booking's page then says the link was sent.
func TestTheLinkToPayIsNotHeldForTheMorning(t *testing.T) {
	t.Parallel()
	s, _ := payLinkSite(t)
	ctx := bookingtest.System()
	if _, err := s.Pool.Exec(ctx, `UPDATE salons SET quiet_from = '00:00', quiet_to = '23:59' WHERE id = $1`, s.salon.ID); err != nil {
		t.Fatal(err)
	}
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleAdmin}))
	b, err := s.Svc.Book(staff, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: s.masters[0].ID,
		StartsAt: bookingtest.At(s.salon, testDay, "12:00"), AskDeposit: true, Client: booking.ClientInput{Name: "Night", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.SendMessages(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.count(`SELECT count(*) FROM messages WHERE booking_id = $1 AND kind = 'payment_due' AND channel = 'sms' AND state = 'sent'`, b.ID); n != 1 {
		t.Errorf("in quiet hours, %d SMS with the link sent, want 1 at once", n)
	}
}

// TestBrowserTheManagePageOfABookingTheDeskHeldPays: a booking the salon
// made asking its deposit online has no payment until the client begins
// one; the page the client keeps (the manage link of the e-mail) said
// "preparing the payment page" for ever. It says what is due by when,
// and its button begins the payment and opens the provider's page.
func TestBrowserTheManagePageOfABookingTheDeskHeldPays(t *testing.T) {
	s, outbox := payLinkSite(t)
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleAdmin}))
	b, err := s.Svc.Book(staff, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: s.masters[0].ID,
		StartsAt: bookingtest.At(s.salon, testDay, "12:00"), AskDeposit: true,
		Client: booking.ClientInput{Name: "Maria", Phone: bookingtest.Phone(), Email: "maria@example.com", Lang: "en"}})
	if err != nil {
		t.Fatal(err)
	}
	// The manage link of the e-mail that asks for the deposit.
	if _, err := s.Svc.SendMessages(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Svc.MessagesOf(bookingtest.System(), s.salon.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	manage := ""
	for _, m := range msgs {
		if words, ok := outbox(m.ID); ok && m.Channel == booking.ChannelEmail && m.Kind == booking.KindPaymentDue {
			manage = regexp.MustCompile(regexp.QuoteMeta(s.base) + `/w/studio/manage/\d+(\?lang=en)?#t=[\w-]+`).FindString(words)
		}
	}
	if manage == "" {
		t.Fatalf("no manage link in the e-mail asking for the deposit (%+v)", msgs)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.Navigate(manage), chromedp.WaitVisible(css("#manage-retry")))
	want := "Pay the deposit of 1,000\u00a0₽ by " + i18n.When("en", b.HoldExpiresAt, s.salon.Location())
	if got := text(t, ctx, "#manage-payment"); !strings.Contains(got, want) {
		t.Errorf("the manage page says %q, want %q", got, want)
	}
	if got := text(t, ctx, "#manage-retry"); got != "Pay the deposit" {
		t.Errorf("its button reads %q", got)
	}
	run(t, ctx, chromedp.Click(css("#manage-retry")), chromedp.WaitVisible(css("#pay")), chromedp.Click(css("#pay")),
		chromedp.WaitVisible(css("#manage-payment")))
	if got := text(t, ctx, "#manage-details") + " / " + text(t, ctx, "#manage-payment"); !strings.Contains(got, "confirmed") || !strings.Contains(got, "is paid") {
		t.Errorf("paid from the manage page: %q", got)
	}
}
