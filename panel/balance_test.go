package panel_test

import (
	"context"
	"errors"
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

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/internal/browsertest"
	"salon/internal/demo"
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
		chromedp.SendKeys(css(`#sell-balance input[name=price]`), "2 700"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`#balance-code`)))
	cert := codeRE.FindString(textOf(t, ctx, "#balance-code"))
	if cert == "" || strings.Contains(value(t, ctx, chromedp.Location()), cert) {
		t.Fatalf("the certificate's code: %q at %s", cert, value(t, ctx, chromedp.Location()))
	}
	// A package with no service ticked is refused, naming the field;
	// one of two services (each visit of either) sells.
	other := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND id <> $2 AND active ORDER BY id LIMIT 1`, w.salon.ID, haircut)
	otherName := scalar[string](t, w, `SELECT name FROM services WHERE id = $1`, other)
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.Click(css(`#sell-balance input[value=package]`)),
		chromedp.SetValue(css(`#sell-balance input[name=visits]`), "5"),
		chromedp.SendKeys(css(`#sell-balance input[name=phone]`), "+7 999 555-60-01"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`p.error`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1 AND kind = 'package'`, w.salon.ID); n != 0 {
		t.Fatalf("a package of no service sold %d", n)
	}
	if got := textOf(t, ctx, "main"); !strings.Contains(got, "Услуг") {
		t.Fatalf("the refusal names no service field: %q", got)
	}
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.Click(css(`#sell-balance input[value=package]`)),
		chromedp.Click(css(fmt.Sprintf(`#sell-balance input[name=service][value="%d"]`, haircut))),
		chromedp.Click(css(fmt.Sprintf(`#sell-balance input[name=service][value="%d"]`, other))),
		chromedp.SetValue(css(`#sell-balance input[name=visits]`), "5"),
		chromedp.SendKeys(css(`#sell-balance input[name=phone]`), "+7 999 555-60-01"),
		chromedp.SendKeys(css(`#sell-balance input[name=name]`), "Package Client"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`#balance-code`)))
	shot(t, ctx, "balance-sold-package-390.png", 390, 900)
	pkg := codeRE.FindString(textOf(t, ctx, "#balance-code"))
	if n := scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1 AND kind = 'package' AND service_ids = ARRAY[$2, $3]::bigint[]`,
		w.salon.ID, min(haircut, other), max(haircut, other)); n != 1 {
		t.Fatalf("%d packages of both services", n)
	}
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
	// What is left, of what was sold, in one cell; what the desk took.
	for _, want := range []string{"Package Client", "сертификат", "абонемент", "Женская стрижка", otherName,
		"5 визитов из 5", "3\u00a0000\u00a0₽ из 3\u00a0000\u00a0₽", "2\u00a0700\u00a0₽"} {
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
	// Its code lost: a new one, shown this once on its page.
	do(t, ctx, chromedp.EmulateViewport(390, 900), chromedp.Click(css(`#renew-code button[type=submit]`)), chromedp.WaitVisible(css(`#balance-code`)))
	if renewed := codeRE.FindString(textOf(t, ctx, "#balance-code")); renewed == "" || renewed == pkg {
		t.Fatalf("the package's new code: %q", renewed)
	}
	browsertest.Axe(t, ctx, "a balance's new code")
	shot(t, ctx, "balance-new-code-390.png", 390, 900)
	// The page the form's POST rendered is at the balance's own address:
	// a reload asks for the page (the code not shown again), not the form.
	if at, want := value(t, ctx, chromedp.Evaluate[string](`location.pathname`)), fmt.Sprintf("/panel/balances/%d", id); at != want {
		t.Fatalf("the new code's page is at %s, want %s", at, want)
	}
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`#ledger`)))
	if n := len(codeRE.FindAllString(textOf(t, ctx, "main"), -1)); n != 0 {
		t.Fatalf("reloaded, the page shows %d codes", n)
	}

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
	// The desk's payment is in the booking's history and the audit log,
	// under the admin's name.
	if got := textOf(t, ctx, "#history"); !strings.Contains(got, "Оплачена на месте: абонемент …") || !strings.Contains(got, "1 визит") {
		t.Fatalf("the booking's history after the desk's payment: %q", got)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM audit_log WHERE action = 'paid_booking' AND entity = 'balance' AND entity_id = $1
		AND actor = $2 AND (new->>'booking')::bigint = $3 AND (old->>'remaining')::bigint - (new->>'remaining')::bigint = 1`, id, "admin@demo.salon", bk.ID); n != 1 {
		t.Fatalf("%d audit rows of the desk's payment, want 1", n)
	}
	do(t, ctx, chromedp.Navigate(w.base+"/panel/audit"), chromedp.WaitVisible(css(`main`)))
	if got := textOf(t, ctx, "main"); !strings.Contains(got, "Запись оплачена им на месте") || !strings.Contains(got, fmt.Sprintf("#%d", bk.ID)) {
		t.Fatalf("the audit page after the desk's payment: %q", got)
	}
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, bk.ID)), chromedp.WaitVisible(css(`#complete button`)))
	do(t, ctx, chromedp.Click(css(`#complete button`)), chromedp.WaitVisible(css(`#status.completed`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND booking_id = $2 AND type IN ('reserve', 'spend')`,
		id, bk.ID); n != 2 {
		t.Fatalf("the visit's entries: %d, want a reservation and a spend", n)
	}
	// The package's ledger says what the spend took, and why.
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, id)), chromedp.WaitVisible(css(`#ledger`)))
	if got := textOf(t, ctx, "#ledger"); !strings.Contains(got, "списание (состоялась): 1 визит из резерва") {
		t.Fatalf("the ledger after the visit: %q", got)
	}
	// The certificate's rest is refunded from its page, which says how
	// much goes back, and where: all of it unused, what the desk took.
	certID := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1 AND kind = 'certificate'`, w.salon.ID)
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, certID)), chromedp.WaitVisible(css(`#refund-balance`)))
	if got := textOf(t, ctx, "#refund-quote"); !strings.Contains(got, "Возвращается остаток 3\u00a0000") || !strings.Contains(got, "верните клиенту в салоне 2\u00a0700\u00a0₽") {
		t.Fatalf("the refund's quote: %q", got)
	}
	do(t, ctx,
		chromedp.SendKeys(css(`#refund-balance input[name=reason]`), "moved away"),
		chromedp.Click(css(`#refund-balance input[name=sure]`)),
		chromedp.Click(css(`#refund-balance button[type=submit]`)), chromedp.WaitNotPresent(css(`#refund-balance`)))
	if left := scalar[int64](t, w, `SELECT remaining FROM balances WHERE id = $1`, certID); left != 0 {
		t.Fatalf("after the refund: %d left", left)
	}
	if got := textOf(t, ctx, "#ledger"); !strings.Contains(got, "возврат денег") || !strings.Contains(got, "moved away") {
		t.Fatalf("the ledger after the refund: %q", got)
	}
	shot(t, ctx, "balance-refunded-1280.png", 1280, 900)

	// A second package for the same client, sold by the phone alone (the
	// salon knows the name); the client's page lists both.
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.Click(css(`#sell-balance input[value=package]`)),
		chromedp.Click(css(fmt.Sprintf(`#sell-balance input[name=service][value="%d"]`, haircut))),
		chromedp.SetValue(css(`#sell-balance input[name=visits]`), "3"),
		chromedp.SendKeys(css(`#sell-balance input[name=phone]`), "8 999 555 60 01"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`#balance-code`)))
	client := scalar[int64](t, w, `SELECT id FROM clients WHERE salon_id = $1 AND phone = '+79995556001'`, w.salon.ID)
	if n := scalar[int64](t, w, `SELECT count(*) FROM balances WHERE client_id = $1`, client); n != 2 {
		t.Fatalf("the client has %d packages, want 2", n)
	}
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/clients/%d", w.base, client)), chromedp.WaitVisible(css(`#client-packages`)))
	if got := textOf(t, ctx, "#client-packages"); strings.Count(got, "Женская стрижка") != 2 || !strings.Contains(got, "3 визита") ||
		!strings.Contains(got, "4 визита") {
		t.Fatalf("the client's packages: %q", got)
	}
	if got := textOf(t, ctx, "#client-channels"); !strings.Contains(got, "+7 999 555-60-01") {
		t.Fatalf("the client's SMS choice names the phone as typed: %q", got)
	}
	browsertest.Axe(t, ctx, "a client with packages")
	shot(t, ctx, "client-packages-390.png", 390, 900)
	// A new client is asked the name.
	do(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#sell-balance`)),
		chromedp.Click(css(`#sell-balance input[value=package]`)),
		chromedp.SendKeys(css(`#sell-balance input[name=phone]`), "+7 999 555-60-02"),
		chromedp.Click(css(`#sell-balance button[type=submit]`)), chromedp.WaitVisible(css(`p.error`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM clients WHERE salon_id = $1 AND phone = '+79995556002'`, w.salon.ID); n != 0 {
		t.Fatalf("a nameless new client was made (%d)", n)
	}
}

// TestTheOwnerSellsOnline: the owner puts a certificate on sale in the
// panel (in a browser; an admin sees it and may not); a client buys it
// and pays at the provider; the balance's page says it was bought online
// and that its e-mail did not go (no mail here), sends a new code, and
// refunds what is left through the provider, whose record shows it.
func TestTheOwnerSellsOnline(t *testing.T) {
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(yk))}
	w := newWorldOn(t, e)
	ctx := browsertest.Tab(t, 390, 844)
	do(t, ctx, logIn(w)...)
	do(t, ctx, chromedp.Navigate(w.base+"/panel/balances"), chromedp.WaitVisible(css(`#add-offer`)),
		chromedp.SendKeys(css(`#add-offer input[name=title]`), "Подарочный сертификат"),
		chromedp.SendKeys(css(`#add-offer input[name=price]`), "3000"),
		chromedp.Click(css(`#add-offer button[type=submit]`)), chromedp.WaitVisible(css(`p.error`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_offers WHERE salon_id = $1 AND title = 'Подарочный сертификат'`, w.salon.ID); n != 0 {
		t.Fatalf("a certificate without its amount put %d on sale", n)
	}
	do(t, ctx, chromedp.SendKeys(css(`#add-offer input[name=amount]`), "3000"),
		chromedp.Click(css(`#add-offer button[type=submit]`)), chromedp.WaitVisible(css(`.notice`)), chromedp.WaitVisible(css(`#offer-list`)))
	if got := textOf(t, ctx, "#offer-list"); !strings.Contains(got, "Подарочный сертификат") || !strings.Contains(got, "3\u00a0000") {
		t.Fatalf("the offers: %q", got)
	}
	browsertest.Axe(t, ctx, "the balances page with an offer")
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		_ = os.WriteFile(filepath.Join(t.ArtifactDir(), "offers-390.png"), png, 0o644)
	}
	offer := scalar[int64](t, w, `SELECT id FROM balance_offers WHERE salon_id = $1 AND title = 'Подарочный сертификат'`, w.salon.ID)
	// The online booking page gives the page that sells it (helper-49 L9).
	do(t, ctx, chromedp.Navigate(w.base+"/panel/online"), chromedp.WaitVisible(css(`#gift-url`)))
	if got := textOf(t, ctx, "#gift-url"); got != w.base+"/w/demo/gift" {
		t.Errorf("the online page's gift link: %q", got)
	}
	browsertest.Axe(t, ctx, "the online page with a gift link")
	// An admin sees the offers, not the owner's form, and may not add one.
	admin := w.user(w.salon.ID, "desk@example.com", booking.RoleAdmin)
	if a := admin.get("/panel/balances"); a.status != 200 || strings.Contains(a.body, `id="add-offer"`) {
		t.Fatalf("the admin's page: %d", a.status)
	}
	if a := admin.post("/panel/balance-offers", url.Values{"kind": {"certificate"}, "title": {"x"}, "price": {"1"}, "amount": {"1"}}); a.status != http.StatusForbidden {
		t.Fatalf("an admin adds an offer: %d", a.status)
	}
	// Valid for 0 days is refused (empty is "no end"), named, nothing put on sale.
	owner := w.user(w.salon.ID, "owner2@example.com", booking.RoleOwner)
	if a := owner.post("/panel/balance-offers", url.Values{"kind": {"certificate"}, "title": {"Zero"}, "price": {"1000"}, "amount": {"1000"},
		"valid_days": {"0"}}); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "от 1 до 3660") {
		t.Fatalf("valid for 0 days: %d", a.status)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_offers WHERE salon_id = $1 AND title = 'Zero'`, w.salon.ID); n != 0 {
		t.Fatalf("valid for 0 days put %d on sale", n)
	}
	// A package of visits of either of two services.
	svcs := scalar[[]int64](t, w, `SELECT array_agg(id ORDER BY id) FROM (SELECT id FROM services WHERE salon_id = $1 AND active ORDER BY id LIMIT 2) s`,
		w.salon.ID)
	if a := owner.post("/panel/balance-offers", url.Values{"kind": {"package"}, "title": {"Two ways"}, "price": {"9000"}, "visits": {"3"},
		"service": {fmt.Sprint(svcs[0]), fmt.Sprint(svcs[1])}}); a.status != http.StatusSeeOther {
		t.Fatalf("a package offer of two services: %d", a.status)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_offers WHERE salon_id = $1 AND title = 'Two ways' AND service_ids = $2`,
		w.salon.ID, svcs); n != 1 {
		t.Fatalf("%d offers of both services", n)
	}
	// Bought and paid.
	x, err := w.Svc.BuyBalance(booking.As(context.Background(), booking.Visitor()), booking.BalancePurchase{SalonID: w.salon.ID, OfferID: offer,
		Buyer: booking.ClientInput{Name: "Вера", Phone: bookingtest.Phone(), Email: "vera@example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ext := scalar[string](t, w, `SELECT external_id FROM balance_sales WHERE id = $1`, x.ID)
	fake.Pay(ext)
	if _, err := w.Svc.PaymentNotified(bookingtest.System(), "yookassa", ext); err != nil {
		t.Fatal(err)
	}
	balance := scalar[int64](t, w, `SELECT balance_id FROM balance_sales WHERE id = $1`, x.ID)
	// Its code's e-mail did not go (no mail here): the attention page says so.
	do(t, ctx, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(css(`#attention-sales`)))
	if got := textOf(t, ctx, "#attention-sales"); !strings.Contains(got, "Подарочный сертификат") || !strings.Contains(got, "не ушло") {
		t.Fatalf("the attention page's sales: %q", got)
	}
	browsertest.Axe(t, ctx, "the attention page with a sale")
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, balance)), chromedp.WaitVisible(css(`#balance-sale`)))
	if got := textOf(t, ctx, "#balance-sale"); !strings.Contains(got, "Куплено онлайн") || !strings.Contains(got, "оплачено") ||
		!strings.Contains(got, "не ушло") {
		t.Fatalf("the sale on the balance's page: %q", got)
	}
	// Its credit's entry says who in the reader's words: the online payment.
	if got := textOf(t, ctx, "#ledger"); !strings.Contains(got, "онлайн-оплата "+ext) || strings.Contains(got, "online: payment") {
		t.Fatalf("the ledger's credit: %q", got)
	}
	old := scalar[[]byte](t, w, `SELECT code_hash FROM balances WHERE id = $1`, balance)
	do(t, ctx, chromedp.Click(css(`#balance-sale button[type=submit]`)))
	bookingtest.WaitFor(t, 10*time.Second, "a new code", func() bool {
		return string(scalar[[]byte](t, w, `SELECT code_hash FROM balances WHERE id = $1`, balance)) != string(old)
	})
	do(t, ctx, chromedp.WaitVisible(css(`main p.error`)))
	if got := textOf(t, ctx, "main"); !strings.Contains(got, "этот сервер не отправляет почту") {
		t.Fatalf("after sending a new code, with no mail here: %q", got)
	}
	// The provider cancels the refund: the page says the money is owed,
	// and asks again when told to.
	fake.RefundsCanceled = true
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, balance)), chromedp.WaitVisible(css(`#refund-balance`)))
	if got := textOf(t, ctx, "#refund-quote"); !strings.Contains(got, "на карту через платёжный сервис уйдёт 3\u00a0000") {
		t.Fatalf("the online refund's quote: %q", got)
	}
	do(t, ctx, chromedp.SendKeys(css(`#refund-balance input[name=reason]`), "не понадобился"),
		chromedp.Click(css(`#refund-balance input[name=sure]`)),
		chromedp.Click(css(`#refund-balance button[type=submit]`)), chromedp.WaitVisible(css(`.notice`)))
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, balance)), chromedp.WaitVisible(css(`#retry-refund`)))
	if got := textOf(t, ctx, "#sale-problem"); !strings.Contains(got, "отменил возврат") || strings.Contains(got, "cancelled") {
		t.Fatalf("a cancelled refund on the balance's page: %q", got)
	}
	if _, refunded := fake.Totals(); refunded != 0 {
		t.Fatalf("the provider refunded %d of a cancelled refund", refunded)
	}
	browsertest.Axe(t, ctx, "a balance whose refund the provider cancelled")
	fake.RefundsCanceled = false
	do(t, ctx, chromedp.Click(css(`#retry-refund button[type=submit]`)), chromedp.WaitVisible(css(`.notice`)))
	if got := textOf(t, ctx, ".notice"); !strings.Contains(got, "вернулись") {
		t.Fatalf("after asking again: %q", got)
	}
	if _, refunded := fake.Totals(); refunded != 300000 {
		t.Fatalf("the provider refunded %d", refunded)
	}
	if st := scalar[string](t, w, `SELECT status FROM balance_sales WHERE id = $1`, x.ID); st != "refunded" {
		t.Fatalf("the sale is %s", st)
	}
	png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		_ = os.WriteFile(filepath.Join(t.ArtifactDir(), "sale-refunded-390.png"), png, 0o644)
	}
}

