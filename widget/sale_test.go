package widget_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/internal/browsertest"
	"salon/widget"
)

const testClaim = "claim-of-the-buyers-browser-0001"

// saleSite is the sandbox site with a certificate and a package on sale.
func saleSite(t *testing.T, opts ...func(*widget.Config)) (*site, *booking.BalanceOffer, *booking.BalanceOffer) {
	t.Helper()
	s, _ := paySite(t, opts...)
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleOwner}))
	cert, err := s.Svc.AddBalanceOffer(owner, booking.BalanceOffer{SalonID: s.salon.ID, Kind: booking.BalanceCertificate,
		Title: "Подарочный сертификат", Amount: 300000, Price: 300000, ValidDays: 180})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := s.Svc.AddBalanceOffer(owner, booking.BalanceOffer{SalonID: s.salon.ID, Kind: booking.BalancePackage,
		Title: "Пять окрашиваний", ServiceIDs: []int64{s.svc.ID}, Visits: 5, Price: 2000000})
	if err != nil {
		t.Fatal(err)
	}
	return s, cert, pkg
}

// TestBuyACertificateThroughTheAPI: the offers, the purchase (its payment
// at the provider's page, which sends the buyer back by a reference that
// carries no code and no claim), the return read with and without the
// claim, and the code paying a booking.
func TestBuyACertificateThroughTheAPI(t *testing.T) {
	t.Parallel()
	s, cert, pkg := saleSite(t)
	r := s.do("GET", "/api/v1/salons/studio/offers", nil)
	if r.status != 200 || !strings.Contains(string(r.raw), `"kind":"certificate"`) || !strings.Contains(string(r.raw), `"visits":5`) {
		t.Fatalf("offers: %d %s", r.status, r.raw)
	}
	// Bad input is named by field, and nothing is sold.
	r = s.do("POST", "/api/v1/salons/studio/purchases", map[string]any{"offer_id": cert.ID,
		"buyer": map[string]any{"name": "Вера", "phone": "+7 999 100-20-30"}})
	if f, _ := r.body["fields"].(map[string]any); r.status != 422 || f["buyer.email"] == nil {
		t.Fatalf("no e-mail: %d %s", r.status, r.raw)
	}
	r = s.do("POST", "/api/v1/salons/studio/purchases", map[string]any{"offer_id": pkg.ID + 100,
		"buyer": map[string]any{"name": "Вера", "phone": "+7 999 100-20-30", "email": "vera@example.com"}})
	if f, _ := r.body["fields"].(map[string]any); r.status != 422 || f["offer_id"] == nil {
		t.Fatalf("an unknown offer: %d %s", r.status, r.raw)
	}
	r = s.do("POST", "/api/v1/salons/studio/purchases", map[string]any{"offer_id": cert.ID, "claim": testClaim,
		"buyer": map[string]any{"name": "Вера", "phone": "+7 999 100-20-30", "email": "vera@example.com"}}, "Idempotency-Key", "p-1")
	pay, _ := r.body["payment"].(map[string]any)
	url, _ := pay["url"].(string)
	ref := r.str("ref")
	if r.status != 201 || r.str("status") != "pending" || !strings.HasPrefix(url, s.base+psp.SandboxPath) || ref == "" {
		t.Fatalf("purchase: %d %s", r.status, r.raw)
	}
	again := s.do("POST", "/api/v1/salons/studio/purchases", map[string]any{"offer_id": cert.ID, "claim": testClaim,
		"buyer": map[string]any{"name": "Вера", "phone": "+7 999 100-20-30", "email": "vera@example.com"}}, "Idempotency-Key", "p-1")
	if again.status != 201 || again.id() != r.id() {
		t.Fatalf("the retry: %d %s", again.status, again.raw)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(url, map[string][]string{"do": {"pay"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(back, s.base+"/w/studio/bought/"+ref) || strings.Contains(back, testClaim) {
		t.Fatalf("back to %q (%d)", back, resp.StatusCode)
	}
	// The page is there; the read without the claim shows no code.
	page, err := http.Get(back)
	if err != nil || page.StatusCode != 200 {
		t.Fatalf("the return page: %v %v", page, err)
	}
	page.Body.Close()
	// Another salon's page does not open it.
	s.Salon(t, booking.Salon{Slug: "rival", Name: "Rival"})
	if page, err := http.Get(s.base + "/w/rival/bought/" + ref); err != nil || page.StatusCode != 404 {
		t.Fatalf("the return page at another salon: %v %v", page, err)
	} else {
		page.Body.Close()
	}
	r = s.do("POST", "/api/v1/purchases/"+ref, nil)
	if r.status != 200 || r.str("status") != "paid" || r.str("code") != "" || r.str("email") != "v***@example.com" {
		t.Fatalf("without the claim: %d %s", r.status, r.raw)
	}
	r = s.do("POST", "/api/v1/purchases/"+ref, map[string]any{"claim": testClaim})
	code := r.str("code")
	if r.status != 200 || code == "" || r.body["amount"] != 3000.0 || r.str("valid_until") == "" {
		t.Fatalf("with the claim: %d %s", r.status, r.raw)
	}
	// A claim no purchase could be made with is refused, not read as none.
	for _, bad := range []string{"short", strings.Repeat("a", 5000)} {
		if r := s.do("POST", "/api/v1/purchases/"+ref, map[string]any{"claim": bad}); r.status != 422 || r.str("code") != "" {
			t.Fatalf("a claim of %d characters: %d %s", len(bad), r.status, r.raw)
		}
	}
	if r := s.do("POST", "/api/v1/purchases/no-such-ref", nil); r.status != 404 {
		t.Fatalf("an unknown reference: %d", r.status)
	}
	// The code is the certificate's.
	r = s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": code})
	if r.status != 200 || r.body["remaining"] != 3000.0 {
		t.Fatalf("the balance: %d %s", r.status, r.raw)
	}
	var balances, credits int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(DISTINCT b.id), count(e.*) FROM balances b
		JOIN balance_entries e ON e.balance_id = b.id AND e.type = 'credit' WHERE b.salon_id = $1`, s.salon.ID).Scan(&balances, &credits); err != nil ||
		balances != 1 || credits != 1 {
		t.Fatalf("%d balances, %d credits (%v)", balances, credits, err)
	}
}

// TestBrowserBuysAGiftCertificate: a client buys a certificate on the
// gift page, pays on the provider's page, and comes back to the code, in
// Russian on a phone and in English on a desktop; axe finds nothing.
func TestBrowserBuysAGiftCertificate(t *testing.T) {
	s, cert, pkg := saleSite(t)
	for _, c := range []struct {
		lang, want, paid, phone string
		w, h                    int64
	}{{"ru", "Оплачено", "Подарочные", "+7 999 100-20-31", 390, 844}, {"en", "Paid", "Gift certificates", "+7 999 100-20-32", 1280, 900}} {
		ctx := browser(t)
		run(t, ctx, chromedp.EmulateViewport(c.w, c.h), chromedp.Navigate(s.base+"/w/studio?lang="+c.lang), chromedp.WaitVisible(css("#gift-offer a")))
		if got := text(t, ctx, "#gift-offer"); !strings.Contains(got, c.paid) {
			t.Fatalf("%s: the booking page's link: %q", c.lang, got)
		}
		run(t, ctx, chromedp.Click(css("#gift-offer a")), chromedp.WaitVisible(css("#gift-form")))
		browsertest.Axe(t, ctx, "the gift page "+c.lang)
		// A package is its buyer's phone's: the page says so at the phone
		// once a package is picked (not for a certificate).
		hinted := func() bool {
			shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById('hint-package').hidden`))
			if err != nil {
				t.Fatal(err)
			}
			return shown
		}
		if hinted() {
			t.Errorf("%s: the package's phone hint shows before anything is picked", c.lang)
		}
		run(t, ctx, chromedp.Click(css(`input[name=offer][value="`+itoa(pkg.ID)+`"]`)))
		if got := text(t, ctx, "#hint-package"); !hinted() || !strings.Contains(got, map[string]string{"ru": "на этот номер", "en": "booked with this number"}[c.lang]) {
			t.Fatalf("%s: the package's phone hint: %q", c.lang, got)
		}
		run(t, ctx, chromedp.Click(css(`input[name=offer][value="`+itoa(cert.ID)+`"]`)))
		if hinted() {
			t.Errorf("%s: the package's phone hint shows for a certificate", c.lang)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('input[name=offer]:checked').checked = false`)); err != nil {
			t.Fatal(err) // (unpicked again: the page is tried with nothing chosen next)
		}
		saveShot(t, ctx, "gift-"+c.lang)
		// Nothing chosen: said at the choice.
		run(t, ctx, chromedp.Click(css("#gift-pay")), chromedp.WaitVisible(css("#err-offer")))
		if text(t, ctx, "#err-offer") == "" {
			t.Fatalf("%s: no choice, no word", c.lang)
		}
		run(t, ctx, chromedp.Click(css(`input[name=offer][value="`+itoa(cert.ID)+`"]`)),
			chromedp.SendKeys(css("#buyer-name"), "Вера"), chromedp.SendKeys(css("#buyer-phone"), c.phone),
			chromedp.SendKeys(css("#buyer-email"), "not-an-email"), chromedp.Click(css("#gift-pay")))
		bookingtest.WaitFor(t, 10*time.Second, "the e-mail's error", func() bool { return text(t, ctx, "#err-email") != "" })
		// (The server's words, from a capital letter, as the page's own.)
		if got := []rune(text(t, ctx, "#err-email")); !unicode.IsUpper(got[0]) {
			t.Errorf("%s: the e-mail's error %q", c.lang, string(got))
		}
		saveShot(t, ctx, "gift-bad-email-"+c.lang)
		run(t, ctx, chromedp.SetValue(css("#buyer-email"), "vera-"+c.lang+"@example.com"), chromedp.Click(css("#gift-pay")),
			chromedp.WaitVisible(css("#pay")))
		// The provider's page (the sandbox's) in the language of the page
		// the buyer left, whatever the browser's.
		if lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`)); err != nil || lang != c.lang {
			t.Errorf("%s: the payment page is in %q (%v)", c.lang, lang, err)
		}
		run(t, ctx, chromedp.Click(css("#pay")), chromedp.WaitVisible(css("#code-value")))
		bookingtest.WaitFor(t, 10*time.Second, "the code", func() bool { return text(t, ctx, "#code-value") != "" })
		if got := text(t, ctx, "#bought-status"); !strings.Contains(got, c.want) {
			t.Fatalf("%s: the return page says %q", c.lang, got)
		}
		browsertest.Axe(t, ctx, "the return page "+c.lang)
		saveShot(t, ctx, "gift-bought-"+c.lang)
		code := text(t, ctx, "#code-value")
		r := s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": code})
		if r.status != 200 || r.body["remaining"] != 3000.0 {
			t.Fatalf("%s: the code shown %q: %d %s", c.lang, code, r.status, r.raw)
		}
	}
}

