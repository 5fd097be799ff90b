package booking_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/mail"
	"salon/booking/mail/mailtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/internal/courier"
	"salon/migrations"
)

// saleWorld is a salon that sells certificates and packages online
// through a fake YooKassa with receipts on, and e-mails through Mailpit.
type saleWorld struct {
	*payWorld
	mp     *mailtest.Server
	owner  context.Context
	booked int // bookings soldPackage made
}

func newSaleWorld(t *testing.T) *saleWorld { t.Helper(); return newSaleWorldOver(t, nil) }

// newSaleWorldOver is a saleWorld whose service calls the fake provider
// through wrap (nil: directly).
func newSaleWorldOver(t *testing.T, wrap func(psp.Provider) psp.Provider) *saleWorld {
	t.Helper()
	mp := mailtest.Start(t)
	sender, err := mail.New("smtp://salon:secret@"+mp.SMTP, "Studio <booking@studio.example>")
	if err != nil {
		t.Fatal(err)
	}
	fake := psptest.New(t)
	fake.RequireReceipts = true
	opts := []booking.Option{booking.WithReceipts(), booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		booking.WithCourier(booking.ChannelEmail, &courier.Email{Mail: sender, Base: "https://salon.test"}, 0)}
	if wrap != nil {
		opts = append(opts, booking.WithPayments(wrap(&psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret})))
	}
	w := newPayWorldOn(t, fake, booking.RefundAlways, opts...)
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleOwner}))
	if err := w.Svc.SetReceiptSettings(owner, w.salon.ID, booking.ReceiptSettings{VatCode: 1}); err != nil {
		t.Fatal(err)
	}
	return &saleWorld{payWorld: w, mp: mp, owner: owner}
}

func (w *saleWorld) offer(o booking.BalanceOffer) *booking.BalanceOffer {
	w.t.Helper()
	o.SalonID = w.salon.ID
	out, err := w.Svc.AddBalanceOffer(w.owner, o)
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *saleWorld) buy(offer int64, claim, email string) *booking.BalanceSale {
	w.t.Helper()
	x, err := w.Svc.BuyBalance(web(), booking.BalancePurchase{SalonID: w.salon.ID, OfferID: offer, Claim: claim,
		Buyer: booking.ClientInput{Name: "Вера", Phone: bookingtest.Phone(), Email: email}},
		func(ref string) string { return "https://salon.test/w/s/bought/" + ref })
	if err != nil {
		w.t.Fatal(err)
	}
	return x
}

// externalID is the provider's id of a sale's payment.
func (w *saleWorld) externalID(sale int64) string {
	w.t.Helper()
	var id string
	if err := w.Pool.QueryRow(context.Background(), `SELECT external_id FROM balance_sales WHERE id = $1`, sale).Scan(&id); err != nil {
		w.t.Fatal(err)
	}
	return id
}

const claim = "the-buyers-browser-made-this-claim-1"

// A certificate bought online: paid at the provider, then the webhook, the
// buyer's return and the sweep all at once from a barrier: one capture at
// the provider, one balance, one credit, one e-mail with the code, which
// then pays a booking; the provider's receipt is the advance of a
// certificate.
func TestACertificateBoughtOnlineIsCreditedOnce(t *testing.T) {
	w := newSaleWorld(t)
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат на 3000", Amount: 300000, Price: 300000,
		ValidDays: 90})
	x := w.buy(o.ID, claim, "vera@example.com")
	if x.Status != booking.PayRegistered || x.URL == "" || x.Ref == "" {
		t.Fatalf("a purchase is %s, url %q, ref %q", x.Status, x.URL, x.Ref)
	}
	if strings.Contains(x.URL, claim) {
		t.Fatal("the claim is in a URL")
	}
	ext := w.externalID(x.ID)
	if got := w.fake.Locale(ext); got != "ru_RU" {
		t.Errorf("the provider's page asked in %q, want ru_RU (the salon's language: the buyer's was not said)", got)
	}
	// Not paid yet: nothing credited, no code on the return page.
	back, err := w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || back.Status != booking.PayRegistered || back.Code != "" {
		t.Fatalf("before paying: %+v, %v", back, err)
	}
	if !w.fake.Pay(ext) {
		t.Fatal("the fake did not take the payment")
	}
	var codes atomic.Int32
	bookingtest.Race(9, func(i int) {
		var err error
		switch i % 3 {
		case 0:
			_, err = w.Svc.PaymentNotified(web(), w.yk.Name(), ext)
		case 1:
			var b *booking.BalanceSale
			if b, err = w.Svc.SaleReturn(web(), x.Ref, claim); err == nil && b.Code != "" {
				codes.Add(1)
			}
		default:
			_, err = w.Svc.SweepPayments(bookingtest.System())
		}
		if err != nil && !errors.Is(err, booking.ErrUnavailable) {
			t.Error(err)
		}
	})
	back, err = w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || back.Status != booking.PayCompleted || back.Code == "" || back.BalanceID == 0 {
		t.Fatalf("after paying: %+v, %v", back, err)
	}
	if n := w.count(`SELECT count(*) FROM balances WHERE salon_id = $1`, w.salon.ID); n != 1 {
		t.Fatalf("%d balances", n)
	}
	if n := w.count(`SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND type = 'credit' AND delta = 300000`, back.BalanceID); n != 1 {
		t.Fatalf("%d credits", n)
	}
	captured, _ := w.fake.Totals()
	if captured != 300000 || w.fake.Status(ext) != "succeeded" {
		t.Fatalf("the provider captured %d, its payment is %s", captured, w.fake.Status(ext))
	}
	t.Logf("capture calls %d (one key), codes shown to the claim %d", w.fake.Calls("POST /payments/{id}/capture"), codes.Load())
	// Another's claim, or none, sees no code.
	for _, c := range []string{"", "someone-elses-claim-of-enough-length"} {
		if b, err := w.Svc.SaleReturn(web(), x.Ref, c); err != nil || b.Code != "" {
			t.Fatalf("claim %q: %+v, %v", c, b, err)
		}
	}
	// The e-mail, once, with the code that the page showed.
	bookingtest.WaitFor(t, 10*time.Second, "the code's e-mail", func() bool { return w.mp.Count(t) >= 1 })
	msgs := w.mp.Messages(t)
	if len(msgs) != 1 || msgs[0].To[0].Address != "vera@example.com" || !strings.Contains(msgs[0].Text, back.Code) ||
		!strings.Contains(msgs[0].Subject, "сертификат") {
		t.Fatalf("e-mails: %d, %+v", len(msgs), msgs)
	}
	t.Logf("e-mail: %s\n%s", msgs[0].Subject, msgs[0].Text)
	// Nothing readable in the database holds the code.
	var leaks int
	if err := w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM balance_sales s WHERE s::text LIKE '%' || $1 || '%'`,
		back.Code).Scan(&leaks); err != nil || leaks != 0 {
		t.Fatalf("the code is readable in the sale's row (%d, %v)", leaks, err)
	}
	// The receipt the provider took: an advance, to the buyer's e-mail.
	var found bool
	for _, r := range w.fake.Receipts() {
		if r.PaymentID == ext || r.Kind == "payment" {
			items, _ := r.Body["items"].([]any)
			if len(items) == 1 && items[0].(map[string]any)["payment_mode"] == "advance" &&
				r.Body["customer"].(map[string]any)["email"] == "vera@example.com" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("receipts: %+v", w.fake.Receipts())
	}
	// The code pays a booking (the deposit, then what is left of 5000).
	b, err := w.Svc.Book(web(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "12:00"), Client: booking.ClientInput{Name: "Гость", Phone: bookingtest.Phone()},
		PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: back.Code}})
	if err != nil || b.PaidWith == nil || b.PaidWith.Remaining != 0 {
		t.Fatalf("booking with the code: %+v, %v", b, err)
	}
}

// A purchase declined at the provider credits nothing; one bought again
// with the same request key is the same sale; a refund of a package with
// visits left goes back through the provider, its share of the price.
func TestAPackageBoughtOnlineIsRefundedThroughTheProvider(t *testing.T) {
	w := newSaleWorld(t)
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "5 окрашиваний", ServiceIDs: []int64{w.svc.ID}, Visits: 5,
		Price: 2000000})
	// Declined.
	d := w.buy(o.ID, "", "decline@example.com")
	w.fake.Decline(w.externalID(d.ID))
	if x, err := w.Svc.CheckSale(bookingtest.System(), d.ID); err != nil || x.Status != booking.PayCanceled || x.BalanceID != 0 {
		t.Fatalf("declined: %+v, %v", x, err)
	}
	// The same request twice is one sale, one payment.
	in := booking.BalancePurchase{SalonID: w.salon.ID, OfferID: o.ID, Key: "k-1", Claim: claim,
		Buyer: booking.ClientInput{Name: "Ольга", Phone: bookingtest.Phone(), Email: "olga@example.com"}}
	x1, err := w.Svc.BuyBalance(web(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	x2, err := w.Svc.BuyBalance(web(), in, nil)
	if err != nil || x2.ID != x1.ID {
		t.Fatalf("the retry: %+v, %v", x2, err)
	}
	in.Claim = "another-claim-of-the-right-length-xx"
	if _, err := w.Svc.BuyBalance(web(), in, nil); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("the key with another claim: %v", err)
	}
	if n := w.fake.Calls("POST /payments"); n != 2 {
		t.Fatalf("%d payments created", n)
	}
	w.fake.Pay(w.externalID(x1.ID))
	x, err := w.Svc.CheckSale(bookingtest.System(), x1.ID)
	if err != nil || x.Status != booking.PayCompleted {
		t.Fatalf("paid: %+v, %v", x, err)
	}
	// One visit used by its client (staff pay at the desk), four left.
	staff := booking.As(context.Background(), w.admin())
	if row, err := w.Svc.BalanceOf(staff, w.salon.ID, x.BalanceID); err != nil || row.SalePrice != 2000000 || row.DeskPrice != 0 {
		t.Fatalf("the balance's prices: %+v, %v", row, err)
	}
	var phone string
	if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone FROM clients c JOIN balances b ON b.client_id = c.id WHERE b.id = $1`,
		x.BalanceID).Scan(&phone); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Book(staff, booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "10:00"), Client: booking.ClientInput{Name: "Ольга", Phone: phone},
		PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: x.BalanceID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, "moved away"); err != nil {
		t.Fatal(err)
	}
	bookingtest.WaitFor(t, 10*time.Second, "the provider's refund", func() bool {
		_, _ = w.Svc.SweepPayments(bookingtest.System())
		_, refunded := w.fake.Totals()
		return refunded > 0
	})
	_, refunded := w.fake.Totals()
	if refunded != 2000000*4/5 { // four visits of five left
		t.Fatalf("refunded %d", refunded)
	}
	sales, err := w.Svc.BalanceSales(staff, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("refunded %d of %d; sales %d", refunded, 2000000, len(sales))
}

