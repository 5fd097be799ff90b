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
// completed after its deposit was paid gets one settlement receipt.
// The payment's receipt is written with its session when it is claimed, so
// a create retried sends exactly the first request (YooKassa refuses the
// same idempotence key with another body).

// WithReceipts sends fiscal receipts through the provider (YOOKASSA_RECEIPTS).
func WithReceipts() Option { return func(s *Service) { s.receipts = true } }

// ReceiptSettings are what a salon's receipts say.
type ReceiptSettings struct {
	VatCode   int    // YooKassa's vat_code: 1 no VAT, 2 0%, 3 10%, 4 20%, ...
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
		Items: []psp.ReceiptItem{{Description: truncate(item, 128), Quantity: "1.00", Amount: int64(amount), Currency: currency,
			VatCode: vat, PaymentSubject: "service", PaymentMode: mode}},
	}, nil
}

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

// settlementReceipt settles a prepayment paid with r, of which held is
// what was not refunded: the service, paid in full, by the prepayment.
func settlementReceipt(r *psp.Receipt, paymentID string, held Money) psp.Receipt {
	out := psp.Receipt{Customer: r.Customer, TaxSystem: r.TaxSystem, Type: "payment", PaymentID: paymentID, Send: true}
	for _, it := range r.Items {
		it.PaymentMode = "full_payment"
		it.Amount = int64(held)
		out.Items = append(out.Items, it)
		out.Settlements = append(out.Settlements, psp.Settlement{Type: "prepayment", Amount: it.Amount, Currency: it.Currency})
		break // one line: the deposit
	}
	return out
}

// SendSettlementReceipts sends, once each, the settlement receipt of every
// visit completed after its deposit was paid with a receipt. It returns
// how many it sent. Only the platform asks (ErrForbidden).
func (s *Service) SendSettlementReceipts(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	if s.psp == nil || !s.receipts {
		return 0, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.external_id, s.receipt, s.amount - s.refunded FROM payment_sessions s JOIN bookings b ON b.id = s.booking_id
		WHERE s.status = 'completed' AND s.receipt IS NOT NULL AND s.settlement_sent_at IS NULL AND s.settlement_error IS NULL
		  AND b.status = 'completed'
		ORDER BY s.id LIMIT 100`)
	if err != nil {
		return 0, dbErr(err)
	}
	type due struct {
		id      int64
		ext     string
		receipt psp.Receipt
		held    Money
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		var raw []byte
		if err := r.Scan(&d.id, &d.ext, &raw, &d.held); err != nil {
			return d, err
		}
		return d, json.Unmarshal(raw, &d.receipt)
	})
	if err != nil {
		return 0, fmt.Errorf("settlement receipts: %w", err)
	}
	n := 0
	for _, d := range list {
		cctx, cancel := context.WithTimeout(ctx, providerCall)
		err := psp.SendReceipt(cctx, s.psp, fmt.Sprintf("settle-%d", d.id), settlementReceipt(&d.receipt, d.ext, d.held))
		cancel()
		if psp.IsRejected(err) {
			// Refused: sending it again would be refused again; staff see
			// it (Attention) and the rest are not held up behind it.
			s.log.Warn("settlement receipt refused", "session", d.id, "err", err)
			if _, uerr := s.pool.Exec(ctx, `UPDATE payment_sessions SET settlement_error = $2, last_error = $2 WHERE id = $1`, d.id, err.Error()); uerr != nil {
				return n, dbErr(uerr)
			}
			continue
		}
		if err != nil {
			s.log.Warn("settlement receipt", "session", d.id, "err", err)
			continue // the next sweep tries again, with the same key
		}
		if _, err := s.pool.Exec(ctx, `UPDATE payment_sessions SET settlement_sent_at = $2 WHERE id = $1 AND settlement_sent_at IS NULL`,
			d.id, s.now()); err != nil {
			return n, dbErr(err)
		}
		n++
	}
	return n, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
