package booking_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp/psptest"
	"salon/migrations"
)

// Settlement receipts of balances sold online: what the fake YooKassa
// took is the evidence (its receipts' amounts, modes, VAT codes and
// settlements), not our rows.

// receiptLine is a receipt's one line as the provider took it.
type receiptLine struct {
	amount      int64
	mode, descr string
	subject     string
	vat         float64
	settled     int64 // what its settlements add up to
}

func lineOf(t *testing.T, r psptest.Receipt) receiptLine {
	t.Helper()
	items, _ := r.Body["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("%s receipt of %s: %d lines, want 1: %v", r.Kind, r.PaymentID, len(items), r.Body)
	}
	it, _ := items[0].(map[string]any)
	money := func(a any) int64 {
		m, _ := a.(map[string]any)
		v, _ := m["value"].(string)
		x, err := booking.ParseMoney(v)
		if err != nil {
			t.Fatalf("%s receipt: amount %v: %v", r.Kind, a, err)
		}
		return int64(x)
	}
	l := receiptLine{amount: money(it["amount"])}
	l.mode, _ = it["payment_mode"].(string)
	l.descr, _ = it["description"].(string)
	l.subject, _ = it["payment_subject"].(string)
	l.vat, _ = it["vat_code"].(float64)
	st, _ := r.Body["settlements"].([]any)
	for _, x := range st {
		m, _ := x.(map[string]any)
		if m["type"] != "prepayment" {
			t.Errorf("settlement %v: not of the prepayment", m)
		}
		l.settled += money(m["amount"])
	}
	return l
}

// receiptsOf are the receipts of a kind the provider took for payment.
func (w *saleWorld) receiptsOf(kind, payment string) []psptest.Receipt {
	var out []psptest.Receipt
	for _, r := range w.fake.Receipts() {
		if r.Kind == kind && r.PaymentID == payment {
			out = append(out, r)
		}
	}
	return out
}

// paidSale buys offer and pays it; it returns the sale, its code (the
// buyer's return page shows it) and the provider's id of its payment.
func (w *saleWorld) paidSale(offer int64, email string) (*booking.BalanceSale, string, string) {
	w.t.Helper()
	x := w.buy(offer, claim, email)
	ext := w.externalID(x.ID)
	if !w.fake.Pay(ext) {
		w.t.Fatal("the fake did not take the payment")
	}
	if _, err := w.Svc.CheckSale(bookingtest.System(), x.ID); err != nil {
		w.t.Fatal(err)
	}
	x, err := w.Svc.SaleReturn(web(), x.Ref, claim)
	if err != nil || x.Status != booking.PayCompleted || x.Code == "" {
		w.t.Fatalf("paid: %+v, %v", x, err)
	}
	return x, x.Code, ext
}

