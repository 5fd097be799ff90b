package widget_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/internal/browsertest"
)

const testClaim = "claim-of-the-buyers-browser-0001"

// saleSite is the sandbox site with a certificate and a package on sale.
func saleSite(t *testing.T) (*site, *booking.BalanceOffer, *booking.BalanceOffer) {
	t.Helper()
	s, _ := paySite(t)
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
	s, cert, _ := saleSite(t)
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
		saveShot(t, ctx, "gift-bad-email-"+c.lang)
		run(t, ctx, chromedp.SetValue(css("#buyer-email"), "vera-"+c.lang+"@example.com"), chromedp.Click(css("#gift-pay")),
			chromedp.WaitVisible(css("#pay")), chromedp.Click(css("#pay")), chromedp.WaitVisible(css("#code-value")))
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