func (w *saleWorld) admin() booking.Caller {
	return booking.ByStaff(booking.User{ID: 2, SalonID: w.salon.ID, Role: booking.RoleAdmin})
}

// A sale whose provider answers are lost (the create's, then the
// capture's) is finished by a retry of the same request and by the sweep:
// one payment at the provider, captured once, one balance.
func TestASaleSurvivesLostAnswers(t *testing.T) {
	w := newSaleWorld(t)
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат", Amount: 100000, Price: 100000})
	var lose atomic.Value
	lose.Store("POST /payments")
	w.fake.Fault = func(method, path string) psptest.Fault {
		if method+" "+path == lose.Load().(string) || path == lose.Load().(string) {
			return psptest.Lost
		}
		return psptest.None
	}
	in := booking.BalancePurchase{SalonID: w.salon.ID, OfferID: o.ID, Key: "lost-1", Claim: claim,
		Buyer: booking.ClientInput{Name: "Ира", Phone: bookingtest.Phone(), Email: "ira@example.com"}}
	// The provider's answer lost: the purchase is written, awaiting its
	// payment (no page to pay on yet), not refused.
	if x, err := w.Svc.BuyBalance(web(), in, nil); err != nil || x.Status != booking.PayUnknown || x.URL != "" || x.Ref == "" {
		t.Fatalf("a lost create: %+v, %v", x, err)
	}
	lose.Store("none")
	x, err := w.Svc.BuyBalance(web(), in, nil)
	if err != nil || x.Status != booking.PayRegistered || x.URL == "" {
		t.Fatalf("the retry: %+v, %v", x, err)
	}
	if n := w.fake.Payments(); n != 1 {
		t.Fatalf("%d payments at the provider", n)
	}
	// Another purchase under the same key is refused.
	other := in
	other.Buyer.Email = "someone@example.com"
	if _, err := w.Svc.BuyBalance(web(), other, nil); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("the key for another purchase: %v", err)
	}
	ext := w.externalID(x.ID)
	w.fake.Pay(ext)
	lose.Store("POST /payments/{id}/capture")
	if _, err := w.Svc.PaymentNotified(web(), w.yk.Name(), ext); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("a lost capture: %v", err)
	}
	if n := w.count(`SELECT count(*) FROM balances WHERE salon_id = $1`, w.salon.ID); n != 0 {
		t.Fatalf("credited before the capture was known: %d", n)
	}
	lose.Store("none")
	w.Clock.Advance(time.Minute)
	if n, err := w.Svc.SweepPayments(bookingtest.System()); err != nil || n < 1 {
		t.Fatalf("the sweep: %d, %v", n, err)
	}
	back, err := w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || back.Status != booking.PayCompleted || back.Code == "" {
		t.Fatalf("after the sweep: %+v, %v", back, err)
	}
	captured, _ := w.fake.Totals()
	if captured != 100000 || w.count(`SELECT count(*) FROM balances WHERE salon_id = $1`, w.salon.ID) != 1 {
		t.Fatalf("captured %d", captured)
	}
}

// cancelledRefunds is a provider whose refunds the provider cancels.
type cancelledRefunds struct{ psp.Provider }

func (cancelledRefunds) Refund(_ context.Context, _, _ string, amount int64, _ string, _ *psp.Receipt) (*psp.Refund, error) {
	return &psp.Refund{ID: "refund-1", Status: "canceled", Amount: amount}, nil
}

