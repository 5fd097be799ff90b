package widget_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/internal/browsertest"
	"salon/widget"
)

// ykSite is the widget taking deposits through a fake YooKassa, whose
// faults the test sets.
type ykSite struct {
	*site
	fake  *psptest.Server
	fault func(method, path string) psptest.Fault
	mu    sync.Mutex
}

func newYKSite(t *testing.T) *ykSite {
	t.Helper()
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	e := bookingtest.New(t, booking.WithPayments(yk))
	s := &ykSite{site: &site{Env: e, t: t, client: &http.Client{Timeout: 30 * time.Second}, router: openapiRouter(t)}, fake: fake}
	fake.Fault = func(method, path string) psptest.Fault {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fault != nil {
			return s.fault(method, path)
		}
		return psptest.None
	}
	s.salon = e.Salon(t, booking.Salon{Slug: "studio", Name: "Studio", CutoffHours: 3, HoldMin: 15})
	s.svc = e.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	m := e.Master(t, s.salon, s.svc)
	e.Shift(t, s.salon, m, testDay, 1, "10:00", "20:00")
	s.masters = []*booking.Master{m}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.base = serve(t, widget.New(e.Svc, widget.Config{Log: log}), log)
	return s
}

func (s *ykSite) setFault(f func(method, path string) psptest.Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// book makes a deposit booking through the API, as the widget does: the
// 201 carries its payment.
func (s *ykSite) book(hhmm string) (id int64, token string, payment string) {
	s.t.Helper()
	r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], hhmm))
	if r.status != 201 {
		s.t.Fatalf("book %s: %d %s", hhmm, r.status, r.raw)
	}
	var ext string
	if err := s.Pool.QueryRow(context.Background(), `SELECT COALESCE(external_id, '') FROM payment_sessions WHERE booking_id = $1 ORDER BY id DESC LIMIT 1`,
		int64(r.body["id"].(float64))).Scan(&ext); err != nil {
		s.t.Fatal(err)
	}
	return int64(r.body["id"].(float64)), r.str("manage_token"), ext
}

func (s *ykSite) notified(ext string) {
	s.t.Helper()
	if _, err := s.Svc.PaymentNotified(bookingtest.System(), "yookassa", ext); err != nil && !strings.Contains(err.Error(), "unavailable") {
		s.t.Fatal(err)
	}
}