// TestASaleSentTwiceSellsOnce: the sale form sent twice with its one-time
// key (a refresh of the page that showed the code, a second click) sells
// one certificate; the second send is taken to the first sale's page,
// which says so, and shows no code. A new form (a new key) sells again.
// The first form sent again with another value sells nothing, and says
// so, keeping the values for a deliberate second send.
func TestASaleSentTwiceSellsOnce(t *testing.T) {
	w := newWorld(t)
	b := w.owner()
	page := b.get("/panel/balances")
	key := regexp.MustCompile(`name="key" value="([0-9a-f]{32})"`).FindStringSubmatch(page.body)
	if key == nil {
		t.Fatalf("the sale form has no one-time key: %s", page.body)
	}
	form := url.Values{"kind": {"certificate"}, "amount": {"5000"}, "key": {key[1]}}
	count := func() int64 {
		return scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1 AND kind = 'certificate' AND total = 500000`, w.salon.ID)
	}
	first := b.post("/panel/balances", form)
	if first.status != http.StatusOK || !strings.Contains(first.body, `id="balance-code"`) || count() != 1 {
		t.Fatalf("the first send: %d, %d certificates of 5000; want the code shown, one", first.status, count())
	}
	again := b.post("/panel/balances", form)
	id := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1 AND total = 500000`, w.salon.ID)
	if again.status != http.StatusSeeOther || again.header.Get("Location") != fmt.Sprintf("/panel/balances/%d?done=sold_already", id) || count() != 1 {
		t.Fatalf("sent again: %d to %q, %d certificates of 5000; want a redirect to balance %d, still one", again.status,
			again.header.Get("Location"), count(), id)
	}
	shown := b.get(again.header.Get("Location"))
	if !strings.Contains(shown.body, "Эта продажа уже сделана") || strings.Contains(shown.body, `id="balance-code"`) {
		t.Fatalf("the first sale's page after the second send: %s", shown.body)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_entries e JOIN balances b ON b.id = e.balance_id
		WHERE b.salon_id = $1 AND b.total = 500000 AND e.type = 'credit'`, w.salon.ID); n != 1 {
		t.Fatalf("%d credits, want 1", n)
	}
	next := regexp.MustCompile(`name="key" value="([0-9a-f]{32})"`).FindStringSubmatch(first.body)
	if next == nil || next[1] == key[1] {
		t.Fatalf("the page after a sale has no new key: %v", next)
	}
	form.Set("key", next[1])
	if a := b.post("/panel/balances", form); a.status != http.StatusOK || count() != 2 {
		t.Fatalf("a new form: %d, %d certificates; want a second sale", a.status, count())
	}
	// The first form sent again with another amount (back from the code,
	// the amount changed): nothing sold, the values kept under a new key,
	// the first sale linked; sent once more, it sells.
	all := func() int64 {
		return scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1`, w.salon.ID)
	}
	before := all()
	form.Set("key", key[1])
	form.Set("amount", "6000")
	changed := b.post("/panel/balances", form)
	renewed := regexp.MustCompile(`name="key" value="([0-9a-f]{32})"`).FindStringSubmatch(changed.body)
	if changed.status != http.StatusConflict || all() != before || !strings.Contains(changed.body, "уже продан") ||
		!strings.Contains(changed.body, fmt.Sprintf(`href="/panel/balances/%d"`, id)) || !strings.Contains(changed.body, `value="6000"`) ||
		renewed == nil || renewed[1] == key[1] || strings.Contains(changed.body, `id="balance-code"`) {
		t.Fatalf("the first form again with 6000: %d, %d balances (%d before): %s", changed.status, all(), before, changed.body)
	}
	form.Set("key", renewed[1])
	if a := b.post("/panel/balances", form); a.status != http.StatusOK || !strings.Contains(a.body, `id="balance-code"`) ||
		scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1 AND total = 600000`, w.salon.ID) != 1 {
		t.Fatalf("sent once more: %d", a.status)
	}
}

// TestALostDeskCodeIsRenewed: a certificate sold at the desk whose code
// was lost (the page that showed it once was left) gets a new one on its
// page, shown this once and never in a URL: the old code no longer pays,
// the new one does, and the audit log names who renewed it.
func TestALostDeskCodeIsRenewed(t *testing.T) {
	w := newWorld(t)
	b := w.owner()
	page := b.get("/panel/balances")
	key := regexp.MustCompile(`name="key" value="([0-9a-f]{32})"`).FindStringSubmatch(page.body)
	sold := b.post("/panel/balances", url.Values{"kind": {"certificate"}, "amount": {"3000"}, "key": {key[1]}})
	old := regexp.MustCompile(`<p class="code"><b>([A-Z0-9-]{14})</b>`).FindStringSubmatch(sold.body)
	if sold.status != http.StatusOK || old == nil {
		t.Fatalf("the sale: %d", sold.status)
	}
	id := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1 AND total = 300000`, w.salon.ID)
	shown := b.get(fmt.Sprintf("/panel/balances/%d", id))
	if !strings.Contains(shown.body, `id="renew-code"`) || strings.Contains(shown.body, old[1]) {
		t.Fatalf("the balance's page: no way to a new code, or the old code shown: %s", shown.body)
	}
	formKey := regexp.MustCompile(`id="renew-code">\s*<input type="hidden" name="csrf" value="[^"]*"><input type="hidden" name="key" value="([0-9a-f]{32})"`).
		FindStringSubmatch(shown.body)
	if formKey == nil {
		t.Fatalf("the new code's form has no one-time key: %s", shown.body)
	}
	renewed := b.post(fmt.Sprintf("/panel/balances/%d/code", id), url.Values{"key": {formKey[1]}})
	code := regexp.MustCompile(`<p class="code"><b>([A-Z0-9-]{14})</b>`).FindStringSubmatch(renewed.body)
	if renewed.status != http.StatusOK || code == nil || code[1] == old[1] || !strings.Contains(renewed.body, "Старый код больше не действует") ||
		renewed.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the new code: %d, %v: %s", renewed.status, code, renewed.body)
	}
	visitor := booking.As(context.Background(), booking.Visitor())
	if _, err := w.Svc.BalanceByCode(visitor, w.salon.ID, old[1]); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("the old code: %v", err)
	}
	if got, err := w.Svc.BalanceByCode(visitor, w.salon.ID, code[1]); err != nil || got.ID != id || got.Remaining != 300000 {
		t.Fatalf("the new code: %+v, %v", got, err)
	}
	// The same form sent again (a refresh of the page that showed the
	// code): no second code, the one just given still pays, and it is not
	// shown again.
	again := b.post(fmt.Sprintf("/panel/balances/%d/code", id), url.Values{"key": {formKey[1]}})
	if again.status != http.StatusConflict || strings.Contains(again.body, `<p class="code">`) || !strings.Contains(again.body, "уже выдала новый код") {
		t.Fatalf("the form again: %d: %s", again.status, again.body)
	}
	if _, err := w.Svc.BalanceByCode(visitor, w.salon.ID, code[1]); err != nil {
		t.Fatalf("the code given, after the form came again: %v", err)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM audit_log WHERE salon_id = $1 AND action = 'code_renewed' AND entity_id = $2 AND actor <> ''`,
		w.salon.ID, id); n != 1 {
		t.Fatalf("%d audit rows of the renewal", n)
	}
	// (Once: not also as a change of the row's code columns.)
	if n := scalar[int64](t, w, `SELECT count(*) FROM audit_log WHERE salon_id = $1 AND entity = 'balance' AND entity_id = $2 AND action = 'update'`,
		w.salon.ID, id); n != 0 {
		t.Fatalf("the renewal is audited again as %d updates", n)
	}
	if a := b.get("/panel/audit"); !strings.Contains(a.body, "Выдан новый код") {
		t.Fatalf("the audit page does not say it: %s", a.body)
	}
	// The refused form's page names the balance's own address, and the
	// language switched there goes back to it (not to the POST's).
	own := fmt.Sprintf("/panel/balances/%d", id)
	if !strings.Contains(again.body, `data-here="`+own+`"`) || !strings.Contains(again.body, `name="back" value="`+own+`"`) {
		t.Fatalf("the refused form's page does not name %s", own)
	}
	if r := b.post("/panel/lang", url.Values{"lang": {"en"}, "back": {own}}); r.status != http.StatusSeeOther || r.header.Get("Location") != own {
		t.Fatalf("the language switched: %d to %q", r.status, r.header.Get("Location"))
	}
	for _, bad := range []string{"//evil.example/panel", "https://evil.example/panel/", "/panel\r\nSet-Cookie: evil=1", "/panel/\\evil.example"} {
		r := b.post("/panel/lang", url.Values{"lang": {"ru"}, "back": {bad}})
		if loc := r.header.Get("Location"); r.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/panel") || strings.ContainsAny(loc, "\r\n\\") ||
			strings.Contains(r.header.Get("Set-Cookie"), "evil") {
			t.Fatalf("the language switch with back %q: %d to %q", bad, r.status, loc)
		}
	}
}

// TestARefusedBalanceSettlementLeadsToItsBalance: a certificate bought
// online with receipts on pays a visit; the provider refuses the visit's
// settlement receipt: the attention page says what was refused in the
// balance's words (not a deposit's) and links the booking and the
// certificate.
func TestARefusedBalanceSettlementLeadsToItsBalance(t *testing.T) {
	fake := psptest.New(t)
	fake.RequireReceipts = true
	fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /receipts" {
			return psptest.Reject
		}
		return psptest.None
	}
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(yk), booking.WithReceipts())}
	w := newWorldOn(t, e)
	ctx := context.Background()
	owner := booking.As(ctx, booking.ByStaff(booking.User{ID: scalar[int64](t, w, `SELECT id FROM users WHERE email = $1`, demo.Email),
		SalonID: w.salon.ID, Role: booking.RoleOwner, Email: demo.Email}))
	if err := w.Svc.SetReceiptSettings(owner, w.salon.ID, booking.ReceiptSettings{VatCode: 1, TaxSystem: 2}); err != nil {
		t.Fatal(err)
	}
	offer, err := w.Svc.AddBalanceOffer(owner, booking.BalanceOffer{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Title: "Сертификат",
		Amount: 1000000, Price: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	const claim = "the-buyers-browser-made-this-claim-1"
	x, err := w.Svc.BuyBalance(booking.As(ctx, booking.Visitor()), booking.BalancePurchase{SalonID: w.salon.ID, OfferID: offer.ID, Claim: claim,
		Buyer: booking.ClientInput{Name: "Вера", Phone: bookingtest.Phone(), Email: "vera@example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake.Pay(scalar[string](t, w, `SELECT external_id FROM balance_sales WHERE id = $1`, x.ID))
	if _, err := w.Svc.CheckSale(bookingtest.System(), x.ID); err != nil {
		t.Fatal(err)
	}
	if x, err = w.Svc.SaleReturn(booking.As(ctx, booking.Visitor()), x.Ref, claim); err != nil || x.Code == "" {
		t.Fatalf("the return page: %+v, %v", x, err)
	}
	balance := scalar[int64](t, w, `SELECT balance_id FROM balance_sales WHERE id = $1`, x.ID)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active ORDER BY id LIMIT 1`, w.salon.ID)
	master := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 ORDER BY master_id LIMIT 1`, haircut)
	bk, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut, MasterID: master,
		StartsAt: bookingtest.At(w.salon, w.today(), "08:00"), Client: booking.ClientInput{Name: "Гость", Phone: bookingtest.Phone()},
		Source: booking.SourceImport, PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: x.Code}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * 24 * time.Hour)
	if _, err := w.Svc.CompletePast(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	a := w.owner().get("/panel/attention")
	row := regexp.MustCompile(`(?s)<tr data-session="0" data-kind="receipt">.*?</tr>`).FindString(a.body)
	for _, want := range []string{"чек зачёта предоплаты по абонементу или сертификату", fmt.Sprintf(`href="/panel/bookings/%d"`, bk.ID),
		fmt.Sprintf(`href="/panel/balances/%d"`, balance), `data-label="Сумма"`} {
		if !strings.Contains(row, want) {
			t.Errorf("the refused settlement's row lacks %q: %s", want, row)
		}
	}
	if strings.Contains(row, "оплачено") {
		t.Errorf("the row speaks of a deposit's payment: %s", row)
	}
}

// TestTheDeskIsOfferedOnlyPackagesThatPayTheVisit: the booking page offers
// the client's packages that can pay that visit: for its service, good on
// its day; not one of another service, nor one that ends before the day.
func TestTheDeskIsOfferedOnlyPackagesThatPayTheVisit(t *testing.T) {
	w := newWorld(t)
	ctx := bookingtest.System()
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active ORDER BY id LIMIT 1`, w.salon.ID)
	other := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active AND id <> $2 ORDER BY id LIMIT 1`, w.salon.ID, haircut)
	master := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 ORDER BY master_id LIMIT 1`, haircut)
	client := booking.ClientInput{Name: "Ольга", Phone: "+79995556077"}
	issue := func(service int64, until booking.Date) string {
		t.Helper()
		p, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{service},
			Visits: 3, ValidUntil: until, Client: client})
		if err != nil {
			t.Fatal(err)
		}
		return p.Hint
	}
	day := w.today().AddDays(2)
	fits := issue(haircut, day.AddDays(30))
	otherService := issue(other, day.AddDays(30))
	endsBefore := issue(haircut, day.AddDays(-1))
	bk, err := w.Svc.Book(booking.As(context.Background(), booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut,
		MasterID: master, StartsAt: bookingtest.At(w.salon, day, "12:00"), Client: client, Source: booking.SourceImport})
	if err != nil {
		t.Fatal(err)
	}
	page := w.owner().get(fmt.Sprintf("/panel/bookings/%d", bk.ID)).body
	if !strings.Contains(page, "…"+fits) || strings.Contains(page, "…"+otherService) || strings.Contains(page, "…"+endsBefore) {
		t.Errorf("offered packages (want …%s only, not …%s of another service nor …%s ending before the day): %s", fits, otherService,
			endsBefore, regexp.MustCompile(`(?s)<select name="balance">.*?</select>`).FindString(page))
	}
	// On a phone, a long choice stays inside the screen.
	tab := browsertest.Tab(t, 390, 844)
	do(t, tab, logIn(w)...)
	do(t, tab, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, bk.ID)), chromedp.WaitVisible(css(`#pay-with select`)))
	shot(t, tab, "booking-pay-with-valid-until-390.png", 390, 900)
	// Paid with it: its page counts what is left of what it had, and names
	// the booking that holds a visit, in the number Russian wants.
	id := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1 AND code_hint = $2`, w.salon.ID, fits)
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: scalar[int64](t, w, `SELECT id FROM users WHERE email = $1`,
		demo.Email), SalonID: w.salon.ID, Role: booking.RoleOwner, Email: demo.Email}))
	version := func() string {
		t.Helper()
		v, err := w.Svc.CalendarVersion(owner, booking.CalendarQuery{SalonID: w.salon.ID, First: day, Days: 1})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	if _, err := w.Svc.ApplyBalance(owner, w.salon.ID, bk.ID,
		booking.PayWith{Kind: booking.BalancePackage, BalanceID: id}); err != nil {
		t.Fatal(err)
	}
	if version() == before {
		t.Error("the day's version did not move when the visit was paid: an open grid would not show it")
	}
	// The booking's page says nothing is left to pay at the salon.
	if got := w.owner().get(fmt.Sprintf("/panel/bookings/%d", bk.ID)).body; !regexp.MustCompile(`id="due">ничего — всё оплачено<`).MatchString(got) {
		t.Errorf("the booking paid with a package: %s", regexp.MustCompile(`(?s)<dl.*?</dl>`).FindString(got))
	}
	// The day's grid marks it paid, as it marks a deposit.
	if got := w.owner().get("/panel/day/" + day.String()).body; !regexp.MustCompile(
		fmt.Sprintf(`(?s)href="/panel/bookings/%d" class="booking">.*?<span class="dep">оплачено абонементом</span>`, bk.ID)).MatchString(got) {
		t.Errorf("the day's grid does not mark booking %d paid with a package", bk.ID)
	}
	// A certificate of 100 pays part of another visit: the rest is due.
	cert, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 10000})
	if err != nil {
		t.Fatal(err)
	}
	part, err := w.Svc.Book(booking.As(context.Background(), booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut,
		MasterID: master, StartsAt: bookingtest.At(w.salon, day.AddDays(1), "12:00"), Client: client, Source: booking.SourceImport})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.ApplyBalance(owner, w.salon.ID, part.ID, booking.PayWith{Code: cert.Code}); err != nil {
		t.Fatal(err)
	}
	due := (part.Price - 10000).Format(w.salon.Currency, "ru")
	if got := w.owner().get(fmt.Sprintf("/panel/bookings/%d", part.ID)).body; !strings.Contains(got, `id="due"><strong>`+due+`</strong>`) {
		t.Errorf("the booking paid 100 of by a certificate, want %s due: %s", due, regexp.MustCompile(`(?s)<dl.*?</dl>`).FindString(got))
	}
	// Cancelled, nothing is due.
	if _, err := w.Svc.Cancel(owner, booking.CancelRequest{SalonID: w.salon.ID, BookingID: part.ID}); err != nil {
		t.Fatal(err)
	}
	if got := w.owner().get(fmt.Sprintf("/panel/bookings/%d", part.ID)).body; strings.Contains(got, `id="due"`) {
		t.Errorf("a cancelled booking says what is due: %s", regexp.MustCompile(`(?s)<dl.*?</dl>`).FindString(got))
	}
	shown := w.owner().get(fmt.Sprintf("/panel/balances/%d", id)).body
	for _, want := range []string{"Осталось 2 визита из 3 ·", fmt.Sprintf("Запись #%d держит 1 визит:", bk.ID), "Возвращается остаток 2 визита: верните"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the package's page lacks %q", want)
		}
	}
	// A refund whose reason is too long (a crafted form) is refused by its
	// field, the reason kept, nothing refunded.
	long := strings.Repeat("я", 501)
	r := w.owner().post(fmt.Sprintf("/panel/balances/%d/refund", id), url.Values{"reason": {long}, "sure": {"on"}})
	if !strings.Contains(r.body, `<li><b>Причина</b>: `) || !strings.Contains(r.body, `value="`+long+`"`) {
		t.Errorf("a refund with a reason of 501 characters: %d %s", r.status, regexp.MustCompile(`(?s)<main.*?</form>`).FindString(r.body))
	}
	if left := scalar[int64](t, w, `SELECT remaining FROM balances WHERE id = $1`, id); left != 2 {
		t.Errorf("refused, the package has %d left, want 2", left)
	}
}

// TestAnOfferFormSentTwiceAddsOne: the form that puts an offer on sale
// sent twice with its one-time key (a second click, two at once) adds one
// offer; sent again with other values, it adds none and says so, keeping
// the values under a new key for a deliberate second send.
func TestAnOfferFormSentTwiceAddsOne(t *testing.T) {
	fake := psptest.New(t)
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	w := newWorldOn(t, &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now),
		booking.WithPayments(&psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}))})
	owner := w.owner()
	page := owner.get("/panel/balances").body
	key := regexp.MustCompile(`id="add-offer"(?s:.*?)name="key" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if key == nil {
		t.Fatal("the offer form has no one-time key")
	}
	form := url.Values{"kind": {"certificate"}, "title": {"Twice"}, "price": {"100"}, "amount": {"100"}, "key": {key[1]}}
	codes := make([]int, 3)
	bookingtest.Race(3, func(i int) { codes[i] = owner.post("/panel/balance-offers", form).status })
	count := func() int64 {
		return scalar[int64](t, w, `SELECT count(*) FROM balance_offers WHERE salon_id = $1 AND title IN ('Twice', 'Twice more')`, w.salon.ID)
	}
	if n := count(); n != 1 || slices.ContainsFunc(codes, func(c int) bool { return c != http.StatusSeeOther }) {
		t.Fatalf("the form sent three times at once: %v, %d offers, want 303s and 1", codes, n)
	}
	form.Set("title", "Twice more")
	a := owner.post("/panel/balance-offers", form)
	if a.status != http.StatusConflict || !strings.Contains(a.body, "форма уже выставила предложение на продажу") || !strings.Contains(a.body, `value="Twice more"`) {
		t.Fatalf("the same form with another title: %d", a.status)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d offers after the changed send, want 1", n)
	}
	again := regexp.MustCompile(`id="add-offer"(?s:.*?)name="key" value="([0-9a-f]+)"`).FindStringSubmatch(a.body)
	if again == nil || again[1] == key[1] {
		t.Fatalf("the refused form's key: %v", again)
	}
	form.Set("key", again[1])
	if a := owner.post("/panel/balance-offers", form); a.status != http.StatusSeeOther || count() != 2 {
		t.Fatalf("sent deliberately again: %d, %d offers", a.status, count())
	}
}

