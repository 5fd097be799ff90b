package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"salon/booking/psp"
)

// Fiscal receipts (Russia's 54-FZ), WithReceipts: every payment is created
// with its receipt (the client's phone, one line for the deposit, a
// prepayment in part or in full), its refund carries one, and a visit
// completed after its deposit was paid gets one settlement receipt; so
// does what a visit used of a certificate or a package sold online
// (sendBalanceSettlements). The payment's receipt is written with its session
// when it is claimed, so a create retried sends exactly the first request
// (YooKassa refuses the same idempotence key with another body). Every
// line is made by receiptItem, which decides its VAT code (receiptVat).

// WithReceipts sends fiscal receipts through the provider (YOOKASSA_RECEIPTS).
func WithReceipts() Option { return func(s *Service) { s.receipts = true } }

// ReceiptSettings are what a salon's receipts say.
type ReceiptSettings struct {
	// VatCode is YooKassa's vat_code of the nominal rate (1 no VAT, 2 0%,
	// 3 10%, 4 20%, 7 5%, 8 7%, 11 22%): a settlement's; a prepayment
	// carries its calculated rate (receiptVat).
	VatCode   int
	TaxSystem int    // YooKassa's tax_system_code, 1..6 (0: not given)
	Item      string // what a receipt calls the service ("" : the service's name)
}