// A refund the provider cancels leaves the sale owing it (refunding, the
// reason kept), never back to completed as if nothing were owed.
func TestARefundTheProviderCancelsStaysOwed(t *testing.T) {
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	e := bookingtest.New(t, booking.WithPayments(cancelledRefunds{yk}), booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	salon := e.Salon(t, booking.Salon{})
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: salon.ID, Role: booking.RoleOwner}))
	o, err := e.Svc.AddBalanceOffer(owner, booking.BalanceOffer{SalonID: salon.ID, Kind: booking.BalanceCertificate, Title: "C", Amount: 50000, Price: 50000})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.Svc.BuyBalance(web(), booking.BalancePurchase{SalonID: salon.ID, OfferID: o.ID,
		Buyer: booking.ClientInput{Name: "Ира", Phone: bookingtest.Phone(), Email: "ira@example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ext string
	if err := e.Pool.QueryRow(context.Background(), `SELECT external_id FROM balance_sales WHERE id = $1`, x.ID).Scan(&ext); err != nil {
		t.Fatal(err)
	}
	fake.Pay(ext)
	if x, err = e.Svc.CheckSale(bookingtest.System(), x.ID); err != nil || x.Status != booking.PayCompleted {
		t.Fatalf("paid: %+v, %v", x, err)
	}
	if _, err := e.Svc.RefundBalance(owner, salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, _ = e.Svc.CheckSale(bookingtest.System(), x.ID)
	}
	got, err := e.Svc.SaleOfBalance(owner, salon.ID, x.BalanceID)
	if err != nil || got.Status != booking.PayRefunding || !strings.Contains(got.LastError, "cancelled the refund") {
		t.Fatalf("after a cancelled refund: %+v, %v", got, err)
	}
	if list, err := e.Svc.SalesNeedingAttention(owner, salon.ID); err != nil || len(list) != 1 || list[0].ID != x.ID {
		t.Fatalf("needing attention: %+v, %v", list, err)
	}
}

// soldPackage is a package of five visits sold online for 20 000 and
// paid, used visits of it booked at the desk: what is left is refundable
// twice over at the provider (a second refund would be taken).
func (w *saleWorld) soldPackage(used int) *booking.BalanceSale {
	w.t.Helper()
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "5 стрижек", ServiceIDs: []int64{w.svc.ID}, Visits: 5, Price: 2000000})
	x := w.buy(o.ID, "", "olga@example.com")
	w.fake.Pay(w.externalID(x.ID))
	x, err := w.Svc.CheckSale(bookingtest.System(), x.ID)
	if err != nil || x.Status != booking.PayCompleted {
		w.t.Fatalf("paid: %+v, %v", x, err)
	}
	var phone string
	if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone FROM clients c JOIN balances b ON b.client_id = c.id WHERE b.id = $1`,
		x.BalanceID).Scan(&phone); err != nil {
		w.t.Fatal(err)
	}
	for range used {
		w.booked++
		if _, err := w.Svc.Book(booking.As(context.Background(), w.admin()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID,
			MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, w.day, "09:00").Add(time.Duration(w.booked) * time.Hour),
			Client: booking.ClientInput{Name: "Ольга", Phone: phone}, PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: x.BalanceID}}); err != nil {
			w.t.Fatal(err)
		}
	}
	return x
}

// A sale's refund is made once at the provider however long the provider
// takes, though the provider forgets an idempotence key after a day (its
// fake here does, on the test's clock): a refund whose answer was lost
// is found on the payment, not asked again under the forgotten key; a
// pending one is followed by its id; one the provider cancelled is not
// asked again by itself, for days, until staff ask (a new key), and then
// the money goes back once. The provider's record is what is checked.
func TestASaleIsRefundedOnceAcrossTheProvidersKeyWindow(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	var lose atomic.Bool
	w.fake.Fault = func(method, path string) psptest.Fault {
		if lose.Load() && path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	refunded := func() int64 { _, r := w.fake.Totals(); return r }
	status := func(x *booking.BalanceSale) booking.PaymentStatus {
		t.Helper()
		got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	sweepAfter := func(d time.Duration) {
		t.Helper()
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}

	// (Sold and used before the clock moves: their visits are tomorrow.)
	lost, pending, cancelled := w.soldPackage(3), w.soldPackage(3), w.soldPackage(3)

	// The answer lost, then the provider's memory of the key.
	x := lost
	before := refunded()
	lose.Store(true)
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, "moved away"); err != nil {
		t.Fatal(err)
	}
	lose.Store(false)
	if got := refunded() - before; got != owed || status(x) != booking.PayRefunding {
		t.Fatalf("the lost refund: %d at the provider, the sale %s", got, status(x))
	}
	posts := w.fake.Calls("POST /refunds")
	sweepAfter(psp.KeyWindow + time.Hour)
	if got, n := refunded()-before, w.fake.Calls("POST /refunds")-posts; got != owed || n != 0 || status(x) != booking.PayRefunded {
		t.Fatalf("a day later: %d refunded at the provider (asked %d times more), want %d; the sale %s", got, n, owed, status(x))
	}

	// Pending at the provider for longer than a day.
	w.fake.RefundsPending = true
	x = pending
	before, posts = refunded(), w.fake.Calls("POST /refunds")
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	sweepAfter(time.Hour)
	sweepAfter(psp.KeyWindow)
	w.fake.SettleRefunds()
	w.fake.RefundsPending = false
	sweepAfter(time.Hour)
	if got, n := refunded()-before, w.fake.Calls("POST /refunds")-posts; got != owed || n != 1 || status(x) != booking.PayRefunded ||
		w.fake.Calls("GET /refunds/{id}") < 2 {
		t.Fatalf("pending for a day: %d refunded in %d refunds (%d reads), the sale %s", got, n, w.fake.Calls("GET /refunds/{id}"), status(x))
	}

	// Cancelled by the provider: owed, shown, not asked again by itself.
	w.fake.RefundsCanceled = true
	x = cancelled
	before, posts = refunded(), w.fake.Calls("POST /refunds")
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		sweepAfter(psp.KeyWindow / 2)
	}
	if n := w.fake.Calls("POST /refunds") - posts; n != 1 || refunded() != before || status(x) != booking.PayRefunding {
		t.Fatalf("cancelled: asked %d times in a day and a half, %d refunded, the sale %s", n, refunded()-before, status(x))
	}
	if list, err := w.Svc.SalesNeedingAttention(staff, w.salon.ID); err != nil || len(list) != 1 || list[0].ID != x.ID ||
		!strings.Contains(list[0].LastError, "cancelled the refund") {
		t.Fatalf("needing attention: %+v, %v", list, err)
	}
	w.fake.RefundsCanceled = false
	got, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID)
	if err != nil || got.Status != booking.PayRefunded || refunded()-before != owed || w.fake.Calls("POST /refunds")-posts != 2 {
		t.Fatalf("asked again: %+v, %v; %d refunded", got, err, refunded()-before)
	}
	if _, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("asked again once refunded: %v", err)
	}
	sweepAfter(psp.KeyWindow)
	if refunded()-before != owed {
		t.Fatalf("refunded %d after all, want %d", refunded()-before, owed)
	}
}

// A sale's refund that reached the provider and is pending there, every
// answer to it lost for longer than the provider remembers its key, is
// found among the payment's refunds (the payment's refunded amount does
// not show it: it counts only the refunds that succeeded) and followed by
// its id, not asked again under a new key: one refund at the provider,
// and the sale refunded when it settles.
func TestAPendingSaleRefundWhoseAnswersWereLostIsMadeOnce(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	sweepAfter := func(d time.Duration) {
		t.Helper()
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	status := func(x *booking.BalanceSale) booking.PaymentStatus {
		t.Helper()
		got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	x := w.soldPackage(3)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	sweepAfter(time.Hour)
	posts := w.fake.Calls("POST /refunds")
	sweepAfter(psp.KeyWindow)
	if n, more := w.fake.Refunds(), w.fake.Calls("POST /refunds")-posts; n != 1 || more != 0 || status(x) != booking.PayRefunding {
		t.Fatalf("a day later: %d refunds at the provider (asked %d times more), want 1; the sale %s", n, more, status(x))
	}
	w.fake.SettleRefunds()
	sweepAfter(time.Hour)
	if _, back := w.fake.Totals(); back != owed || w.fake.Refunds() != 1 || status(x) != booking.PayRefunded {
		t.Fatalf("settled: %d refunded in %d refunds, want %d in 1; the sale %s", back, w.fake.Refunds(), owed, status(x))
	}
}

// unlisted is a provider that lists no refunds (nor reads one by its id).
type unlisted struct{ psp.Provider }

// A sale's refund asked under a key the provider has nearly forgotten,
// never answered, of a provider that lists no refunds is left to a
// person (before staff, saying why), not asked under a new key: it may be
// pending there, and a new key would make a second one.
func TestASaleRefundTheProviderCannotListIsLeftToAPerson(t *testing.T) {
	w := newSaleWorldOver(t, func(p psp.Provider) psp.Provider { return unlisted{p} })
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	x := w.soldPackage(3)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	posts := w.fake.Calls("POST /refunds")
	for _, d := range []time.Duration{psp.KeyWindow, time.Hour} {
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID)
	if err != nil || got.Status != booking.PayRefunding || w.fake.Refunds() != 1 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("a day later: %+v, %v; %d refunds at the provider, asked %d times more", got, err, w.fake.Refunds(),
			w.fake.Calls("POST /refunds")-posts)
	}
	if list, err := w.Svc.SalesNeedingAttention(staff, w.salon.ID); err != nil || len(list) != 1 || list[0].ID != x.ID ||
		!strings.Contains(list[0].LastError, "lists no refunds") {
		t.Fatalf("needing attention: %+v, %v", list, err)
	}
}

// A sale's refund the checks left to a person (the provider lists no
// refunds, and never answered it) is asked again when staff say so,
// having found at the provider that it was not made: under a new key,
// made once.
func TestASaleRefundLeftToAPersonIsAskedAgainWhenStaffSay(t *testing.T) {
	w := newSaleWorldOver(t, func(p psp.Provider) psp.Provider { return unlisted{p} })
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	refuse := w.refuseRefundPosts()
	x := w.soldPackage(3)
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{psp.KeyWindow, time.Hour} {
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID)
	if err != nil || got.Status != booking.PayRefunding || !got.RefundToCheck || got.RefundCancelled || w.fake.Refunds() != 0 {
		t.Fatalf("a day later: %+v, %v; %d refunds at the provider", got, err, w.fake.Refunds())
	}
	refuse.Store(false)
	posts := w.fake.Calls("POST /refunds")
	got, err = w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID)
	if _, back := w.fake.Totals(); err != nil || got.Status != booking.PayRefunded || w.fake.Refunds() != 1 || back != owed ||
		w.fake.Calls("POST /refunds")-posts != 1 {
		t.Fatalf("asked again: %+v, %v; %d refunded in %d refunds (%d POSTs), want %d in 1", got, err, back, w.fake.Refunds(),
			w.fake.Calls("POST /refunds")-posts, owed)
	}
}

// A sale's refund the checks left to a person (the provider lists no
// refunds, and lost every answer to it) is recorded by staff once it
// succeeded there (pending, it is refused): the sale refunded, nothing
// asked of the provider again, then or in a day of checks after, off the
// attention list, the audit log naming who recorded it. Recorded again,
// or asked again, it is refused.
func TestASaleRefundLeftToAPersonIsRecordedWhenStaffFindItMade(t *testing.T) {
	w := newSaleWorldOver(t, func(p psp.Provider) psp.Provider { return unlisted{p} })
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	sweepAfter := func(d time.Duration) {
		t.Helper()
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	x := w.soldPackage(3)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	posts := w.fake.Calls("POST /refunds")
	sweepAfter(psp.KeyWindow)
	sweepAfter(time.Hour)
	if got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID); err != nil || !got.RefundToCheck {
		t.Fatalf("a day later: %+v, %v; want it left to a person", got, err)
	}
	if _, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "not succeeded there") {
		t.Fatalf("pending at the provider, recorded: %v, want a conflict", err)
	}
	w.fake.SettleRefunds()
	got, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID)
	if err != nil || got.Status != booking.PayRefunded || got.Refunded != owed || got.RefundToCheck || got.LastError != "" {
		t.Fatalf("recorded: %+v, %v", got, err)
	}
	if list, err := w.Svc.SalesNeedingAttention(staff, w.salon.ID); err != nil || len(list) != 0 {
		t.Fatalf("needing attention once recorded: %+v, %v", list, err)
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'refund_recorded' AND entity = 'balance' AND entity_id = $1
		AND actor = 'user #2' AND old->>'payment' = 'refunding' AND new->>'payment' = 'refunded'`, x.BalanceID); n != 1 {
		t.Fatalf("%d audit rows of the record, want 1", n)
	}
	if _, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("recorded again: %v, want a conflict", err)
	}
	if _, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("asked again once recorded: %v, want a conflict", err)
	}
	sweepAfter(psp.KeyWindow)
	if _, back := w.fake.Totals(); back != owed || w.fake.Refunds() != 1 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("a day later: the provider refunded %d in %d refunds (%d POSTs more), want %d in 1", back, w.fake.Refunds(),
			w.fake.Calls("POST /refunds")-posts, owed)
	}
}