// TestBrowserManagePageInEveryPaymentState: the manage page of a deposit
// booking in each state a client meets (waiting for payment, declined and
// tried again, expired, paid with the capture pending, paid, refunded,
// cancelled with the deposit kept, moved to a larger deposit)
// says what is so, in English and Russian, on a phone and a desktop, and
// never "Something went wrong". Screenshots are saved.
func TestBrowserManagePageInEveryPaymentState(t *testing.T) {
	s := newYKSite(t)
	ctx := bookingtest.System()
	type state struct {
		name, hhmm string
		id         int64
		token, ext string
		en, ru     string // what the payment note says
		button     string // the visible action, if any
		refunds    bool   // the page says cancelling refunds the deposit
	}
	states := []*state{
		{name: "pending-unpaid", hhmm: "10:00", en: "Pay the deposit of 1,000\u00a0₽ by", ru: "Внесите предоплату 1\u00a0000\u00a0₽ до", button: "#manage-pay"},
		{name: "declined", hhmm: "11:00", en: "The payment did not go through", ru: "Оплата не прошла", button: "#manage-retry"},
		{name: "expired", hhmm: "12:00", en: "did not come in time", ru: "не поступила вовремя"},
		{name: "paid-awaiting-capture", hhmm: "13:00", en: "is paid; the salon is confirming it", ru: "внесена; салон подтверждает", refunds: true},
		{name: "paid", hhmm: "14:00", en: "The deposit of 1,000\u00a0₽ is paid.", ru: "Предоплата 1\u00a0000\u00a0₽ получена.", refunds: true},
		{name: "refunded", hhmm: "15:00", en: "The deposit of 1,000\u00a0₽ is refunded.", ru: "Предоплата 1\u00a0000\u00a0₽ возвращена."},
		{name: "kept", hhmm: "18:00", en: "By the salon's cancellation rules, the deposit of 1,000\u00a0₽ was not refunded.",
			ru: "По правилам отмены салона предоплата 1\u00a0000\u00a0₽ не возвращена."},
		{name: "moved-difference-due", hhmm: "16:00", en: "500\u00a0₽ more is due", ru: "осталось доплатить 500\u00a0₽", button: "#manage-retry", refunds: true},
	}
	for _, st := range states {
		st.id, st.token, st.ext = s.book(st.hhmm)
	}
	byName := map[string]*state{}
	for _, st := range states {
		byName[st.name] = st
	}
	// Declined on the provider's page.
	s.fake.Decline(byName["declined"].ext)
	s.notified(byName["declined"].ext)
	// Paid; the capture does not answer.
	s.setFault(func(method, path string) psptest.Fault {
		if path == "POST /payments/{id}/capture" {
			return psptest.Error
		}
		return psptest.None
	})
	s.fake.Pay(byName["paid-awaiting-capture"].ext)
	s.notified(byName["paid-awaiting-capture"].ext)
	s.setFault(nil)
	// Paid.
	for _, n := range []string{"paid", "refunded", "kept"} {
		s.fake.Pay(byName[n].ext)
		s.notified(byName[n].ext)
	}
	// Refunded: the client cancels.
	if r := s.do("POST", fmt.Sprintf("/api/v1/bookings/%d/cancel", byName["refunded"].id), map[string]any{}, "X-Manage-Token", byName["refunded"].token); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	// Kept: the client cancels under a policy that keeps deposits (then
	// the salon's policy is as it was).
	setPolicy := func(p booking.RefundPolicy) {
		t.Helper()
		salon := *s.salon
		salon.RefundPolicy = p
		if _, err := s.Svc.UpdateSalon(ctx, salon); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(booking.RefundNever)
	if r := s.do("POST", fmt.Sprintf("/api/v1/bookings/%d/cancel", byName["kept"].id), map[string]any{}, "X-Manage-Token", byName["kept"].token); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	setPolicy(s.salon.RefundPolicy)
	// Moved by the salon to a master whose service asks a larger deposit.
	s.fake.Pay(byName["moved-difference-due"].ext)
	s.notified(byName["moved-difference-due"].ext)
	other := s.Master(t, s.salon, s.svc)
	s.Shift(t, s.salon, other, testDay, 1, "10:00", "20:00")
	if _, err := s.Svc.UpdateService(ctx, s.salon.ID, booking.SalonService{ID: s.svc.ID, Name: s.svc.Name, DurationMin: s.svc.DurationMin,
		Price: s.svc.Price, Deposit: 150000, Active: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: byName["moved-difference-due"].id, MasterID: other.ID,
		StartsAt: bookingtest.At(s.salon, testDay, "17:00")}); err != nil {
		t.Fatal(err)
	}
	// Expired: its hold ends.
	if _, err := s.Pool.Exec(ctx, `UPDATE bookings SET hold_expires_at = $2 WHERE id = $1`, byName["expired"].id, s.Clock.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}

	tab := browser(t)
	dir := t.ArtifactDir()
	for _, lang := range []string{"en", "ru"} {
		for _, st := range states {
			page := fmt.Sprintf("%s/w/studio/manage/%d?lang=%s#t=%s", s.base, st.id, lang, url.PathEscape(st.token))
			run(t, tab, chromedp.Navigate(page), chromedp.WaitVisible(css("#manage-payment")))
			note := text(t, tab, "#manage-payment")
			want := map[string]string{"en": st.en, "ru": st.ru}[lang]
			if !strings.Contains(note, want) {
				t.Errorf("%s (%s): the payment note reads %q, want %q", st.name, lang, note, want)
			}
			errText, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('error').hidden ? '' : document.getElementById('error').textContent`))
			if err != nil || errText != "" {
				t.Errorf("%s (%s): the page shows an error %q (%v)", st.name, lang, errText, err)
			}
			// Before the client cancels: what becomes of the deposit paid.
			said, err := chromedp.Run(tab, chromedp.Evaluate[string](`(function (e) { return e.hidden ? '' : e.textContent })(document.getElementById('cancel-deposit'))`))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"en": "If you cancel now, the deposit of 1,000\u00a0₽ paid online will be refunded the way it was paid.",
				"ru": "При отмене сейчас предоплата 1\u00a0000\u00a0₽ вернётся тем же способом, каким была внесена."}[lang]; (said == want) != st.refunds {
				t.Errorf("%s (%s): before cancelling the page says %q", st.name, lang, said)
			}
			for _, b := range []string{"#manage-pay", "#manage-retry"} {
				visible, err := chromedp.Run(tab, chromedp.Evaluate[bool](`!document.querySelector('`+b+`').hidden`))
				if err != nil {
					t.Fatal(err)
				}
				if visible != (b == st.button) {
					t.Errorf("%s (%s): %s visible: %v", st.name, lang, b, visible)
				}
			}
			for _, size := range [][2]int64{{390, 844}, {1280, 900}} {
				run(t, tab, chromedp.EmulateViewport(size[0], size[1]))
				browsertest.Axe(t, tab, fmt.Sprintf("the manage page, %s (%s, %d px)", st.name, lang, size[0]))
				png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("manage-%s-%s-%d.png", st.name, lang, size[0])), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run(t, tab, chromedp.EmulateViewport(480, 900))
		}
	}
	t.Logf("screenshots in %s", dir)

	// Declined, then tried again from the page: a new payment, and the
	// client is sent to its page.
	d := byName["declined"]
	run(t, tab, chromedp.Navigate(fmt.Sprintf("%s/w/studio/manage/%d?lang=en#t=%s", s.base, d.id, url.PathEscape(d.token))),
		chromedp.WaitVisible(css("#manage-retry")), chromedp.Click(css("#manage-retry")))
	var next string
	bookingtest.WaitFor(t, 10*time.Second, "the new payment's page", func() bool {
		loc, err := chromedp.Run(tab, chromedp.Location())
		if err == nil && strings.HasPrefix(loc, s.fake.URL+"/pay/") {
			next = strings.TrimPrefix(loc, s.fake.URL+"/pay/")
			return true
		}
		return false
	})
	if next == d.ext {
		t.Errorf("tried again on the declined payment %s", next)
	}
	s.fake.Pay(next)
	s.notified(next)
	run(t, tab, chromedp.Navigate(fmt.Sprintf("%s/w/studio/manage/%d?lang=en#t=%s", s.base, d.id, url.PathEscape(d.token))),
		chromedp.WaitVisible(css("#manage-payment")))
	if note := text(t, tab, "#manage-payment"); !strings.Contains(note, "is paid") {
		t.Errorf("declined, tried again and paid: %q", note)
	}
	if got := text(t, tab, "#manage-details"); !strings.Contains(got, "confirmed") {
		t.Errorf("declined, tried again and paid: the booking shows %q", got)
	}
}

// TestPaymentURLOnlyWhileItCanBePaid: GET /bookings/{id} gives the
// payment's url only while the booking is pending and its payment waits
// for the client: not once the hold expired (the session still watched),
// and not to a client who has just paid when the capture does not answer
// (they read what the check got to, not the read before it).
func TestPaymentURLOnlyWhileItCanBePaid(t *testing.T) {
	t.Parallel()
	s := newYKSite(t)
	ctx := bookingtest.System()
	get := func(id int64, token string) (string, map[string]any) {
		r := s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", id), nil, "X-Manage-Token", token)
		if r.status != 200 {
			t.Fatalf("get: %d %s", r.status, r.raw)
		}
		p, _ := r.body["payment"].(map[string]any)
		return r.str("status"), p
	}
	expired, et, _ := s.book("10:00")
	if st, p := get(expired, et); st != "pending" || p["url"] == nil {
		t.Fatalf("pending: %s %v", st, p)
	}
	s.Clock.Advance(20 * time.Minute)
	if _, err := s.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	if st, p := get(expired, et); st != "cancelled" || p["url"] != nil {
		t.Errorf("after the hold expired: %s, payment %v (want no url)", st, p)
	}

	paid, pt, ext := s.book("12:00")
	s.setFault(func(method, path string) psptest.Fault {
		if path == "POST /payments/{id}/capture" {
			return psptest.Error
		}
		return psptest.None
	})
	s.fake.Pay(ext)
	if st, p := get(paid, pt); p["url"] != nil || p["status"] != "authorized" || st != "confirmed" {
		t.Errorf("just paid, the capture unanswered: booking %s, payment %v (want confirmed, authorized, no url)", st, p)
	}
}