// TestBrowserShowsAGiftRefundedInPart: a certificate bought on the gift
// page pays a booking of part of it; the rest is refunded. The buyer's
// return page says how much came back, not that all did, and no code
// (nothing is left on it); the booking cancelled, what it held is back on
// the certificate, and the page shows it with the code that spends it
// (in Russian on a phone, in English on a desktop; axe finds nothing).
func TestBrowserShowsAGiftRefundedInPart(t *testing.T) {
	s, cert, _ := saleSite(t)
	trim := s.Service(t, s.salon, booking.SalonService{Name: "Trim", DurationMin: 30, Price: 100000})
	m := s.Master(t, s.salon, trim)
	s.Shift(t, s.salon, m, testDay, 1, "10:00", "20:00")
	ctx := browser(t)
	code := buyOnGiftPage(t, ctx, s, cert.ID, "Вера", "+7 999 100-20-33", "vera@example.com")
	// A trim of 1000 paid with it; the 2000 left refunded.
	r := s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": trim.ID, "master_id": m.ID,
		"starts_at": bookingtest.At(s.salon, testDay, "12:00").Format(time.RFC3339),
		"client":    map[string]any{"name": "Гость", "phone": "+7 999 100-20-34"}, "pay_with": map[string]any{"certificate": code}})
	if r.status != 201 {
		t.Fatalf("booked with the code: %d %s", r.status, r.raw)
	}
	b, err := s.Svc.BalanceByCode(booking.As(context.Background(), booking.Visitor()), s.salon.ID, code)
	if err != nil {
		t.Fatal(err)
	}
	staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleOwner}))
	if _, err := s.Svc.RefundBalance(staff, s.salon.ID, b.ID, "not wanted"); err != nil {
		t.Fatal(err)
	}
	if x, err := s.Svc.SaleOfBalance(staff, s.salon.ID, b.ID); err != nil || x.Status != booking.PayRefunded || x.Refunded != 200000 {
		t.Fatalf("the sale after the refund: %+v, %v", x, err)
	}
	run(t, ctx, chromedp.Reload())
	bookingtest.WaitFor(t, 10*time.Second, "the refund on the page", func() bool { return strings.Contains(text(t, ctx, "#bought-status"), "Возвращено") })
	if got := text(t, ctx, "#bought-status"); !strings.Contains(got, "Возвращено 2\u00a0000\u00a0₽ из 3\u00a0000\u00a0₽") || strings.Contains(got, "код") {
		t.Fatalf("the page after the refund of the rest: %q", got)
	}
	if shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById('bought-code').hidden`)); err != nil || shown {
		t.Fatal("the code shows with nothing left on it")
	}
	saveShot(t, ctx, "gift-refunded-part-ru")
	// The booking cancelled: its 1000 back on the certificate.
	if r := s.do("POST", "/api/v1/bookings/"+itoa(r.id())+"/cancel", map[string]any{}, "X-Manage-Token", r.str("manage_token")); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	for _, c := range []struct {
		lang, want string
		w, h       int64
	}{{"ru", "Возвращено 2\u00a0000\u00a0₽ из 3\u00a0000\u00a0₽. На нём ещё 1\u00a0000\u00a0₽. Ваш код:", 390, 844},
		{"en", "2,000\u00a0₽ of 3,000\u00a0₽ was refunded. It still has 1,000\u00a0₽ on it. Your code:", 1280, 900}} {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		run(t, ctx, chromedp.EmulateViewport(c.w, c.h), chromedp.Navigate(strings.Split(loc, "?")[0]+"?lang="+c.lang))
		bookingtest.WaitFor(t, 10*time.Second, "the code again", func() bool { return text(t, ctx, "#code-value") == code })
		if got := text(t, ctx, "#bought-status"); got != c.want {
			t.Fatalf("%s: the page with 1000 back on it: %q, want %q", c.lang, got, c.want)
		}
		browsertest.Axe(t, ctx, "the return page refunded in part "+c.lang)
		saveShot(t, ctx, "gift-refunded-part-left-"+c.lang)
	}
}

// TestBrowserShowsWhosePackageWasBought: a package bought on the gift page
// is its phone's (its visits are booked with that number): the return
// page says which phone, to the browser that bought it only, in Russian
// on a phone and in English on a desktop.
func TestBrowserShowsWhosePackageWasBought(t *testing.T) {
	s, _, pkg := saleSite(t)
	ctx := browser(t)
	buyOnGiftPage(t, ctx, s, pkg.ID, "Ольга", "89991002035", "olga@example.com")
	if got := plain(text(t, ctx, "#bought-details")); !strings.Contains(got, "Для телефона") || !strings.Contains(got, "+7 999 100-20-35") {
		t.Fatalf("the return page's details: %q", got)
	}
	saveShot(t, ctx, "package-bought-ru")
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(strings.Split(loc, "?")[0]+"?lang=en"), chromedp.WaitVisible(css("#code-value")))
	bookingtest.WaitFor(t, 10*time.Second, "the details", func() bool { return strings.Contains(text(t, ctx, "#bought-details"), "For the phone") })
	if got := plain(text(t, ctx, "#bought-details")); !strings.Contains(got, "+7 999 100-20-35") {
		t.Fatalf("the return page's details in English: %q", got)
	}
	browsertest.Axe(t, ctx, "the package's return page")
	saveShot(t, ctx, "package-bought-en")
	// "Book with it": the booking page has its code and its phone filled
	// in (handed over in the tab, not in the link), once.
	code := text(t, ctx, "#code-value")
	if href, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#bought-book"), "href")); err != nil || strings.Contains(href.Value, code) {
		t.Fatalf("the link to book: %v %v", href, err)
	}
	run(t, ctx, chromedp.Click(css("#bought-book")), chromedp.WaitReady(css("#client-code")))
	// (The widget fills them in once its page has loaded: looked at until
	// then, within a deadline.)
	var filled []string
	bookingtest.WaitFor(t, 10*time.Second, "the code filled in", func() bool {
		filled, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.getElementById('client-code').value, document.getElementById('client-phone').value, location.href]`))
		return err != nil || filled[0] != ""
	})
	if err != nil || filled[0] != code || plain(filled[1]) != "+7 999 100-20-35" || strings.Contains(filled[2], code) {
		t.Fatalf("the booking page after 'book with it': %q (%v), want the code %s and the phone", filled, err, code)
	}
	run(t, ctx, chromedp.Reload(), chromedp.WaitReady(css("#client-code")))
	if again, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('client-code').value`)); err != nil || again != "" {
		t.Fatalf("the code filled in again on a reload: %q %v", again, err)
	}
	// The page opened where the purchase was not made (no claim in this
	// browser): no code, and the button says to bring the e-mail's
	// (helper-49 L10: "Book with it" that filled nothing in).
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`localStorage.clear(); sessionStorage.clear()`), chromedp.Navigate(strings.Split(loc, "?")[0]+"?lang=en"),
		chromedp.WaitVisible(css("#bought-book")))
	if got := text(t, ctx, "#bought-book"); got != "Book a visit, with the code from the e-mail" {
		t.Errorf("the button where the purchase was not made: %q", got)
	}
	// Without the buyer's claim: neither the code nor the phone.
	ref := strings.TrimPrefix(strings.Split(loc, "?")[0], s.base+"/w/studio/bought/")
	if r := s.do("POST", "/api/v1/purchases/"+ref, nil); r.status != 200 || r.str("code") != "" || r.str("phone") != "" ||
		strings.Contains(string(r.raw), "100-20-35") || strings.Contains(string(r.raw), "9991002035") {
		t.Fatalf("without the claim: %d %s", r.status, r.raw)
	}
}

// TestBrowserWaitsForTheCodesEMail: back from paying while the code's
// e-mail is still being sent (the payment's notice sends it as the buyer
// returns), the page says it is on its way, not that it failed, and says
// it went once it did; one that did not go is said so.
func TestBrowserWaitsForTheCodesEMail(t *testing.T) {
	s, cert, _ := saleSite(t)
	ctx := browser(t)
	buyOnGiftPage(t, ctx, s, cert.ID, "Вера", "89991002036", "vera36@example.com")
	// (This site sends no e-mail: the sale's says so. As it is while the
	// e-mail is on its way:)
	exec := func(sql string) {
		t.Helper()
		if _, err := s.Pool.Exec(context.Background(), sql+` WHERE email = 'vera36@example.com'`); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE balance_sales SET mailed_at = NULL, mail_error = ''`)
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css("#code-value")))
	bookingtest.WaitFor(t, 10*time.Second, "the e-mail on its way", func() bool {
		return strings.Contains(text(t, ctx, "#bought-mail"), "Отправляем его и на v***")
	})
	saveShot(t, ctx, "gift-mailing-ru")
	exec(`UPDATE balance_sales SET mailed_at = now()`)
	bookingtest.WaitFor(t, 20*time.Second, "the e-mail gone", func() bool {
		return strings.Contains(text(t, ctx, "#bought-mail"), "Мы также отправили его на v***")
	})
	exec(`UPDATE balance_sales SET mailed_at = NULL, mail_error = 'refused'`)
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css("#code-value")))
	bookingtest.WaitFor(t, 10*time.Second, "the e-mail failed", func() bool {
		return strings.Contains(text(t, ctx, "#bought-mail"), "Письмо не ушло")
	})
}

