package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"salon/i18n"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// What the saga cannot finish alone is put before the salon's staff, with
// what they may do about it; each action is audited.

// AttentionKind is why a payment needs a person.
type AttentionKind string

// Kinds of attention.
const (
	// AttentionStuck: money in flight the checks keep failing to move.
	AttentionStuck AttentionKind = "stuck"
	// AttentionHeld: money held at the provider for a booking no longer kept.
	AttentionHeld AttentionKind = "held"
	// AttentionKept: a deposit captured for a booking that was cancelled
	// (kept by the refund policy): the salon may refund it.
	AttentionKept AttentionKind = "kept"
	// AttentionReceipt: the provider refused a visit's settlement receipt
	// (of its deposit, or of what it used of a balance sold online).
	AttentionReceipt AttentionKind = "receipt"
)

// stuckAfter is how many checks in a row that changed nothing (or failed)
// make money in flight a person's matter.
const stuckAfter = 3

// AttentionItem is one payment needing a person.
type AttentionItem struct {
	Kind          AttentionKind
	Session       PaymentSession
	BookingStatus Status
	StartsAt      time.Time
	Since         time.Time // when the session last changed
	// RefundLeft: the session's refund is one the checks will not finish
	// (the provider cancelled it, or they left it to a person): staff ask
	// for it again (RetryPayment), or record it as made at the provider
	// (MarkDepositRefunded).
	RefundLeft bool
	// Refund is the amount of the session's refund under way (or last made).
	Refund Money
	// SaleID, when not 0, says the item is the refused settlement of what
	// the booking used of a balance sold online (sale SaleID): Session is
	// then the sale's payment as far as it goes (no ID; its Amount the
	// settlement's, its LastError the refusal), and BalanceID the
	// balance it sold.
	SaleID, BalanceID int64
}

// Attention lists the salon's payments that need a person, oldest first.
// Admins and owners. Errors: ErrForbidden.
func (s *Service) Attention(ctx context.Context, salonID int64) ([]AttentionItem, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT * FROM (SELECT s.id, s.salon_id, s.booking_id, s.provider, s.status, s.amount, s.currency,
		COALESCE(s.external_id, ''), '', s.version, s.checks, s.last_error, s.hold_until, s.created_at, b.status, b.starts_at, s.updated_at AS since,
		CASE WHEN s.status IN ('registering', 'unknown', 'refunding') OR (s.status IN ('authorized', 'canceling') AND s.checks >= $2) THEN 'stuck'
		     WHEN s.status = 'completed' AND s.settlement_error IS NOT NULL THEN 'receipt'
		     WHEN s.status IN ('authorized', 'canceling') AND b.status NOT IN ('pending', 'confirmed', 'completed', 'no_show') THEN 'held'
		     ELSE 'kept' END, COALESCE(s.refund_amount, 0), 0::bigint, 0::bigint
		FROM payment_sessions s JOIN bookings b ON b.id = s.booking_id
		WHERE s.salon_id = $1 AND (
		      (s.status IN ('registering', 'unknown', 'authorized', 'canceling', 'refunding') AND s.checks >= $2)
		   OR (s.status IN ('authorized', 'canceling') AND b.status = 'cancelled' AND s.updated_at < now() - interval '10 minutes')
		   OR (s.status = 'completed' AND b.status = 'cancelled' AND s.refunds = 0) -- (a refund of part of it: staff decided)
		   OR (s.status = 'completed' AND s.settlement_error IS NOT NULL))
		UNION ALL
		-- What a visit used of a balance sold online, its settlement refused.
		SELECT 0, x.salon_id, x.booking_id, s.provider, s.status, round(x.amount / 100.0, 2), s.currency,
		COALESCE(s.external_id, ''), '', 0, 0, x.error, s.created_at, s.created_at, b.status, b.starts_at, x.updated_at, 'receipt', 0, s.id, COALESCE(s.balance_id, 0)
		FROM balance_settlements x JOIN balance_sales s ON s.id = x.sale_id JOIN bookings b ON b.id = x.booking_id
		WHERE x.salon_id = $1 AND x.error IS NOT NULL) a
		ORDER BY since LIMIT 200`, salonID, stuckAfter)
	if err != nil {
		return nil, dbErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AttentionItem, error) {
		var it AttentionItem
		var p PaymentSession
		err := r.Scan(&p.ID, &p.SalonID, &p.BookingID, &p.Provider, &p.Status, &p.Amount, &p.Currency, &p.ExternalID,
			&p.URL, &p.Version, &p.Checks, &p.LastError, &p.HoldUntil, &p.CreatedAt, &it.BookingStatus, &it.StartsAt, &it.Since, &it.Kind, &it.Refund,
			&it.SaleID, &it.BalanceID)
		it.Session, it.RefundLeft = p, refundLeftToStaff(p.Status, p.LastError)
		return it, err
	})
}

// PaymentEvent is a change of a payment session's state, and why.
type PaymentEvent struct {
	SessionID int64
	From, To  PaymentStatus
	Detail    string
	At        time.Time
}

// PaymentHistory is every change of the payments of a booking, oldest
// first. Admins and owners.
func (s *Service) PaymentHistory(ctx context.Context, salonID, bookingID int64) ([]PaymentEvent, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT e.session_id, COALESCE(e.from_status, ''), e.to_status, e.detail, e.at
		FROM payment_events e JOIN payment_sessions s ON s.id = e.session_id
		WHERE s.salon_id = $1 AND s.booking_id = $2 ORDER BY e.id`, salonID, bookingID)
	if err != nil {
		return nil, dbErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (PaymentEvent, error) {
		var e PaymentEvent
		err := r.Scan(&e.SessionID, &e.From, &e.To, &e.Detail, &e.At)
		return e, err
	})
}

