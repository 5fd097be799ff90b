package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// A booking's deposit may move in parts. A paid session can be refunded
// more than once (staff refund part of it, then the rest when the booking
// is cancelled), each refund with its own idempotence key and its own
// ledger row, until all of it is back; the session is refunded then, and
// completed (with what it still holds) until then. A confirmed booking
// moved to a larger deposit owes the difference (bookings.deposit_due),
// which the salon asks online (TopUpOnline: the client's next
// StartPayment is a payment of that amount, a session of its own) or at
// the visit (TopUpSalon). One moved to a smaller deposit has the
// difference refunded across its sessions, newest first.

// sessionMoney is what one of a booking's payment sessions took and gave
// back.
type sessionMoney struct {
	id       int64
	status   PaymentStatus
	amount   Money
	refunded Money
	token    bool // the one-time right to cancel or refund is there
}

// held is what of it the salon holds.
func (m sessionMoney) held() Money {
	switch m.status {
	case PayCompleted, PayRefunding, PayRefunded:
		return m.amount - m.refunded
	}
	return 0
}

// refundable is what a new refund may take of it now.
func (m sessionMoney) refundable() Money {
	if m.status != PayCompleted || !m.token {
		return 0
	}
	return m.amount - m.refunded
}

// inFlight reports whether money of it is moving (a payment being made or
// captured, a release, a refund).
func (m sessionMoney) inFlight() bool {
	switch m.status {
	case PayRegistering, PayRegistered, PayUnknown, PayAuthorized, PayCanceling, PayRefunding:
		return true
	}
	return false
}

// lockSessions reads booking's payment sessions, newest first, under their
// row locks (the caller holds the booking's).
func lockSessions(ctx context.Context, tx pgx.Tx, bookingID int64) ([]sessionMoney, error) {
	rows, err := tx.Query(ctx, `SELECT id, status, amount, refunded, cancel_token IS NOT NULL FROM payment_sessions
		WHERE booking_id = $1 ORDER BY id DESC FOR UPDATE`, bookingID)
	if err != nil {
		return nil, fmt.Errorf("payment sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sessionMoney, error) {
		var m sessionMoney
		err := r.Scan(&m.id, &m.status, &m.amount, &m.refunded, &m.token)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("payment sessions: %w", err)
	}
	return out, nil
}

// heldOf is what the salon holds of a booking's sessions.
func heldOf(ss []sessionMoney) Money {
	var n Money
	for _, m := range ss {
		n += m.held()
	}
	return n
}

// beginRefund moves completed session id to refunding for amount (at most
// what it still holds), taking its one-time cancel token in the same
// statement; the refund's idempotence key is its own (numbered by the
// session's refunds so far). It reports whether the session moved, and
// writes its follow-up job when it did.
func beginRefund(ctx context.Context, tx pgx.Tx, id int64, amount Money, why string, now time.Time) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE payment_sessions SET status = 'refunding', cancel_token = NULL, refund_amount = $2,
		refund_key = 'refund-' || id || CASE WHEN refunds > 0 THEN '-' || refunds ELSE '' END, refund_id = NULL, refund_asked_at = $3, refund_posted_at = NULL,
		version = version + 1, next_check_at = $3, checks = 0, last_error = COALESCE(NULLIF($4, ''), last_error), updated_at = now()
		WHERE id = $1 AND status = 'completed' AND cancel_token IS NOT NULL AND refunded + $2 <= amount`, id, amount, now, why)
	if err != nil {
		return false, fmt.Errorf("refund: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	return true, enqueueCheck(ctx, tx, id, now)
}

// refundAcross refunds amount of a booking's sessions (newest first, each
// as far as it holds money that may be refunded now) and returns the
// sessions to follow up. ErrConflict when they do not hold that much
// (or a refund of one is under way).
func refundAcross(ctx context.Context, tx pgx.Tx, ss []sessionMoney, amount Money, why string, now time.Time) ([]int64, error) {
	var can Money
	for _, m := range ss {
		can += m.refundable()
	}
	if amount > can {
		return nil, conflict("at most %s can be refunded now", can)
	}
	var ids []int64
	for _, m := range ss {
		part := min(amount, m.refundable())
		if part <= 0 {
			continue
		}
		moved, err := beginRefund(ctx, tx, m.id, part, why, now)
		if err != nil {
			return nil, err
		}
		if !moved {
			return nil, conflict("a refund of this deposit is under way")
		}
		ids, amount = append(ids, m.id), amount-part
		if amount == 0 {
			break
		}
	}
	return ids, nil
}

// finishRefund records session id's refund of key as made, in tx (the
// booking's row locked): what it refunded is added up, the ledger has its
// row, and the session is refunded when nothing is left of it (else
// completed again, with a fresh right to refund the rest; and, when its
// booking was cancelled while this refund was under way, the rest is
// refunded next). A refund of another key (an answer that came after its
// refund was recorded by another path, and another refund begun) records
// nothing. Its history says why it was recorded. It reports the part the
// ledger row took (-1: nothing recorded).
func finishRefund(ctx context.Context, tx pgx.Tx, id int64, key, why string, now time.Time) (int, error) {
	var part int
	var salonID, bookingID int64
	var amount, left Money
	var currency string
	var rest bool
	err := tx.QueryRow(ctx, `UPDATE payment_sessions SET refunded = refunded + refund_amount, refunds = refunds + 1,
		status = CASE WHEN refunded + refund_amount >= amount THEN 'refunded' ELSE 'completed' END,
		cancel_token = CASE WHEN refunded + refund_amount >= amount THEN NULL ELSE $3 END,
		version = version + 1, last_error = $5, next_check_at = $2, checks = 0, lease_until = NULL, refund_rest = false,
		updated_at = now()
		WHERE id = $1 AND status = 'refunding' AND refund_key = $4
		RETURNING refunds - 1, salon_id, booking_id, refund_amount, currency, amount - refunded,
		          (SELECT refund_rest FROM payment_sessions WHERE id = $1)`,
		id, now.Add(checkDelay(PayRefunded, false, 0)), randomHex(16), key, why).
		Scan(&part, &salonID, &bookingID, &amount, &currency, &left, &rest)
	if isNoRows(err) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("refund of payment session %d: %w", id, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO ledger_entries (salon_id, booking_id, payment_session_id, entry_type, amount, currency, part, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (payment_session_id, entry_type, part) DO NOTHING`,
		salonID, bookingID, id, DepositRefunded, amount, currency, part, now)
	if err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	if rest && left > 0 {
		if _, err := beginRefund(ctx, tx, id, left, "refunded in full: the booking was cancelled", now); err != nil {
			return 0, err
		}
	}
	return part, nil
}