// TestBrowserDeclinedPurchaseLeadsBack: a purchase whose payment was
// declined says nothing was charged and leads back to the gift page, for
// a new one.
func TestBrowserDeclinedPurchaseLeadsBack(t *testing.T) {
	s, cert, _ := saleSite(t)
	ctx := browser(t)
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio/gift?lang=ru"), chromedp.WaitVisible(css("#gift-form")),
		chromedp.Click(css(`input[name=offer][value="`+itoa(cert.ID)+`"]`)),
		chromedp.SendKeys(css("#buyer-name"), "Вера"), chromedp.SendKeys(css("#buyer-phone"), "89991002037"),
		chromedp.SendKeys(css("#buyer-email"), "vera37@example.com"), chromedp.Click(css("#gift-pay")),
		chromedp.WaitVisible(css("#decline")), chromedp.Click(css("#decline")), chromedp.WaitVisible(css("#bought-retry")))
	if got := text(t, ctx, "#bought-status"); !strings.Contains(got, "Оплата не прошла, деньги не списаны") {
		t.Fatalf("the declined purchase's page: %q", got)
	}
	browsertest.Axe(t, ctx, "a declined purchase's page")
	saveShot(t, ctx, "gift-declined-ru")
	run(t, ctx, chromedp.Click(css("#bought-retry")), chromedp.WaitVisible(css("#gift-form")))
}