// A sale's refund pending at the provider is the checks' to follow:
// staff recording it as made are refused, saying why, and the sale stays
// refunding; another salon's staff do not find it.
func TestASaleRefundTheChecksFollowIsNotRecordedByStaff(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	x := w.soldPackage(3)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "checks follow it") {
		t.Fatalf("pending at the provider, recorded: %v, want a conflict", err)
	}
	other := w.Salon(t, booking.Salon{})
	foreign := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 3, SalonID: other.ID, Role: booking.RoleAdmin}))
	if _, err := w.Svc.MarkSaleRefunded(foreign, other.ID, x.BalanceID); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("another salon's staff: %v, want not found", err)
	}
	if got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID); err != nil || got.Status != booking.PayRefunding {
		t.Fatalf("refused, yet: %+v, %v", got, err)
	}
	// One the provider cancelled just now: refused while a POST of it may
	// land; an hour later, refused while the provider's payment shows no
	// refund, and recorded once staff made it by hand there, nothing asked
	// of the provider by us.
	w.fake.RefundsPending, w.fake.RefundsCanceled = false, true
	y := w.soldPackage(3)
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, y.BalanceID, ""); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	if got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, y.BalanceID); err != nil || !got.RefundCancelled {
		t.Fatalf("cancelled: %+v, %v", got, err)
	}
	posts := w.fake.Calls("POST /refunds")
	if _, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, y.BalanceID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "a moment ago") {
		t.Fatalf("cancelled a moment after its POST, recorded: %v, want a conflict", err)
	}
	w.Clock.Advance(time.Hour)
	if _, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, y.BalanceID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "not succeeded there") {
		t.Fatalf("cancelled and not made, recorded: %v, want a conflict", err)
	}
	var ext string
	var owed int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT external_id, refund_amount FROM balance_sales WHERE balance_id = $1`,
		y.BalanceID).Scan(&ext, &owed); err != nil {
		t.Fatal(err)
	}
	w.byHand(ext, owed, y.Currency)
	if got, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, y.BalanceID); err != nil || got.Status != booking.PayRefunded {
		t.Fatalf("cancelled, then made by hand, recorded: %+v, %v", got, err)
	}
	if n := w.fake.Calls("POST /refunds") - posts; n != 1 {
		t.Fatalf("%d refunds asked of the provider, want the one by hand", n)
	}
}

// A check that read a sale refund's key, about to POST under it, is
// refused its POST once staff asking again renewed the key meanwhile; a
// POST under the new key is claimed.
func TestASaleRefundPostIsNotClaimedUnderAKeyAnotherPathRenewed(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	ctx := context.Background()
	staff := booking.As(ctx, w.admin())
	x := w.soldPackage(3)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	key := func() string {
		t.Helper()
		var k string
		if err := w.Pool.QueryRow(ctx, `SELECT refund_key FROM balance_sales WHERE id = $1`, x.ID).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	old := key()
	w.Clock.Advance(time.Minute)
	if _, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	renewed := key()
	if renewed == old {
		t.Fatalf("asked again: the key stayed %s", old)
	}
	posts := w.fake.Calls("POST /refunds")
	if err := booking.ClaimRefundPost(ctx, w.Svc, "balance_sales", x.ID, old); !errors.Is(err, booking.ErrRefundKeyMoved) {
		t.Fatalf("a POST under the renewed-away key %s: %v, want refused", old, err)
	}
	if err := booking.ClaimRefundPost(ctx, w.Svc, "balance_sales", x.ID, renewed); err != nil {
		t.Fatalf("a POST under the refund's key %s: %v", renewed, err)
	}
	if n := w.fake.Calls("POST /refunds") - posts; n != 0 {
		t.Fatalf("claims made %d POSTs", n)
	}
}

// A refund's key is not renewed while a POST under it may be on its way:
// a check POSTs just before the provider's memory of the key ends (its
// POST recorded, then slow to land), and a check of another path right
// after finds nothing among the payment's refunds yet, and does not renew
// the key (nor POST) until the longest a POST takes has passed; by then
// the first has landed, is found, and the sale is refunded: one refund at
// the provider.
func TestASaleRefundKeyIsNotRenewedUnderAPostOnItsWay(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	x := w.soldPackage(3)
	var mode atomic.Int32 // POST /refunds: 0 refused unmade (500), 1 the next held then its answer lost, 2 answers lost
	reached, hold := make(chan struct{}), make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(hold) }) }) // (before the fake stops: it waits for the held call)
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path != "POST /refunds" {
			return psptest.None
		}
		switch {
		case mode.Load() == 0:
			return psptest.Error
		case mode.CompareAndSwap(1, 2):
			close(reached)
			<-hold
		}
		return psptest.Lost
	}
	wait := func(c <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not within 10 s", what)
		}
	}
	key := func() string {
		t.Helper()
		var k string
		if err := w.Pool.QueryRow(context.Background(), `SELECT refund_key FROM balance_sales WHERE id = $1`, x.ID).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}

	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	if w.fake.Refunds() != 0 {
		t.Fatalf("%d refunds made, want none yet", w.fake.Refunds())
	}
	first := key()
	w.Clock.Advance(psp.KeyWindow - time.Hour - 10*time.Second)
	mode.Store(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Svc.CheckSale(bookingtest.System(), x.ID) // (its answer is lost)
	}()
	wait(reached, "the POST just before the window ends")
	w.Clock.Advance(11 * time.Second)
	posts := w.fake.Calls("POST /refunds")
	if _, err := w.Svc.CheckSale(bookingtest.System(), x.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	if k, n := key(), w.fake.Calls("POST /refunds")-posts; k != first || n != 0 {
		t.Fatalf("right after the window, a POST on its way: the key %q (was %q), asked %d times more", k, first, n)
	}
	release.Do(func() { close(hold) })
	wait(done, "the first POST")
	w.Clock.Advance(time.Minute)
	got, err := w.Svc.CheckSale(bookingtest.System(), x.ID)
	if _, back := w.fake.Totals(); err != nil || got.Status != booking.PayRefunded || w.fake.Refunds() != 1 || back != owed || key() != first {
		t.Fatalf("after the longest a POST takes: %+v, %v; %d refunded in %d refunds, want %d in 1", got, err, back, w.fake.Refunds(), owed)
	}
}

// A sale's refund that never reached the provider (every POST refused
// before it was made) is asked under a new key once the provider has
// nearly forgotten the old one and the last POST under it is long past:
// nothing of it among the payment's refunds, it is made once.
func TestASaleRefundNeverMadeIsAskedUnderANewKey(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	refuse := w.refuseRefundPosts()
	x := w.soldPackage(3)
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{time.Hour, psp.KeyWindow / 2} {
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	refuse.Store(false)
	w.Clock.Advance(psp.KeyWindow / 2)
	got, err := w.Svc.CheckSale(bookingtest.System(), x.ID)
	if _, back := w.fake.Totals(); err != nil || got.Status != booking.PayRefunded || w.fake.Refunds() != 1 || back != owed {
		t.Fatalf("a day later: %+v, %v; %d refunded in %d refunds, want %d in 1", got, err, back, w.fake.Refunds(), owed)
	}
	var k string
	if err := w.Pool.QueryRow(context.Background(), `SELECT refund_key FROM balance_sales WHERE id = $1`, x.ID).Scan(&k); err != nil ||
		k == "sale-refund-"+strconv.FormatInt(x.ID, 10) {
		t.Fatalf("the key %q (%v), want a new one", k, err)
	}
}

// Staff asking again for a sale's refund the provider has made after all
// (pending when asked, settled since, before a check read it) have the
// sale recorded refunded, as a check would: nothing asked again.
func TestRetryingASaleRefundTheProviderMadeRecordsIt(t *testing.T) {
	w := newSaleWorld(t)
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	x := w.soldPackage(3)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
		t.Fatal(err)
	}
	w.fake.SettleRefunds()
	posts := w.fake.Calls("POST /refunds")
	got, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID)
	if _, back := w.fake.Totals(); err != nil || got.Status != booking.PayRefunded || got.Refunded != owed || back != owed ||
		w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("asked again, made: %+v, %v; %d refunded, asked %d times more", got, err, back, w.fake.Calls("POST /refunds")-posts)
	}
}

// Staff asking again for a sale's refund through a provider that reads no
// refund by its id are told the provider cannot say (ErrUnavailable): the
// refund's state is not learnt by asking for it again.
func TestRetryingASaleRefundTheProviderCannotReadAsksNothing(t *testing.T) {
	w := newSaleWorldOver(t, func(p psp.Provider) psp.Provider { return unlisted{p} })
	staff := booking.As(context.Background(), w.admin())
	x := w.soldPackage(3)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	w.fake.RefundsCanceled = false
	posts := w.fake.Calls("POST /refunds")
	if _, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID); !errors.Is(err, booking.ErrUnavailable) ||
		w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("asked again: %v, want unavailable; asked %d times more", err, w.fake.Calls("POST /refunds")-posts)
	}
	if _, back := w.fake.Totals(); back != 0 {
		t.Fatalf("%d refunded", back)
	}
}

// Migration 00030 takes when a sale's refund was asked from its balance's
// refund entry, where 00029 took the sale's updated_at (later: every check
// moves it); a sale not refunding is left as it is.
func TestMigration30TakesASaleRefundsAskFromItsEntry(t *testing.T) {
	w := newSaleWorld(t)
	staff := booking.As(context.Background(), w.admin())
	ctx := context.Background()
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path == "POST /refunds" {
			return psptest.Error // (never made: the sale stays refunding)
		}
		return psptest.None
	}
	refunding, done := w.soldPackage(3), w.soldPackage(3)
	for _, x := range []*booking.BalanceSale{refunding, done} {
		if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
			t.Fatal(err)
		}
	}
	db := stdlib.OpenDBFromPool(w.Pool)
	defer db.Close() // (not the pool)
	p, err := migrations.Provider(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 29); err != nil {
		t.Fatal(err)
	}
	// As 00029 left them: asked when the sale last changed, days after.
	if _, err := w.Pool.Exec(ctx, `UPDATE balance_sales s SET refund_asked_at = e.created_at + interval '5 days',
		status = CASE WHEN s.id = $1 THEN 'refunding' ELSE 'refunded' END
		FROM balance_entries e WHERE e.balance_id = s.balance_id AND e.type = 'refund'`, refunding.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 30); err != nil {
		t.Fatal(err)
	}
	rows, err := w.Pool.Query(ctx, `SELECT s.id, s.refund_asked_at = e.created_at FROM balance_sales s
		JOIN balance_entries e ON e.balance_id = s.balance_id AND e.type = 'refund' ORDER BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]bool{}
	for rows.Next() {
		var id int64
		var entry bool
		if err := rows.Scan(&id, &entry); err != nil {
			t.Fatal(err)
		}
		got[id] = entry
	}
	if err := rows.Err(); err != nil || len(got) != 2 || !got[refunding.ID] || got[done.ID] {
		t.Fatalf("asked at the refund entry's time: %v (%v); want the refunding sale %d only", got, err, refunding.ID)
	}
}