// received writes the ledger's row of a session's deposit, once per
// session, numbered among the booking's deposits (0 the first, then each
// top-up), and takes what it paid off what the booking still owes.
func received(ctx context.Context, tx pgx.Tx, sess *PaymentSession, now time.Time) error {
	_, err := tx.Exec(ctx, `WITH l AS (
		    INSERT INTO ledger_entries (salon_id, booking_id, payment_session_id, entry_type, amount, currency, part, created_at)
		    SELECT $1, $2, $3, $4, $5, $6,
		           COALESCE((SELECT max(part) + 1 FROM ledger_entries WHERE booking_id = $2 AND entry_type = $4), 0), $7
		    ON CONFLICT (payment_session_id) WHERE entry_type = 'deposit_received' DO NOTHING
		    RETURNING amount
		)
		UPDATE bookings SET deposit_due = GREATEST(deposit_due - (SELECT amount FROM l), 0)
		WHERE id = $2 AND deposit_due > 0 AND EXISTS (SELECT 1 FROM l)`,
		sess.SalonID, sess.BookingID, sess.ID, DepositReceived, sess.Amount, sess.Currency, now)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// DepositHeld is what the salon holds of a booking's deposit paid online
// (captured, less what was refunded), and what of it may be refunded now
// (not while a refund of it is under way). Staff of the booking's salon.
// Errors: ErrNotFound, ErrForbidden.
func (s *Service) DepositHeld(ctx context.Context, salonID, bookingID int64) (held, refundable Money, err error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return 0, 0, err
	}
	if _, err := s.BookingView(ctx, salonID, bookingID); err != nil {
		return 0, 0, err
	}
	err = s.pool.QueryRow(ctx, `SELECT `+heldSQL+`,
		    COALESCE(sum(amount - refunded) FILTER (WHERE status = 'completed' AND cancel_token IS NOT NULL), 0)
		FROM payment_sessions WHERE booking_id = $1 AND salon_id = $2`, bookingID, salonID).Scan(&held, &refundable)
	return held, refundable, dbErr(err)
}

// heldSQL is what payment sessions hold of the money paid online: the
// captured, less what was refunded (an aggregate over payment_sessions).
const heldSQL = `COALESCE(sum(amount - refunded) FILTER (WHERE status IN ('completed', 'refunding', 'refunded')), 0)`

// depositDue reads what booking id (locked by the caller) still owes
// online of its deposit after a move to a larger one.
func depositDue(ctx context.Context, tx pgx.Tx, id int64) (Money, error) {
	var due Money
	if err := tx.QueryRow(ctx, `SELECT deposit_due FROM bookings WHERE id = $1`, id).Scan(&due); err != nil {
		return 0, fmt.Errorf("booking %d: %w", id, err)
	}
	return due, nil
}