// TestBrowserBackFromPayingIsTheSamePurchase: the buyer goes back from
// the provider's page and sends the same form again: the same purchase,
// not a second one; a form changed since is another.
func TestBrowserBackFromPayingIsTheSamePurchase(t *testing.T) {
	s, cert, _ := saleSite(t)
	ctx := browser(t)
	// The form filled and sent; the provider's page it led to.
	pay := func(email string) string {
		t.Helper()
		run(t, ctx, chromedp.WaitVisible(css("#gift-form")), chromedp.Click(css(`input[name=offer][value="`+itoa(cert.ID)+`"]`)),
			chromedp.SetValue(css("#buyer-name"), "Вера"), chromedp.SetValue(css("#buyer-phone"), "89991002038"),
			chromedp.SetValue(css("#buyer-email"), email), chromedp.Click(css("#gift-pay")), chromedp.WaitVisible(css("#pay")))
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio/gift?lang=ru"))
	first := pay("vera38@example.com")
	run(t, ctx, chromedp.NavigateBack())
	again := pay("vera38@example.com")
	run(t, ctx, chromedp.NavigateBack())
	other := pay("vera38b@example.com")
	if again != first || other == first {
		t.Fatalf("the provider's pages: %s, again %s, changed %s", first, again, other)
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM balance_sales WHERE email LIKE 'vera38%'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d sales (%v), want 2: one per form", n, err)
	}
}

// TestBrowserBuysWhileTheProviderIsDown: the payment provider does not
// answer when the buyer presses Pay: the purchase is kept, the return page
// says so, in the page's language, and nothing was charged; once the
// provider answers (the sweep asks it again), the page offers the payment,
// and paying shows the code.
func TestBrowserBuysWhileTheProviderIsDown(t *testing.T) {
	s, cert, _ := saleSite(t)
	ctx := browser(t)
	s.sandbox.Down.Store(true)
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio/gift?lang=ru"), chromedp.WaitVisible(css("#gift-form")),
		chromedp.Click(css(`input[name=offer][value="`+itoa(cert.ID)+`"]`)),
		chromedp.SendKeys(css("#buyer-name"), "Вера"), chromedp.SendKeys(css("#buyer-phone"), "89991002039"),
		chromedp.SendKeys(css("#buyer-email"), "vera39@example.com"), chromedp.Click(css("#gift-pay")), chromedp.WaitVisible(css("#bought-status")))
	bookingtest.WaitFor(t, 10*time.Second, "the provider's silence said", func() bool {
		return strings.Contains(text(t, ctx, "#bought-status"), "Платёжный сервис сейчас не отвечает; деньги не списаны")
	})
	saveShot(t, ctx, "gift-provider-down-ru")
	s.sandbox.Down.Store(false)
	s.Clock.Advance(10 * time.Minute) // (the sale's next check is due)
	if _, err := s.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.WaitVisible(css("#bought-pay")), chromedp.Click(css("#bought-pay")), chromedp.WaitVisible(css("#pay")),
		chromedp.Click(css("#pay")), chromedp.WaitVisible(css("#code-value")))
	bookingtest.WaitFor(t, 10*time.Second, "the code", func() bool { return text(t, ctx, "#code-value") != "" })
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM balance_sales WHERE email = 'vera39@example.com'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d sales (%v), want 1", n, err)
	}
}