// TestADeskSaleWithItsPriceSaysWhatToPayBack: a certificate sold at the
// desk with what the client paid; its refund says how much to give back.
// A price that is no amount is refused by its field, nothing sold.
func TestADeskSaleWithItsPriceSaysWhatToPayBack(t *testing.T) {
	w := newWorld(t)
	owner := w.owner()
	form := url.Values{"kind": {"certificate"}, "amount": {"5 000"}, "price": {"abc"}}
	if a := owner.post("/panel/balances", form); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "<b>Цена</b>") {
		t.Fatalf("a price that is no amount: %d", a.status)
	}
	form.Set("price", "4 500")
	a := owner.post("/panel/balances", form)
	if a.status != http.StatusOK || !strings.Contains(a.body, `id="balance-code"`) {
		t.Fatalf("sold with its price: %d", a.status)
	}
	// The code is shown with what it is.
	if got := regexp.MustCompile(`<p id="just-sold">.*?</p>`).FindString(a.body); !strings.Contains(got, "сертификат …") || !strings.Contains(got, "5 000") ||
		!strings.Contains(got, "продан в салоне за 4\u00a0500") {
		t.Errorf("what was sold, beside its code: %q", got)
	}
	id := scalar[int64](t, w, `SELECT max(id) FROM balances WHERE salon_id = $1`, w.salon.ID)
	if n := scalar[int64](t, w, `SELECT count(*) FROM balances WHERE salon_id = $1`, w.salon.ID); n != 1 {
		t.Fatalf("%d balances sold, want 1", n)
	}
	if got := owner.get(fmt.Sprintf("/panel/balances/%d", id)).body; !strings.Contains(got, "верните клиенту в салоне 4\u00a0500") ||
		!strings.Contains(got, "продан в салоне за 4\u00a0500") {
		t.Errorf("the refund's quote: %s", regexp.MustCompile(`<p id="refund-quote">.*?</p>`).FindString(got))
	}
	// Not ticked, nothing is refunded; ticked, it is, and the audit log
	// says what the desk paid back.
	if a := owner.post(fmt.Sprintf("/panel/balances/%d/refund", id), url.Values{"reason": {"передумала"}}); a.status != http.StatusUnprocessableEntity ||
		!strings.Contains(a.body, "Отметьте, что вы уверены") || !strings.Contains(a.body, `value="передумала"`) {
		t.Fatalf("a refund not ticked: %d", a.status)
	}
	if left := scalar[int64](t, w, `SELECT remaining FROM balances WHERE id = $1`, id); left != 500000 {
		t.Fatalf("not ticked, %d left", left)
	}
	if a := owner.post(fmt.Sprintf("/panel/balances/%d/refund", id), url.Values{"sure": {"on"}}); a.status != http.StatusSeeOther {
		t.Fatalf("the refund: %d", a.status)
	}
	if got := strings.ReplaceAll(owner.get("/panel/audit?entity=balance").body, "\u00a0", " "); !strings.Contains(got, "Выплачено в салоне: — → 4 500 ₽") {
		_, rows, _ := strings.Cut(got, "<tbody")
		t.Errorf("the audit log does not say what the desk paid back: %.1500s", rows)
	}
	// After the refund, its page still says what the desk paid back; the
	// day's payments count the sale and the money paid back.
	if got := strings.ReplaceAll(owner.get(fmt.Sprintf("/panel/balances/%d", id)).body, "\u00a0", " "); !strings.Contains(got, "клиенту в салоне возвращено 4 500 ₽") {
		t.Errorf("the balance's page after the refund does not say what was paid back: %s",
			regexp.MustCompile(`(?s)<table class="list" id="ledger".*?</table>`).FindString(got))
	}
	// (The entries' clock is the database's, not the test's.)
	sold := scalar[string](t, w, `SELECT to_char(created_at AT TIME ZONE $2, 'YYYY-MM-DD') FROM balance_entries WHERE balance_id = $1 AND type = 'credit'`,
		id, w.salon.Timezone)
	pay := strings.ReplaceAll(owner.get("/panel/payments?date="+sold).body, "\u00a0", " ")
	for _, want := range []string{`id="balances-sold">4 500 ₽<`, `id="balances-paid-back">4 500 ₽<`, "продажа, в салоне", "возврат денег, в салоне"} {
		if !strings.Contains(pay, want) {
			t.Errorf("the day's payments lack %q: %s", want, regexp.MustCompile(`(?s)<table class="list summary".*?</table>|<table class="list" id="balance-money".*?</table>`).FindAllString(pay, -1))
		}
	}
}

