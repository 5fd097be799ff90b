package panel_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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

// TestARefundFoundMadeAtTheProviderIsRecorded: a deposit's refund and a
// certificate sale's refund, both cancelled by the provider, are put
// before staff with two actions: ask again, or record it as made there
// (by hand, in the provider's account). Recorded a moment after its POST
// it is refused, saying why, in the page's language, nothing written; an
// hour later too, while the provider does not answer or its payment
// shows no refund; made by hand there, it is recorded: the deposit's ledger has its refund and the
// payment is refunded, the sale is refunded, neither needs attention any
// more, the provider is asked nothing more, and the audit log says who
// recorded what, in ru and en. In Chromium at 390 px (axe-core) and on a
// desktop.
func TestARefundFoundMadeAtTheProviderIsRecorded(t *testing.T) {
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(yk),
		booking.WithProviderAttempts(1))}
	w := newWorldOn(t, e)
	ctx := context.Background()
	sys := bookingtest.System()
	owner := booking.As(ctx, booking.ByStaff(booking.User{ID: scalar[int64](t, w, `SELECT id FROM users WHERE email = $1`, demo.Email),
		SalonID: w.salon.ID, Role: booking.RoleOwner, Email: demo.Email}))

	// A deposit paid online.
	svc := scalar[int64](t, w, `SELECT id FROM services WHERE name = 'Окрашивание'`)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Галина'`)
	slots, err := w.Svc.Slots(sys, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: svc, MasterID: m, From: w.today().AddDays(1), Days: 7})
	if err != nil || len(slots) == 0 {
		t.Fatalf("%d slots, %v", len(slots), err)
	}
	bk, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: svc, MasterID: m,
		StartsAt: slots[0].Start, Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := w.Svc.StartPayment(booking.As(ctx, booking.ByToken(bk.ManageToken)), bk.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake.Pay(ps.ExternalID)
	if _, err := w.Svc.CheckPayment(sys, ps.ID); err != nil {
		t.Fatal(err)
	}
	// A certificate bought online.
	offer, err := w.Svc.AddBalanceOffer(owner, booking.BalanceOffer{SalonID: w.salon.ID, Kind: booking.BalanceCertificate,
		Title: "Сертификат на 3000", Price: 300000, Amount: 300000})
	if err != nil {
		t.Fatal(err)
	}
	sale, err := w.Svc.BuyBalance(booking.As(ctx, booking.Visitor()), booking.BalancePurchase{SalonID: w.salon.ID, OfferID: offer.ID,
		Buyer: booking.ClientInput{Name: "Вера", Phone: bookingtest.Phone(), Email: "vera@example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ext := scalar[string](t, w, `SELECT external_id FROM balance_sales WHERE id = $1`, sale.ID)
	fake.Pay(ext)
	if _, err := w.Svc.PaymentNotified(sys, "yookassa", ext); err != nil {
		t.Fatal(err)
	}
	balance := scalar[int64](t, w, `SELECT balance_id FROM balance_sales WHERE id = $1`, sale.ID)

	// Both refunds are asked, and the provider cancels them.
	fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDeposit(owner, w.salon.ID, bk.ID); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	if _, err := w.Svc.RefundBalance(owner, w.salon.ID, balance, "не понадобился"); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	posts := fake.Calls("POST /refunds")
	if posts != 2 {
		t.Fatalf("%d refunds asked, want 2", posts)
	}

	tab := browsertest.Tab(t, 390, 844)
	do(t, tab, logIn(w)...)
	row := fmt.Sprintf(`tr[data-session="%d"]`, ps.ID)
	recordDeposit := css(row + ` form[action$="/refund-made"] button`)
	do(t, tab, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(recordDeposit))
	if got := textOf(t, tab, row); !strings.Contains(got, "Запросить возврат снова") || !strings.Contains(got, "отметить") {
		t.Fatalf("the attention page's row: %q", got)
	}
	browsertest.Axe(t, tab, "the attention page with a refund to record")
	shot(t, tab, "refund-to-record-390.png", 390, 844)
	// A moment after the POSTs: refused, saying why.
	do(t, tab, chromedp.Click(recordDeposit), chromedp.WaitVisible(css(`#refused`)))
	if got := textOf(t, tab, "#refused"); !strings.Contains(got, "только что запрошен") {
		t.Fatalf("recorded a moment after its POST: %q", got)
	}
	do(t, tab, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, balance)), chromedp.WaitVisible(css(`#refund-made`)),
		chromedp.Click(css(`#refund-made button`)), chromedp.WaitVisible(css(`#refused`)))
	if got := textOf(t, tab, "main"); !strings.Contains(got, "только что запрошен") || !strings.Contains(got, "личном кабинете") {
		t.Fatalf("the sale recorded a moment after its POST: %q", got)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM ledger_entries WHERE booking_id = $1 AND entry_type = 'deposit_refunded'`, bk.ID); n != 0 ||
		scalar[string](t, w, `SELECT status FROM balance_sales WHERE id = $1`, sale.ID) != "refunding" {
		t.Fatalf("refused, yet %d refunds in the ledger, or the sale moved", n)
	}

	// An hour later, refused while the provider's payments show no refund
	// (it did not succeed there); recorded once staff made both by hand in
	// the provider's account.
	clock.Advance(time.Hour)
	fake.Fault = func(_, path string) psptest.Fault {
		if path == "GET /payments/{id}" {
			return psptest.Error
		}
		return psptest.None
	}
	do(t, tab, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(recordDeposit),
		chromedp.Click(recordDeposit), chromedp.WaitVisible(css(`#refused`)))
	if got := textOf(t, tab, "#refused"); !strings.Contains(got, "Платёжный сервис не ответил") {
		t.Fatalf("recorded with the provider down: %q", got)
	}
	fake.Fault = nil
	do(t, tab, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(recordDeposit),
		chromedp.Click(recordDeposit), chromedp.WaitVisible(css(`#refused`)))
	if got := textOf(t, tab, "#refused"); !strings.Contains(got, "возврат там не прошёл") {
		t.Fatalf("recorded with no refund at the provider: %q", got)
	}
	fake.RefundsCanceled = false
	for _, r := range []struct {
		payment string
		amount  int64
	}{{ps.ExternalID, 100000}, {ext, 300000}} {
		if _, err := yk.Refund(ctx, "by-hand-"+r.payment, r.payment, r.amount, "RUB", nil); err != nil {
			t.Fatalf("a refund by hand: %v", err)
		}
	}
	posts += 2
	// Asked again instead, made by hand as they are: refused, saying what
	// the payment shows, nothing asked of the provider.
	do(t, tab, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(recordDeposit),
		chromedp.Click(css(row+` form[action$="/retry"] button`)), chromedp.WaitVisible(css(`#refused`)))
	if got := textOf(t, tab, "#refused"); !strings.Contains(got, "возвращено 1000") || !strings.Contains(got, "не запрошен повторно") {
		t.Fatalf("the deposit's refund, made by hand, asked again: %q", got)
	}
	do(t, tab, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, balance)), chromedp.WaitVisible(css(`#retry-refund`)),
		chromedp.Click(css(`#retry-refund button`)), chromedp.WaitVisible(css(`#refused`)))
	if got := textOf(t, tab, "main"); !strings.Contains(got, "возвращено 3000") || !strings.Contains(got, "отметьте его как сделанный") {
		t.Fatalf("the sale's refund, made by hand, asked again: %q", got)
	}
	shot(t, tab, "refund-made-by-hand-asked-again-390.png", 390, 844)
	if n := fake.Calls("POST /refunds"); n != posts {
		t.Fatalf("asked again: the provider was asked %d refunds more", n-posts)
	}
	do(t, tab, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(recordDeposit),
		chromedp.Click(recordDeposit), chromedp.WaitVisible(css(`.notice`)))
	if got := textOf(t, tab, ".notice"); !strings.Contains(got, "отмечен") {
		t.Fatalf("after recording the deposit's refund: %q", got)
	}
	if got := textOf(t, tab, "#attention"); strings.Contains(got, "отметить") {
		t.Fatalf("still to record: %q", got)
	}
	if got := scalar[int64](t, w, `SELECT COALESCE(sum(amount), 0)::bigint FROM ledger_entries WHERE booking_id = $1 AND entry_type = 'deposit_refunded'`, bk.ID); got != 1000 ||
		scalar[string](t, w, `SELECT status FROM payment_sessions WHERE id = $1`, ps.ID) != "refunded" {
		t.Fatalf("recorded: the ledger refunded %d, want 1000 (the deposit), and the payment refunded", got)
	}
	do(t, tab, chromedp.Navigate(fmt.Sprintf("%s/panel/balances/%d", w.base, balance)), chromedp.WaitVisible(css(`#refund-made`)),
		chromedp.Click(css(`#refund-made button`)), chromedp.WaitVisible(css(`.notice`)))
	if got := textOf(t, tab, "#balance-sale"); strings.Contains(got, "отметить") || !strings.Contains(got, "возвращено") {
		t.Fatalf("the sale once recorded: %q", got)
	}
	if st := scalar[string](t, w, `SELECT status FROM balance_sales WHERE id = $1`, sale.ID); st != "refunded" {
		t.Fatalf("the sale is %s", st)
	}
	if n := fake.Calls("POST /refunds"); n != posts {
		t.Fatalf("the provider was asked %d refunds more", n-posts)
	}
	do(t, tab, chromedp.Navigate(w.base+"/panel/attention"), chromedp.WaitVisible(css(`#attention-sales`)))
	if got := textOf(t, tab, "#attention-sales"); strings.Contains(got, "Сертификат на 3000") {
		t.Fatalf("the sale still needs attention: %q", got)
	}
	// The audit log says who recorded what.
	do(t, tab, chromedp.Navigate(w.base+"/panel/audit"), chromedp.WaitVisible(css(`main`)))
	got := textOf(t, tab, "main")
	if strings.Count(got, "Возврат отмечен как сделанный в платёжном сервисе") != 2 || !strings.Contains(got, "Оплата: возвращается → возвращено") ||
		strings.Contains(got, "payment_") {
		t.Fatalf("the audit log: %q", got)
	}
	shot(t, tab, "refund-recorded-audit-1280.png", 1280, 900)
	b := w.owner()
	b.do("POST", "/panel/lang", url.Values{"lang": {"en"}, "csrf": {b.csrf}}, "Referer", w.base+"/panel/audit")
	if a := b.get("/panel/audit"); strings.Count(a.body, "Refund recorded as made at the payment service") != 2 ||
		!strings.Contains(a.body, "Payment: being refunded → refunded") {
		t.Fatalf("the audit log in en: %.3000s", a.body)
	}
}