// buyOnGiftPage buys offer on the gift page in Russian at 390 px, as the
// buyer named, pays in the sandbox, and returns the code the return page
// shows.
func buyOnGiftPage(t *testing.T, ctx context.Context, s *site, offer int64, name, phone, email string) string {
	t.Helper()
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio/gift?lang=ru"), chromedp.WaitVisible(css("#gift-form")),
		chromedp.Click(css(`input[name=offer][value="`+itoa(offer)+`"]`)),
		chromedp.SendKeys(css("#buyer-name"), name), chromedp.SendKeys(css("#buyer-phone"), phone),
		chromedp.SendKeys(css("#buyer-email"), email), chromedp.Click(css("#gift-pay")),
		chromedp.WaitVisible(css("#pay")), chromedp.Click(css("#pay")), chromedp.WaitVisible(css("#code-value")))
	bookingtest.WaitFor(t, 10*time.Second, "the code", func() bool { return text(t, ctx, "#code-value") != "" })
	return text(t, ctx, "#code-value")
}

// TestBrowserReturnPageOutlastsTheRateLimit: the buyer back from paying
// whose address used up its requests (a shared network) is told, in the
// page's language, that the page tries again, and it does: the code
// shows once the limit lets it through.
func TestBrowserReturnPageOutlastsTheRateLimit(t *testing.T) {
	s, cert, _ := saleSite(t, func(c *widget.Config) { c.RateLimit = 6 }) // (a request every 10 s)
	ctx := browser(t)
	code := buyOnGiftPage(t, ctx, s, cert.ID, "Вера", "+7 999 100-20-36", "vera@example.com")
	for range 6 {
		s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": "NONE-NONE-NONE"})
	}
	if r := s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": code}, "Accept-Language", "ru"); r.status != 429 ||
		!strings.Contains(r.str("message"), "слишком много запросов") {
		t.Fatalf("the limit used up: %d %s", r.status, r.raw)
	}
	run(t, ctx, chromedp.Reload())
	bookingtest.WaitFor(t, 5*time.Second, "the page saying it tries again", func() bool {
		return strings.Contains(text(t, ctx, "#bought-status"), "попробует ещё раз")
	})
	saveShot(t, ctx, "gift-rate-limited-ru")
	bookingtest.WaitFor(t, 40*time.Second, "the code after the limit", func() bool { return text(t, ctx, "#code-value") == code })
	if got := text(t, ctx, "#bought-status"); !strings.Contains(got, "Оплачено") {
		t.Fatalf("the page once through: %q", got)
	}
}