// refuseRefundPosts makes the fake provider refuse every refund's POST
// before it makes it, until the returned switch is turned off.
func (w *saleWorld) refuseRefundPosts() *atomic.Bool {
	var refuse atomic.Bool
	refuse.Store(true)
	w.fake.Fault = func(_, path string) psptest.Fault {
		if refuse.Load() && path == "POST /refunds" {
			return psptest.Error // (refused before it was made)
		}
		return psptest.None
	}
	return &refuse
}

// A certificate sold online is refunded while a booking holds part of it:
// what was left goes back, and what the booking held, given back to the
// certificate when the booking is cancelled, is refunded in turn, a
// refund of its own at the provider (under a key of its own): the
// provider pays back the whole price, in two refunds, and the sale says
// so. A refund asked while another is on its way is refused, nothing
// written. The buyer's return page says how much came back and, to the
// buyer's claim, what is left and the code that spends it.
func TestASaleIsRefundedInParts(t *testing.T) {
	w := newSaleWorld(t)
	_ = runJobs(t, w.Pool, w.Svc) // (the refunds' e-mails)
	staff := booking.As(context.Background(), w.admin())
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат на 8000", Amount: 800000, Price: 800000})
	x := w.buy(o.ID, claim, "vera@example.com")
	w.fake.Pay(w.externalID(x.ID))
	if _, err := w.Svc.CheckSale(bookingtest.System(), x.ID); err != nil {
		t.Fatal(err)
	}
	back, err := w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || back.Code == "" {
		t.Fatalf("paid: %+v, %v", back, err)
	}
	// A colour of 5000 booked with it: 3000 left.
	b, err := w.Svc.Book(web(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "12:00"), Client: booking.ClientInput{Name: "Гость", Phone: bookingtest.Phone()},
		PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: back.Code}})
	if err != nil || b.PaidWith == nil || b.PaidWith.Remaining != 300000 {
		t.Fatalf("booked: %+v, %v", b, err)
	}
	settled := func(what string, want int64) {
		t.Helper()
		w.fake.SettleRefunds()
		bookingtest.WaitFor(t, 10*time.Second, what, func() bool {
			w.Clock.Advance(10 * time.Minute) // (the sweep's next look at it)
			_, _ = w.Svc.SweepPayments(bookingtest.System())
			x, err := w.Svc.SaleOfBalance(staff, w.salon.ID, back.BalanceID)
			return err == nil && x.Status == booking.PayRefunded && int64(x.Refunded) == want
		})
		if _, refunded := w.fake.Totals(); refunded != want {
			t.Fatalf("%s: the provider refunded %d, want %d", what, refunded, want)
		}
	}
	// What is left, 3000, goes back (the provider's refund pending a
	// while), as the quote says, the booking's 5000 held. The buyer's
	// page says how much; no code: nothing is left.
	if q, err := w.Svc.BalanceRefundQuote(staff, w.salon.ID, back.BalanceID); err != nil || !q.Online || q.Left != 300000 || q.Money != 300000 ||
		q.Held != 500000 || len(q.HeldBy) != 1 || q.HeldBy[0] != b.ID {
		t.Fatalf("the quote with a booking holding 5000: %+v, %v", q, err)
	}
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, back.BalanceID, "a gift not wanted"); err != nil {
		t.Fatal(err)
	}
	r, err := w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || r.Status != booking.PayRefunding || r.Refunding != 300000 || r.Code != "" || r.Left != 0 {
		t.Fatalf("the return page while the refund is on its way (the booking holds the rest): %+v, %v", r, err)
	}
	// The booking cancelled: its 5000 come back to the certificate. Asked
	// to refund them while the first refund is on its way: refused,
	// nothing written.
	if _, err := w.Svc.Cancel(staff, booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID, Reason: "ill"}); err != nil {
		t.Fatal(err)
	}
	entries := w.count(`SELECT count(*) FROM balance_entries WHERE balance_id = $1`, back.BalanceID)
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, back.BalanceID, "the rest"); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("a refund while one is on its way: %v", err)
	}
	if n := w.count(`SELECT count(*) FROM balance_entries WHERE balance_id = $1`, back.BalanceID); n != entries {
		t.Fatalf("%d entries after the refused refund, %d before", n, entries)
	}
	if q, err := w.Svc.BalanceRefundQuote(staff, w.salon.ID, back.BalanceID); err != nil || !q.Waiting || q.Money != 0 || q.Left != 500000 {
		t.Fatalf("the quote while a refund is on its way: %+v, %v", q, err)
	}
	settled("the first refund", 300000)
	// The buyer's page: 3000 of 8000 back, and, to the claim, the 5000 on
	// it with the code that spends them.
	r, err = w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || r.Status != booking.PayRefunded || r.Refunded != 300000 || r.Code != back.Code || r.Left != 500000 {
		t.Fatalf("the return page with 5000 back on it: %+v, %v", r, err)
	}
	if r, err := w.Svc.SaleReturn(web(), x.Ref, ""); err != nil || r.Code != "" || r.Left != 0 {
		t.Fatalf("without the claim: %+v, %v", r, err)
	}
	// Refunded in turn: a second refund at the provider, the whole price
	// back in all.
	if q, err := w.Svc.BalanceRefundQuote(staff, w.salon.ID, back.BalanceID); err != nil || q.Left != 500000 || q.Money != 500000 || q.Held != 0 {
		t.Fatalf("the quote of the rest: %+v, %v", q, err)
	}
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, back.BalanceID, "the rest"); err != nil {
		t.Fatal(err)
	}
	if n := w.count(`SELECT count(*) FROM balance_entries WHERE balance_id = $1`, back.BalanceID); n != entries+1 {
		t.Fatalf("%d entries, want %d (the second refund's)", n, entries+1)
	}
	settled("the second refund", 800000)
	if n := w.fake.Refunds(); n != 2 {
		t.Fatalf("%d refunds at the provider", n)
	}
	// The buyer was told of each refund, once, by e-mail (after the code's).
	bookingtest.WaitFor(t, 10*time.Second, "the refunds' e-mails", func() bool { return w.mp.Count(t) >= 3 })
	var told []string
	for _, m := range w.mp.Messages(t) {
		if strings.HasPrefix(m.Subject, "Возврат: ") {
			told = append(told, m.Text)
		}
	}
	slices.SortFunc(told, func(a, b string) int {
		return strings.Index(a, "Всего возвращено: 8") - strings.Index(b, "Всего возвращено: 8")
	})
	// The first: 3000 back, 3000 of 8000 in all, and the 5000 the booking
	// held, given back by its cancellation before the refund was made, on
	// it. The second: 8000 of 8000, nothing left or held.
	if len(told) != 2 || !strings.Contains(told[0], "3\u00a0000\u00a0₽ возвращено на карту") ||
		!strings.Contains(told[0], "Всего возвращено: 3\u00a0000\u00a0₽ из 8\u00a0000\u00a0₽") || !strings.Contains(told[0], "Осталось на нём: 5\u00a0000\u00a0₽") ||
		!strings.Contains(told[1], "5\u00a0000\u00a0₽ возвращено на карту") || !strings.Contains(told[1], "Всего возвращено: 8\u00a0000\u00a0₽ из 8\u00a0000\u00a0₽") ||
		strings.Contains(told[1], "Занято записями") {
		t.Fatalf("the refunds' e-mails: %q", told)
	}
	t.Logf("the first refund's e-mail:\n%s", told[0])
	w.Clock.Advance(10 * time.Minute)
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if n := w.mp.Count(t); n != 3 {
		t.Fatalf("%d e-mails after another sweep, want 3 (the code's, two refunds')", n)
	}
	var keys []string
	if err := w.Pool.QueryRow(context.Background(), `SELECT ARRAY[refund_key, refunds::text] FROM balance_sales WHERE id = $1`, x.ID).
		Scan(&keys); err != nil || keys[0] == "sale-refund-"+strconv.FormatInt(x.ID, 10) || keys[1] != "2" {
		t.Fatalf("the second refund's key and the sale's count: %v, %v", keys, err)
	}
	r, err = w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || r.Refunded != 800000 || r.Code != "" {
		t.Fatalf("the return page when all came back: %+v, %v", r, err)
	}
	var sum, left int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT (SELECT sum(delta) FROM balance_entries WHERE balance_id = $1), remaining
		FROM balances WHERE id = $1`, back.BalanceID).Scan(&sum, &left); err != nil || sum != 0 || left != 0 {
		t.Fatalf("the ledger sums to %d, the balance has %d (%v)", sum, left, err)
	}
}

// A package refunded in parts pays back the price exactly: each part is
// the share of every visit refunded so far less what the parts before it
// paid (three visits for 10 000: 6 666.66, then 3 333.34).
func TestAPackageRefundedInPartsPaysBackItsPrice(t *testing.T) {
	w := newSaleWorld(t)
	staff := booking.As(context.Background(), w.admin())
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "3 окрашивания", ServiceIDs: []int64{w.svc.ID}, Visits: 3, Price: 1000000})
	x := w.buy(o.ID, "", "olga@example.com")
	w.fake.Pay(w.externalID(x.ID))
	x, err := w.Svc.CheckSale(bookingtest.System(), x.ID)
	if err != nil || x.Status != booking.PayCompleted {
		t.Fatalf("paid: %+v, %v", x, err)
	}
	var phone string
	if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone FROM clients c JOIN balances b ON b.client_id = c.id WHERE b.id = $1`,
		x.BalanceID).Scan(&phone); err != nil {
		t.Fatal(err)
	}
	// Its e-mail says whose it is: the phone its visits are booked with.
	bookingtest.WaitFor(t, 10*time.Second, "the code's e-mail", func() bool { return w.mp.Count(t) >= 1 })
	if m := w.mp.Messages(t)[0]; !strings.Contains(m.Text, "Для телефона") || !strings.Contains(m.Text, booking.DisplayPhone(phone)) ||
		!strings.Contains(m.Text, "записывайтесь с этим номером") {
		t.Fatalf("the package's e-mail does not name its phone %s:\n%s", booking.DisplayPhone(phone), m.Text)
	}
	b, err := w.Svc.Book(staff, booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "10:00"), Client: booking.ClientInput{Name: "Ольга", Phone: phone},
		PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: x.BalanceID}})
	if err != nil {
		t.Fatal(err)
	}
	refund := func(want int64) {
		t.Helper()
		if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil {
			t.Fatal(err)
		}
		bookingtest.WaitFor(t, 10*time.Second, "the refund", func() bool {
			w.fake.SettleRefunds()
			_, _ = w.Svc.SweepPayments(bookingtest.System())
			s, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID)
			return err == nil && s.Status == booking.PayRefunded && int64(s.Refunded) == want
		})
		if _, refunded := w.fake.Totals(); refunded != want {
			t.Fatalf("the provider refunded %d, want %d", refunded, want)
		}
	}
	refund(666666)
	// The buyer hears of it: what came back of the price, and the visit
	// the booking still holds.
	_ = runJobs(t, w.Pool, w.Svc)
	bookingtest.WaitFor(t, 10*time.Second, "the refund's e-mail", func() bool { return w.mp.Count(t) == 2 })
	var told string
	for _, m := range w.mp.Messages(t) {
		if strings.HasPrefix(m.Subject, "Возврат: ") {
			told = m.Text
		}
	}
	if !strings.Contains(told, "Всего возвращено: 6\u00a0666,66\u00a0₽ из 10\u00a0000\u00a0₽") ||
		!strings.Contains(told, "Занято записями: 1") || !strings.Contains(told, "если запись отменят") {
		t.Fatalf("the refund's e-mail with a visit held:\n%s", told)
	}
	if _, err := w.Svc.Cancel(staff, booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	refund(1000000)
}

