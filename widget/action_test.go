package widget_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/internal/browsertest"
	"salon/internal/courier"
	"salon/widget"
)

// linkSite is a site whose core writes e-mail and SMS to the development
// outbox (each message's words kept in its row), with links to the site.
func linkSite(t *testing.T, opts ...siteOption) *site {
	t.Helper()
	return linkSiteWith(t, nil, opts...)
}

// linkSiteWith is linkSite with the core's options more (a payment
// provider).
func linkSiteWith(t *testing.T, more []booking.Option, opts ...siteOption) *site {
	t.Helper()
	mail, text := &lateBase{ch: booking.ChannelEmail}, &lateBase{ch: booking.ChannelSMS}
	e := bookingtest.New(t, append([]booking.Option{booking.WithCourier(booking.ChannelEmail, mail, 0), booking.WithCourier(booking.ChannelSMS, text, 0)}, more...)...)
	s := newSiteOn(t, e, opts...)
	mail.x.Store(&courier.Outbox{Base: s.base, Channel: booking.ChannelEmail})
	text.x.Store(&courier.Outbox{Base: s.base, Channel: booking.ChannelSMS})
	s.outbox = func(id int64) (string, bool) {
		if w, ok := mail.x.Load().Text(id); ok {
			return w, true
		}
		return text.x.Load().Text(id)
	}
	return s
}

// lateBase is the outbox courier with the site's address, known only once
// it listens.
type lateBase struct {
	ch booking.Channel
	x  atomic.Pointer[courier.Outbox]
}

func (l *lateBase) Deliver(ctx context.Context, o *booking.Outgoing) (booking.Sent, error) {
	return l.x.Load().Deliver(ctx, o)
}

var actionRE = regexp.MustCompile(`/a/([A-Za-z0-9_-]{22})`)

// remindedLinks books at 12:00 on the test day with an e-mail, sends its
// day-before reminder, and returns the reminder e-mail's links: confirm,
// move, cancel.
func remindedLinks(t *testing.T, s *site, lang, hhmm string) (*booking.Booking, [3]string) {
	t.Helper()
	return remindedLinksOf(t, s, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID,
		MasterID: s.masters[0].ID, StartsAt: bookingtest.At(s.salon, testDay, hhmm),
		Client: booking.ClientInput{Name: "Maria", Phone: bookingtest.Phone(), Email: "maria@example.com", Lang: lang}})
}

// remindedLinksOf is remindedLinks of the booking r asks (on the test
// day, with an e-mail).
func remindedLinksOf(t *testing.T, s *site, r booking.BookRequest) (*booking.Booking, [3]string) {
	t.Helper()
	b, err := s.Svc.Book(booking.As(context.Background(), booking.Visitor()), r)
	if err != nil {
		t.Fatal(err)
	}
	return b, reminderLinks(t, s, b)
}