// SetReceiptSettings sets what the salon's receipts say (owners only).
func (s *Service) SetReceiptSettings(ctx context.Context, salonID int64, r ReceiptSettings) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	fe := fieldErrors{}
	if r.VatCode < 1 || r.VatCode > 12 {
		fe.add("vat_code", "must be one of YooKassa's codes, 1 to 12")
	}
	if r.TaxSystem < 0 || r.TaxSystem > 6 {
		fe.add("tax_system", "must be 1 to 6, or empty")
	}
	if r.Item = strings.TrimSpace(r.Item); len([]rune(r.Item)) > 128 {
		fe.add("receipt_item", "at most %d characters", 128)
	}
	if err := fe.err(); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE salons SET receipt_vat_code = $2, receipt_tax_system = NULLIF($3, 0), receipt_item = $4 WHERE id = $1`,
			salonID, r.VatCode, r.TaxSystem, r.Item)
		return err
	})
}

// ReceiptSettingsOf reads what the salon's receipts say (admins and owners).
func (s *Service) ReceiptSettingsOf(ctx context.Context, salonID int64) (*ReceiptSettings, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var r ReceiptSettings
	if err := s.pool.QueryRow(ctx, `SELECT receipt_vat_code, COALESCE(receipt_tax_system, 0), receipt_item FROM salons WHERE id = $1`, salonID).
		Scan(&r.VatCode, &r.TaxSystem, &r.Item); err != nil {
		return nil, dbErr(err)
	}
	return &r, nil
}

// paymentReceipt is the receipt a deposit of booking b is paid with.
func paymentReceipt(ctx context.Context, tx pgx.Tx, b *Booking, amount Money, currency string) (*psp.Receipt, error) {
	var vat, tax int
	var item, service, phone string
	var price Money
	// A visit of several services is one item: its services' names and
	// their prices together.
	if err := tx.QueryRow(ctx, `SELECT s.receipt_vat_code, COALESCE(s.receipt_tax_system, 0), s.receipt_item,
		       (SELECT string_agg(xs.name, ' + ' ORDER BY x.id) FROM bookings x JOIN services xs ON xs.id = x.service_id
		        WHERE x.id = b.visit_id OR x.visit_of = b.visit_id),
		       (SELECT sum(x.price) FROM bookings x WHERE x.id = b.visit_id OR x.visit_of = b.visit_id), COALESCE(c.phone, '')
		FROM bookings b JOIN salons s ON s.id = b.salon_id
		JOIN clients c ON c.salon_id = b.salon_id AND c.id = b.client_id WHERE b.id = $1`, b.ID).
		Scan(&vat, &tax, &item, &service, &price, &phone); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	if item == "" {
		item = service
	}
	mode := "partial_prepayment"
	if b.Deposit >= price {
		mode = "full_prepayment" // (a top-up completes the deposit: the same mode)
	}
	return &psp.Receipt{
		Customer:  psp.ReceiptCustomer{Phone: strings.TrimPrefix(phone, "+")},
		TaxSystem: tax,
		Items:     []psp.ReceiptItem{receiptItem(item, amount, currency, vat, "service", mode)},
	}, nil
}

// receiptItem is a receipt's line (quantity one) of amount, paid in mode,
// for a salon whose VAT code is vat: the one place a line is made, and
// its VAT code decided (receiptVat). A refund repeats its payment's line
// (refundReceipt), the amount aside.
func receiptItem(description string, amount Money, currency string, vat int, subject, mode string) psp.ReceiptItem {
	return psp.ReceiptItem{Description: truncate(description, 128), Quantity: "1.00", Amount: int64(amount), Currency: currency,
		VatCode: receiptVat(vat, mode), PaymentSubject: subject, PaymentMode: mode}
}

// receiptVat is the VAT code of a line paid in mode, of a salon whose code
// is the nominal rate vat. 54-FZ: money taken before the service (an
// advance, a prepayment in full or in part, and so their refunds) is taxed
// at the calculated rate (10/110 for 10%, 20/120 for 20%, 5/105, 7/107,
// 22/122); the settlement, the service itself, at the nominal one (a
// salon that set a calculated code, as the panel once offered, settles at
// its nominal rate). No VAT and 0% are the same in every mode.
func receiptVat(vat int, mode string) int {
	switch mode {
	case "advance", "full_prepayment", "partial_prepayment":
		if c, ok := calculatedVat[vat]; ok {
			return c
		}
	default:
		for n, c := range calculatedVat {
			if c == vat {
				return n
			}
		}
	}
	return vat
}

// calculatedVat maps YooKassa's codes of the nominal rates to their
// calculated ones: 10% to 10/110, 20% to 20/120, 5% to 5/105, 7% to
// 7/107, 22% to 22/122.
var calculatedVat = map[int]int{3: 5, 4: 6, 7: 9, 8: 10, 11: 12}

// receiptOf reads a session's payment receipt (nil: paid without one).
func (s *Service) receiptOf(ctx context.Context, sessionID int64) (*psp.Receipt, error) {
	var raw []byte
	if err := s.pool.QueryRow(ctx, `SELECT receipt FROM payment_sessions WHERE id = $1`, sessionID).Scan(&raw); err != nil {
		return nil, dbErr(err)
	}
	if raw == nil {
		return nil, nil
	}
	var r psp.Receipt
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("payment %d: receipt: %w", sessionID, err)
	}
	return &r, nil
}

// refundReceipt is the receipt of a refund of amount of a payment paid with r.
func refundReceipt(r *psp.Receipt, amount Money) *psp.Receipt {
	if r == nil {
		return nil
	}
	out := &psp.Receipt{Customer: r.Customer, TaxSystem: r.TaxSystem}
	for _, it := range r.Items {
		it.Amount = int64(amount)
		out.Items = append(out.Items, it)
		break // one line: the deposit
	}
	return out
}

// depositSettlement settles a deposit paid with r, of which held is what
// was not refunded, for a salon whose VAT code is vat: the service, paid
// in full, by the prepayment.
func depositSettlement(r *psp.Receipt, paymentID string, held Money, vat int) psp.Receipt {
	var line psp.ReceiptItem
	if len(r.Items) > 0 {
		line = r.Items[0] // (one line: the deposit's)
	}
	return settlementReceipt(r, paymentID, receiptItem(line.Description, held, line.Currency, vat, line.PaymentSubject, "full_payment"))
}

// settlementReceipt is the receipt of its own that settles, with line it
// (the service, paid in full), the prepayment made by payment paymentID,
// whose receipt was r: to r's customer, under r's tax system.
func settlementReceipt(r *psp.Receipt, paymentID string, it psp.ReceiptItem) psp.Receipt {
	return psp.Receipt{Customer: r.Customer, TaxSystem: r.TaxSystem, Type: "payment", PaymentID: paymentID, Send: true,
		Items: []psp.ReceiptItem{it}, Settlements: []psp.Settlement{{Type: "prepayment", Amount: it.Amount, Currency: it.Currency}}}
}

// SendSettlementReceipts sends, once each, the settlement receipt of every
// visit completed after its deposit was paid with a receipt, and of what
// every visit used of a balance sold online with one
// (sendBalanceSettlements). It returns how many it sent. Only the
// platform asks (ErrForbidden).
func (s *Service) SendSettlementReceipts(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	if s.psp == nil || !s.receipts {
		return 0, nil
	}
	n, err := s.sendDepositSettlements(ctx)
	if err != nil {
		return n, err
	}
	m, err := s.sendBalanceSettlements(ctx)
	return n + m, err
}

// leasedReceipts is a kind of receipt sent once each, one at a time under
// a lease: its statements, each on the rows of its own table.
type leasedReceipts struct {
	what string // in logs and errors
	// claim leases the next one due ($1 now, $2 the lease's end, $3 the
	// ids taken this sweep), returning its id and what claimed reads.
	claim string
	// refused, released and sent end the lease: the provider refused it
	// ($2 why: not sent again, staff see it), did not say ($1 only: the
	// next sweep sends it again, under the same key), took it ($2 now).
	refused, released, sent string
}

// sendLeased sends the receipts of kind k that are due, once each: a
// replica takes one at a time under a lease (another skips it), builds it
// with scan from the row claim returned, and calls the provider with no
// transaction open. It returns how many it sent.
func (s *Service) sendLeased(ctx context.Context, k leasedReceipts,
	scan func(row pgx.Row) (id int64, key string, r psp.Receipt, err error)) (int, error) {
	n := 0
	seen := []int64{}
	for len(seen) < sweepBatch && ctx.Err() == nil {
		now := s.now()
		id, key, r, err := scan(s.pool.QueryRow(ctx, k.claim, now, now.Add(paymentLease), seen))
		if isNoRows(err) {
			break
		}
		if err != nil {
			return n, fmt.Errorf("%s: %w", k.what, dbErr(err))
		}
		seen = append(seen, id)
		cctx, cancel := context.WithTimeout(ctx, providerCall)
		err = psp.SendReceipt(cctx, s.psp, key, r)
		cancel()
		var uerr error
		switch {
		case psp.IsRejected(err):
			// Sending it again would be refused again; staff see it
			// (Attention), and the rest are not held up behind it.
			s.log.Warn(k.what+": refused", "id", id, "err", err)
			_, uerr = s.pool.Exec(ctx, k.refused, id, err.Error())
		case err != nil:
			s.log.Warn(k.what, "id", id, "err", err)
			_, uerr = s.pool.Exec(context.WithoutCancel(ctx), k.released, id)
		default:
			_, uerr = s.pool.Exec(ctx, k.sent, id, s.now())
			n++
		}
		if uerr != nil {
			return n, fmt.Errorf("%s %d: %w", k.what, id, dbErr(uerr))
		}
	}
	return n, nil
}

// depositSettlements are the settlement receipts of the visits completed
// after their deposit was paid with a receipt.
var depositSettlements = leasedReceipts{
	what: "settlement receipt",
	claim: `UPDATE payment_sessions p SET settlement_lease_until = $2
		FROM salons l
		WHERE l.id = p.salon_id AND p.id = (
		      SELECT s.id FROM payment_sessions s JOIN bookings b ON b.id = s.booking_id
		      WHERE s.status = 'completed' AND s.receipt IS NOT NULL AND s.settlement_sent_at IS NULL AND s.settlement_error IS NULL
		        AND b.status = 'completed' AND (s.settlement_lease_until IS NULL OR s.settlement_lease_until < $1) AND s.id <> ALL($3)
		      ORDER BY s.id LIMIT 1 FOR UPDATE OF s SKIP LOCKED)
		RETURNING p.id, p.external_id, p.receipt, p.amount - p.refunded, l.receipt_vat_code`,
	refused:  `UPDATE payment_sessions SET settlement_error = $2, last_error = $2, settlement_lease_until = NULL WHERE id = $1`,
	released: `UPDATE payment_sessions SET settlement_lease_until = NULL WHERE id = $1`,
	sent:     `UPDATE payment_sessions SET settlement_sent_at = $2, settlement_lease_until = NULL WHERE id = $1 AND settlement_sent_at IS NULL`,
}

// sendDepositSettlements sends the deposits' settlement receipts due,
// once each (sendLeased).
func (s *Service) sendDepositSettlements(ctx context.Context) (int, error) {
	return s.sendLeased(ctx, depositSettlements, func(row pgx.Row) (int64, string, psp.Receipt, error) {
		var id int64
		var ext string
		var raw []byte
		var held Money
		var vat int
		var r psp.Receipt
		if err := row.Scan(&id, &ext, &raw, &held, &vat); err != nil {
			return 0, "", r, err
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return 0, "", r, fmt.Errorf("settlement receipt %d: %w", id, err)
		}
		return id, fmt.Sprintf("settle-%d", id), depositSettlement(&r, ext, held, vat), nil
	})
}

// Balances sold online are settled much as deposits are (a deposit's
// settlement waits for the visit completed; a balance's is made for every
// spend: the visit completed or missed, or a cancellation the policy
// keeps, since each takes the prepaid money as the salon's). A certificate sold
// with a receipt was receipted as an advance, a package as the full
// prepayment of its services; what a visit then uses of it (its spend
// entry: the visit completed or missed, or a cancellation the policy
// keeps) is settled by a receipt of its own against the sale's payment:
// the service, paid in full, by that prepayment. The trigger that
// settles the booking's reservations makes it due (balance_settlements,
// with the units used); the sweep
// prices it, in the order of the sale's spends (settlementShare), writes
// its receipt once, and sends that under the spend's key until the
// provider takes it, or refuses it (then staff see it: Attention).

// settlementShare is the money a spend settles of a sale of units (visits,
// or minor units) at price: used units, after spent units spent before it
// and gone units refunded, the refunds paying back refunded of the price
// and the spends before it settling settled. Each spend settles its
// share, price·used/units rounded down (a certificate sold at its amount:
// the units used), and the spend that leaves nothing unspent or unrefunded
// settles the rest of what was not refunded (a package of 3 for 10000.00:
// 3333.33, 3333.33, 3333.34). Never more than was paid and not refunded
// or settled: the refunds' parts are the price's share of the units
// refunded (saleRefundShare), the spends' of other units.
func settlementShare(price, units, used, spent, gone, refunded, settled int64) int64 {
	if units <= 0 {
		return 0
	}
	left := price - max(refunded, price*min(gone, units)/units) - settled
	share := price * used / units
	if spent+used+gone >= units {
		share = left // the last of it: the rest
	}
	return max(min(share, left), 0)
}

// balanceSettlementKey is the idempotence key of the settlement of the
// spend entry.
func balanceSettlementKey(entry int64) string { return fmt.Sprintf("settle-entry-%d", entry) }

// sendBalanceSettlements prices the balance settlements due, then sends
// each priced one not yet sent, once (sendLeased).
func (s *Service) sendBalanceSettlements(ctx context.Context) (int, error) {
	if err := s.priceBalanceSettlements(ctx); err != nil {
		return 0, err
	}
	return s.sendLeased(ctx, balanceSettlements, func(row pgx.Row) (int64, string, psp.Receipt, error) {
		var id, entry int64
		var raw []byte
		var r psp.Receipt
		if err := row.Scan(&id, &entry, &raw); err != nil {
			return 0, "", r, err
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return 0, "", r, fmt.Errorf("balance settlement %d: %w", id, err)
		}
		return id, balanceSettlementKey(entry), r, nil
	})
}

// balanceSettlements are the settlement receipts of what visits used of
// balances sold online, priced.
var balanceSettlements = leasedReceipts{
	what: "balance settlement receipt",
	claim: `UPDATE balance_settlements SET lease_until = $2
		WHERE id = (SELECT id FROM balance_settlements
		            WHERE sent_at IS NULL AND error IS NULL AND amount > 0 AND (lease_until IS NULL OR lease_until < $1) AND id <> ALL($3)
		            ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, entry_id, receipt`,
	refused:  `UPDATE balance_settlements SET error = $2, lease_until = NULL, updated_at = now() WHERE id = $1`,
	released: `UPDATE balance_settlements SET lease_until = NULL WHERE id = $1`,
	sent:     `UPDATE balance_settlements SET sent_at = $2, lease_until = NULL, updated_at = now() WHERE id = $1 AND sent_at IS NULL`,
}

// priceBalanceSettlements prices the balance settlements due, each sale's
// in one transaction holding the sale's row (another replica skips it),
// in the order of its spends; a sale that fails is logged, and the others
// priced.
func (s *Service) priceBalanceSettlements(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT sale_id FROM balance_settlements
		WHERE sent_at IS NULL AND error IS NULL AND amount IS NULL LIMIT 100`)
	if err != nil {
		return fmt.Errorf("balance settlements: %w", dbErr(err))
	}
	sales, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("balance settlements: %w", dbErr(err))
	}
	for _, sale := range sales {
		// One sale that cannot be priced holds up no other's.
		if err := s.inTx(ctx, func(tx pgx.Tx) error { return priceSaleSettlements(ctx, tx, sale) }); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("balance sale %d: settlements: %w", sale, dbErr(err))
			}
			s.log.Error("balance settlements: a sale's not priced", "sale", sale, "err", err)
		}
	}
	return nil
}

