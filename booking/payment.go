package booking

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/booking/psp"
)

// Deposits are taken online as a saga: the booking holds its slot
// (pending, hold_expires_at) while a payment session takes the deposit
// through a provider, two-stage: authorized, then captured once the booking
// is confirmed. Money moves once:
//
//   - Create is Claim (a short transaction: the booking's lock in the
//     payments namespace, the check, the session inserted with a stable
//     idempotence key; a partial unique index allows one active session
//     per booking) then Register (the provider call, after commit, never
//     under a lock).
//   - Check asks the provider first, then applies its answer in one short
//     transaction that locks booking, session and ledger in that order on
//     every path, moves the session with UPDATE ... WHERE status IN (...)
//     AND version = read RETURNING, and writes one ledger entry per
//     session and kind (a unique index). Webhooks, the client's return and
//     the sweep all go through Check; a webhook is believed only as far as
//     the provider's own answer to Get.
//   - The provider calls a state asks for (capture, cancel, refund) run
//     after the transaction that decided them, with idempotence keys of
//     their own, and Check follows them up; the session's next_check_at is
//     the saga's outbox: the sweep (SweepPayments, several replicas at once
//     with SKIP LOCKED and a lease) picks every session whose time came.
//   - Cancelling a paid booking takes the session's one-time cancel token
//     in the transaction that moves it to refunding, before the provider is
//     called; the refund follows the salon's refund policy.
//
// A client is never charged for a slot they do not have: an authorization
// that arrives after the hold expired books the slot again if it is free
// and is captured, and is cancelled (the money released) if it is not.

// PaymentStatus is a payment session's state.
type PaymentStatus string

// Payment session states.
const (
	PayRegistering PaymentStatus = "registering" // claimed; the provider is being asked
	PayRegistered  PaymentStatus = "registered"  // the provider has the payment; the client pays
	PayUnknown     PaymentStatus = "unknown"     // the provider's answer was lost; Check finds out
	PayAuthorized  PaymentStatus = "authorized"  // paid and held: confirm, then capture (or cancel)
	PayCanceling   PaymentStatus = "canceling"   // the authorization is being released
	PayCompleted   PaymentStatus = "completed"   // captured: the deposit is the salon's
	PayCanceled    PaymentStatus = "canceled"    // released or declined: nothing was charged
	PayFailed      PaymentStatus = "failed"      // the provider refused, or the payment expired unpaid
	PayRefunding   PaymentStatus = "refunding"   // a refund is being made
	PayRefunded    PaymentStatus = "refunded"    // refunded
)

// Terminal reports whether no more money can move for the session (a
// completed session may still be refunded).
func (p PaymentStatus) Terminal() bool {
	switch p {
	case PayCompleted, PayCanceled, PayFailed, PayRefunded:
		return true
	}
	return false
}

// Ledger entry types.
const (
	DepositReceived = "deposit_received"
	DepositRefunded = "deposit_refunded"
)

// PaymentSession is a booking's deposit payment.
type PaymentSession struct {
	ID         int64
	SalonID    int64
	BookingID  int64
	Provider   string
	Status     PaymentStatus
	Amount     Money
	Currency   string
	ExternalID string
	// URL is where the client pays; empty once the payment is terminal.
	URL       string
	Version   int
	CreatedAt time.Time
}

// WithPayments takes deposits online through provider: client bookings of
// services with a deposit are pending until paid (WithOnlineDeposits).
func WithPayments(provider psp.Provider) Option {
	return func(s *Service) { s.psp, s.deposits = provider, true }
}

// Provider returns the payment provider (nil when deposits are paid in the
// salon).
func (s *Service) Provider() psp.Provider { return s.psp }

const sessionColumns = `id, salon_id, booking_id, provider, status, amount, currency, COALESCE(external_id, ''),
	COALESCE(confirmation_url, ''), version, created_at`

func scanSession(row pgx.Row) (*PaymentSession, error) {
	var p PaymentSession
	if err := row.Scan(&p.ID, &p.SalonID, &p.BookingID, &p.Provider, &p.Status, &p.Amount, &p.Currency, &p.ExternalID,
		&p.URL, &p.Version, &p.CreatedAt); err != nil {
		return nil, err
	}
	if p.Status.Terminal() || p.Status == PayRefunding || p.Status == PayCanceling {
		p.URL = ""
	}
	return &p, nil
}

// payment timing.
const (
	// paymentLease is how long a sweeper holds a session.
	paymentLease = 30 * time.Second
	// paymentGiveUp is how long after its hold a payment the client never
	// made is waited for before it is written off.
	paymentGiveUp = 2 * time.Hour
	// providerCall bounds one provider call made inside a request.
	providerCall = 8 * time.Second
)