// reminderLinks sends booking b's day-before reminder and returns the
// reminder e-mail's links: confirm, move, cancel.
func reminderLinks(t *testing.T, s *site, b *booking.Booking) [3]string {
	t.Helper()
	ctx := bookingtest.System()
	s.Clock.Set(b.StartsAt.Add(-24 * time.Hour))
	if _, err := s.Svc.Remind(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.SendMessages(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := s.Svc.MessagesOf(ctx, s.salon.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.Channel == booking.ChannelEmail && m.Kind == booking.KindReminder && m.State == booking.MessageSent {
			// The row keeps the words, not the links' tokens; the mail
			// went with them.
			if actionRE.MatchString(m.Body) || !strings.Contains(m.Body, "/a/…") {
				t.Errorf("the stored words keep a token: %q", m.Body)
			}
			whole, ok := s.outbox(m.ID)
			if !ok {
				t.Fatalf("message %d did not go through the outbox", m.ID)
			}
			found := actionRE.FindAllStringSubmatch(whole, -1)
			if len(found) < 3 {
				t.Fatalf("links in %q", whole)
			}
			return [3]string{found[0][1], found[1][1], found[2][1]}
		}
	}
	t.Fatalf("no reminder e-mail was sent: %+v", list)
	return [3]string{}
}

// page fetches a one-tap page without following redirects.
func (s *site) page(method, path string) (int, string, http.Header) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// A GET of a link (a mail scanner, a preview) changes nothing; a POST acts;
// the pages keep their token out of caches and referrers; an unknown link
// is a 404 page.
func TestOneTapPagesChangeNothingOnGet(t *testing.T) {
	t.Parallel()
	s := linkSite(t)
	b, links := remindedLinks(t, s, "ru", "12:00")
	for _, tok := range links {
		code, body, h := s.page("GET", "/a/"+tok)
		if code != 200 || !strings.Contains(body, `id="action-do"`) || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d %v", tok, code, h)
		}
	}
	if v, _ := s.Svc.BookingView(bookingtest.System(), s.salon.ID, b.ID); v.Status != booking.StatusConfirmed || !v.ConfirmedAt.IsZero() {
		t.Fatalf("the GETs changed the booking: %s %v", v.Status, v.ConfirmedAt)
	}
	code, body, _ := s.page("POST", "/a/"+links[0])
	if code != 200 || !strings.Contains(body, "Спасибо! Салон знает, что вы придёте.") {
		t.Errorf("confirm: %d %s", code, body)
	}
	if _, body, _ := s.page("POST", "/a/"+links[0]); !strings.Contains(body, "Вы уже подтвердили визит") {
		t.Errorf("confirm again: %s", body)
	}
	if _, body, _ := s.page("GET", "/a/"+links[0]+"?lang=en"); !strings.Contains(body, "You have confirmed already") || strings.Contains(body, `id="action-do"`) {
		t.Errorf("the confirm page after: %s", body)
	}
	code, _, h := s.page("POST", "/a/"+links[1])
	loc, _ := url.Parse(h.Get("Location"))
	if code != 303 || loc.Path != fmt.Sprintf("/w/studio/manage/%d", b.ID) || !strings.HasPrefix(loc.Fragment, "t=") || !strings.HasSuffix(loc.Fragment, "&move=1") {
		t.Errorf("move: %d %s", code, h.Get("Location"))
	}
	// The manage token the move made opens the booking, as the widget asks.
	token := strings.TrimSuffix(strings.TrimPrefix(loc.Fragment, "t="), "&move=1")
	if r := s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", b.ID), nil, "X-Manage-Token", token); r.status != 200 {
		t.Errorf("the move's manage token: %d", r.status)
	}
	if code, body, _ := s.page("GET", "/a/AAAAAAAAAAAAAAAAAAAAAA"); code != 404 || !strings.Contains(body, "Ссылка не найдена") {
		t.Errorf("an unknown link: %d", code)
	}
	if code, _, _ := s.page("POST", "/a/AAAAAAAAAAAAAAAAAAAAAA"); code != 404 {
		t.Errorf("POST of an unknown link: %d", code)
	}
	// Past the cutoff (3 h) the cancel link says to call the salon; after
	// the start every link has expired.
	s.Clock.Set(bookingtest.At(s.salon, testDay, "10:00"))
	if code, body, _ := s.page("POST", "/a/"+links[2]); code != 409 || !strings.Contains(body, "Позвоните в салон") {
		t.Errorf("cancel past the cutoff: %d %s", code, body)
	}
	s.Clock.Set(bookingtest.At(s.salon, testDay, "12:01"))
	if _, body, _ := s.page("GET", "/a/"+links[2]); !strings.Contains(body, "Срок действия ссылки истёк") {
		t.Errorf("an expired link: %s", body)
	}
}