// askableAgain is a refunding session's condition for staff to ask for
// its refund again: the provider cancelled it, or the checks could not
// tell whether it was made and left it to a person.
var askableAgain = func() string {
	var in []string
	for _, why := range []string{refundCancelled, refundUnlisted, refundUnaccounted} {
		in = append(in, "'"+strings.ReplaceAll(why, "'", "''")+"'") // (the texts are ours: quoted as literals)
	}
	return "last_error IN (" + strings.Join(in, ", ") + ")"
}()

// RetryPayment has a payment's check made now, as staff ask, and again
// soon after (its backoff starts over); a refund the provider cancelled,
// or one the checks left to a person, is asked again under a new key,
// unless the provider's payment shows more refunded than our records
// (ErrConflict: one made there by hand is recorded as made, with
// MarkDepositRefunded). Admins and owners. Errors: ErrForbidden,
// ErrNotFound, ErrConflict, ErrUnavailable (the provider did not answer).
func (s *Service) RetryPayment(ctx context.Context, salonID, sessionID int64) (*PaymentSession, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	// A refund the provider cancelled, or one the checks left to a person
	// (who found at the provider that it was not made), is asked again,
	// under a new key: only while the provider's payment shows no refund
	// beyond what our records have (one made there by hand is recorded,
	// not made twice).
	var st PaymentStatus
	var why, provider, paymentID string
	var before Money
	err := s.pool.QueryRow(ctx, `SELECT status, last_error, provider, COALESCE(external_id, ''), refunded
		FROM payment_sessions WHERE id = $1 AND salon_id = $2`, sessionID, salonID).Scan(&st, &why, &provider, &paymentID, &before)
	if isNoRows(err) {
		return nil, fmt.Errorf("payment %d: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("payment %d: %w", sessionID, dbErr(err))
	}
	if refundLeftToStaff(st, why) {
		if err := s.refundNotMadeElsewhere(ctx, provider, paymentID, before); err != nil {
			return nil, fmt.Errorf("payment %d: %w", sessionID, err)
		}
	}
	err = s.staffPaymentAction(ctx, salonID, sessionID, "payment_retry", `UPDATE payment_sessions SET next_check_at = $2, checks = 0,
		lease_until = NULL,
		refund_key = CASE WHEN status = 'refunding' AND `+askableAgain+` THEN 'refund-' || id || '-at' || (extract(epoch FROM $2::timestamptz) * 1000)::bigint ELSE refund_key END,
		refund_id = CASE WHEN status = 'refunding' AND `+askableAgain+` THEN NULL ELSE refund_id END,
		refund_asked_at = CASE WHEN status = 'refunding' AND `+askableAgain+` THEN $2 ELSE refund_asked_at END,
		refund_posted_at = CASE WHEN status = 'refunding' AND `+askableAgain+` THEN NULL ELSE refund_posted_at END,
		last_error = CASE WHEN status = 'refunding' AND `+askableAgain+` THEN '' ELSE last_error END
		WHERE id = $1 AND status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding') RETURNING status`)
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, sessionID)
	return s.paymentOfSalon(ctx, salonID, sessionID)
}