// ReturnLink makes, from a payment's return reference, the URL the client
// comes back to after paying (the front end's page; it never carries a
// manage token: see PaymentReturn).
type ReturnLink func(ref string) string

// ReturnRefTTL is how long a return reference finds its booking.
const ReturnRefTTL = 24 * time.Hour

// StartPayment creates (or returns) the deposit payment of a pending
// booking the caller may see: Claim, then Register, the provider told to
// send the client back to back(ref) (nil: nowhere). The same call again
// returns the active session; a session with another amount active is
// ErrConflict. Errors: ErrNotFound, ErrConflict (not pending, or no
// deposit), ErrUnavailable.
func (s *Service) StartPayment(ctx context.Context, bookingID int64, back ReturnLink) (*PaymentSession, error) {
	caller, err := asked(ctx)
	if err != nil {
		return nil, err
	}
	if s.psp == nil {
		if _, err := s.BookingView(ctx, 0, bookingID); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("deposits are paid in the salon: %w", ErrConflict)
	}
	sess, err := s.claim(ctx, caller, bookingID, back)
	if err != nil {
		return nil, err
	}
	if sess.Status == PayRegistering || sess.Status == PayUnknown {
		return s.register(ctx, sess)
	}
	return sess, nil
}

// claim is Create's first, short transaction.
func (s *Service) claim(ctx context.Context, caller Caller, bookingID int64, back ReturnLink) (*PaymentSession, error) {
	var out *PaymentSession
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b, g, err := readBooking(ctx, tx, caller, 0, bookingID, "FOR UPDATE OF b")
		if err != nil {
			return err
		}
		if !caller.may(b, g) {
			return fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('payment-booking:' || $1::bigint, 0))`, b.ID); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		cur, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions
			WHERE booking_id = $1 AND status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding')`, b.ID))
		switch {
		case err == nil:
			if cur.Amount != b.Deposit {
				return fmt.Errorf("a payment of another amount is under way: %w", ErrConflict)
			}
			out = cur
			return nil
		case !isNoRows(err):
			return fmt.Errorf("claim: %w", err)
		}
		if b.Status != StatusPending || b.Deposit <= 0 {
			// Paid already, or nothing to pay: the latest session, if any.
			last, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions
				WHERE booking_id = $1 ORDER BY id DESC LIMIT 1`, b.ID))
			if err == nil {
				out = last
				return nil
			}
			return fmt.Errorf("booking %d is %s and owes no deposit: %w", b.ID, b.Status, ErrConflict)
		}
		salon, err := getSalon(ctx, tx, b.SalonID)
		if err != nil {
			return err
		}
		// The URL the client comes back to, fixed now, so that a retry of
		// the create sends the provider the very same request.
		ref, returnURL := newToken(), ""
		if back != nil {
			returnURL = back(ref)
		}
		out, err = scanSession(tx.QueryRow(ctx, `INSERT INTO payment_sessions (salon_id, booking_id, provider, status, amount,
			currency, idempotence_key, cancel_token, next_check_at, created_at, return_ref, return_url)
			VALUES ($1, $2, $3, 'registering', $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+sessionColumns,
			b.SalonID, b.ID, s.psp.Name(), b.Deposit, salon.Currency, "pay-"+strconv.FormatInt(b.ID, 10)+"-"+randomHex(8),
			randomHex(16), s.now().Add(paymentLease), s.now(), ref, returnURL))
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		// Should Register not finish (the process dies), the job does.
		return enqueueCheck(ctx, tx, out.ID, s.now().Add(paymentLease))
	})
	return out, err
}

// register is Create's provider call, after commit, with the session's
// stable idempotence key: a retry after a lost answer finds the same
// payment. A lost answer leaves the session unknown for Check.
func (s *Service) register(ctx context.Context, sess *PaymentSession) (*PaymentSession, error) {
	key, req, err := s.createRequest(ctx, sess)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	p, err := s.psp.Create(cctx, key, req)
	if err != nil {
		s.log.Warn("payment: register", "session", sess.ID, "err", err)
		to := PayUnknown
		if psp.IsRejected(err) {
			to = PayFailed
		}
		if _, err := s.transition(ctx, sess.ID, []PaymentStatus{PayRegistering, PayUnknown}, to, nil, err.Error()); err != nil {
			return nil, err
		}
		if to == PayFailed {
			// No payment can be taken: the hold ends now.
			if _, cerr := s.Cancel(As(context.WithoutCancel(ctx), BySystem()), CancelRequest{BookingID: sess.BookingID,
				Reason: "the payment provider refused the payment"}); cerr != nil {
				s.log.Warn("payment: release the hold", "booking", sess.BookingID, "err", cerr)
			}
			return nil, fmt.Errorf("the payment provider refused the payment: %w", ErrConflict)
		}
		return nil, fmt.Errorf("the payment provider did not answer: %w", ErrUnavailable)
	}
	return s.applyPayment(ctx, sess.ID, p)
}