// The one-tap pages as a client sees them on a phone and a desktop, in
// Russian and English: axe-core finds nothing, nothing is wider than the
// screen, and each button does what it says. Screenshots are saved in the
// test's artifact directory.
func TestBrowserOneTapPages(t *testing.T) {
	s := linkSite(t)
	dir := t.ArtifactDir()
	for i, lang := range []string{"ru", "en"} {
		for j, size := range []int64{390, 1280} {
			s.Clock.Set(bookingtest.DefaultNow)
			b, links := remindedLinks(t, s, lang, fmt.Sprintf("%02d:00", 12+2*i+j))
			ctx := browsertest.Tab(t, size, 844)
			tag := fmt.Sprintf("%s-%d", lang, size)
			check := func(state string) {
				t.Helper()
				browsertest.Axe(t, ctx, state+" "+tag)
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
				if err != nil || wide > 0 {
					t.Errorf("%s %s is %d px wider than the screen (%v)", state, tag, wide, err)
				}
				png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "a-"+strings.ReplaceAll(state, " ", "-")+"-"+tag+".png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if code, body, _ := s.page("GET", "/a/"+links[0]); code != 200 {
				t.Fatalf("GET: %d %s", code, body)
			}
			run(t, ctx, chromedp.Navigate(s.base+"/a/"+links[0]), chromedp.WaitVisible(css("#action-do")))
			if lang == "en" { // the booking was made in English: the page is
				if got := text(t, ctx, "#h-action"); got != "Will you come?" {
					t.Errorf("the confirm page's title: %q", got)
				}
			}
			check("confirm")
			run(t, ctx, chromedp.Click(css("#action-do")), chromedp.WaitVisible(css("#action-result")))
			check("confirmed")
			run(t, ctx, chromedp.Navigate(s.base+"/a/"+links[2]), chromedp.WaitVisible(css("#action-do")))
			check("cancel")
			run(t, ctx, chromedp.Navigate(s.base+"/a/"+links[1]), chromedp.WaitVisible(css("#action-do")))
			check("move")
			// Move opens the widget's reschedule with the free times.
			run(t, ctx, chromedp.Click(css("#action-do")), chromedp.WaitVisible(css(`#times button`)))
			check("move, the free times")
			run(t, ctx, chromedp.Navigate(s.base+"/a/"+links[2]), chromedp.WaitVisible(css("#action-do")),
				chromedp.Click(css("#action-do")), chromedp.WaitVisible(css("#action-result")))
			check("cancelled")
			if v, _ := s.Svc.BookingView(bookingtest.System(), s.salon.ID, b.ID); v.Status != booking.StatusCancelled || v.ConfirmedVia != booking.ChannelEmail {
				t.Errorf("%s: %s, confirmed via %q", tag, v.Status, v.ConfirmedVia)
			}
		}
	}
}

// The done page offers the salon's updates in Telegram: a t.me deep link
// carrying a one-time token of this booking; opening it in the bot links
// that chat to the booking, with no phone typed.
func TestBrowserDonePageOffersTelegram(t *testing.T) {
	s := newSite(t, func(c *widget.Config) { c.BotUsername = func() string { return "studio_bot" } })
	ctx := browser(t)
	m := s.masters[1]
	steps := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(s.base + "/w/studio?lang=en"),
		chromedp.WaitVisible(css(`button[data-service-id]`))}, throughTime(s, m.ID, "13:00")...)
	steps = append(steps, contact("Telegram Fan", "+7 999 555-44-33")...)
	steps = append(steps, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css("#tg-link")))
	run(t, ctx, steps...)
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#tg-link"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	token, ok := strings.CutPrefix(href.Value, "https://t.me/studio_bot?start="+widget.DeepLinkPrefix)
	if !ok || len(token) != 22 {
		t.Fatalf("the Telegram link: %q", href.Value)
	}
	browsertest.Axe(t, ctx, "done, with the Telegram link")
	chat := booking.As(context.Background(), booking.ByIdentity(booking.TelegramUser(424242)))
	v, err := s.Svc.ClaimTelegramLink(chat, token)
	if err != nil || v.ContactName != "Telegram Fan" {
		t.Fatalf("claim: %+v %v", v, err)
	}
	if _, err := s.Svc.ClaimTelegramLink(booking.As(context.Background(), booking.ByIdentity(booking.TelegramUser(7))), token); err == nil {
		t.Error("the link worked twice")
	}
	// The chat now sees the booking as its own.
	if _, err := s.Svc.BookingView(chat, s.salon.ID, v.ID); err != nil {
		t.Errorf("the chat does not see its booking: %v", err)
	}
}

// The cancel link of a booking paid with a package, at a salon whose
// rules keep a client's cancellation: its page says, before the tap, that
// the visit will be kept (as the manage page does); after it, what was
// kept.
func TestTheCancelLinkSaysWhatItKeepsOfAPackage(t *testing.T) {
	t.Parallel()
	s, svc, m := keepingSite(t)
	phone := bookingtest.Phone()
	pkg := s.issuePackage("Maria", phone, 3, booking.Date{}, svc.ID)
	_, links := remindedLinksOf(t, s, booking.BookRequest{SalonID: s.salon.ID, ServiceID: svc.ID, MasterID: m.ID,
		StartsAt: bookingtest.At(s.salon, testDay, "16:00"), PayWith: &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code},
		Client: booking.ClientInput{Name: "Maria", Phone: phone, Email: "maria@example.com", Lang: "ru"}})
	if _, body, _ := s.page("GET", "/a/"+links[2]); !strings.Contains(body, "при отмене сейчас удержание — 1 визит с абонемента\u00a0…\u2060"+pkg.Hint+".") {
		t.Errorf("the cancel link's page does not say what cancelling keeps: %s", body)
	}
	if code, body, _ := s.page("POST", "/a/"+links[2]+"?lang=en"); code != 200 ||
		!strings.Contains(body, "The booking is cancelled. Kept by the salon&#39;s cancellation rules from the package\u00a0…\u2060"+pkg.Hint+": 1 visit.") ||
		!strings.Contains(body, `<h2 id="h-action">Booking cancelled</h2>`) {
		t.Errorf("the cancel's page: %d %s", code, body)
	}
}