// TestBrowserGiftPageWritesKopecks: a certificate of 1 000,50 ₽ bought
// on the gift page: the return page says its amount with two decimals,
// as the server writes money (it showed "1 000,5 ₽").
func TestBrowserGiftPageWritesKopecks(t *testing.T) {
	s, _, _ := saleSite(t)
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: s.salon.ID, Role: booking.RoleOwner}))
	odd, err := s.Svc.AddBalanceOffer(owner, booking.BalanceOffer{SalonID: s.salon.ID, Kind: booking.BalanceCertificate,
		Title: "Сертификат с копейками", Amount: 100050, Price: 100050})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	buyOnGiftPage(t, ctx, s, odd.ID, "Вера", "+7 999 100-20-41", "vera41@example.com")
	if got := text(t, ctx, "#bought-details"); !strings.Contains(got, "Сумма\n1\u00a0000,50\u00a0₽") {
		t.Fatalf("the return page's details: %q", got)
	}
	saveShot(t, ctx, "gift-kopecks-ru-390")
}

// TestBrowserAbandonedPurchaseOffersThePaymentAgain: the buyer leaves the
// provider's page without paying and opens the return page: the purchase
// (pending, its payment's page still open) says it is not paid yet and
// offers "Pay" again, with no word of waiting for a confirmation or of an
// e-mail (it said "Ждём подтверждения оплаты…", then that the code would
// come by e-mail, which it never does); in English too. Paying from it
// shows the code.
func TestBrowserAbandonedPurchaseOffersThePaymentAgain(t *testing.T) {
	s, cert, _ := saleSite(t)
	ctx := browser(t)
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio/gift?lang=ru"), chromedp.WaitVisible(css("#gift-form")),
		chromedp.Click(css(`input[name=offer][value="`+itoa(cert.ID)+`"]`)),
		chromedp.SendKeys(css("#buyer-name"), "Вера"), chromedp.SendKeys(css("#buyer-phone"), "89991002042"),
		chromedp.SendKeys(css("#buyer-email"), "vera42@example.com"), chromedp.Click(css("#gift-pay")), chromedp.WaitVisible(css("#pay")))
	payURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	var ref string
	if err := s.Pool.QueryRow(context.Background(), `SELECT return_ref FROM balance_sales WHERE email = 'vera42@example.com'`).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	// What the page reads: pending, its payment registered with its page.
	r := s.do("POST", "/api/v1/purchases/"+ref, nil)
	if pay, _ := r.body["payment"].(map[string]any); r.status != 200 || r.str("status") != "pending" || pay["url"] != payURL || pay["status"] != "registered" {
		t.Fatalf("the abandoned purchase: %d %s", r.status, r.raw)
	}
	for _, c := range []struct{ lang, want, button string }{
		{"ru", "Покупка ещё не оплачена", "Оплатить"},
		{"en", "This purchase is not paid yet", "Pay"},
	} {
		run(t, ctx, chromedp.Navigate(s.base+"/w/studio/bought/"+ref+"?lang="+c.lang))
		bookingtest.WaitFor(t, 10*time.Second, "the page's word", func() bool { return strings.Contains(text(t, ctx, "#bought-status"), c.want) })
		got := text(t, ctx, "#bought-status")
		for _, not := range []string{"подтвержд", "почт", "confirm", "e-mail"} {
			if strings.Contains(got, not) {
				t.Errorf("%s: the abandoned purchase's page says %q", c.lang, got)
			}
		}
		run(t, ctx, chromedp.WaitVisible(css("#bought-pay")))
		href, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#bought-pay"), "href"))
		if err != nil || href.Value != payURL || text(t, ctx, "#bought-pay") != c.button {
			t.Errorf("%s: the pay link: %q to %v (%v)", c.lang, text(t, ctx, "#bought-pay"), href, err)
		}
		browsertest.Axe(t, ctx, "an abandoned purchase's page "+c.lang)
		saveShot(t, ctx, "gift-unpaid-"+c.lang+"-390")
	}
	run(t, ctx, chromedp.Click(css("#bought-pay")), chromedp.WaitVisible(css("#pay")), chromedp.Click(css("#pay")), chromedp.WaitVisible(css("#code-value")))
	bookingtest.WaitFor(t, 10*time.Second, "the code", func() bool { return text(t, ctx, "#code-value") != "" })
}
