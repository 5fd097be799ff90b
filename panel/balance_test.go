package panel_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/internal/browsertest"
)

// TestBrowserSellsPackagesAndCertificates: at the desk, a gift certificate
// and a package are sold; each code is shown once, on the page (never in
// its address), and reads the balance; the list shows both; a balance's
// page shows its ledger (the sale). A bad amount is refused with why,
// nothing sold. axe-core; screenshots at 390 px and on a desktop.
func TestBrowserSellsPackagesAndCertificates(t *testing.T) {
	w := newWorld(t)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Женская стрижка'`, w.salon.ID)
	ctx := browsertest.Tab(t, 1280, 900)
	do(t, ctx, logIn(w)...)
	codeRE := regexp.MustCompile(`[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}`)
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.SendKeys(css(`#sell-balance input[name=amount]`), "-5"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`p.error`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1`, w.salon.ID); n != 0 {
		t.Fatalf("a bad amount sold %d", n)
	}
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.SendKeys(css(`#sell-balance input[name=amount]`), "3 000"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`#balance-code`)))
	cert := codeRE.FindString(textOf(t, ctx, "#balance-code"))
	if cert == "" || strings.Contains(value(t, ctx, chromedp.Location()), cert) {
		t.Fatalf("the certificate's code: %q at %s", cert, value(t, ctx, chromedp.Location()))
	}
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.Click(css(`#sell-balance input[value=package]`)),
		chromedp.SetValue(css(`#sell-balance select[name=service]`), fmt.Sprint(haircut)),
		chromedp.SetValue(css(`#sell-balance input[name=visits]`), "5"),
		chromedp.SendKeys(css(`#sell-balance input[name=phone]`), "+7 999 555-60-01"),
		chromedp.SendKeys(css(`#sell-balance input[name=name]`), "Package Client"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`#balance-code`)))
	pkg := codeRE.FindString(textOf(t, ctx, "#balance-code"))
	if pkg == "" || pkg == cert {
		t.Fatalf("the package's code: %q", pkg)
	}
	for code, want := range map[string]int64{cert: 300000, pkg: 5} {
		b, err := w.Svc.BalanceByCode(booking.As(ctx, booking.Visitor()), w.salon.ID, code)
		if err != nil || b.Remaining != want {
			t.Fatalf("%s: %+v (%v), want %d left", code, b, err, want)
		}
	}
	list := textOf(t, ctx, "#balances")
	for _, want := range []string{"Package Client", "сертификат", "абонемент", "Женская стрижка"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	browsertest.Axe(t, ctx, "packages and certificates")
	shot(t, ctx, "balances-1280.png", 1280, 900)
	shot(t, ctx, "balances-390.png", 390, 900)
	id := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1 AND kind = 'package'`, w.salon.ID)
	do(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, id)),
		chromedp.WaitVisible(css(`#ledger`)))
	if got := textOf(t, ctx, "#ledger"); !strings.Contains(got, "продажа") || !strings.Contains(got, "+") {
		t.Fatalf("the ledger: %q", got)
	}
	browsertest.Axe(t, ctx, "a balance's ledger")
}