// TestBrowserCancelLinkNamesThePackage: the cancel link of a booking paid
// with a package, cancelled: the page's heading says it is done ("Запись
// отменена", not "Отменить запись?") and its result names the package the
// visit went back on ("Вернулось на абонемент …7QK2: 1 визит"; it said
// "на него", and the page names no package), in Russian and English, at
// 390 px; opened again, the used link's heading still says it is done.
func TestBrowserCancelLinkNamesThePackage(t *testing.T) {
	s := linkSite(t)
	phone := bookingtest.Phone()
	pkg := s.issuePackage("Maria", phone, 3, booking.Date{}, s.svc.ID)
	for i, c := range []struct{ lang, title, result, used, asked string }{
		{"ru", "Запись отменена", "Запись отменена. Вернулось на абонемент\u00a0…\u2060" + pkg.Hint + ": 1 визит.", "Эта ссылка уже использована.",
			"При отмене сейчас оплаченное вернётся на абонемент\u00a0…\u2060" + pkg.Hint + ": 1 визит."},
		{"en", "Booking cancelled", "The booking is cancelled. Back on the package\u00a0…\u2060" + pkg.Hint + ": 1 visit.", "This link was used already.",
			"If you cancel now, what it paid goes back to the package\u00a0…\u2060" + pkg.Hint + ": 1 visit."},
	} {
		s.Clock.Set(bookingtest.DefaultNow)
		_, links := remindedLinksOf(t, s, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: s.masters[i].ID,
			StartsAt: bookingtest.At(s.salon, testDay, "16:00"), PayWith: &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code},
			Client: booking.ClientInput{Name: "Maria", Phone: phone, Email: "maria@example.com", Lang: c.lang}})
		ctx := browsertest.Tab(t, 390, 844)
		// Before the tap: what cancelling does to the package; no "book
		// again" while the booking is on.
		run(t, ctx, chromedp.Navigate(s.base+"/a/"+links[2]), chromedp.WaitVisible(css("#action-do")))
		if got := text(t, ctx, "#action-question"); !strings.Contains(got, c.asked) {
			t.Errorf("%s: the question: %q, want it to say %q", c.lang, got, c.asked)
		}
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#action-book').length`)); err != nil || n != 0 {
			t.Errorf("%s: the page of a booking still on offers to book again (%d, %v)", c.lang, n, err)
		}
		saveShot(t, ctx, "a-cancel-package-"+c.lang+"-390")
		run(t, ctx, chromedp.Click(css("#action-do")), chromedp.WaitVisible(css("#action-result")))
		if got := text(t, ctx, "#h-action"); got != c.title {
			t.Errorf("%s: the heading once cancelled: %q, want %q", c.lang, got, c.title)
		}
		if got := text(t, ctx, "#action-result"); got != c.result {
			t.Errorf("%s: the result: %q, want %q", c.lang, got, c.result)
		}
		browsertest.Axe(t, ctx, "the cancel link's page, cancelled, "+c.lang)
		saveShot(t, ctx, "a-cancelled-package-"+c.lang+"-390")
		run(t, ctx, chromedp.Navigate(s.base+"/a/"+links[2]), chromedp.WaitVisible(css("#action-problem")))
		if got, problem := text(t, ctx, "#h-action"), text(t, ctx, "#action-problem"); got != c.title || !strings.Contains(problem, c.used) {
			t.Errorf("%s: the used link's page: %q, %q", c.lang, got, problem)
		}
	}
}