// TestALockedCodeSaysSoOnItsPage: a package's code tried with more phones
// not its client's than a day allows refuses even its client online; its
// page tells the desk so, till when, and that a new code ends it; after a
// new code it says nothing of it.
func TestALockedCodeSaysSoOnItsPage(t *testing.T) {
	w := newWorld(t)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active ORDER BY id LIMIT 1`, w.salon.ID)
	p, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{haircut}, Visits: 3, Client: booking.ClientInput{Name: "Ольга", Phone: "+79995556078"}})
	if err != nil {
		t.Fatal(err)
	}
	b := w.owner()
	page := fmt.Sprintf("/panel/balances/%d", p.ID)
	if r := b.get(page); strings.Contains(r.body, `id="code-locked"`) {
		t.Fatal("a code tried by no one reads as locked")
	}
	visitor := booking.As(context.Background(), booking.Visitor())
	for i := range booking.PhoneMissesADay + 1 {
		_, err := w.Svc.CheckBalance(visitor, w.salon.ID, p.Code, booking.BalanceUse{Phone: fmt.Sprintf("+7999000%04d", i)})
		if !errors.Is(err, booking.ErrInvalid) {
			t.Fatalf("phone %d: %v", i, err)
		}
	}
	if _, err := w.Svc.CheckBalance(visitor, w.salon.ID, p.Code, booking.BalanceUse{Phone: "+79995556078"}); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("its own client's phone, the code locked: %v", err)
	}
	r := b.get(page)
	locked := regexp.MustCompile(`<p class="warning" role="status" id="code-locked">([^<]+)</p>`).FindStringSubmatch(r.body)
	if r.status != http.StatusOK || locked == nil || !strings.Contains(locked[1], "Код заблокирован до") ||
		!strings.Contains(locked[1], "больше чем с 5 телефонами") || !strings.Contains(locked[1], "новый код снимает блокировку") {
		t.Fatalf("the locked code's page: %d %v", r.status, locked)
	}
	formKey := regexp.MustCompile(`id="renew-code">\s*<input type="hidden" name="csrf" value="[^"]*"><input type="hidden" name="key" value="([0-9a-f]{32})"`).
		FindStringSubmatch(r.body)
	if formKey == nil {
		t.Fatal("no new code's form")
	}
	if r := b.post(page+"/code", url.Values{"key": {formKey[1]}}); r.status != http.StatusOK || strings.Contains(r.body, `id="code-locked"`) {
		t.Fatalf("the new code: %d, still said locked", r.status)
	}
	if r := b.get(page); strings.Contains(r.body, `id="code-locked"`) {
		t.Fatal("a new code's page still says the code is locked")
	}
}

