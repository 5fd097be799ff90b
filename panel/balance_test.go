package panel_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
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

	// At the desk: the package client's visit this morning is paid with
	// the package (offered on the booking's page), then marked completed,
	// which spends the visit.
	master := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 ORDER BY master_id LIMIT 1`, haircut)
	bk, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut, MasterID: master,
		StartsAt: bookingtest.At(w.salon, w.today(), "08:00"), Client: booking.ClientInput{Name: "Package Client", Phone: "+79995556001"},
		Source: booking.SourceImport})
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, bk.ID)), chromedp.WaitVisible(css(`#pay-with select[name=balance]`)))
	browsertest.Axe(t, ctx, "a booking with the client's package to pay with")
	shot(t, ctx, "booking-pay-with-390.png", 390, 900)
	do(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Click(css(`#pay-with button[type=submit]`)), chromedp.WaitVisible(css(`#paid-with`)))
	if got := textOf(t, ctx, "#paid-with"); !strings.Contains(got, "абонемент") || !strings.Contains(got, "4") {
		t.Fatalf("paid with: %q", got)
	}
	do(t, ctx, chromedp.Click(css(`#complete button`)), chromedp.WaitVisible(css(`#status.completed`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND booking_id = $2 AND type IN ('reserve', 'spend')`,
		id, bk.ID); n != 2 {
		t.Fatalf("the visit's entries: %d, want a reservation and a spend", n)
	}
	// The certificate's rest is refunded from its page.
	certID := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1 AND kind = 'certificate'`, w.salon.ID)
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, certID)), chromedp.WaitVisible(css(`#refund-balance`)),
		chromedp.SendKeys(css(`#refund-balance input[name=reason]`), "moved away"),
		chromedp.Click(css(`#refund-balance button[type=submit]`)), chromedp.WaitNotPresent(css(`#refund-balance`)))
	if left := scalar[int64](t, w, `SELECT remaining FROM balances WHERE id = $1`, certID); left != 0 {
		t.Fatalf("after the refund: %d left", left)
	}
	if got := textOf(t, ctx, "#ledger"); !strings.Contains(got, "возврат денег") || !strings.Contains(got, "moved away") {
		t.Fatalf("the ledger after the refund: %q", got)
	}
	shot(t, ctx, "balance-refunded-1280.png", 1280, 900)
}
