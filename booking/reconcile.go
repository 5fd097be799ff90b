package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"salon/booking/psp"
)

// Reconciliation reads the provider's own list of payments and compares it
// with our sessions: what a lost notification, a written-off session or a
// crash between a provider call and its record left behind (money held
// for a session we think ended, a payment we never learned was made) is
// found there, and settled by the saga's own rules (checkPayment), with an
// audit row for every session it moves.

// ReconcileWindow is how far back reconciliation reads the provider's
// list: longer than an authorization can be held (YooKassa: up to 7 days).
const ReconcileWindow = 8 * 24 * time.Hour

// DefaultReconcileEvery is how often the provider's list is read.
const DefaultReconcileEvery = time.Hour

// Reconciliation is what one pass found.
type Reconciliation struct {
	Listed  int // the provider's payments read
	Checked int // ours whose state did not match the provider's, checked
	Settled int // of those, moved by the check (each with an audit row)
	Failed  int // checks that could not finish (the sweep goes on)
}

// ReconcilePayments reads the provider's payments created in the last
// ReconcileWindow and checks every one of ours whose state does not
// match the provider's (matched by the payment's id, or, for a create
// whose answer was lost, by the session id in its metadata). Only the
// platform asks (ErrForbidden).
func (s *Service) ReconcilePayments(ctx context.Context) (Reconciliation, error) {
	var r Reconciliation
	if err := onlySystem(ctx); err != nil {
		return r, err
	}
	if s.psp == nil {
		return r, nil
	}
	since := s.now().Add(-ReconcileWindow)
	cursor := ""
	for page := 0; page < 1000; page++ {
		cctx, cancel := context.WithTimeout(ctx, providerCall)
		items, next, err := psp.List(cctx, s.psp, since, cursor)
		cancel()
		if errors.Is(err, psp.ErrCannotList) {
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("reconcile: %w", err)
		}
		for i := range items {
			r.Listed++
			if err := s.reconcileOne(ctx, &items[i], &r); err != nil {
				return r, err
			}
		}
		if next == "" || next == cursor {
			return r, nil
		}
		cursor = next
	}
	return r, nil
}

// reconcileOne compares one of the provider's payments with its session.
func (s *Service) reconcileOne(ctx context.Context, p *psp.Payment, r *Reconciliation) error {
	var id, salonID int64
	var status PaymentStatus
	err := s.pool.QueryRow(ctx, `SELECT id, salon_id, status FROM payment_sessions WHERE provider = $1 AND external_id = $2`,
		s.psp.Name(), p.ID).Scan(&id, &salonID, &status)
	if saleID, _ := strconv.ParseInt(p.Metadata["sale_id"], 10, 64); isNoRows(err) && saleID > 0 {
		return s.reconcileSale(ctx, saleID, p, r)
	}
	if isNoRows(err) {
		// A create whose answer was lost: the session is ours by the id it
		// gave the provider, and has no payment id yet.
		sid, _ := strconv.ParseInt(p.Metadata["session_id"], 10, 64)
		err = s.pool.QueryRow(ctx, `SELECT id, salon_id, status FROM payment_sessions WHERE id = $1 AND provider = $2
			AND external_id IS NULL`, sid, s.psp.Name()).Scan(&id, &salonID, &status)
		if isNoRows(err) {
			return nil // not ours (another shop's use of the account), or long gone
		}
	}
	if err != nil {
		return fmt.Errorf("reconcile: %w", dbErr(err))
	}
	if agrees(status, p.Status) {
		return nil
	}
	r.Checked++
	next, err := s.checkPayment(ctx, id)
	if err != nil {
		r.Failed++
		s.log.Warn("payment reconcile: check", "session", id, "provider_status", p.Status, "err", err)
		if next == nil {
			return nil
		}
	}
	if next.Status == status {
		return nil
	}
	r.Settled++
	old, _ := json.Marshal(map[string]any{"status": status, "provider_status": p.Status})
	now, _ := json.Marshal(map[string]any{"status": next.Status})
	if _, err := s.pool.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
		VALUES ($1, 'system', 'payment_reconciled', 'payment_session', $2, $3, $4)`, salonID, id, old, now); err != nil {
		return fmt.Errorf("reconcile: audit: %w", dbErr(err))
	}
	s.log.Info("payment reconciled", "session", id, "from", status, "to", next.Status, "provider_status", p.Status)
	return nil
}

// agrees reports whether a session's state is what the provider's state of
// its payment leaves it at, or on its way there with nothing missed (the
// sweep finishes those).
func agrees(ours PaymentStatus, theirs psp.Status) bool {
	switch theirs {
	case psp.Pending:
		return ours == PayRegistered || ours == PayCanceling || ours == PayFailed // (failed: written off, still watched here)
	case psp.WaitingForCapture:
		return ours == PayAuthorized || ours == PayCanceling
	case psp.Succeeded:
		return ours == PayCompleted || ours == PayRefunding || ours == PayRefunded
	case psp.Canceled:
		return ours == PayCanceled || ours == PayFailed
	}
	return false
}

// reconcileSale compares one of the provider's payments with the sale of a
// package or certificate it was made for, and checks the sale when they
// disagree.
func (s *Service) reconcileSale(ctx context.Context, saleID int64, p *psp.Payment, r *Reconciliation) error {
	var status PaymentStatus
	err := s.pool.QueryRow(ctx, `SELECT status FROM balance_sales WHERE id = $1 AND provider = $2 AND (external_id IS NULL OR external_id = $3)`,
		saleID, s.psp.Name(), p.ID).Scan(&status)
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reconcile: %w", dbErr(err))
	}
	if agrees(status, p.Status) {
		return nil
	}
	r.Checked++
	moved, err := s.checkSale(ctx, saleID)
	if err != nil {
		r.Failed++
		s.log.Warn("payment reconcile: sale", "sale", saleID, "provider_status", p.Status, "err", err)
	}
	if moved {
		r.Settled++
		s.log.Info("sale reconciled", "sale", saleID, "from", status, "provider_status", p.Status)
	}
	return nil
}