// createRequest is the session's create request and its idempotence key:
// the same on every try.
func (s *Service) createRequest(ctx context.Context, sess *PaymentSession) (string, psp.CreateRequest, error) {
	var key, returnURL string
	if err := s.pool.QueryRow(ctx, `SELECT idempotence_key, return_url FROM payment_sessions WHERE id = $1`, sess.ID).
		Scan(&key, &returnURL); err != nil {
		return "", psp.CreateRequest{}, fmt.Errorf("payment %d: %w", sess.ID, dbErr(err))
	}
	return key, psp.CreateRequest{Amount: int64(sess.Amount), Currency: sess.Currency,
		Description: fmt.Sprintf("Deposit for booking #%d", sess.BookingID), ReturnURL: returnURL,
		Metadata: map[string]string{"booking_id": strconv.FormatInt(sess.BookingID, 10), "session_id": strconv.FormatInt(sess.ID, 10)}}, nil
}

// transition moves a session from one of from to to, outside the saga's
// booking lock (for states that touch no booking), and schedules its next
// check.
func (s *Service) transition(ctx context.Context, id int64, from []PaymentStatus, to PaymentStatus, p *psp.Payment, why string) (*PaymentSession, error) {
	var out *PaymentSession
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = setSession(ctx, tx, id, -1, from, to, p, why, s.now())
		return err
	})
	return out, err
}