// TestTheClientIsToldWhatCancellingDoesToTheDeposit: a booking whose
// deposit was paid online says, before the client cancels it, whether
// cancelling refunds the deposit or the salon's policy keeps it: in the
// API (payment.cancel_refunds / cancel_keeps) and on the cancel link's
// page, in both languages; and the provider then does what was said (a
// refund of it, or none). Unpaid, or past the cutoff, nothing is said.
func TestTheClientIsToldWhatCancellingDoesToTheDeposit(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	s := linkSiteWith(t, []booking.Option{booking.WithPayments(yk)})
	ctx := bookingtest.System()
	svc := s.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	m := s.Master(t, s.salon, svc)
	s.Shift(t, s.salon, m, testDay, 1, "10:00", "20:00")
	for _, c := range []struct {
		policy     booking.RefundPolicy
		hhmm       string
		field      string
		ru, en     string
		refunded   int64
		unpaidHHMM string
		after      string // the page's result once cancelled
	}{
		{booking.RefundBeforeCutoff, "10:00", "cancel_refunds", "предоплата 1\u00a0000\u00a0₽ вернётся тем же способом, каким была внесена.",
			"the deposit of 1,000\u00a0₽ paid online will be refunded the way it was paid.", 100000, "15:00", "Предоплата 1\u00a0000\u00a0₽ возвращается."},
		{booking.RefundNever, "12:00", "cancel_keeps", "По правилам отмены салона предоплата 1\u00a0000\u00a0₽ при отмене не возвращается.",
			"By the salon&#39;s cancellation rules, the deposit of 1,000\u00a0₽ paid online is not refunded if you cancel.", 0, "17:00",
			"По правилам отмены салона предоплата 1\u00a0000\u00a0₽ не возвращена."},
	} {
		s.Clock.Set(bookingtest.DefaultNow)
		salon := *s.salon
		salon.RefundPolicy = c.policy
		if _, err := s.Svc.UpdateSalon(ctx, salon); err != nil {
			t.Fatal(err)
		}
		book := func(hhmm string) *booking.Booking {
			b, err := s.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: s.salon.ID, ServiceID: svc.ID,
				MasterID: m.ID, StartsAt: bookingtest.At(s.salon, testDay, hhmm),
				Client: booking.ClientInput{Name: "Maria", Phone: bookingtest.Phone(), Email: "maria@example.com", Lang: "ru"}})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		// Unpaid: nothing paid online, nothing to say.
		unpaid := book(c.unpaidHHMM)
		if _, err := s.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(unpaid.ManageToken)), unpaid.ID, nil); err != nil {
			t.Fatal(err)
		}
		r := s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", unpaid.ID), nil, "X-Manage-Token", unpaid.ManageToken)
		if p, _ := r.body["payment"].(map[string]any); r.status != 200 || p == nil || p["cancel_refunds"] != nil || p["cancel_keeps"] != nil {
			t.Errorf("%s: an unpaid booking's payment: %d %s", c.policy, r.status, r.raw)
		}
		// Paid.
		b := book(c.hhmm)
		p, err := s.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !fake.Pay(p.ExternalID) {
			t.Fatalf("pay %s", p.ExternalID)
		}
		if _, err := s.Svc.PaymentNotified(ctx, "yookassa", p.ExternalID); err != nil {
			t.Fatal(err)
		}
		r = s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", b.ID), nil, "X-Manage-Token", b.ManageToken)
		pay, _ := r.body["payment"].(map[string]any)
		if r.status != 200 || pay == nil || pay[c.field] != 1000.0 || len(pay) != 4 {
			t.Errorf("%s: the paid booking's payment: %d %s", c.policy, r.status, r.raw)
		}
		links := reminderLinks(t, s, b)
		// Past the cutoff the client may no longer cancel: nothing is said.
		s.Clock.Set(b.StartsAt.Add(-time.Hour))
		r = s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", b.ID), nil, "X-Manage-Token", b.ManageToken)
		if pay, _ := r.body["payment"].(map[string]any); r.status != 200 || pay == nil || pay[c.field] != nil {
			t.Errorf("%s: past the cutoff, the payment: %d %s", c.policy, r.status, r.raw)
		}
		if _, body, _ := s.page("GET", "/a/"+links[2]); strings.Contains(body, "предоплата") || strings.Contains(body, "Предоплата") {
			t.Errorf("%s: past the cutoff, the cancel link's page speaks of the deposit: %s", c.policy, body)
		}
		s.Clock.Set(b.StartsAt.Add(-24 * time.Hour))
		if _, body, _ := s.page("GET", "/a/"+links[2]); !strings.Contains(body, c.ru) {
			t.Errorf("%s: the cancel link's page does not say %q: %s", c.policy, c.ru, body)
		}
		if _, body, _ := s.page("GET", "/a/"+links[2]+"?lang=en"); !strings.Contains(body, c.en) {
			t.Errorf("%s: the cancel link's page in English does not say %q: %s", c.policy, c.en, body)
		}
		_, before := fake.Totals()
		if code, body, _ := s.page("POST", "/a/"+links[2]); code != 200 || !strings.Contains(body, "Запись отменена. "+c.after) {
			t.Fatalf("%s: cancel: %d %s", c.policy, code, body)
		}
		// What the provider did is what was said.
		bookingtest.WaitFor(t, 10*time.Second, "the refund as said", func() bool {
			if _, err := s.Svc.SweepPayments(ctx); err != nil {
				t.Fatal(err)
			}
			fake.SettleRefunds()
			_, after := fake.Totals()
			return after-before == c.refunded && fake.Held() == 0
		})
		if c.refunded == 0 && fake.Status(p.ExternalID) != "succeeded" {
			t.Errorf("%s: kept, the payment is %s at the provider", c.policy, fake.Status(p.ExternalID))
		}
	}
}