// flakyMail is an e-mail courier whose sale e-mails fail while fails is
// above 0, as a mail server down for a while, and whose e-mails to
// refused are refused, as a mailbox that does not exist.
type flakyMail struct {
	*courier.Email
	refused string
	fails   atomic.Int32 // how many still fail
	tried   atomic.Int32
}

func (f *flakyMail) DeliverSale(ctx context.Context, m *booking.SaleMail) (booking.Sent, error) {
	f.tried.Add(1)
	switch {
	case m.To == f.refused:
		return booking.Sent{}, fmt.Errorf("%w: 550 5.1.1 <%s>: Recipient address rejected", booking.ErrDeliveryRefused, m.To)
	case f.fails.Add(-1) >= 0:
		return booking.Sent{}, fmt.Errorf("421 4.3.2 <%s>: service not available", m.To)
	}
	return f.Email.DeliverSale(ctx, m)
}

// A refund's e-mail to the buyer is owed from the moment the refund is
// recorded, not sent in passing by whoever recorded it: recorded with no
// worker running (its recorder gone at once), it waits; a replica with no
// mailer leaves it; another replica's workers send it, again after the
// mail server failed it, and once. One the mail server refuses is not
// tried again. What the server said is kept without the buyer's address.
func TestARefundsEMailIsSentByAnyReplicaUntilItGoes(t *testing.T) {
	w := newSaleWorld(t)
	staff := booking.As(context.Background(), w.admin())
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат на 2000", Amount: 200000, Price: 200000})
	refund := func(email string) *booking.BalanceSale {
		t.Helper()
		x := w.buy(o.ID, claim, email)
		w.fake.Pay(w.externalID(x.ID))
		if _, err := w.Svc.CheckSale(bookingtest.System(), x.ID); err != nil {
			t.Fatal(err)
		}
		sale, err := w.Svc.SaleReturn(web(), x.Ref, claim)
		if err != nil || sale.BalanceID == 0 {
			t.Fatalf("paid: %+v, %v", sale, err)
		}
		if _, err := w.Svc.RefundBalance(staff, w.salon.ID, sale.BalanceID, "not wanted"); err != nil {
			t.Fatal(err)
		}
		bookingtest.WaitFor(t, 10*time.Second, "the refund recorded", func() bool {
			w.Clock.Advance(10 * time.Minute)
			_, _ = w.Svc.SweepPayments(bookingtest.System())
			s, err := w.Svc.SaleOfBalance(staff, w.salon.ID, sale.BalanceID)
			return err == nil && s.Status == booking.PayRefunded
		})
		return x
	}
	vera, gone, stale := refund("vera@example.com"), refund("no-such-box@example.com"), refund("stale@example.com")
	bookingtest.WaitFor(t, 10*time.Second, "the codes' e-mails", func() bool { return w.mp.Count(t) == 3 })
	// No worker ran: the e-mails are owed, not sent, and not lost.
	if n := w.mp.Count(t); n != 3 {
		t.Fatalf("%d e-mails before any worker ran, want the codes' alone", n)
	}
	owed := func(x *booking.BalanceSale, state string) int {
		return w.count(`SELECT count(*) FROM river_job WHERE kind = 'sale_refund_mail' AND (args->>'sale_id')::bigint = $1
			AND (args->>'salon_id')::bigint = $3
			AND (args->>'amount')::numeric = 2000 AND (args->>'left')::bigint = 0 AND state::text = $2`, x.ID, state, w.salon.ID)
	}
	if owed(vera, "available") != 1 || owed(gone, "available") != 1 || owed(stale, "available") != 1 {
		t.Fatalf("refund e-mails owed: %d to vera, %d to the box that is not, %d to stale; want one each", owed(vera, "available"),
			owed(gone, "available"), owed(stale, "available"))
	}
	// A replica with no mailer takes them and leaves them for another, for
	// a day: one owed longer (no replica sends e-mail) is given up.
	if _, err := w.Pool.Exec(context.Background(), `UPDATE river_job SET created_at = now() - interval '25 hours'
		WHERE kind = 'sale_refund_mail' AND (args->>'sale_id')::bigint = $1`, stale.ID); err != nil {
		t.Fatal(err)
	}
	quiet := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	stop := runJobs(t, w.Pool, quiet)
	bookingtest.WaitFor(t, 10*time.Second, "the e-mails left for later", func() bool {
		return owed(vera, "scheduled") == 1 && owed(gone, "scheduled") == 1 && owed(stale, "cancelled") == 1
	})
	stop()
	if _, err := w.Pool.Exec(context.Background(), `UPDATE river_job SET scheduled_at = now() WHERE kind = 'sale_refund_mail'`); err != nil {
		t.Fatal(err)
	}
	// Another replica, whose mail server fails the first try.
	sender, err := mail.New("smtp://salon:secret@"+w.mp.SMTP, "Studio <booking@studio.example>")
	if err != nil {
		t.Fatal(err)
	}
	flaky := &flakyMail{Email: &courier.Email{Mail: sender, Base: "https://salon.test"}, refused: "no-such-box@example.com"}
	flaky.fails.Store(1)
	other := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		booking.WithCourier(booking.ChannelEmail, flaky, 0))
	_ = runJobs(t, w.Pool, other)
	bookingtest.WaitFor(t, 30*time.Second, "the refund's e-mail", func() bool { return w.mp.Count(t) == 4 })
	bookingtest.WaitFor(t, 10*time.Second, "the jobs ended", func() bool {
		return owed(vera, "completed") == 1 && owed(gone, "cancelled") == 1
	})
	told := 0
	for _, m := range w.mp.Messages(t) {
		if strings.HasPrefix(m.Subject, "Возврат: ") {
			if !strings.Contains(m.Text, "2\u00a0000") || !strings.Contains(m.Text, "возвращено на карту") {
				t.Fatalf("the refund's e-mail: %+v", m)
			}
			told++
		}
	}
	// vera's: failed once, then sent; the other: refused once, not again.
	if told != 1 || flaky.tried.Load() != 3 || w.mp.Count(t) != 4 {
		t.Fatalf("%d refund e-mails in the mailbox (%d in all) after %d tries, want 1 (4 in all) after 3", told, w.mp.Count(t), flaky.tried.Load())
	}
	if n := w.count(`SELECT count(*) FROM river_job WHERE kind = 'sale_refund_mail' AND errors::text LIKE '%@example.com%'`); n != 0 {
		t.Fatalf("%d jobs keep the buyer's address in their errors", n)
	}
	if n := w.count(`SELECT count(*) FROM river_job WHERE kind = 'sale_refund_mail' AND errors::text LIKE '%Recipient address rejected%'`); n != 1 {
		t.Fatalf("%d jobs say the mail server refused it", n)
	}
}