// TestTheNewBookingFormPaysWithAPackage: the desk books and pays at once.
// The phone typed offers the client's packages for the services chosen
// (a visit's further ones too; not another service's, not one that ends
// before the day); booked with one, its visit is reserved (the ledger's
// entry, what is left, the page: nothing due); a certificate's code pays
// too. Refused, the form says why and keeps its values, nothing booked or
// reserved: a package and a code at once, another client's package (a
// crafted form), a spent package. A taken time's choices pay with the
// package chosen.
func TestTheNewBookingFormPaysWithAPackage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active ORDER BY id LIMIT 1`, w.salon.ID)
	other := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active AND id <> $2 ORDER BY id LIMIT 1`, w.salon.ID, haircut)
	master := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 ORDER BY master_id LIMIT 1`, haircut)
	client := booking.ClientInput{Name: "Ольга", Phone: bookingtest.Phone()}
	stranger := booking.ClientInput{Name: "Инна", Phone: bookingtest.Phone()}
	day := w.today().AddDays(2)
	issue := func(cl booking.ClientInput, service int64, visits int, until booking.Date) *booking.Balance {
		t.Helper()
		p, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{service},
			Visits: visits, ValidUntil: until, Client: cl})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := issue(client, haircut, 1, day.AddDays(30))
	three := issue(client, haircut, 3, day.AddDays(30))
	otherService := issue(client, other, 3, day.AddDays(30))
	ended := issue(client, haircut, 3, day.AddDays(-1))
	theirs := issue(stranger, haircut, 3, day.AddDays(30))
	cert, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 100000})
	if err != nil {
		t.Fatal(err)
	}
	b := w.owner()
	offered := func(q url.Values) string {
		t.Helper()
		q.Set("phone", client.Phone)
		a := b.get("/panel/clients/by-phone?" + q.Encode())
		got := regexp.MustCompile(`(?s)<div id="client-packages" aria-live="polite" hx-swap-oob="true">.*?</div>`).FindString(a.body)
		if a.status != http.StatusOK || got == "" {
			t.Fatalf("the client's packages as the phone is typed: %d %s", a.status, a.body)
		}
		return got
	}
	hints := func(s string) (out []string) {
		for _, p := range []*booking.Balance{one, three, otherService, ended, theirs} {
			if strings.Contains(s, "…"+p.Hint) {
				out = append(out, p.Hint)
			}
		}
		return out
	}
	if got := hints(offered(url.Values{"service": {fmt.Sprint(haircut)}, "date": {day.String()}})); !slices.Equal(got, []string{one.Hint, three.Hint}) {
		t.Errorf("offered for the haircut: %v, want %v", got, []string{one.Hint, three.Hint})
	}
	both := offered(url.Values{"service": {fmt.Sprint(haircut)}, "more_service": {fmt.Sprint(other), ""}, "date": {day.String()}})
	if got := hints(both); !slices.Equal(got, []string{one.Hint, three.Hint, otherService.Hint}) {
		t.Errorf("offered for a visit of both services: %v", got)
	}
	// Each names what of the visit it pays.
	name := func(id int64) string { return scalar[string](t, w, `SELECT name FROM services WHERE id = $1`, id) }
	for _, want := range []string{"…" + three.Hint + " (" + name(haircut) + "): осталось 3 визита", "…" + otherService.Hint + " (" + name(other) + "):"} {
		if !strings.Contains(html.UnescapeString(both), want) {
			t.Errorf("the choices do not say %q: %s", want, both)
		}
	}
	if got := hints(offered(url.Values{"service": {fmt.Sprint(haircut)}, "date": {day.AddDays(-3).String()}})); !slices.Contains(got, ended.Hint) {
		t.Errorf("offered for a day the package is still good: %v, want …%s too", got, ended.Hint)
	}
	// The form for the client offers them too, none chosen.
	page := b.get(fmt.Sprintf("/panel/bookings/new?client=%d&service=%d&master=%d", scalar[int64](t, w,
		`SELECT client_id FROM balances WHERE id = $1`, one.ID), haircut, master)).body
	if !strings.Contains(page, `<option value="0">нет: оплата в салоне</option>`) || !strings.Contains(page, "…"+three.Hint) {
		t.Errorf("the new booking form for the client: %s", regexp.MustCompile(`(?s)<fieldset id="pay-with">.*?</fieldset>`).FindString(page))
	}

	slots, err := w.Svc.Slots(ctx, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: haircut, MasterID: master, From: day, Days: 1})
	if err != nil || len(slots) < 12 {
		t.Fatalf("%d slots: %v", len(slots), err)
	}
	loc := w.salon.Location()
	booked := func() int64 {
		return scalar[int64](t, w, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.salon_id = $1 AND c.phone = $2`,
			w.salon.ID, client.Phone)
	}
	entries := func() int64 {
		return scalar[int64](t, w, `SELECT count(*) FROM balance_entries WHERE salon_id = $1 AND type = 'reserve'`, w.salon.ID)
	}
	form := func(slot int, pay ...string) url.Values {
		at := slots[slot].Start.In(loc)
		v := url.Values{"master": {fmt.Sprint(master)}, "service": {fmt.Sprint(haircut)}, "date": {at.Format("2006-01-02")},
			"time": {at.Format("15:04")}, "phone": {client.Phone}, "name": {client.Name}, "key": {fmt.Sprintf("k-%d-%s", slot, strings.Join(pay, "-"))}}
		for i := 0; i+1 < len(pay); i += 2 {
			v.Set(pay[i], pay[i+1])
		}
		return v
	}
	refused := func(what string, a answer, status int, why string) {
		t.Helper()
		if a.status != status || !strings.Contains(a.body, why) {
			t.Errorf("%s: %d, want %d saying %q: %s %s", what, a.status, status, why, fieldErrorsOf(a.body),
				regexp.MustCompile(`<p class="error"[^>]*>[^<]*`).FindAllString(a.body, -1))
		}
		if n := booked(); n != 0 {
			t.Errorf("%s: %d bookings made", what, n)
		}
		if n := entries(); n != 0 {
			t.Errorf("%s: %d reservations made", what, n)
		}
	}
	a := b.post("/panel/bookings", form(0, "pay_balance", fmt.Sprint(three.ID), "pay_code", cert.Code))
	refused("a package and a code", a, http.StatusUnprocessableEntity, "выберите абонемент клиента или введите код, не то и другое")
	if !strings.Contains(a.body, `name="pay_code" value="`+cert.Code+`" autocomplete="off" maxlength="40" aria-invalid="true"`) ||
		!strings.Contains(a.body, fmt.Sprintf(`<option value="%d" selected>`, three.ID)) {
		t.Errorf("the refused form does not keep the package and the code: %s", regexp.MustCompile(`(?s)<fieldset id="pay-with">.*?</fieldset>`).FindString(a.body))
	}
	refused("another client's package", b.post("/panel/bookings", form(0, "pay_balance", fmt.Sprint(theirs.ID))),
		http.StatusUnprocessableEntity, "это абонемент другого клиента")
	refused("a package of another service", b.post("/panel/bookings", form(0, "pay_balance", fmt.Sprint(otherService.ID))),
		http.StatusUnprocessableEntity, "абонемент не на эту услугу")

	// Booked with the package of one visit: reserved, nothing due.
	a = b.post("/panel/bookings", form(0, "pay_balance", fmt.Sprint(one.ID)))
	var id int64
	if _, err := fmt.Sscanf(a.header.Get("Location"), "/panel/bookings/%d", &id); a.status != http.StatusSeeOther || err != nil {
		t.Fatalf("booked with a package: %d %s %s", a.status, fieldErrorsOf(a.body), regexp.MustCompile(`<p class="error"[^>]*>[^<]*`).FindString(a.body))
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND booking_id = $2 AND type = 'reserve' AND delta = -1`,
		one.ID, id); n != 1 {
		t.Errorf("the package's reserve entries for booking %d: %d, want 1", id, n)
	}
	if left := scalar[int64](t, w, `SELECT remaining FROM balances WHERE id = $1`, one.ID); left != 0 {
		t.Errorf("the package has %d left, want 0", left)
	}
	if got := b.get(fmt.Sprintf("/panel/bookings/%d", id)).body; !regexp.MustCompile(`id="due">ничего — всё оплачено<`).MatchString(got) ||
		!strings.Contains(got, "…"+one.Hint) {
		t.Errorf("the booking paid with a package: %s", regexp.MustCompile(`(?s)<dl.*?</dl>`).FindString(got))
	}
	// Spent: another booking with it is refused, saying so.
	a = b.post("/panel/bookings", form(4, "pay_balance", fmt.Sprint(one.ID)))
	if a.status != http.StatusConflict || !strings.Contains(a.body, `<p class="error" role="alert">Абонементом или сертификатом это не оплатить.</p>`) ||
		!strings.Contains(a.body, `<p class="error" id="pay-with-error">на нём ничего не осталось</p>`) ||
		!strings.Contains(a.body, `<select name="pay_balance" aria-invalid="true" aria-describedby="pay-with-error">`) {
		t.Errorf("a spent package: %d %s %s", a.status, regexp.MustCompile(`<p class="error"[^>]*>[^<]*`).FindAllString(a.body, -1),
			regexp.MustCompile(`(?s)<fieldset id="pay-with">.*?</fieldset>`).FindString(a.body))
	}
	if n := booked(); n != 1 {
		t.Errorf("after a spent package's refusal, %d bookings, want 1", n)
	}
	// A certificate's code pays its amount, up to the price.
	a = b.post("/panel/bookings", form(4, "pay_code", cert.Code))
	if _, err := fmt.Sscanf(a.header.Get("Location"), "/panel/bookings/%d", &id); a.status != http.StatusSeeOther || err != nil {
		t.Fatalf("booked with a certificate: %d %s", a.status, regexp.MustCompile(`<p class="error"[^>]*>[^<]*`).FindString(a.body))
	}
	price := scalar[int64](t, w, `SELECT (price * 100)::bigint FROM bookings WHERE id = $1`, id)
	if got := scalar[int64](t, w, `SELECT -delta FROM balance_entries WHERE balance_id = $1 AND booking_id = $2 AND type = 'reserve'`,
		cert.ID, id); got != min(price, 100000) {
		t.Errorf("the certificate reserved %d for a price of %d", got, price)
	}
	// A taken time: each choice pays with the package chosen.
	at := slots[8].Start.In(loc)
	if _, err := w.Svc.Book(ctx, booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut, MasterID: master, StartsAt: slots[8].Start,
		Client: stranger}); err != nil {
		t.Fatal(err)
	}
	a = b.post("/panel/bookings", form(8, "pay_balance", fmt.Sprint(three.ID)))
	i := strings.Index(a.body, `<div class="alts">`)
	if a.status != http.StatusConflict || i < 0 {
		t.Fatalf("a taken time at %s: %d", at.Format("15:04"), a.status)
	}
	chunk := a.body[i:]
	chunk = chunk[:strings.Index(chunk, "</form>")]
	choice := url.Values{}
	for _, m := range regexp.MustCompile(`name="(\w+)" value="([^"]*)"`).FindAllStringSubmatch(chunk, -1) {
		choice.Set(m[1], html.UnescapeString(m[2]))
	}
	if choice.Get("pay_balance") != fmt.Sprint(three.ID) {
		t.Errorf("the first choice does not pay with the package: %v", choice)
	}
	if r := b.do("POST", "/panel/bookings", choice); r.status != http.StatusSeeOther {
		t.Fatalf("the first choice: %d", r.status)
	}
	if left := scalar[int64](t, w, `SELECT remaining FROM balances WHERE id = $1`, three.ID); left != 2 {
		t.Errorf("booked by a choice, the package has %d left, want 2", left)
	}
	// A visit's page, either service's, offers the package naming the
	// service it pays, once.
	otherMaster := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 ORDER BY master_id LIMIT 1`, other)
	v, err := w.Svc.Book(ctx, booking.BookRequest{SalonID: w.salon.ID, StartsAt: bookingtest.At(w.salon, day.AddDays(1), "12:00"), Client: client,
		Items: []booking.VisitItem{{ServiceID: haircut, MasterID: master}, {ServiceID: other, MasterID: otherMaster}}})
	if err != nil {
		t.Fatal(err)
	}
	// The form names that visit's services and masters on its day.
	masterName := func(id int64) string { return scalar[string](t, w, `SELECT name FROM masters WHERE id = $1`, id) }
	frag := html.UnescapeString(b.get("/panel/clients/by-phone?" + url.Values{"phone": {client.Phone}, "date": {day.AddDays(1).String()}}.Encode()).body)
	if want := "12:00–" + v.Segments[1].EndsAt().In(w.salon.Location()).Format("15:04") + " " + name(haircut) + " (" + masterName(master) + ") + " +
		name(other) + " (" + masterName(otherMaster) + ")"; !strings.Contains(frag, want) {
		t.Errorf("the form's day lacks %q: %s", want, regexp.MustCompile(`<p class="hint" id="same-day">[^<]*`).FindString(frag))
	}
	for _, sg := range v.Segments {
		page := html.UnescapeString(b.get(fmt.Sprintf("/panel/bookings/%d", sg.ID)).body)
		if want := "…" + three.Hint + " (" + name(haircut) + "): осталось 2 визита"; !strings.Contains(page, want) {
			t.Errorf("the page of the visit's service %d offers %s, want %q", sg.ID,
				regexp.MustCompile(`(?s)<select name="balance">.*?</select>`).FindString(page), want)
		}
	}
	// On a booking's page, a code that pays nothing marks its field.
	later, err := w.Svc.Book(ctx, booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut, MasterID: master, StartsAt: slots[len(slots)-1].Start, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	a = b.post(fmt.Sprintf("/panel/bookings/%d/pay-with", later.ID), url.Values{"code": {"NOSUCHCODE42"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, `name="code" autocomplete="off" maxlength="40" aria-invalid="true" aria-describedby="pay-with-error"`) ||
		!strings.Contains(a.body, `<p class="error" id="pay-with-error">такого абонемента или сертификата нет</p>`) {
		t.Errorf("a code that pays nothing: %d %s", a.status, regexp.MustCompile(`(?s)<form[^>]*id="pay-with">.*?</form>`).FindString(a.body))
	}
}

// TestBrowserBooksPayingWithTheClientsPackage: on the new booking form, the
// phone typed shows the client's package for the service chosen; another
// service chosen, it goes (it does not pay that one), and comes back with
// the first; picked, the booking is made paid with it. axe-core;
// screenshots at 390 px and on a desktop.
func TestBrowserBooksPayingWithTheClientsPackage(t *testing.T) {
	w := newWorld(t)
	ctx := bookingtest.System()
	var master, first, second int64
	if err := w.Pool.QueryRow(ctx, `SELECT a.master_id, a.service_id, b.service_id FROM master_services a
		JOIN master_services b ON b.master_id = a.master_id AND b.service_id > a.service_id
		JOIN masters m ON m.id = a.master_id WHERE m.salon_id = $1 ORDER BY 1, 2, 3 LIMIT 1`, w.salon.ID).Scan(&master, &first, &second); err != nil {
		t.Fatal(err)
	}
	client := booking.ClientInput{Name: "Ольга", Phone: "+79995550311"}
	pkg, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{first},
		Visits: 5, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	slots, err := w.Svc.Slots(ctx, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: first, MasterID: master, From: w.today().AddDays(1), Days: 3})
	if err != nil || len(slots) == 0 {
		t.Fatalf("%d slots: %v", len(slots), err)
	}
	at := slots[0].Start.In(w.salon.Location())
	pick := func(service int64) chromedp.Action[chromedp.Void] {
		return func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[bool](fmt.Sprintf(`(function(){var s=document.querySelector('#new-booking select[name=service]');`+
				`s.value='%d';s.dispatchEvent(new Event('change',{bubbles:true}));return true})()`, service))(c, tg)
			return chromedp.Void{}, err
		}
	}
	for i, size := range [][2]int64{{390, 844}, {1280, 900}} {
		tab := browsertest.Tab(t, size[0], size[1])
		if i == 0 { // (the tabs share the browser's cookies: one login)
			do(t, tab, logIn(w)...)
		}
		// htmx's words for the form's triggers it cannot read, noted from
		// before the page's own script runs.
		if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.htmxErrors = [];
			document.addEventListener('htmx:syntax:error', function (e) { window.htmxErrors.push(e.target.name || e.target.id || e.target.tagName); });`}); err != nil {
			t.Fatal(err)
		}
		do(t, tab,
			chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/new?master=%d&service=%d&at=%s", w.base, master, first, at.Format("2006-01-02T15:04"))),
			chromedp.WaitVisible(css(`#new-booking`)),
			chromedp.SendKeys(css(`#new-booking input[name=phone]`), "8 999 555-03-11"),
			chromedp.WaitVisible(css(`#client-packages select[name=pay_balance]`)),
		)
		if got := value(t, tab, chromedp.Text(css(`#client-packages select`))); !strings.Contains(got, "…"+pkg.Hint) {
			t.Fatalf("the client's packages offered: %q", got)
		}
		if bad := value(t, tab, chromedp.Evaluate[[]string](`window.htmxErrors`)); len(bad) > 0 {
			t.Errorf("htmx cannot read the triggers of %q (it then asks on every change of the form, replacing the package chosen)", bad)
		}
		browsertest.Axe(t, tab, fmt.Sprintf("the new booking form with a package (%d px)", size[0]))
		do(t, tab, pick(second), chromedp.WaitNotPresent(css(`#client-packages select`)),
			pick(first), chromedp.WaitVisible(css(`#client-packages select`)))
		if size[0] < 1000 {
			do(t, tab, chromedp.SetValue(css(`#client-packages select`), fmt.Sprint(pkg.ID)))
			shot(t, tab, "booking-new-with-package-390.png", 390, 844)
			do(t, tab,
				chromedp.Click(css(`#new-booking button[type=submit]`)),
				chromedp.WaitVisible(css(`#status.confirmed`)),
			)
			id := bookingIDAt(t, tab)
			if got := value(t, tab, chromedp.Text(css(`main`))); !strings.Contains(got, "…"+pkg.Hint) || !strings.Contains(got, "ничего — всё оплачено") {
				t.Errorf("the booking's page: %q", got)
			}
			if n := scalar[int64](t, w, `SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND booking_id = $2 AND type = 'reserve'`,
				pkg.ID, id); n != 1 {
				t.Errorf("booking %d reserved %d entries of the package, want 1", id, n)
			}
		} else {
			shot(t, tab, "booking-new-with-package-1280.png", 1280, 900)
		}
	}
}