// priceSaleSettlements prices the settlements due of sale id (its row
// taken; nothing when another holds it) and writes each one's receipt:
// the line of the service the visit used it for (the salon's name for
// its services, else the service's: of a package, the visit's services
// its visits paid; of a certificate, the visit's), paid in full at the salon's
// nominal VAT rate, settling that much of the sale's prepayment: to the
// sale receipt's customer for a package (its buyer's phone books it), to
// the visit's client for a certificate (the buyer may have given it).
func priceSaleSettlements(ctx context.Context, tx pgx.Tx, id int64) error {
	var price, units, refunded, balance int64
	var ext, currency string
	var raw []byte
	err := tx.QueryRow(ctx, `SELECT price, units, refunded + CASE WHEN status = 'refunding' THEN COALESCE(refund_amount, 0) ELSE 0 END,
		    balance_id, external_id, currency, receipt
		FROM balance_sales WHERE id = $1 AND receipt IS NOT NULL AND balance_id IS NOT NULL FOR UPDATE SKIP LOCKED`, id).
		Scan(&price, &units, &refunded, &balance, &ext, &currency, &raw)
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var sale psp.Receipt
	if err := json.Unmarshal(raw, &sale); err != nil {
		return fmt.Errorf("receipt: %w", err)
	}
	var gone, spent, settled int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT COALESCE(-sum(delta), 0) FROM balance_entries WHERE balance_id = $2 AND type = 'refund'),
		    COALESCE(sum(units), 0), COALESCE(sum(amount), 0)
		FROM balance_settlements WHERE sale_id = $1 AND amount IS NOT NULL`, id, balance).Scan(&gone, &spent, &settled); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT x.id, x.units, l.receipt_vat_code, COALESCE(NULLIF(l.receipt_item, ''),
		    CASE WHEN a.kind = 'package'
		         THEN (SELECT string_agg(p.name, ' + ' ORDER BY p.id) FROM (
		               -- (Of the services its visits paid, those it used: all of
		               -- them; of a cancellation that kept fewer, those that
		               -- ask a deposit, which the policy keeps.)
		               SELECT r.id, r.name FROM (SELECT v.id, vs.name, vs.deposit > 0 AS asks FROM bookings v JOIN services vs ON vs.id = v.service_id
		                                         WHERE (v.id = b.visit_id OR v.visit_of = b.visit_id) AND v.service_id = ANY(a.service_ids)
		                                         ORDER BY v.id LIMIT (SELECT -e.delta FROM balance_entries e WHERE e.booking_id = x.booking_id
		                                                              AND e.balance_id = a.id AND e.type = 'reserve' ORDER BY e.id LIMIT 1)) r
		               ORDER BY NOT r.asks, r.id LIMIT x.units) p)
		         ELSE (SELECT string_agg(vs.name, ' + ' ORDER BY v.id) FROM bookings v JOIN services vs ON vs.id = v.service_id
		               WHERE v.id = b.visit_id OR v.visit_of = b.visit_id) END, s.title)
		, CASE WHEN a.kind = 'certificate' THEN COALESCE(c.phone, '') ELSE '' END
		FROM balance_settlements x JOIN balance_sales s ON s.id = x.sale_id JOIN balances a ON a.id = s.balance_id
		LEFT JOIN bookings b ON b.id = x.booking_id JOIN salons l ON l.id = x.salon_id
		LEFT JOIN clients c ON c.salon_id = b.salon_id AND c.id = b.client_id
		WHERE x.sale_id = $1 AND x.amount IS NULL ORDER BY x.entry_id`, id)
	if err != nil {
		return err
	}
	type due struct {
		id, used int64
		vat      int
		item     string
		visitor  string // of a certificate, the visit's client's phone
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		return d, r.Scan(&d.id, &d.used, &d.vat, &d.item, &d.visitor)
	})
	if err != nil {
		return err
	}
	for _, d := range list {
		amount := settlementShare(price, units, d.used, spent, gone, refunded, settled)
		var receipt []byte
		if amount > 0 {
			r := settlementReceipt(&sale, ext, receiptItem(d.item, Money(amount), currency, d.vat, "service", "full_payment"))
			if d.visitor != "" {
				// A certificate is whoever holds it: its visit's receipt
				// goes to the visit's client, as a deposit's does, not to
				// the buyer of a gift.
				r.Customer = psp.ReceiptCustomer{Phone: strings.TrimPrefix(d.visitor, "+")}
			}
			if receipt, err = json.Marshal(r); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE balance_settlements SET amount = $2, receipt = $3, updated_at = now() WHERE id = $1 AND amount IS NULL`,
			d.id, amount, receipt); err != nil {
			return err
		}
		spent, settled = spent+d.used, settled+amount
	}
	return nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