// TestACodesFailedEMailKeepsNoAddress: a code's e-mail the mail server
// refuses is recorded as not sent, with the server's words but without
// the buyer's address.
func TestACodesFailedEMailKeepsNoAddress(t *testing.T) {
	w := newSaleWorld(t)
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат", Amount: 100000, Price: 100000})
	x := w.buy(o.ID, claim, "no-such-box@example.com")
	w.fake.Pay(w.externalID(x.ID))
	sender, err := mail.New("smtp://salon:secret@"+w.mp.SMTP, "Studio <booking@studio.example>")
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	refusing := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))),
		booking.WithPayments(&psp.YooKassa{BaseURL: w.fake.URL, ShopID: w.fake.ShopID, Secret: w.fake.Secret}), booking.WithReceipts(),
		booking.WithCourier(booking.ChannelEmail, &flakyMail{Email: &courier.Email{Mail: sender, Base: "https://salon.test"},
			refused: "no-such-box@example.com"}, 0))
	if _, err := refusing.CheckSale(bookingtest.System(), x.ID); err != nil {
		t.Fatal(err)
	}
	var why string
	var mailed bool
	if err := w.Pool.QueryRow(context.Background(), `SELECT mail_error, mailed_at IS NOT NULL FROM balance_sales WHERE id = $1`, x.ID).
		Scan(&why, &mailed); err != nil {
		t.Fatal(err)
	}
	if mailed || !strings.Contains(why, "Recipient address rejected") || strings.Contains(why, "@example.com") {
		t.Fatalf("recorded: mailed %v, %q", mailed, why)
	}
	if strings.Contains(logged.String(), "no-such-box") || !strings.Contains(logged.String(), "did not go") {
		t.Fatalf("logged: %s", logged.String())
	}
}

