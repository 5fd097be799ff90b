package panel_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/internal/browsertest"
	"salon/internal/demo"
)

var payLinkRE = regexp.MustCompile(`value="(http[^"]*/a/([A-Za-z0-9_-]{22}))"`)

// TestTheSalonAsksADepositOnline: a booking made in the panel for a
// deposit service can ask the deposit online (the time held, not
// confirmed) or take it in the salon (confirmed); the booking's page makes
// a link that pays it, whose page (the widget's) opens the provider's
// payment. In a browser, in Russian and English, on a desktop and at
// 390 px, the form, the booking's page with its link and the link's page
// pass axe-core, and their screenshots are saved.
func TestTheSalonAsksADepositOnline(t *testing.T) {
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(yk))}
	w := newWorldOn(t, e)
	ctx := bookingtest.System()
	svc := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND deposit > 0 ORDER BY id LIMIT 1`, w.salon.ID)
	m := scalar[int64](t, w, `SELECT m.id FROM masters m JOIN master_services ms ON ms.master_id = m.id WHERE ms.service_id = $1 ORDER BY m.id LIMIT 1`, svc)
	slots, err := w.Svc.Slots(ctx, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: svc, MasterID: m, From: w.today().AddDays(1), Days: 3})
	if err != nil || len(slots) < 4 {
		t.Fatalf("%d slots: %v", len(slots), err)
	}
	loc := w.salon.Location()
	b := w.owner()
	book := func(i int, deposit string) int64 {
		t.Helper()
		at := slots[i*4].Start.In(loc)
		r := b.post("/panel/bookings", url.Values{"master": {fmt.Sprint(m)}, "service": {fmt.Sprint(svc)}, "date": {at.Format("2006-01-02")},
			"time": {at.Format("15:04")}, "phone": {bookingtest.Phone()}, "name": {"Вера"}, "email": {"vera@example.com"},
			"deposit": {deposit}, "key": {fmt.Sprintf("k-%d", i)}})
		var id int64
		if _, err := fmt.Sscanf(r.header.Get("Location"), "/panel/bookings/%d", &id); r.status != http.StatusSeeOther || err != nil {
			t.Fatalf("book (%s): %d %s %.300s", deposit, r.status, r.header.Get("Location"), r.body)
		}
		return id
	}
	inSalon, online := book(0, "salon"), book(1, "online")
	if st := scalar[string](t, w, `SELECT status FROM bookings WHERE id = $1`, inSalon); st != "confirmed" {
		t.Errorf("the deposit taken in the salon: %s", st)
	}
	if st := scalar[string](t, w, `SELECT status FROM bookings WHERE id = $1 AND hold_expires_at IS NOT NULL`, online); st != "pending" {
		t.Errorf("the deposit asked online: %s", st)
	}
	// The day's grid says once that it awaits its deposit.
	day := slots[4].Start.In(loc).Format("2006-01-02")
	cellRE := regexp.MustCompile(fmt.Sprintf(`(?s)href="/panel/bookings/%d" class="booking">.*?</a>`, online))
	if got := html.UnescapeString(cellRE.FindString(b.get("/panel/day/" + day).body)); strings.Count(got, "ждёт предоплату") != 1 {
		t.Errorf("the day's cell of the booking awaiting its deposit: %s", got)
	}
	if p := b.get(fmt.Sprintf("/panel/bookings/%d", inSalon)); strings.Contains(p.body, `id="pay-link"`) {
		t.Error("a confirmed booking offers a payment link")
	}
	r := b.post(fmt.Sprintf("/panel/bookings/%d/pay-link", online), nil)
	found := payLinkRE.FindStringSubmatch(r.body)
	if r.status != 200 || found == nil || !strings.HasPrefix(found[1], w.base+"/a/") {
		t.Fatalf("make a payment link: %d %.300s", r.status, r.body)
	}
	link := found[1]
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Post(link, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if to := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, fake.URL) {
		t.Errorf("the link's POST: %d to %q, want the provider's page", resp.StatusCode, to)
	}
	if n := fake.Payments(); n != 1 {
		t.Errorf("%d payments at the provider", n)
	}

	for i, size := range [][2]int64{{1280, 900}, {390, 844}} {
		tab := browsertest.Tab(t, size[0], size[1])
		if i == 0 {
			do(t, tab, chromedp.Navigate(w.base+"/panel/login"), chromedp.WaitVisible(css(`input[name=email]`)),
				chromedp.SendKeys(css(`input[name=email]`), demo.Email), chromedp.SendKeys(css(`input[name=password]`), demo.Password),
				chromedp.Submit(css(`input[name=password]`)), chromedp.WaitVisible(css(`#grid`)))
		}
		for _, lang := range []string{"ru", "en"} {
			do(t, tab, chromedp.Navigate(w.base+"/panel/settings"), chromedp.WaitVisible(css(`#main`)))
			value(t, tab, chromedp.Evaluate[bool](`(function(){var f=document.querySelector('form[action="/panel/lang"]');`+
				`var i=f.querySelector('[name=lang]');i.value='`+lang+`';f.submit();return true})()`))
			do(t, tab, chromedp.WaitVisible(css(fmt.Sprintf(`html[lang=%s]`, lang))))
			shot := func(name string) {
				t.Helper()
				browsertest.Axe(t, tab, fmt.Sprintf("%s (%s, %d px)", name, lang, size[0]))
				if wide := value(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); wide > 0 {
					t.Errorf("%s (%s) at %d px is %d px wider than the screen", name, lang, size[0], wide)
				}
				png := value(t, tab, chromedp.FullScreenshot(100))
				if err := os.WriteFile(filepath.Join(t.ArtifactDir(), fmt.Sprintf("%s-%s-%d.png", name, lang, size[0])), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			do(t, tab, chromedp.Navigate(w.base+"/panel/bookings/new"), chromedp.WaitVisible(css(`#deposit-choice`)))
			shot("new-booking-deposit")
			do(t, tab, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, online)), chromedp.WaitVisible(css(`#pay-link button`)),
				chromedp.Click(css(`#pay-link button`)), chromedp.WaitVisible(css(`#pay-link-url`)))
			shown := value(t, tab, chromedp.Evaluate[string](`document.getElementById('pay-link-url').value`))
			if !strings.HasPrefix(shown, w.base+"/a/") {
				t.Fatalf("the link shown: %q", shown)
			}
			shot("booking-pay-link")
			do(t, tab, chromedp.Navigate(shown+"?lang="+lang), chromedp.WaitVisible(css(`#action-do`)))
			shot("pay-link-page")
		}
	}

	// Paid: the cancel form says what cancelling does to the deposit, by
	// the salon's policy, and the provider then does it (the panel is in
	// English since the browser's last choice).
	ext := fake.IDs()[0]
	if !fake.Pay(ext) {
		t.Fatalf("pay %s", ext)
	}
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", ext); err != nil {
		t.Fatal(err)
	}
	policy := func(p string) {
		t.Helper()
		if _, err := w.Pool.Exec(ctx, `UPDATE salons SET refund_policy = $2, catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	page := fmt.Sprintf("/panel/bookings/%d", online)
	policy("never")
	if p := b.get(page); !strings.Contains(p.body, "By the salon&#39;s refund policy, the deposit of 1,000\u00a0₽ paid online is kept: cancelling does not refund it.") {
		t.Errorf("the cancel form under the policy never: %s", p.body)
	}
	if p := b.get(page); !strings.Contains(p.body, `<input type="radio" name="asked" value="client" required aria-describedby="cancel-deposit"> the client: they asked to cancel`) ||
		!strings.Contains(p.body, `<input type="radio" name="asked" value="salon" required aria-describedby="cancel-salon"> the salon (a master is ill, the salon is closed)`) {
		t.Errorf("the cancel form does not ask who cancels: %s", p.body)
	}
	// A form drawn before the deposit was paid (it said nothing was paid
	// online) is shown again, not acted on, when the client asked.
	for _, asked := range []string{"client", ""} { // (drawn unpaid: it asked nobody)
		if r := b.post(page+"/cancel", url.Values{"asked": {asked}, "terms": {"true:0.00:false:0"}, "reason": {"she called"}}); r.status != http.StatusConflict ||
			!strings.Contains(r.body, "The terms of cancelling changed since the page was shown") || !strings.Contains(r.body, `value="she called"`) {
			t.Errorf("a stale cancel form (asked %q): %d %.300s", asked, r.status, r.body)
		}
	}
	// An answer the form does not offer is refused, not taken for the
	// salon's own.
	if r := b.post(page+"/cancel", url.Values{"asked": {"nobody"}, "reason": {"she called"}}); r.status != http.StatusBadRequest ||
		!strings.Contains(r.body, "Choose who cancels: the client or the salon.") {
		t.Errorf("a cancel form with asked=nobody: %d %.300s", r.status, r.body)
	}
	if st := scalar[string](t, w, `SELECT status FROM bookings WHERE id = $1`, online); st != "confirmed" {
		t.Fatalf("a stale or bad cancel form cancelled the booking: %s", st)
	}
	policy("before_cutoff")
	if p := b.get(page); !strings.Contains(p.body, "<p class=\"hint\" id=\"cancel-deposit\">Cancelling refunds the deposit of 1,000\u00a0₽ paid online to the client.</p>") {
		t.Errorf("the cancel form under the policy before_cutoff: %s", p.body)
	}
	// The form at 390 px, in the language chosen last (English).
	policy("never")
	tab := browsertest.Tab(t, 390, 844)
	do(t, tab, chromedp.Navigate(w.base+page), chromedp.WaitVisible(css(`#cancel-asked`))) // (signed in above: one browser)
	browsertest.Axe(t, tab, "the booking page with a deposit paid online (390 px)")
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "booking-cancel-deposit-390.png"), value(t, tab, chromedp.FullScreenshot(100)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Under a policy that keeps deposits, the salon cancelling of its own
	// accord refunds it.
	r = b.post(page+"/cancel", url.Values{"reason": {"the master is ill"}, "asked": {"salon"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("cancel: %d %.300s", r.status, r.body)
	}
	// The desk is told its time is not offered to the waiting list, and
	// what to do so that it is not booked online either.
	if p := b.get(r.header.Get("Location")); !strings.Contains(p.body, "Booking cancelled. Its time is not offered to the waiting list; if the master cannot work then, take it off their schedule") {
		t.Errorf("after the salon's own cancellation: %s", p.body)
	}
	bookingtest.WaitFor(t, 10*time.Second, "the deposit refunded at the provider", func() bool {
		if _, err := w.Svc.SweepPayments(ctx); err != nil {
			t.Fatal(err)
		}
		fake.SettleRefunds()
		_, refunded := fake.Totals()
		return refunded == 100000
	})
	p := b.get(page)
	if strings.Contains(p.body, `id="cancel-deposit"`) || !strings.Contains(p.body, "<b>Cancelled by the salon: the master is ill</b>") {
		t.Errorf("a cancelled booking's page: %s", p.body)
	}
	// The payment's history gives the refund's why, not the capture's.
	rows := regexp.MustCompile(`<tr><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td></tr>`).FindAllStringSubmatch(p.body, -1)
	var refundWhy []string
	for _, r := range rows {
		if r[1] == "paid → being refunded" {
			refundWhy = append(refundWhy, r[2])
		}
	}
	if !slices.Equal(refundWhy, []string{"the booking was cancelled"}) {
		t.Errorf("the payment history's refund: %q in %q", refundWhy, rows)
	}
}