// setSession is every session transition: UPDATE ... WHERE status IN
// (from) AND version = the version read (when one was: -1 for none)
// RETURNING, the version moved, the next check scheduled by state. A
// session that moved on meanwhile is errMoved: re-read it and follow.
func setSession(ctx context.Context, tx pgx.Tx, id int64, version int, from []PaymentStatus, to PaymentStatus, p *psp.Payment, why string, now time.Time) (*PaymentSession, error) {
	var ext, url *string
	if p != nil {
		ext = &p.ID
		if p.ConfirmationURL != "" {
			url = &p.ConfirmationURL
		}
	}
	next := now.Add(checkDelay(to, 0))
	out, err := scanSession(tx.QueryRow(ctx, `UPDATE payment_sessions SET status = $3, version = version + 1,
		external_id = COALESCE($4, external_id), confirmation_url = COALESCE($5, confirmation_url),
		last_error = $6, next_check_at = $7, checks = 0, lease_until = NULL, updated_at = now()
		WHERE id = $1 AND status = ANY($2) AND ($8 < 0 OR version = $8) RETURNING `+sessionColumns, id, from, to, ext, url, why, next, version))
	if isNoRows(err) {
		return nil, errMoved
	}
	if err != nil {
		return nil, fmt.Errorf("payment session %d: %w", id, err)
	}
	if inFlight(to) {
		if err := enqueueCheck(ctx, tx, id, next); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PaymentCheckArgs is the job that follows a payment session up: written
// in the transaction of every state change that leaves money in flight (a
// create to register, an authorization to capture or release, a refund),
// so the follow-up does not depend on the process that made the change.
// The sweep is the backstop for what the job does not finish.
type PaymentCheckArgs struct {
	SessionID int64 `json:"session_id"`
}

// Kind implements river.JobArgs.
func (PaymentCheckArgs) Kind() string { return "payment_check" }

// enqueueCheck writes the session's follow-up job in tx, to run at at.
func enqueueCheck(ctx context.Context, tx pgx.Tx, sessionID int64, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO river_job (kind, args, scheduled_at, max_attempts) VALUES ($1, jsonb_build_object('session_id', $2::bigint), $3, 5)`,
		PaymentCheckArgs{}.Kind(), sessionID, at)
	if err != nil {
		return fmt.Errorf("payment check job: %w", err)
	}
	return nil
}

// inFlight reports whether money is moving in a state (a follow-up is due).
func inFlight(st PaymentStatus) bool {
	switch st {
	case PayRegistering, PayUnknown, PayAuthorized, PayCanceling, PayRefunding:
		return true
	}
	return false
}

// errMoved: the session is no longer in the state the change was for (a
// concurrent path moved it first); the caller re-reads and follows.
var errMoved = errors.New("payment session moved on")

// checkDelay is when a session in a state is looked at again.
func checkDelay(st PaymentStatus, checks int) time.Duration {
	if st.Terminal() && st != PayCompleted {
		return 24 * time.Hour * 365
	}
	if st == PayCompleted {
		return 24 * time.Hour * 365
	}
	d := 15 * time.Second << min(checks, 8) // 15 s .. ~1 h
	if st == PayAuthorized || st == PayCanceling || st == PayRefunding || st == PayUnknown || st == PayRegistering {
		d = 5 * time.Second << min(checks, 6)
	}
	return d
}

// CheckPayment brings a session up to date with its provider: the
// provider's answer first, then one transaction, then whatever provider
// call that asks for (capture, cancel, refund), then once more. Only the
// platform asks (the jobs); ErrForbidden for anyone else.
func (s *Service) CheckPayment(ctx context.Context, sessionID int64) (*PaymentSession, error) {
	if err := onlySystem(ctx); err != nil {
		return nil, err
	}
	return s.checkPayment(ctx, sessionID)
}

func (s *Service) checkPayment(ctx context.Context, sessionID int64) (*PaymentSession, error) {
	if s.psp == nil {
		return nil, fmt.Errorf("no payment provider: %w", ErrConflict)
	}
	for range 4 {
		sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, sessionID))
		if isNoRows(err) {
			return nil, fmt.Errorf("payment session %d: %w", sessionID, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("payment session %d: %w", sessionID, dbErr(err))
		}
		var p *psp.Payment
		cctx, cancel := context.WithTimeout(ctx, providerCall)
		switch {
		case sess.Status == PayCompleted || sess.Status == PayCanceled || sess.Status == PayFailed || sess.Status == PayRefunded:
			cancel()
			return sess, nil
		case sess.Status == PayRefunding:
			err = s.refund(cctx, sess)
			cancel()
			if err != nil {
				return sess, s.checkFailed(ctx, sess, err)
			}
			continue
		case sess.ExternalID == "":
			// Registering or unknown: Create again with the same key finds
			// the payment if the first call reached the provider.
			key, req, rerr := s.createRequest(ctx, sess)
			if rerr != nil {
				cancel()
				return nil, rerr
			}
			p, err = s.psp.Create(cctx, key, req)
		default:
			p, err = s.psp.Get(cctx, sess.ExternalID)
		}
		cancel()
		if err != nil {
			return sess, s.checkFailed(ctx, sess, err)
		}
		next, err := s.applyPayment(ctx, sess.ID, p)
		if err != nil {
			return nil, err
		}
		if !s.actionDue(next) {
			return next, nil
		}
		acted, err := s.act(ctx, next, p)
		if err != nil {
			return next, s.checkFailed(ctx, next, err)
		}
		if !acted {
			return next, nil
		}
	}
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, sessionID))
}

// checkFailed records a failed provider call and backs the next check off;
// a refusal of a create fails the session.
func (s *Service) checkFailed(ctx context.Context, sess *PaymentSession, cause error) error {
	s.log.Warn("payment: check", "session", sess.ID, "status", sess.Status, "err", cause)
	// Money in flight (an unknown create, an authorization to capture or
	// release, a refund) is retried at every sweep; a payment waiting for
	// the client backs off to an hour.
	_, err := s.pool.Exec(ctx, `UPDATE payment_sessions SET checks = checks + 1, last_error = $2, lease_until = NULL,
		next_check_at = $3::timestamptz + make_interval(secs => CASE WHEN status = 'registered' THEN LEAST(3600, 15 * power(2, LEAST(checks, 8)))
		                                                             ELSE 5 END) WHERE id = $1`,
		sess.ID, cause.Error(), s.now())
	if err != nil {
		return dbErr(err)
	}
	return fmt.Errorf("payment provider: %v: %w", cause, ErrUnavailable)
}

// actionDue reports whether the session waits for a provider call of ours.
func (s *Service) actionDue(sess *PaymentSession) bool {
	return sess.Status == PayAuthorized || sess.Status == PayCanceling || sess.Status == PayRefunding
}

// act makes the provider call the session's state asks for: capture an
// authorization whose booking is confirmed, release one whose booking is
// gone, refund. It reports whether it called.
func (s *Service) act(ctx context.Context, sess *PaymentSession, p *psp.Payment) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	switch sess.Status {
	case PayAuthorized:
		var st Status
		if err := s.pool.QueryRow(ctx, `SELECT status FROM bookings WHERE id = $1`, sess.BookingID).Scan(&st); err != nil {
			return false, dbErr(err)
		}
		if st != StatusConfirmed && st != StatusCompleted && st != StatusNoShow {
			return false, nil // not confirmed: Check decides first
		}
		_, err := s.psp.Capture(cctx, fmt.Sprintf("capture-%d", sess.ID), sess.ExternalID, int64(sess.Amount), sess.Currency)
		return err == nil, err
	case PayCanceling:
		if p != nil && p.Status == psp.Pending {
			return false, nil // nothing held yet; Check looks again
		}
		_, err := s.psp.Cancel(cctx, fmt.Sprintf("cancel-%d", sess.ID), sess.ExternalID)
		return err == nil, err
	case PayRefunding:
		err := s.refund(cctx, sess)
		return err == nil, err
	}
	return false, nil
}

// refund makes the session's refund (its own idempotence key) and records it.
func (s *Service) refund(ctx context.Context, sess *PaymentSession) error {
	var key string
	var amount Money
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(refund_key, ''), COALESCE(refund_amount, 0) FROM payment_sessions WHERE id = $1`,
		sess.ID).Scan(&key, &amount); err != nil {
		return dbErr(err)
	}
	if _, err := s.psp.Refund(ctx, key, sess.ExternalID, int64(amount), sess.Currency); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM bookings WHERE id = $1 FOR UPDATE`, sess.BookingID); err != nil {
			return err
		}
		out, err := setSession(ctx, tx, sess.ID, -1, []PaymentStatus{PayRefunding}, PayRefunded, nil, "", s.now())
		if errors.Is(err, errMoved) {
			return nil
		}
		if err != nil {
			return err
		}
		return ledger(ctx, tx, out, DepositRefunded, amount, s.now())
	})
}

// ledger writes a ledger entry, once per session and kind.
func ledger(ctx context.Context, tx pgx.Tx, sess *PaymentSession, kind string, amount Money, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO ledger_entries (salon_id, booking_id, payment_session_id, entry_type, amount, currency, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (payment_session_id, entry_type) DO NOTHING`,
		sess.SalonID, sess.BookingID, sess.ID, kind, amount, sess.Currency, now)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// applyPayment applies the provider's state of the payment to the session
// and its booking, in one transaction: booking, then session, then ledger.
func (s *Service) applyPayment(ctx context.Context, sessionID int64, p *psp.Payment) (*PaymentSession, error) {
	var out *PaymentSession
	var notify func(context.Context, pgx.Tx) error
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		notify = nil
		var bookingID int64
		if err := tx.QueryRow(ctx, `SELECT booking_id FROM payment_sessions WHERE id = $1`, sessionID).Scan(&bookingID); err != nil {
			return fmt.Errorf("payment session %d: %w", sessionID, err)
		}
		b, _, err := readBooking(ctx, tx, BySystem(), 0, bookingID, "FOR UPDATE OF b")
		if err != nil {
			return err
		}
		sess, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1 FOR UPDATE`, sessionID))
		if err != nil {
			return fmt.Errorf("payment session %d: %w", sessionID, err)
		}
		out = sess
		now := s.now()
		move := func(from []PaymentStatus, to PaymentStatus, why string) error {
			next, err := setSession(ctx, tx, sess.ID, sess.Version, from, to, p, why, now)
			if err == nil {
				out, sess = next, next
			}
			return err
		}
		if p.Amount != 0 && p.Amount != int64(sess.Amount) {
			return fmt.Errorf("the provider's payment %s is of %d, the session of %d: %w", p.ID, p.Amount, sess.Amount, ErrConflict)
		}
		switch p.Status {
		case psp.Pending:
			switch sess.Status {
			case PayRegistering, PayUnknown:
				return move([]PaymentStatus{PayRegistering, PayUnknown}, PayRegistered, "")
			case PayRegistered, PayCanceling:
				// Unpaid, and the booking is gone: written off once its hold
				// is long past.
				if !b.Status.Active() && now.After(sess.CreatedAt.Add(paymentGiveUp)) {
					return move([]PaymentStatus{PayRegistered, PayCanceling}, PayFailed, "never paid")
				}
			}
			return nil
		case psp.WaitingForCapture:
			if sess.Status == PayRegistering || sess.Status == PayUnknown || sess.Status == PayRegistered {
				if err := move([]PaymentStatus{PayRegistering, PayUnknown, PayRegistered}, PayAuthorized, ""); err != nil {
					return err
				}
			}
			if sess.Status != PayAuthorized {
				return nil
			}
			switch {
			case b.Status == StatusPending:
				// Paid in time: confirm, then (after commit) capture.
				if _, err := setStatus(ctx, tx, b, StatusConfirmed, "", System, "paid", map[string]any{"payment": sess.ID}); err != nil {
					return err
				}
				confirmed := *b
				confirmed.Status = StatusConfirmed
				notify = func(ctx context.Context, tx pgx.Tx) error {
					return s.enqueueChange(ctx, tx, &confirmed, EventPaid, System, nil)
				}
			case b.Status == StatusCancelled && b.CancelReason == holdExpiredReason:
				// Paid after the hold expired: the slot again if it is free.
				ok, err := rebook(ctx, tx, b)
				if err != nil {
					return err
				}
				if !ok {
					return move([]PaymentStatus{PayAuthorized}, PayCanceling, "the slot was taken after the hold expired")
				}
				rebooked := *b
				rebooked.Status = StatusConfirmed
				notify = func(ctx context.Context, tx pgx.Tx) error {
					return s.enqueueChange(ctx, tx, &rebooked, EventPaid, System, nil)
				}
			case b.Status == StatusCancelled:
				// Cancelled by someone: release the money.
				return move([]PaymentStatus{PayAuthorized}, PayCanceling, "the booking was cancelled")
			}
			return nil
		case psp.Succeeded:
			// Only a capture of ours makes a payment succeed.
			switch sess.Status {
			case PayAuthorized:
				if err := move([]PaymentStatus{PayAuthorized}, PayCompleted, ""); err != nil {
					return err
				}
				return ledger(ctx, tx, sess, DepositReceived, sess.Amount, now)
			case PayCanceling:
				// The capture had happened (its answer was lost) when the
				// booking was cancelled: the money came, and goes back in
				// full (the client was releasing it).
				if err := move([]PaymentStatus{PayCanceling}, PayCompleted, "captured before the cancellation was known"); err != nil {
					return err
				}
				if err := ledger(ctx, tx, sess, DepositReceived, sess.Amount, now); err != nil {
					return err
				}
				next, err := scanSession(tx.QueryRow(ctx, `UPDATE payment_sessions SET status = 'refunding', refund_amount = amount,
					refund_key = 'refund-' || id, version = version + 1, next_check_at = $2, updated_at = now()
					WHERE id = $1 AND status = 'completed' RETURNING `+sessionColumns, sess.ID, now))
				if err != nil {
					return fmt.Errorf("payment session %d: %w", sess.ID, err)
				}
				out = next
				return enqueueCheck(ctx, tx, sess.ID, now)
			}
			return nil
		case psp.Canceled:
			switch sess.Status {
			case PayRegistering, PayUnknown, PayRegistered, PayAuthorized, PayCanceling:
				to := PayCanceled
				if sess.Status != PayCanceling && sess.Status != PayAuthorized {
					to = PayFailed // declined or expired before it was paid
				}
				if err := move([]PaymentStatus{sess.Status}, to, "canceled at the provider"); err != nil {
					return err
				}
				if b.Status == StatusPending {
					// The hold ends with the payment.
					if _, err := setStatus(ctx, tx, b, StatusCancelled, "payment declined", System, "payment_declined", nil); err != nil {
						return err
					}
					gone := *b
					gone.Status = StatusCancelled
					notify = func(ctx context.Context, tx pgx.Tx) error {
						return s.enqueueChange(ctx, tx, &gone, EventHoldExpired, System, nil)
					}
				}
			}
			return nil
		}
		return nil
	})
	if errors.Is(err, errMoved) {
		// Another path moved the session first: follow it.
		return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, sessionID))
	}
	if err != nil {
		return nil, err
	}
	if notify != nil {
		if err := s.inTx(ctx, func(tx pgx.Tx) error { return notify(ctx, tx) }); err != nil {
			s.log.Warn("payment: notify", "session", sessionID, "err", err)
		}
	}
	return out, nil
}

// holdExpiredReason is the cancel reason ExpireHolds writes.
const holdExpiredReason = "hold expired"

// rebook makes a booking whose hold expired active again, if its slot is
// still free (the exclusion constraint decides, under a savepoint).
func rebook(ctx context.Context, tx pgx.Tx, b *Booking) (bool, error) {
	if err := lockMasters(ctx, tx, b.MasterID); err != nil {
		return false, err // a busy master: the transaction runs again past its gate
	}
	if _, err := tx.Exec(ctx, `SAVEPOINT rebook`); err != nil {
		return false, err
	}
	_, err := setStatus(ctx, tx, b, StatusConfirmed, "", System, "paid_late", nil)
	if pgCode(err) == pgExclusionViolation {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT rebook`); err != nil {
			return false, err
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = tx.Exec(ctx, `RELEASE SAVEPOINT rebook`)
	return err == nil, err
}

// PaymentNotified handles a provider's notification about a payment: it is
// believed only as far as the provider's own answer (CheckPayment asks it).
// Unknown payments are ErrNotFound.
func (s *Service) PaymentNotified(ctx context.Context, provider, externalID string) (*PaymentSession, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM payment_sessions WHERE provider = $1 AND external_id = $2`, provider, externalID).Scan(&id)
	if isNoRows(err) {
		return nil, fmt.Errorf("payment %s: %w", externalID, ErrNotFound)
	}
	if err != nil {
		return nil, dbErr(err)
	}
	return s.checkPayment(ctx, id)
}

// PaymentReturn finds, by its return reference (the credential: any
// caller may present it, for ReturnRefTTL), the booking of a client back
// from paying, and brings its payment up to date with the provider first.
// It opens that page and nothing else: the view is a client's, and no
// action takes a reference (a change needs the manage token). Errors:
// ErrNotFound (unknown or expired).
func (s *Service) PaymentReturn(ctx context.Context, ref string) (*View, *PaymentSession, error) {
	if _, err := asked(ctx); err != nil {
		return nil, nil, err
	}
	if ref == "" || len(ref) > 100 {
		return nil, nil, fmt.Errorf("payment return: %w", ErrNotFound)
	}
	var id, bookingID int64
	err := s.pool.QueryRow(ctx, `SELECT id, booking_id FROM payment_sessions WHERE return_ref = $1 AND created_at > $2`,
		ref, s.now().Add(-ReturnRefTTL)).Scan(&id, &bookingID)
	if isNoRows(err) {
		return nil, nil, fmt.Errorf("payment return: %w", ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("payment return: %w", dbErr(err))
	}
	sess, err := s.checkPayment(ctx, id)
	if err != nil && !errors.Is(err, ErrUnavailable) {
		return nil, nil, err
	}
	if sess == nil {
		if sess, err = scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, id)); err != nil {
			return nil, nil, fmt.Errorf("payment return: %w", dbErr(err))
		}
	}
	v, err := s.BookingView(As(ctx, BySystem()), 0, bookingID)
	if err != nil {
		return nil, nil, err
	}
	s.decorate(v, Visitor()) // as a client sees it (whether they may still change it: with their manage link)
	return v, sess, nil
}

// PaymentOf returns the latest payment session of a booking the caller
// may see (nil when it has none); with check, it is first brought up to
// date with the provider (the client is back from the payment page).
func (s *Service) PaymentOf(ctx context.Context, salonID, bookingID int64, check bool) (*PaymentSession, error) {
	if _, err := s.BookingView(ctx, salonID, bookingID); err != nil {
		return nil, err
	}
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions
		WHERE booking_id = $1 ORDER BY id DESC LIMIT 1`, bookingID))
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, dbErr(err)
	}
	if check && !sess.Status.Terminal() && s.psp != nil {
		if next, err := s.checkPayment(ctx, sess.ID); err == nil {
			sess = next
		}
	}
	return sess, nil
}