// TestAPackagesReturnPageNamesItsPhone: the buyer's return page names the
// phone a package bought online is for, to the buyer's claim only; once
// that client's record is erased, the page still opens, naming none.
func TestAPackagesReturnPageNamesItsPhone(t *testing.T) {
	w := newSaleWorld(t)
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "3 окрашивания", ServiceIDs: []int64{w.svc.ID}, Visits: 3, Price: 1000000})
	x := w.buy(o.ID, claim, "olga@example.com")
	w.fake.Pay(w.externalID(x.ID))
	if _, err := w.Svc.CheckSale(bookingtest.System(), x.ID); err != nil {
		t.Fatal(err)
	}
	var phone string
	var client int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone, c.id FROM clients c JOIN balances b ON b.client_id = c.id
		JOIN balance_sales s ON s.balance_id = b.id WHERE s.id = $1`, x.ID).Scan(&phone, &client); err != nil {
		t.Fatal(err)
	}
	if back, err := w.Svc.SaleReturn(web(), x.Ref, claim); err != nil || back.Phone != phone || back.Code == "" {
		t.Fatalf("with the claim: %+v, %v; want the phone %s", back, err, phone)
	}
	if back, err := w.Svc.SaleReturn(web(), x.Ref, ""); err != nil || back.Phone != "" || back.Code != "" {
		t.Fatalf("without the claim: %+v, %v", back, err)
	}
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleOwner}))
	if _, err := w.Svc.EraseClient(owner, w.salon.ID, "", client); err != nil {
		t.Fatal(err)
	}
	if back, err := w.Svc.SaleReturn(web(), x.Ref, claim); err != nil || back.Phone != "" {
		t.Fatalf("after the client's record was erased: %+v, %v", back, err)
	}
}