// TestALinkOfABookingTheSalonCancelledSaysSo: the cancel link of a booking
// paid with a package, opened after the salon cancelled it of its own
// accord, says it is cancelled, by the salon, and that its visit went
// back to the package; it asks nothing.
func TestALinkOfABookingTheSalonCancelledSaysSo(t *testing.T) {
	s := linkSite(t)
	phone := bookingtest.Phone()
	pkg := s.issuePackage("Maria", phone, 3, booking.Date{}, s.svc.ID)
	b, links := remindedLinksOf(t, s, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: s.masters[0].ID,
		StartsAt: bookingtest.At(s.salon, testDay, "16:00"), PayWith: &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code},
		Client: booking.ClientInput{Name: "Maria", Phone: phone, Email: "maria@example.com", Lang: "en"}})
	desk := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleAdmin}))
	if _, err := s.Svc.Cancel(desk, booking.CancelRequest{SalonID: s.salon.ID, BookingID: b.ID, Stated: true}); err != nil {
		t.Fatal(err)
	}
	_, body, _ := s.page("GET", "/a/"+links[2]+"?lang=en")
	for _, want := range []string{`<h2 id="h-action">Booking cancelled</h2>`, "The salon had to cancel this booking. We are sorry.",
		"Back on the package\u00a0…\u2060" + pkg.Hint + ": 1 visit."} {
		if !strings.Contains(body, want) {
			t.Errorf("the cancel link's page lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, `id="action-do"`) {
		t.Error("the cancel link's page of a cancelled booking asks to cancel it")
	}
}

// TestTheCancelLinkSaysWhatACertificateKeepsAndGetsBack: under a policy
// that keeps a client's cancellation's deposit, the cancel link of a
// booking paid with a certificate says, before the tap, what cancelling
// keeps of it and what goes back to it.
func TestTheCancelLinkSaysWhatACertificateKeepsAndGetsBack(t *testing.T) {
	s, svc, m := keepingSite(t)
	cert, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate, Amount: 600000})
	if err != nil {
		t.Fatal(err)
	}
	_, links := remindedLinksOf(t, s, booking.BookRequest{SalonID: s.salon.ID, ServiceID: svc.ID, MasterID: m.ID,
		StartsAt: bookingtest.At(s.salon, testDay, "16:00"), PayWith: &booking.PayWith{Code: cert.Code},
		Client: booking.ClientInput{Name: "Maria", Phone: bookingtest.Phone(), Email: "maria@example.com", Lang: "en"}})
	want := "cancelling now keeps 1,000\u00a0₽ of the certificate\u00a0…\u2060" + cert.Hint + ". The rest, 4,000\u00a0₽, goes back to it."
	if _, body, _ := s.page("GET", "/a/"+links[2]+"?lang=en"); !strings.Contains(html.UnescapeString(body), want) {
		t.Errorf("the cancel link's page does not say %q: %s", want, body)
	}
}

// keepingSite is a link site whose salon's rules keep a client's
// cancellation's deposit, with a colour (5 000, its deposit 1 000) and a
// master who does it on the test day.
func keepingSite(t *testing.T) (*site, *booking.SalonService, *booking.Master) {
	t.Helper()
	s := linkSite(t)
	salon := *s.salon
	salon.RefundPolicy = booking.RefundNever
	if _, err := s.Svc.UpdateSalon(bookingtest.System(), salon); err != nil {
		t.Fatal(err)
	}
	svc := s.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	m := s.Master(t, s.salon, svc)
	s.Shift(t, s.salon, m, testDay, 1, "10:00", "20:00")
	return s, svc, m
}