// SweepPayments brings up to date every session whose check is due: taken
// with FOR UPDATE SKIP LOCKED and a lease, so replicas share the work and
// none takes a session another holds. It returns how many it checked.
// Only the platform asks (ErrForbidden).
func (s *Service) SweepPayments(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	if s.psp == nil {
		return 0, nil
	}
	now := s.now()
	rows, err := s.pool.Query(ctx, `UPDATE payment_sessions SET lease_until = $2
		WHERE id IN (SELECT id FROM payment_sessions
		             WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding')
		               AND next_check_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
		             ORDER BY next_check_at LIMIT 50 FOR UPDATE SKIP LOCKED)
		RETURNING id`, now, now.Add(paymentLease))
	if err != nil {
		return 0, fmt.Errorf("sweep payments: %w", dbErr(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("sweep payments: %w", dbErr(err))
	}
	for _, id := range ids {
		if _, err := s.checkPayment(ctx, id); err != nil && !errors.Is(err, ErrUnavailable) {
			s.log.Warn("payment sweep", "session", id, "err", err)
		}
		_, _ = s.pool.Exec(ctx, `UPDATE payment_sessions SET lease_until = NULL WHERE id = $1`, id)
	}
	return len(ids), nil
}

// startRefund, in the transaction that cancels booking b (locked), takes
// the one-time right to cancel its payment: a paid deposit is refunded as
// the salon's policy says (the session moves to refunding), an unpaid
// payment is released (canceling). It returns the session to follow up
// after commit (0 when none).
func startRefund(ctx context.Context, tx pgx.Tx, b *Booking, salon *Salon, caller Caller, now time.Time) (int64, error) {
	var id int64
	var status PaymentStatus
	var amount Money
	err := tx.QueryRow(ctx, `SELECT id, status, amount FROM payment_sessions WHERE booking_id = $1 AND cancel_token IS NOT NULL
		AND status IN ('registering', 'registered', 'unknown', 'authorized', 'completed') ORDER BY id DESC LIMIT 1 FOR UPDATE`, b.ID).
		Scan(&id, &status, &amount)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("refund: %w", err)
	}
	if status != PayCompleted {
		if _, err := tx.Exec(ctx, `UPDATE payment_sessions SET status = 'canceling', cancel_token = NULL, version = version + 1,
			next_check_at = $2, updated_at = now() WHERE id = $1`, id, now); err != nil {
			return 0, fmt.Errorf("refund: %w", err)
		}
		return id, enqueueCheck(ctx, tx, id, now)
	}
	refund := amount
	switch salon.RefundPolicy {
	case RefundNever:
		refund = 0
	case RefundBeforeCutoff:
		if caller.client() && !now.Before(salon.ChangeableUntil(b)) {
			refund = 0
		}
	}
	if refund == 0 {
		return 0, nil
	}
	if _, err = tx.Exec(ctx, `UPDATE payment_sessions SET status = 'refunding', cancel_token = NULL, refund_amount = $2,
		refund_key = $3, version = version + 1, next_check_at = $4, updated_at = now()
		WHERE id = $1 AND status = 'completed' AND cancel_token IS NOT NULL`, id, refund, fmt.Sprintf("refund-%d", id), now); err != nil {
		return 0, fmt.Errorf("refund: %w", err)
	}
	return id, enqueueCheck(ctx, tx, id, now)
}

// followUp runs the provider side of a payment change after its
// transaction, within a short bound; the sweep finishes what this does not.
func (s *Service) followUp(ctx context.Context, sessionID int64) {
	if sessionID == 0 || s.psp == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), providerCall)
	defer cancel()
	if _, err := s.checkPayment(cctx, sessionID); err != nil {
		s.log.Info("payment follow-up left to the sweep", "session", sessionID, "err", err)
	}
}