// bookWith books the salon's service (5000.00, a deposit of 1000.00) at
// hhmm, paid with a certificate's code, as a widget visitor.
func (w *saleWorld) bookWith(code, hhmm string) *booking.Booking {
	w.t.Helper()
	b, err := w.Svc.Book(web(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, hhmm), Client: booking.ClientInput{Name: "Гость", Phone: bookingtest.Phone()},
		PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: code}})
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// bookPackage books the salon's service at hhmm at the desk for the
// client of package id, paid with it.
func (w *saleWorld) bookPackage(id int64, hhmm string) *booking.Booking {
	w.t.Helper()
	var phone string
	if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone FROM clients c JOIN balances b ON b.client_id = c.id WHERE b.id = $1`,
		id).Scan(&phone); err != nil {
		w.t.Fatal(err)
	}
	b, err := w.Svc.Book(booking.As(context.Background(), w.admin()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID,
		MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, w.day, hhmm), Client: booking.ClientInput{Name: "Ольга", Phone: phone},
		PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: id}})
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// completeAndSweep has the day's visits completed, then n sweeps run at
// once (as n replicas would), then once more.
func (w *saleWorld) completeAndSweep(n int) {
	w.t.Helper()
	w.Clock.Advance(3 * 24 * time.Hour)
	if _, err := w.Svc.CompletePast(bookingtest.System()); err != nil {
		w.t.Fatal(err)
	}
	bookingtest.Race(n, func(int) {
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			w.t.Error(err)
		}
	})
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		w.t.Fatal(err)
	}
}

// receiptsAt sets the salon's receipts: VAT 20% (YooKassa's code 4), a
// tax system, and item as what they call the service.
func (w *saleWorld) receiptsAt(item string) {
	w.t.Helper()
	if err := w.Svc.SetReceiptSettings(w.owner, w.salon.ID, booking.ReceiptSettings{VatCode: 4, TaxSystem: 2, Item: item}); err != nil {
		w.t.Fatal(err)
	}
}

// A certificate of 6000.00 bought online is an advance at the calculated
// VAT (20/120); it pays a visit of 5000.00 whole, then 1000.00 of
// another; both completed, and the sweeps run by four replicas at once
// and again: one settlement each against the sale's payment, of exactly
// what the visit used, at the nominal VAT (20%), each sent once.
func TestACertificateBoughtOnlineIsSettledForWhatEachVisitUsed(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("Услуги салона")
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат на 6000", Amount: 600000, Price: 600000})
	_, code, ext := w.paidSale(o.ID, "vera@example.com")
	a := w.bookWith(code, "10:00")
	b := w.bookWith(code, "12:00")
	if a.Status != booking.StatusConfirmed || b.Status != booking.StatusConfirmed || a.PaidWith.Amount != 500000 || b.PaidWith.Amount != 100000 {
		t.Fatalf("booked with the certificate: %s %+v, %s %+v", a.Status, a.PaidWith, b.Status, b.PaidWith)
	}
	calls := w.fake.Calls("POST /receipts")
	w.completeAndSweep(4)

	sale := w.receiptsOf("payment", ext)
	if len(sale) != 1 {
		t.Fatalf("the sale's payment receipts: %d", len(sale))
	}
	if l := lineOf(t, sale[0]); l.mode != "advance" || l.subject != "payment" || l.vat != 6 || l.amount != 600000 {
		t.Errorf("the sale's receipt: %+v, want an advance of 6000.00 at 20/120 (6)", l)
	}
	got := w.receiptsOf("settlement", ext)
	var visitors []any
	for _, x := range []*booking.Booking{a, b} {
		var phone string
		if err := w.Pool.QueryRow(context.Background(), `SELECT phone FROM clients WHERE id = $1`, x.ClientID).Scan(&phone); err != nil {
			t.Fatal(err)
		}
		visitors = append(visitors, strings.TrimPrefix(phone, "+"))
	}
	var amounts []int64
	for _, r := range got {
		l := lineOf(t, r)
		amounts = append(amounts, l.amount)
		if l.mode != "full_payment" || l.subject != "service" || l.vat != 4 || l.descr != "Услуги салона" || l.settled != l.amount {
			t.Errorf("a settlement: %+v, want the service paid in full at 20%% (4), settled by the prepayment", l)
		}
		// To the visit's client (a gift's buyer hears nothing of its use),
		// under the sale's tax system.
		if c, _ := r.Body["customer"].(map[string]any); c["email"] != nil || !slices.Contains(visitors, c["phone"]) ||
			r.Body["tax_system_code"] != float64(2) {
			t.Errorf("a settlement's customer %v (visitors %v), tax system %v", c, visitors, r.Body["tax_system_code"])
		}
	}
	slices.Sort(amounts)
	if !slices.Equal(amounts, []int64{100000, 500000}) {
		t.Errorf("settled %v, want 1000.00 and 5000.00", amounts)
	}
	if n := w.fake.Calls("POST /receipts") - calls; n != 2 {
		t.Errorf("%d settlement receipts sent over five sweeps, four at once; want 2, once each", n)
	}
	// Nothing is left to send.
	if n, err := w.Svc.SendSettlementReceipts(bookingtest.System()); err != nil || n != 0 {
		t.Errorf("again: %d sent, %v", n, err)
	}
}

// A certificate of 500.00 bought online pays half the deposit of a visit
// (1000.00), a card the other half: the visit completed, each payment is
// settled, against its own payment, each at the nominal VAT, each
// prepayment having carried the calculated one.
func TestAVisitPaidByACertificateAndACardIsSettledForEach(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат на 500", Amount: 50000, Price: 50000})
	_, code, ext := w.paidSale(o.ID, "vera@example.com")
	b := w.bookWith(code, "10:00")
	if b.Status != booking.StatusPending || b.Deposit != 50000 {
		t.Fatalf("a visit the certificate pays half the deposit of: %s, deposit %s", b.Status, b.Deposit)
	}
	card := w.paid(b)
	w.completeAndSweep(2)

	for _, p := range []struct {
		name, payment, mode string
	}{{"the certificate", ext, "advance"}, {"the card", card.ExternalID, "partial_prepayment"}} {
		paid := w.receiptsOf("payment", p.payment)
		settled := w.receiptsOf("settlement", p.payment)
		if len(paid) != 1 || len(settled) != 1 {
			t.Errorf("%s: %d payment receipts, %d settlements; want one each", p.name, len(paid), len(settled))
			continue
		}
		if l := lineOf(t, paid[0]); l.mode != p.mode || l.vat != 6 || l.amount != 50000 {
			t.Errorf("%s's payment: %+v, want %s of 500.00 at 20/120 (6)", p.name, l, p.mode)
		}
		if l := lineOf(t, settled[0]); l.mode != "full_payment" || l.vat != 4 || l.amount != 50000 || l.settled != 50000 || l.descr != "Colour" {
			t.Errorf("%s's settlement: %+v, want Colour, 500.00 paid in full by the prepayment, at 20%% (4)", p.name, l)
		}
	}
}

// A package of 3 visits bought online for 10000.00 is the full prepayment
// of the service at 20/120; used three times, its visits completed and
// the sweeps run by three replicas at once (the provider slow to take a
// receipt, so that they overlap): 3333.33, 3333.33 and 3333.34 are
// settled against its payment, adding up to its price, at 20%, each sent
// once.
func TestAPackageBoughtOnlineIsSettledVisitByVisit(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	w.fake.Delay = 200 * time.Millisecond
	w.fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /receipts" {
			return psptest.Slow
		}
		return psptest.None
	}
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "3 окрашивания", ServiceIDs: []int64{w.svc.ID}, Visits: 3, Price: 1000000})
	x, _, ext := w.paidSale(o.ID, "olga@example.com")
	for _, hhmm := range []string{"10:00", "12:00", "14:00"} {
		if b := w.bookPackage(x.BalanceID, hhmm); b.Status != booking.StatusConfirmed {
			t.Fatalf("a visit of the package: %+v", b)
		}
	}
	w.completeAndSweep(3)

	if sale := w.receiptsOf("payment", ext); len(sale) != 1 {
		t.Fatalf("the sale's payment receipts: %d", len(sale))
	} else if l := lineOf(t, sale[0]); l.mode != "full_prepayment" || l.subject != "service" || l.vat != 6 || l.amount != 1000000 {
		t.Errorf("the sale's receipt: %+v, want the full prepayment of 10000.00 at 20/120 (6)", l)
	}
	var amounts []int64
	var sum int64
	for _, r := range w.receiptsOf("settlement", ext) {
		l := lineOf(t, r)
		amounts, sum = append(amounts, l.amount), sum+l.amount
		if l.mode != "full_payment" || l.vat != 4 || l.descr != "Colour" || l.settled != l.amount {
			t.Errorf("a settlement: %+v", l)
		}
	}
	slices.Sort(amounts)
	if !slices.Equal(amounts, []int64{333333, 333333, 333334}) || sum != 1000000 {
		t.Errorf("settled %v (%d in all), want 3333.33, 3333.33, 3333.34", amounts, sum)
	}
	if n := w.fake.Calls("POST /receipts"); n != 3 {
		t.Errorf("%d settlement receipts sent, want 3, once each", n)
	}
}

// A visit of two services that a package bought online (4 visits for
// 12000.00, of a colour or a cut) is for spends two of its visits: its
// settlement names both services and settles two visits' share
// (6000.00). Another, of a cut and then a colour, cancelled at the
// client's request under a policy that keeps deposits, keeps the
// colour's visit (the cut asks no deposit): its settlement names the
// colour (3000.00). The last visit settles the rest (3000.00).
func TestAVisitOfTwoServicesSettlesTwoVisitsOfAPackage(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	cut := w.Service(t, w.salon, booking.SalonService{Name: "Cut", DurationMin: 30, Price: 150000})
	m := w.Master(t, w.salon, w.svc, cut)
	w.Shift(t, w.salon, m, w.day, 1, "10:00", "20:00")
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "4 визита", ServiceIDs: []int64{w.svc.ID, cut.ID}, Visits: 4, Price: 1200000})
	x, _, ext := w.paidSale(o.ID, "olga@example.com")
	var phone string
	if err := w.Pool.QueryRow(context.Background(), `SELECT c.phone FROM clients c JOIN balances b ON b.client_id = c.id WHERE b.id = $1`,
		x.BalanceID).Scan(&phone); err != nil {
		t.Fatal(err)
	}
	desk := booking.As(context.Background(), w.admin())
	visit := func(at string, services ...*booking.SalonService) *booking.Booking {
		t.Helper()
		r := booking.BookRequest{SalonID: w.salon.ID, StartsAt: bookingtest.At(w.salon, w.day, at), Client: booking.ClientInput{Name: "Ольга", Phone: phone},
			PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: x.BalanceID}}
		for _, sv := range services {
			r.Items = append(r.Items, booking.VisitItem{ServiceID: sv.ID, MasterID: m.ID})
		}
		v, err := w.Svc.Book(desk, r)
		if err != nil {
			t.Fatal(err)
		}
		if v.PaidWith == nil || v.PaidWith.Visits != 2 {
			t.Fatalf("a visit of both services at %s: paid with %+v, want 2 visits", at, v.PaidWith)
		}
		return v
	}
	visit("10:00", w.svc, cut)
	gone := visit("13:00", cut, w.svc)
	s := *w.salon
	s.RefundPolicy = booking.RefundNever
	if _, err := w.Svc.UpdateSalon(bookingtest.System(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(desk, booking.CancelRequest{SalonID: w.salon.ID, BookingID: gone.ID, ForClient: true}); err != nil {
		t.Fatal(err)
	}
	w.bookPackage(x.BalanceID, "16:00")
	w.completeAndSweep(2)
	var got []string
	for _, r := range w.receiptsOf("settlement", ext) {
		l := lineOf(t, r)
		got = append(got, fmt.Sprintf("%s %d", l.descr, l.amount))
		if l.mode != "full_payment" || l.settled != l.amount {
			t.Errorf("a settlement: %+v", l)
		}
	}
	slices.Sort(got)
	if want := []string{"Colour + Cut 600000", "Colour 300000", "Colour 300000"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
}

// A settlement the provider refuses is asked once, however many sweeps
// run, and staff see it among what needs attention: the booking, the
// sale, what it would have settled, and why.
func TestARefusedBalanceSettlementIsAskedOnceAndListed(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	w.fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /receipts" {
			return psptest.Reject
		}
		return psptest.None
	}
	o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "3 окрашивания", ServiceIDs: []int64{w.svc.ID}, Visits: 3, Price: 1000000})
	x, _, _ := w.paidSale(o.ID, "olga@example.com")
	b := w.bookPackage(x.BalanceID, "10:00")
	w.completeAndSweep(3)
	for range 2 {
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.fake.Calls("POST /receipts"); n != 1 {
		t.Errorf("a refused settlement receipt was sent %d times, want 1", n)
	}
	items, err := w.Svc.Attention(bookingtest.System(), w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Kind != booking.AttentionReceipt || items[0].SaleID != x.ID || items[0].BalanceID != x.BalanceID || items[0].Session.BookingID != b.ID ||
		items[0].Session.Amount != 333333 || items[0].Session.LastError == "" {
		t.Fatalf("attention: %+v, want the refused settlement of 3333.33 for booking %d, sale %d", items, b.ID, x.ID)
	}
	t.Logf("listed: %+v", items[0])
}

// Balances sold at the desk have no payment at the provider: their
// visits, completed, send nothing.
func TestBalancesSoldAtTheDeskSendNoSettlement(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	sys := bookingtest.System()
	cert, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 600000})
	if err != nil {
		t.Fatal(err)
	}
	phone := bookingtest.Phone()
	pkg, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{w.svc.ID},
		Visits: 2, Client: booking.ClientInput{Name: "Ольга", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	w.bookWith(cert.Code, "10:00")
	if _, err := w.Svc.Book(booking.As(context.Background(), w.admin()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID,
		MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, w.day, "12:00"), Client: booking.ClientInput{Name: "Ольга", Phone: phone},
		PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}}); err != nil {
		t.Fatal(err)
	}
	w.completeAndSweep(2)
	if n := w.count(`SELECT count(*) FROM balance_entries WHERE salon_id = $1 AND type = 'spend'`, w.salon.ID); n != 2 {
		t.Fatalf("%d spends, want 2", n)
	}
	if n := w.fake.Calls("POST /receipts"); n != 0 || len(w.fake.Receipts()) != 0 {
		t.Errorf("balances sold at the desk: %d receipts sent, %d taken", n, len(w.fake.Receipts()))
	}
}

// Migration 00039 makes the spends made before it due their settlement:
// two visits of a package of 5 for 20000.00 completed before it are
// settled after it, 4000.00 each.
func TestMigration39SettlesTheSpendsMadeBefore(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	ctx := context.Background()
	x := w.soldPackage(2)
	db := stdlib.OpenDBFromPool(w.Pool)
	defer db.Close() // (not the pool)
	p, err := migrations.Provider(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 38); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(3 * 24 * time.Hour)
	if _, err := w.Svc.CompletePast(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	var amounts []int64
	for _, r := range w.receiptsOf("settlement", w.externalID(x.ID)) {
		amounts = append(amounts, lineOf(t, r).amount)
	}
	if !slices.Equal(amounts, []int64{400000, 400000}) {
		t.Errorf("settled after the migration: %v, want 4000.00 twice", amounts)
	}
}

// Rolling migration 00039 back would forget which spends were settled
// (its Up would send their receipts again): with a receipt sent, the
// rollback refuses, the settlements stay, and the sweep after it sends
// nothing more to the provider.
func TestMigration39KeepsTheSettlementsSent(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	ctx := context.Background()
	x := w.soldPackage(1)
	w.completeAndSweep(1)
	if got := w.receiptsOf("settlement", w.externalID(x.ID)); len(got) != 1 {
		t.Fatalf("%d settlements sent, want 1", len(got))
	}
	db := stdlib.OpenDBFromPool(w.Pool)
	defer db.Close() // (not the pool)
	p, err := migrations.Provider(db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.DownTo(ctx, 38)
	if err == nil || !strings.Contains(err.Error(), "send them again") {
		t.Fatalf("rolled back past 00039 with a receipt sent: %v", err)
	}
	if v, err := p.GetDBVersion(ctx); err != nil || v != 39 {
		t.Fatalf("at version %d (%v), want 39 (the rollback stops there)", v, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if got := w.receiptsOf("settlement", w.externalID(x.ID)); len(got) != 1 {
		t.Errorf("%d settlements sent after the refused rollback, want still 1", len(got))
	}
}

// A certificate bought online pays a visit of 5000.00 asking a deposit of
// 1000.00; under a policy that keeps deposits the client cancels: the
// cancellation keeps 1000.00 of it (spent) and gives 4000.00 back, and
// the sweep settles exactly the 1000.00 kept, once.
func TestAKeptCancellationIsSettledForWhatItKept(t *testing.T) {
	w := newSaleWorld(t)
	w.receiptsAt("")
	s := *w.salon
	s.RefundPolicy = booking.RefundNever
	if _, err := w.Svc.UpdateSalon(bookingtest.System(), s); err != nil {
		t.Fatal(err)
	}
	o := w.offer(booking.BalanceOffer{Kind: booking.BalanceCertificate, Title: "Сертификат на 6000", Amount: 600000, Price: 600000})
	_, code, ext := w.paidSale(o.ID, "kept@example.com")
	b := w.bookWith(code, "10:00")
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	var left int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT remaining FROM balances WHERE id = $1`, b.PaidWith.BalanceID).Scan(&left); err != nil || left != 500000 {
		t.Fatalf("left on the certificate: %d (%v), want 5000.00 (1000.00 kept)", left, err)
	}
	calls := w.fake.Calls("POST /receipts")
	bookingtest.Race(3, func(int) {
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Error(err)
		}
	})
	got := w.receiptsOf("settlement", ext)
	if len(got) != 1 {
		t.Fatalf("%d settlements, want 1", len(got))
	}
	if l := lineOf(t, got[0]); l.amount != 100000 || l.settled != 100000 || l.mode != "full_payment" || l.vat != 4 {
		t.Errorf("the kept part's settlement: %+v, want 1000.00 in full at 20%% (4)", l)
	}
	if n := w.fake.Calls("POST /receipts") - calls; n != 1 {
		t.Errorf("%d receipts sent, want 1", n)
	}
}