// ReleasePayment releases money held at the provider for a booking that is
// no longer kept (nothing is charged), as staff ask. Admins and owners.
// Errors: ErrConflict (not held, or its booking is kept).
func (s *Service) ReleasePayment(ctx context.Context, salonID, sessionID int64) (*PaymentSession, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	err := s.staffPaymentAction(ctx, salonID, sessionID, "payment_release", `UPDATE payment_sessions s SET status = 'canceling',
		cancel_token = NULL, version = version + 1, next_check_at = $2, checks = 0, last_error = 'released by the salon', updated_at = now()
		FROM bookings b WHERE s.id = $1 AND b.id = s.booking_id AND s.status = 'authorized' AND b.status = 'cancelled' RETURNING s.status`)
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, sessionID)
	return s.paymentOfSalon(ctx, salonID, sessionID)
}

// MarkDepositRefunded records a deposit's refund as made, as staff say
// having found it made at the provider, when the checks will not: the
// provider cancelled it (and it was made there since, by hand), or they
// left it to a person (the provider lists no refunds, or its refunds are
// not ours alone). Only what the provider's payment shows is recorded:
// its refunds that succeeded cover the session's earlier ones and this
// (refundShown). Nothing is asked of the provider. What a refund the
// provider reported makes is written (the ledger's row, the session
// refunded, or completed with the rest refundable, and the client told),
// with an audit row naming who said so. Admins and owners. Errors:
// ErrForbidden, ErrNotFound, ErrConflict (no refund is owed, the checks
// follow it, it was asked of the provider a moment ago, or the provider's
// payment does not show it), ErrUnavailable (the provider did not answer).
func (s *Service) MarkDepositRefunded(ctx context.Context, salonID, sessionID int64) (*PaymentSession, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	// The provider's payment must show it: read first, outside the
	// transaction, then recorded only if the refund is still the one read.
	var provider, paymentID, seenKey string
	var before, owed Money
	var st PaymentStatus
	var why string
	var at *time.Time
	err = s.pool.QueryRow(ctx, `SELECT provider, COALESCE(external_id, ''), status, last_error, COALESCE(refund_key, ''), refunded,
		    COALESCE(refund_amount, 0), refund_posted_at
		FROM payment_sessions WHERE id = $1 AND salon_id = $2`, sessionID, salonID).
		Scan(&provider, &paymentID, &st, &why, &seenKey, &before, &owed, &at)
	if isNoRows(err) {
		return nil, fmt.Errorf("payment %d: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("payment %d: %w", sessionID, dbErr(err))
	}
	if err := s.refundRecordable(st, why, at); err != nil {
		return nil, err
	}
	shown, err := s.refundShown(ctx, provider, paymentID, before, owed)
	if err != nil {
		return nil, fmt.Errorf("payment %d: %w", sessionID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var bookingID int64
		err := tx.QueryRow(ctx, `SELECT booking_id FROM payment_sessions WHERE id = $1 AND salon_id = $2`, sessionID, salonID).Scan(&bookingID)
		if isNoRows(err) {
			return fmt.Errorf("payment %d: %w", sessionID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		// (The core's lock order: the booking's row, then the session's.)
		if _, err := tx.Exec(ctx, `SELECT 1 FROM bookings WHERE id = $1 FOR UPDATE`, bookingID); err != nil {
			return err
		}
		var status PaymentStatus
		var lastError, key string
		var amount Money
		var posted *time.Time
		if err := tx.QueryRow(ctx, `SELECT status, last_error, COALESCE(refund_key, ''), COALESCE(refund_amount, 0), refund_posted_at
			FROM payment_sessions WHERE id = $1 FOR UPDATE`, sessionID).Scan(&status, &lastError, &key, &amount, &posted); err != nil {
			return err
		}
		if err := s.refundRecordable(status, lastError, posted); err != nil {
			return err
		}
		if key != seenKey {
			return conflict("the refund moved on meanwhile: look at it again")
		}
		// Made by hand for more than was owed (the whole deposit for a
		// part, say): what the payment shows is recorded, so that the
		// ledger stays what the provider paid back.
		if err := tx.QueryRow(ctx, `UPDATE payment_sessions SET refund_amount = GREATEST(refund_amount, LEAST($2 - refunded, amount - refunded))
			WHERE id = $1 RETURNING refund_amount`, sessionID, shown).Scan(&amount); err != nil {
			return err
		}
		if part, err := finishRefund(ctx, tx, sessionID, key, refundRecorded, s.now()); err != nil {
			return err
		} else if part < 0 {
			return conflict("no refund is owed")
		}
		// What the record made of the session: refunded, or completed with
		// the rest refundable (the rest, owed since its booking was
		// cancelled, is then asked next, with its own check, as after a
		// refund the provider reported).
		var after PaymentStatus
		if err := tx.QueryRow(ctx, `SELECT CASE WHEN refunded >= amount THEN 'refunded' ELSE 'completed' END
			FROM payment_sessions WHERE id = $1`, sessionID).Scan(&after); err != nil {
			return err
		}
		b, err := getBooking(ctx, tx, salonID, bookingID)
		if err != nil {
			return err
		}
		n := notifyArgs(b, EventRefunded, System, nil)
		n.Amount = amount
		if err := s.enqueueNotice(ctx, tx, b, n, System); err != nil {
			return err
		}
		return auditPayment(ctx, tx, salonID, caller, "payment_refund_recorded", sessionID, PayRefunding, after)
	})
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, sessionID)
	return s.paymentOfSalon(ctx, salonID, sessionID)
}

// staffPaymentAction runs one change of a session of the salon (sql: $1
// the session, $2 now, RETURNING its status), with its follow-up job and
// an audit row naming who asked. Nothing to change is ErrConflict.
func (s *Service) staffPaymentAction(ctx context.Context, salonID, sessionID int64, action, sql string) error {
	caller, err := s.asked(ctx)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var bookingID int64
		var before PaymentStatus
		err := tx.QueryRow(ctx, `SELECT booking_id, status FROM payment_sessions WHERE id = $1 AND salon_id = $2`, sessionID, salonID).
			Scan(&bookingID, &before)
		if isNoRows(err) {
			return fmt.Errorf("payment %d: %w", sessionID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM bookings WHERE id = $1 FOR UPDATE`, bookingID); err != nil {
			return err
		}
		var after PaymentStatus
		if err := tx.QueryRow(ctx, sql, sessionID, s.now()).Scan(&after); isNoRows(err) {
			return conflict("payment %d is %s: nothing to do", sessionID, i18n.New(string(before)))
		} else if err != nil {
			return err
		}
		if err := enqueueCheck(ctx, tx, sessionID, s.now()); err != nil {
			return err
		}
		return auditPayment(ctx, tx, salonID, caller, action, sessionID, before, after)
	})
}

// auditPayment writes the audit row of a person's action on a payment.
func auditPayment(ctx context.Context, tx pgx.Tx, salonID int64, caller Caller, action string, sessionID int64, before, after PaymentStatus) error {
	old, _ := json.Marshal(map[string]any{"status": before})
	now, _ := json.Marshal(map[string]any{"status": after})
	who := caller.auditName()
	if who == "" {
		who = "system"
	}
	_, err := tx.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
		VALUES ($1, $2, $3, 'payment_session', $4, $5, $6)`, salonID, who, action, sessionID, old, now)
	return err
}

func (s *Service) paymentOfSalon(ctx context.Context, salonID, sessionID int64) (*PaymentSession, error) {
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1 AND salon_id = $2`, sessionID, salonID))
	if err != nil {
		return nil, dbErr(err)
	}
	return sess, nil
}