// LedgerEntry is money that moved.
type LedgerEntry struct {
	ID        int64
	BookingID int64
	SessionID int64
	Type      string
	Amount    Money
	Currency  string
	At        time.Time
}

// Ledger lists the salon's ledger entries of the days [from, from+days).
func (s *Service) Ledger(ctx context.Context, salonID int64, from Date, days int) ([]LedgerEntry, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, booking_id, payment_session_id, entry_type, amount, currency, created_at
		FROM ledger_entries WHERE salon_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, id`,
		salonID, from.Start(salon.Location()), from.AddDays(days).Start(salon.Location()))
	if err != nil {
		return nil, dbErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (LedgerEntry, error) {
		var e LedgerEntry
		err := r.Scan(&e.ID, &e.BookingID, &e.SessionID, &e.Type, &e.Amount, &e.Currency, &e.At)
		return e, err
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// RefundDeposit refunds a booking's paid deposit in full, as staff decide
// (whatever the refund policy said at cancellation): the session's
// one-time cancel token is taken in the transaction that moves it to
// refunding, then the provider is called. Errors: ErrNotFound, ErrConflict
// (nothing paid, or refunded already), ErrForbidden (not staff).
func (s *Service) RefundDeposit(ctx context.Context, salonID, bookingID int64) (*PaymentSession, error) {
	caller, err := asked(ctx)
	if err != nil {
		return nil, err
	}
	if caller.kind != callerStaff && caller.kind != callerSystem {
		return nil, fmt.Errorf("only the salon refunds a deposit: %w", ErrForbidden)
	}
	var id int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b, g, err := readBooking(ctx, tx, caller, salonID, bookingID, "FOR UPDATE OF b")
		if err != nil {
			return err
		}
		if !caller.may(b, g) {
			return fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
		}
		err = tx.QueryRow(ctx, `UPDATE payment_sessions SET status = 'refunding', cancel_token = NULL, refund_amount = amount,
			refund_key = 'refund-' || id, version = version + 1, next_check_at = $2, updated_at = now()
			WHERE booking_id = $1 AND status = 'completed' AND cancel_token IS NOT NULL RETURNING id`, b.ID, s.now()).Scan(&id)
		if isNoRows(err) {
			return fmt.Errorf("no paid deposit to refund: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		return enqueueCheck(ctx, tx, id, s.now())
	})
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, id)
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, id))
}

// Payments lists the salon's payment sessions created on the days
// [from, from+days), newest first.
func (s *Service) Payments(ctx context.Context, salonID int64, from Date, days int) ([]PaymentSession, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sessionColumns+` FROM payment_sessions
		WHERE salon_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY id DESC LIMIT 500`,
		salonID, from.Start(salon.Location()), from.AddDays(days).Start(salon.Location()))
	if err != nil {
		return nil, dbErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (PaymentSession, error) {
		p, err := scanSession(r)
		if err != nil {
			return PaymentSession{}, err
		}
		return *p, nil
	})
}