// A package of 3 for 10000.00 bought online, one visit used and the two
// left refunded: the settlement and the refund the provider took add up
// to the 10000.00 paid, whichever comes first (the visit's settlement
// priced before the refund, or after it), and the refund's quote says so.
func TestAPackageUsedThenRefundedAddsUpToItsPrice(t *testing.T) {
	for _, settledFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "settled first", false: "refunded first"}[settledFirst], func(t *testing.T) {
			w := newSaleWorld(t)
			w.receiptsAt("")
			o := w.offer(booking.BalanceOffer{Kind: booking.BalancePackage, Title: "3 окрашивания", ServiceIDs: []int64{w.svc.ID}, Visits: 3,
				Price: 1000000})
			x, _, ext := w.paidSale(o.ID, "olga@example.com")
			w.bookPackage(x.BalanceID, "10:00")
			staff := booking.As(context.Background(), w.admin())
			if settledFirst {
				w.completeAndSweep(1)
				if q, err := w.Svc.BalanceRefundQuote(staff, w.salon.ID, x.BalanceID); err != nil || q.Money != 666667 {
					t.Fatalf("the quote: %+v, %v; want 6666.67", q, err)
				}
			} else {
				w.Clock.Advance(3 * 24 * time.Hour)
				if _, err := w.Svc.CompletePast(bookingtest.System()); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, "moved away"); err != nil {
				t.Fatal(err)
			}
			bookingtest.WaitFor(t, 10*time.Second, "the refund and the settlement", func() bool {
				_, _ = w.Svc.SweepPayments(bookingtest.System())
				_, refunded := w.fake.Totals()
				return refunded > 0 && len(w.receiptsOf("settlement", ext)) > 0
			})
			_, refunded := w.fake.Totals()
			var settled int64
			for _, r := range w.receiptsOf("settlement", ext) {
				settled += lineOf(t, r).amount
			}
			var back int64
			for _, r := range w.receiptsOf("refund", ext) {
				back += lineOf(t, r).amount
			}
			want := map[bool][2]int64{true: {333333, 666667}, false: {333334, 666666}}[settledFirst]
			if settled != want[0] || refunded != want[1] || back != refunded {
				t.Errorf("settled %d, refunded %d (its receipt %d); want %d and %d: 10000.00 in all", settled, refunded, back, want[0], want[1])
			}
		})
	}
}
