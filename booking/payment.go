package booking

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/booking/psp"
	"salon/i18n"
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
//     transaction that locks (the master, when a late payment may take the
//     slot again,) the booking, the session and the ledger in that order on
//     every path, moves the session with UPDATE ... WHERE status IN (...)
//     RETURNING, writes one deposit per booking (a unique index), and
//     writes the notice the change owes the client. Webhooks, the client's
//     return and the sweep all go through Check; a webhook is believed only
//     as far as the provider's own answer to Get. A session ends only on
//     the provider's word (or a day after its hold, still unpaid: see
//     paymentGiveUp), and a check that changes nothing backs off.
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
	URL     string
	Version int
	// Checks counts the checks since the last change (each one later);
	// LastError is why the last one failed ("" when it did not).
	Checks    int
	LastError string
	// HoldUntil is when the client's time to pay ended (the booking's
	// hold when the session was claimed; a top-up's, the visit).
	HoldUntil time.Time
	CreatedAt time.Time
	// Refunded is what of it was refunded so far.
	Refunded Money
	// TopUp: the payment of what a confirmed booking still owes of its
	// deposit (after a move to a larger one).
	TopUp bool
	// TotalHeld and TotalRefunded (PaymentOf only) are the booking's, over
	// all its payments: what the salon holds, and what was refunded.
	TotalHeld, TotalRefunded Money
}

// WithPayments takes deposits online through provider: client bookings of
// services with a deposit are pending until paid (WithOnlineDeposits).
// A call whose outcome is unknown is made again at once, up to
// ProviderAttempts times (psp.Retrying), within the call's bound.
func WithPayments(provider psp.Provider) Option {
	return func(s *Service) { s.psp, s.deposits = psp.Retrying(provider, ProviderAttempts), true }
}

// ProviderAttempts is how many times one provider call is tried when its
// outcome stays unknown (the same idempotence key each time).
const ProviderAttempts = 4

// WithProviderAttempts sets how many times one provider call is tried
// (ProviderAttempts; 1: never again at once, the saga's checks retry). It
// follows WithPayments.
func WithProviderAttempts(n int) Option {
	return func(s *Service) {
		if s.psp == nil {
			return
		}
		if r, ok := s.psp.(interface{ Unwrap() psp.Provider }); ok {
			s.psp = psp.Retrying(r.Unwrap(), n)
		}
	}
}

// Provider returns the payment provider (nil when deposits are paid in the
// salon).
func (s *Service) Provider() psp.Provider { return s.psp }

const sessionColumns = `id, salon_id, booking_id, provider, status, amount, currency, COALESCE(external_id, ''),
	COALESCE(confirmation_url, ''), version, checks, last_error, hold_until, created_at, refunded, topup`

func scanSession(row pgx.Row) (*PaymentSession, error) {
	var p PaymentSession
	if err := row.Scan(&p.ID, &p.SalonID, &p.BookingID, &p.Provider, &p.Status, &p.Amount, &p.Currency, &p.ExternalID,
		&p.URL, &p.Version, &p.Checks, &p.LastError, &p.HoldUntil, &p.CreatedAt, &p.Refunded, &p.TopUp); err != nil {
		return nil, err
	}
	if p.Status != PayRegistered {
		p.URL = "" // paid, given up, or not created yet: nowhere to pay
	}
	return &p, nil
}

// payable is the session as its booking's client sees it: with the URL
// where they pay only while the booking owes (View.Owed).
func payable(sess *PaymentSession, owes bool) *PaymentSession {
	if sess != nil && !owes {
		sess.URL = ""
	}
	return sess
}

// payment timing.
const (
	// providerCall bounds one provider call made inside a request.
	providerCall = 8 * time.Second
	// paymentLease is how long a sweeper holds the one session it works
	// on: longer than the most a check can take (checkPayment's four
	// rounds of a provider call and a follow-up call, each providerCall).
	paymentLease = 10 * providerCall
	// paymentGiveUp is how long after its hold ended an unpaid payment is
	// still watched while the provider says pending. YooKassa cancels an
	// unpaid payment itself (about an hour after a card payment's page is
	// opened; other methods take longer), and says so; a payment still
	// pending a day after the hold is written off (failed), and should the
	// provider authorize it after all, its notification, the client's
	// return or the reconciliation of the provider's list still settle it
	// (checkPayment asks the provider about a written-off session).
	paymentGiveUp = 24 * time.Hour
	// sweepBatch bounds the sessions one sweep takes, one at a time.
	sweepBatch = 200
)

// ReturnLink makes, from a payment's return reference, the URL the client
// comes back to after paying (the front end's page; it never carries a
// manage token: see PaymentReturn).
type ReturnLink func(ref string) string

// ReturnRefTTL is how long a return reference finds its booking.
const ReturnRefTTL = 24 * time.Hour

// StartPayment creates (or returns) the deposit payment of a pending
// booking the caller may see (or of what a confirmed one still owes of
// its deposit after a move to a larger one): Claim, then Register, the provider told to
// send the client back to back(ref) (nil: nowhere). The same call again
// returns the active session; a session with another amount active is
// ErrConflict. WithoutProviderCalls, it only claims (the check job
// registers the payment). Errors: ErrNotFound, ErrConflict (not pending,
// or no deposit), ErrUnavailable.
func (s *Service) StartPayment(ctx context.Context, bookingID int64, back ReturnLink) (*PaymentSession, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	if s.psp == nil {
		if _, err := s.BookingView(ctx, 0, bookingID); err != nil {
			return nil, err
		}
		return nil, conflict("deposits are paid in the salon")
	}
	sess, pending, err := s.claim(ctx, caller, bookingID, back)
	if err != nil {
		return nil, err
	}
	if (sess.Status == PayRegistering || sess.Status == PayUnknown) && providerCallsAllowed(ctx) {
		if sess, err = s.register(ctx, sess); err != nil {
			return nil, err
		}
	}
	if !pending {
		return payable(sess, false), nil
	}
	return sess, nil
}

// claim is Create's first, short transaction. It reports whether the
// booking is pending (waits for its payment).
func (s *Service) claim(ctx context.Context, caller Caller, bookingID int64, back ReturnLink) (*PaymentSession, bool, error) {
	var out *PaymentSession
	var pending bool
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
		// What is owed: a pending booking's deposit, or what a confirmed
		// one moved to a larger deposit still owes of it (a top-up, paid
		// until the visit).
		want, until := b.Deposit, b.HoldExpiresAt
		if b.Status != StatusPending {
			if want, err = depositDue(ctx, tx, b.ID); err != nil {
				return err
			}
			if b.Status != StatusConfirmed || !b.StartsAt.After(s.now()) {
				want = 0
			}
			until = b.StartsAt
		}
		pending = b.Status == StatusPending || want > 0
		cur, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions
			WHERE booking_id = $1 AND status IN ('registering', 'registered', 'unknown', 'authorized')`, b.ID))
		switch {
		case err == nil:
			if pending && cur.Amount != want {
				return conflict("a payment of another amount is under way")
			}
			out = cur
			return nil
		case !isNoRows(err):
			return fmt.Errorf("claim: %w", err)
		}
		if !pending || want <= 0 {
			// Paid already, or nothing to pay: the latest session, if any.
			last, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions
				WHERE booking_id = $1 ORDER BY id DESC LIMIT 1`, b.ID))
			if err == nil {
				out = last
				return nil
			}
			return conflict("booking %d is %s and owes no deposit", b.ID, i18n.New(string(b.Status)))
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
		var receipt []byte
		if s.receipts {
			r, err := paymentReceipt(ctx, tx, b, want, salon.Currency)
			if err != nil {
				return err
			}
			if receipt, err = json.Marshal(r); err != nil {
				return fmt.Errorf("claim: %w", err)
			}
		}
		out, err = scanSession(tx.QueryRow(ctx, `INSERT INTO payment_sessions (salon_id, booking_id, provider, status, amount,
			currency, idempotence_key, cancel_token, next_check_at, created_at, return_ref, return_url, hold_until, receipt, topup)
			VALUES ($1, $2, $3, 'registering', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING `+sessionColumns,
			b.SalonID, b.ID, s.psp.Name(), want, salon.Currency, "pay-"+strconv.FormatInt(b.ID, 10)+"-"+randomHex(8),
			randomHex(16), s.now().Add(2*providerCall), s.now(), ref, returnURL, until, receipt, b.Status != StatusPending))
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		// Should Register not finish (the process dies), the job does,
		// once Register has certainly given up.
		return enqueueCheck(ctx, tx, out.ID, s.now().Add(2*providerCall))
	})
	return out, pending, err
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
			return nil, conflict("the payment provider refused the payment")
		}
		return nil, fmt.Errorf("the payment provider did not answer: %w", ErrUnavailable)
	}
	return s.applyPayment(ctx, sess.ID, p)
}

// createRequest is the session's create request and its idempotence key:
// the same on every try.
func (s *Service) createRequest(ctx context.Context, sess *PaymentSession) (string, psp.CreateRequest, error) {
	var key, returnURL, lang string
	if err := s.pool.QueryRow(ctx, `
		SELECT ps.idempotence_key, ps.return_url, COALESCE(NULLIF(b.lang, ''), s.locale)
		FROM payment_sessions ps JOIN bookings b ON b.id = ps.booking_id JOIN salons s ON s.id = b.salon_id
		WHERE ps.id = $1`, sess.ID).Scan(&key, &returnURL, &lang); err != nil {
		return "", psp.CreateRequest{}, fmt.Errorf("payment %d: %w", sess.ID, dbErr(err))
	}
	receipt, err := s.receiptOf(ctx, sess.ID)
	if err != nil {
		return "", psp.CreateRequest{}, err
	}
	return key, psp.CreateRequest{Amount: int64(sess.Amount), Currency: sess.Currency,
		// (What the payer reads on the provider's page, in their language;
		// the provider names the salon.)
		Description: i18n.New("Deposit for booking #%d", sess.BookingID).In(lang), ReturnURL: returnURL, Locale: lang,
		Metadata: map[string]string{"booking_id": strconv.FormatInt(sess.BookingID, 10), "session_id": strconv.FormatInt(sess.ID, 10)},
		Receipt:  receipt}, nil
}

// transition moves a session from one of from to to, outside the saga's
// booking lock (for states that touch no booking), and schedules its next
// check.
func (s *Service) transition(ctx context.Context, id int64, from []PaymentStatus, to PaymentStatus, p *psp.Payment, why string) (*PaymentSession, error) {
	var out *PaymentSession
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = setSession(ctx, tx, id, from, to, p, why, s.now())
		return err
	})
	return out, err
}

// setSession is every session transition: UPDATE ... WHERE status IN
// (from) RETURNING, the version moved, the next check scheduled by state.
// A session that moved on meanwhile is errMoved: re-read it and follow.
//
// The guard is the state, not a version carried from an earlier read:
// applyPayment moves a session only under its row lock (taken after the
// booking's), so what it read is current; a provider's answer read before
// that lock may be older than the session, but every move is from named
// states to a later one, so an old answer finds nothing to move (errMoved,
// or a case that does nothing) and never takes a session back.
func setSession(ctx context.Context, tx pgx.Tx, id int64, from []PaymentStatus, to PaymentStatus, p *psp.Payment, why string, now time.Time) (*PaymentSession, error) {
	var ext, url *string
	if p != nil {
		ext = &p.ID
		if p.ConfirmationURL != "" {
			url = &p.ConfirmationURL
		}
	}
	next := now.Add(checkDelay(to, to == PayRegistered, 0))
	out, err := scanSession(tx.QueryRow(ctx, `UPDATE payment_sessions SET status = $3, version = version + 1,
		external_id = COALESCE($4, external_id), confirmation_url = COALESCE($5, confirmation_url),
		last_error = $6, next_check_at = $7, checks = 0, lease_until = NULL, updated_at = now()
		WHERE id = $1 AND status = ANY($2) RETURNING `+sessionColumns, id, from, to, ext, url, why, next))
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

// checkDelay is when a session in a state is looked at again after checks
// that changed nothing (or failed): money in flight (a create whose answer
// was lost, an authorization to capture or release, a refund) soon and
// often, 5 s (every sweep) for the first twelve, then doubling to 5
// minutes; a payment
// that waits for its client (or, released by us, for the provider to
// give it up) 15 s doubling to an hour (the provider's notification is
// what usually tells us first). Terminal states are not looked at.
func checkDelay(st PaymentStatus, waiting bool, checks int) time.Duration {
	switch {
	case st.Terminal():
		return 24 * time.Hour * 365
	case waiting:
		return min(15*time.Second<<min(checks, 8), time.Hour)
	}
	return min(5*time.Second<<max(min(checks, 18)-12, 0), 5*time.Minute)
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
		return nil, conflict("no payment provider")
	}
	var known *psp.Payment // the provider's answer to our last call, when it said
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
		case sess.Status == PayCompleted || sess.Status == PayCanceled || sess.Status == PayRefunded,
			sess.Status == PayFailed && sess.ExternalID == "":
			cancel()
			return sess, nil
		case sess.Status == PayRefunding:
			err = s.refund(cctx, sess)
			cancel()
			if err != nil {
				return sess, s.checkFailed(ctx, sess, err)
			}
			continue
		case known != nil:
			p, known = known, nil
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
		if err != nil && psp.IsRejected(err) && sess.ExternalID == "" {
			// The provider refuses the create itself: no payment can be
			// taken this way (the booking's hold runs out, or the client
			// tries again: a new session).
			failed, terr := s.transition(ctx, sess.ID, []PaymentStatus{PayRegistering, PayUnknown, PayCanceling}, PayFailed, nil, err.Error())
			if terr != nil {
				return nil, terr
			}
			return failed, conflict("the payment provider refused the payment")
		}
		if err != nil {
			return sess, s.checkFailed(ctx, sess, err)
		}
		next, err := s.applyPayment(ctx, sess.ID, p)
		if err != nil {
			// Counted, and later each time: staff see it after a few.
			if lerr := s.lookAgain(ctx, sess, false, err.Error()); lerr != nil {
				s.log.Warn("payment: check", "session", sess.ID, "err", lerr)
			}
			return nil, err
		}
		if s.actionDue(next) {
			acted, after, err := s.act(ctx, next, p)
			if err != nil {
				return next, s.checkFailed(ctx, next, err)
			}
			if acted {
				known = after
				continue // and apply what it did
			}
		}
		if next.Version == sess.Version && !next.Status.Terminal() {
			// Nothing changed: look again later, later each time.
			return next, s.unchanged(ctx, next, p.Status == psp.Pending)
		}
		return next, nil
	}
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, sessionID))
}

// checkFailed records a failed provider call and backs the next check off
// (checkDelay: money in flight is tried again within seconds, a payment
// waiting for its client later each time).
func (s *Service) checkFailed(ctx context.Context, sess *PaymentSession, cause error) error {
	s.log.Warn("payment: check", "session", sess.ID, "status", sess.Status, "err", cause)
	if errors.Is(cause, errRefundCancelled) {
		return fmt.Errorf("payment provider: %v: %w", cause, ErrConflict) // (recorded: not looked at again by itself)
	}
	if refundForAPerson(cause) {
		return fmt.Errorf("payment provider: %v: %w", cause, ErrConflict) // (recorded, and put before staff)
	}
	if errors.Is(cause, errRefundKeyMoved) || errors.Is(cause, errRefundLater) {
		// Nothing asked of the provider, nothing failed: the next check
		// looks again.
		return s.unchanged(ctx, sess, false)
	}
	if err := s.lookAgain(ctx, sess, sess.Status == PayRegistered, cause.Error()); err != nil {
		return err
	}
	return fmt.Errorf("payment provider: %v: %w", cause, ErrUnavailable)
}

// unchanged records a check that found nothing to do: the next one comes
// later (waiting: the provider holds no money and waits for the client).
func (s *Service) unchanged(ctx context.Context, sess *PaymentSession, waiting bool) error {
	return s.lookAgain(ctx, sess, waiting, "")
}

// lookAgain schedules a session's next check after one more that changed
// nothing, unless the session moved on meanwhile (its move scheduled it).
func (s *Service) lookAgain(ctx context.Context, sess *PaymentSession, waiting bool, why string) error {
	_, err := s.pool.Exec(ctx, `UPDATE payment_sessions SET checks = checks + 1, last_error = $2, lease_until = NULL,
		next_check_at = $3 WHERE id = $1 AND version = $4`,
		sess.ID, why, s.now().Add(checkDelay(sess.Status, waiting, sess.Checks+1)), sess.Version)
	return dbErr(err)
}

// actionDue reports whether the session waits for a provider call of ours.
func (s *Service) actionDue(sess *PaymentSession) bool {
	return sess.Status == PayAuthorized || sess.Status == PayCanceling || sess.Status == PayRefunding
}

// act makes the provider call the session's state asks for: capture an
// authorization whose booking is confirmed, release one whose booking is
// gone, refund. It reports whether it called, and the payment as the
// provider answered (nil when the answer says nothing of it).
func (s *Service) act(ctx context.Context, sess *PaymentSession, p *psp.Payment) (bool, *psp.Payment, error) {
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	switch sess.Status {
	case PayAuthorized:
		var st Status
		var keep bool
		if err := s.pool.QueryRow(ctx, `SELECT b.status, s.keep FROM bookings b JOIN payment_sessions s ON s.booking_id = b.id
			WHERE s.id = $1`, sess.ID).Scan(&st, &keep); err != nil {
			return false, nil, dbErr(err)
		}
		if st != StatusConfirmed && st != StatusCompleted && st != StatusNoShow && !keep {
			return false, nil, nil // not confirmed (nor kept by the policy): Check decides first
		}
		after, err := s.psp.Capture(cctx, fmt.Sprintf("capture-%d", sess.ID), sess.ExternalID, int64(sess.Amount), sess.Currency)
		return err == nil, answered(after), err
	case PayCanceling:
		if p != nil && p.Status == psp.Pending {
			return false, nil, nil // nothing held yet; Check looks again
		}
		after, err := s.psp.Cancel(cctx, fmt.Sprintf("cancel-%d", sess.ID), sess.ExternalID)
		return err == nil, answered(after), err
	case PayRefunding:
		err := s.refund(cctx, sess)
		return err == nil, nil, err
	}
	return false, nil, nil
}

// answered is a provider's answer to a capture or a cancel, when it is one
// a check can apply as it would a Get's (a payment with its state).
func answered(p *psp.Payment) *psp.Payment {
	if p == nil || p.ID == "" || p.Status == "" {
		return nil
	}
	return p
}

// refund makes the session's refund (its own idempotence key) and records
// it. As a sale's (refundSale): followed by its id once the provider
// answered; never answered (or not readable by its id) for nearly the
// provider's memory of the key (refundKeyLife), looked for among the
// payment's refunds at the provider beyond those of the session's earlier
// refunds (unaccountedRefund), and asked under a new key only if not there
// and no POST under the old one may still land; left to a person when the
// provider lists no refunds or its refunds are not ours alone; cancelled
// by the provider, not asked again until staff ask (RetryPayment).
func (s *Service) refund(ctx context.Context, sess *PaymentSession) error {
	var key, refundID string
	var amount, before Money
	var asked time.Time
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(refund_key, ''), COALESCE(refund_amount, 0), COALESCE(refund_id, ''),
		    COALESCE(refund_asked_at, updated_at), refunded FROM payment_sessions WHERE id = $1`,
		sess.ID).Scan(&key, &amount, &refundID, &asked, &before); err != nil {
		return dbErr(err)
	}
	receipt, err := s.receiptOf(ctx, sess.ID)
	if err != nil {
		return err
	}
	post := func() (*psp.Refund, error) {
		return s.psp.Refund(ctx, key, sess.ExternalID, int64(amount), sess.Currency, refundReceipt(receipt, amount))
	}
	// ask POSTs under key once that is recorded (claimRefundPost): not when
	// the key moved on or is nearly forgotten.
	ask := func() (*psp.Refund, error) {
		if err := s.claimRefundPost(ctx, "payment_sessions", sess.ID, key); err != nil {
			return nil, err
		}
		return post()
	}
	var r *psp.Refund
	read := false // read by its id
	if refundID != "" {
		r, err = psp.GetRefund(ctx, s.psp, refundID)
		read = !errors.Is(err, psp.ErrCannotGetRefund)
	}
	switch {
	case read:
	case s.now().Before(asked.Add(refundKeyLife)):
		r, err = ask()
	default:
		renewed := fmt.Sprintf("refund-%d-at%d", sess.ID, s.now().UnixMilli()) // (not the old key lengthened: the provider takes 64 characters at most)
		var fresh bool                                                         // (not made: asked under the new key, its POST recorded)
		r, fresh, err = s.lookForRefund(ctx, owedRefund{table: "payment_sessions", id: sess.ID, paymentID: sess.ExternalID,
			key: key, refundID: refundID, accounted: int64(before), amount: int64(amount)}, renewed)
		if fresh {
			key = renewed
			r, err = post()
		}
	}
	if refundForAPerson(err) {
		// Not asked again by the checks under a new key: staff see it at
		// once (Attention), and it is looked for again meanwhile.
		if _, uerr := s.pool.Exec(ctx, `UPDATE payment_sessions SET last_error = $3, checks = GREATEST(checks + 1, $4),
			next_check_at = $5, lease_until = NULL, updated_at = now() WHERE id = $1 AND status = 'refunding' AND refund_key = $2`,
			sess.ID, key, err.Error(), stuckAfter, s.now().Add(checkDelay(PayRefunding, false, stuckAfter))); uerr != nil {
			return dbErr(uerr)
		}
		return fmt.Errorf("refund of payment session %d: %w", sess.ID, err)
	}
	if err != nil {
		return err
	}
	if r.ID != "" && r.ID != refundID {
		if _, err := s.pool.Exec(ctx, `UPDATE payment_sessions SET refund_id = $3 WHERE id = $1 AND refund_key = $2`, sess.ID, key, r.ID); err != nil {
			return dbErr(err)
		}
	}
	switch r.Status {
	case "succeeded":
	case "canceled":
		// The provider did not make it (its balance, the bank): the client
		// has nothing back yet. Staff see it (Attention, at once), and ask
		// again (RetryPayment: a new key); the checks do not.
		if _, err := s.pool.Exec(ctx, `UPDATE payment_sessions SET last_error = $3, checks = GREATEST(checks, $4),
			next_check_at = 'infinity', lease_until = NULL, updated_at = now() WHERE id = $1 AND status = 'refunding' AND refund_key = $2`,
			sess.ID, key, refundCancelled, stuckAfter); err != nil {
			return dbErr(err)
		}
		return fmt.Errorf("refund %s: %w", r.ID, errRefundCancelled)
	default:
		// Pending at the provider: read again by its id.
		return fmt.Errorf("refund %s is %s at the provider: %w", r.ID, cmpOr(r.Status, "not finished"), psp.ErrUnknown)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM bookings WHERE id = $1 FOR UPDATE`, sess.BookingID); err != nil {
			return err
		}
		part, err := finishRefund(ctx, tx, sess.ID, key, refundMade, s.now())
		if err != nil || part < 0 {
			return err
		}
		// The client hears that the money is on its way back, and how much.
		b, err := getBooking(ctx, tx, sess.SalonID, sess.BookingID)
		if err != nil {
			return err
		}
		n := notifyArgs(b, EventRefunded, System, nil)
		n.Amount = amount
		return s.enqueueNotice(ctx, tx, b, n, System)
	})
}

// applyPayment applies the provider's state of the payment to the session
// and its booking, in one transaction. Locks are taken in one order on
// every path, the booking core's: the master's (only when a late payment
// may take the slot again), then the booking's row, then the session's.
// The notice the change owes the client is written in the same
// transaction: it is never lost to a crash between the two.
func (s *Service) applyPayment(ctx context.Context, sessionID int64, p *psp.Payment) (*PaymentSession, error) {
	var out *PaymentSession
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var bookingID, masterID int64
		var masters []int64 // the visit's (a visit of one: the booking's master)
		var bookingStatus Status
		var reason string
		var startsAt time.Time
		if err := tx.QueryRow(ctx, `SELECT b.id, b.master_id, b.status, b.cancel_reason, b.starts_at,
			       ARRAY(SELECT DISTINCT x.master_id FROM bookings x WHERE x.id = b.id OR x.visit_of = b.id)
			FROM payment_sessions s JOIN bookings b ON b.id = s.booking_id WHERE s.id = $1`, sessionID).
			Scan(&bookingID, &masterID, &bookingStatus, &reason, &startsAt, &masters); err != nil {
			return fmt.Errorf("payment session %d: %w", sessionID, err)
		}
		// A late payment takes its time again only while the visit is
		// still ahead (else the money is released).
		now := s.now()
		mayRebook := func(b *Booking) bool {
			return p.Status == psp.WaitingForCapture && b.Status == StatusCancelled && b.CancelReason == holdExpiredReason &&
				b.StartsAt.After(now)
		}
		lockedMaster := false
		if mayRebook(&Booking{Status: bookingStatus, CancelReason: reason, StartsAt: startsAt}) {
			if err := lockMasters(ctx, tx, masters...); err != nil {
				return err
			}
			lockedMaster = true
		}
		b, _, err := readBooking(ctx, tx, BySystem(), 0, bookingID, "FOR UPDATE OF b")
		if err != nil {
			return err
		}
		if mayRebook(b) && (!lockedMaster || b.MasterID != masterID) {
			return errRetry // it changed before its row was locked: again, in order
		}
		sess, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1 FOR UPDATE`, sessionID))
		if err != nil {
			return fmt.Errorf("payment session %d: %w", sessionID, err)
		}
		out = sess
		move := func(from []PaymentStatus, to PaymentStatus, why string) error {
			next, err := setSession(ctx, tx, sess.ID, from, to, p, why, now)
			if err == nil {
				out, sess = next, next
			}
			return err
		}
		tell := func(b *Booking, to Status, event string) error {
			changed := *b
			changed.Status = to
			return s.enqueueChange(ctx, tx, &changed, event, System, nil)
		}
		if p.Amount != 0 && p.Amount != int64(sess.Amount) {
			return conflict("the provider's payment %s is of %d, the session of %d", p.ID, p.Amount, sess.Amount)
		}
		switch p.Status {
		case psp.Pending:
			switch sess.Status {
			case PayRegistering, PayUnknown:
				return move([]PaymentStatus{PayRegistering, PayUnknown}, PayRegistered, "created")
			case PayRegistered, PayCanceling:
				// Unpaid, the booking gone, and the provider's own time for
				// the payment long past: written off (a later word of the
				// provider still counts: see paymentGiveUp).
				if !b.Status.Active() && now.After(sess.HoldUntil.Add(paymentGiveUp)) {
					return move([]PaymentStatus{PayRegistered, PayCanceling}, PayFailed, "never paid")
				}
				if sess.ExternalID == "" && p.ID != "" {
					// Released before its create was answered: the payment
					// is known now, and is watched, not created again.
					if _, err := tx.Exec(ctx, `UPDATE payment_sessions SET external_id = $2 WHERE id = $1 AND external_id IS NULL`, sess.ID, p.ID); err != nil {
						return fmt.Errorf("payment session %d: %w", sess.ID, err)
					}
					out.ExternalID = p.ID
				}
			}
			return nil
		case psp.WaitingForCapture:
			// The money is held. The first time we learn it, and the booking
			// is not to be kept, the client hears that it is released.
			var first, kept bool
			if err := tx.QueryRow(ctx, `WITH h AS (UPDATE payment_sessions SET held_at = $2 WHERE id = $1 AND held_at IS NULL RETURNING 1)
				SELECT EXISTS (SELECT 1 FROM h), (SELECT keep FROM payment_sessions WHERE id = $1)`, sess.ID, now).Scan(&first, &kept); err != nil {
				return fmt.Errorf("payment session %d: %w", sess.ID, err)
			}
			released := func() error {
				if !first {
					return nil
				}
				return tell(b, b.Status, EventRefunded)
			}
			switch sess.Status {
			case PayRegistering, PayUnknown, PayRegistered, PayFailed:
				// Paid (a written-off session too: the provider's word
				// beats our guess that nobody would pay).
				if err := move([]PaymentStatus{sess.Status}, PayAuthorized, "paid"); err != nil {
					return err
				}
			case PayCanceling:
				// Released by us (the booking is gone): act cancels it.
				return released()
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
				return tell(b, StatusConfirmed, EventPaid)
			case mayRebook(b):
				// Paid after the hold expired: the slot again if it is free.
				why, err := rebook(ctx, tx, b)
				if err != nil {
					return err
				}
				if why == "" {
					return tell(b, StatusConfirmed, EventPaid)
				}
				if err := move([]PaymentStatus{PayAuthorized}, PayCanceling, why); err != nil {
					return err
				}
				return released()
			case b.Status == StatusConfirmed && sess.TopUp:
				// A top-up (the booking moved to a larger deposit): act
				// captures it.
				if !first {
					return nil
				}
				return tell(b, StatusConfirmed, EventTopUpPaid)
			case sess.TopUp && (b.Status == StatusCompleted || b.Status == StatusNoShow) && first:
				// The difference paid after the visit was marked: it was
				// settled there (or not owed), so it is released.
				if err := move([]PaymentStatus{PayAuthorized}, PayCanceling, "paid after the visit"); err != nil {
					return err
				}
				return released()
			case b.Status == StatusConfirmed && first:
				// Paid, but the booking was confirmed otherwise meanwhile
				// (paid in the salon, or by another payment): never taken
				// twice, the money is released.
				if err := move([]PaymentStatus{PayAuthorized}, PayCanceling, "the booking was paid otherwise"); err != nil {
					return err
				}
				return released()
			case b.Status == StatusCancelled && kept:
				return nil // the refund policy keeps it: act captures it
			case b.Status == StatusCancelled:
				// Cancelled by someone: release the money.
				if err := move([]PaymentStatus{PayAuthorized}, PayCanceling, "the booking was cancelled"); err != nil {
					return err
				}
				return released()
			}
			return nil
		case psp.Succeeded:
			// Only a capture of ours makes a payment succeed.
			switch sess.Status {
			case PayAuthorized:
				if err := move([]PaymentStatus{PayAuthorized}, PayCompleted, "captured"); err != nil {
					return err
				}
				return received(ctx, tx, sess, now)
			case PayCanceling:
				// The capture had happened (its answer was lost) when the
				// booking was cancelled: the money came, and goes back in
				// full (the client was releasing it).
				if err := move([]PaymentStatus{PayCanceling}, PayCompleted, "captured before the cancellation was known"); err != nil {
					return err
				}
				if err := received(ctx, tx, sess, now); err != nil {
					return err
				}
				next, err := scanSession(tx.QueryRow(ctx, `UPDATE payment_sessions SET status = 'refunding', refund_amount = amount,
					refund_key = 'refund-' || id, refund_id = NULL, refund_asked_at = $2, refund_posted_at = NULL, version = version + 1, next_check_at = $2, last_error = 'refunded in full: the booking was cancelled',
					checks = 0, updated_at = now()
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
				to, why := PayCanceled, "released"
				if sess.Status != PayCanceling && sess.Status != PayAuthorized {
					to, why = PayFailed, "declined, or expired unpaid, at the provider"
				}
				// A declined payment leaves its booking pending: the client
				// may try again (a new payment) while the hold lasts, and
				// the hold's end frees the time (ExpireHolds).
				return move([]PaymentStatus{sess.Status}, to, why)
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
	return out, nil
}

// holdExpiredReason is the cancel reason ExpireHolds writes.
const holdExpiredReason = "hold expired"

// rebook makes a booking whose hold expired active again, if its slot is
// still free (the exclusion constraint decides, under a savepoint) and it
// gave no balance back; else it says why not (the reason the late money
// is released with). The caller holds the master's lock (taken before the
// booking's row).
func rebook(ctx context.Context, tx pgx.Tx, b *Booking) (string, error) {
	// A booking paid in part with a balance gave it back when its hold
	// ended (it may be spent elsewhere since): it is not taken again, and
	// the late money is released, as for a time taken meanwhile.
	var released bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM balance_entries WHERE booking_id = $1 AND type = 'release')`,
		b.visit()).Scan(&released); err != nil {
		return "", err
	}
	if released {
		return "paid after the hold, the package or certificate it used given back", nil
	}
	if _, err := tx.Exec(ctx, `SAVEPOINT rebook`); err != nil {
		return "", err
	}
	_, err := setStatus(ctx, tx, b, StatusConfirmed, "", System, "paid_late", nil)
	if pgCode(err) == pgExclusionViolation {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT rebook`); err != nil {
			return "", err
		}
		return "paid after the hold, the time taken", nil
	}
	if err != nil {
		return "", err
	}
	if _, err = tx.Exec(ctx, `RELEASE SAVEPOINT rebook`); err != nil {
		return "", err
	}
	return "", nil
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
		// Not a deposit: a package or certificate sold online, perhaps.
		return nil, s.saleNotified(ctx, provider, externalID)
	}
	if err != nil {
		return nil, dbErr(err)
	}
	if !s.noticeDue(ctx, "payment_sessions", id) {
		return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, id))
	}
	return s.checkPayment(ctx, id)
}

// noticeDue takes, for a row of table (payment_sessions, balance_sales),
// the right to ask the provider about it on a notification: at most once
// every clientCheckEvery. Anyone may post a notification, and each would
// cost a call to the provider (its quota is the salon's); one that comes
// within that time (forged, repeated, or the real one just after) has the
// sweep ask by then instead, when the sweep watches the row (in flight);
// one of a row the sweep no longer watches (written off, a payment that
// may yet come late) is asked at once.
func (s *Service) noticeDue(ctx context.Context, table string, id int64) bool {
	now := s.now()
	var due bool
	err := s.pool.QueryRow(ctx, `UPDATE `+table+` t SET
			next_check_at = CASE WHEN o.wait THEN LEAST(t.next_check_at, o.at + $4 * interval '1 millisecond') ELSE t.next_check_at END,
			notice_checked_at = CASE WHEN o.wait THEN o.at ELSE $2 END
		FROM (SELECT id, notice_checked_at AS at, COALESCE(notice_checked_at > $3, false) AND status IN ('registering', 'registered', 'unknown', 'authorized',
			'canceling', 'refunding') AS wait FROM `+table+` WHERE id = $1 FOR UPDATE) o
		WHERE t.id = o.id RETURNING NOT o.wait`, id, now, now.Add(-clientCheckEvery), clientCheckEvery.Milliseconds()).Scan(&due)
	return err != nil || due // (a failure to count is no reason to leave the notification unchecked)
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
	if s.clientCheckDue(ctx, id) {
		if _, err := s.checkPayment(ctx, id); err != nil && !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrConflict) {
			return nil, nil, err
		}
	}
	// The booking's latest payment (a later try after a decline, too).
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE booking_id = $1 ORDER BY id DESC LIMIT 1`, bookingID))
	if err != nil {
		return nil, nil, fmt.Errorf("payment return: %w", dbErr(err))
	}
	if sess.ID != id && !sess.Status.Terminal() && s.clientCheckDue(ctx, sess.ID) {
		if next, err := s.checkPayment(ctx, sess.ID); err == nil {
			sess = next
		}
	}
	v, err := s.BookingView(As(ctx, BySystem()), 0, bookingID)
	if err != nil {
		return nil, nil, err
	}
	s.decorate(v, Visitor()) // as a client sees it (whether they may still change it: with their manage link)
	return v, payable(sess, v.Owed() > 0), nil
}

// ReturnAt checks that ref, a return page's reference (a deposit's or a
// purchase's), is salon salonID's: its page is that salon's, and one
// salon's page never shows another's payment. An expired reference still
// opens its salon's page, which says in the client's language that the
// link no longer shows the payment (what it reads through the reference
// is refused past ReturnRefTTL). Errors: ErrNotFound (unknown or another
// salon's).
func (s *Service) ReturnAt(ctx context.Context, salonID int64, ref string) error {
	if _, err := asked(ctx); err != nil {
		return err
	}
	if ref == "" || len(ref) > 100 {
		return fmt.Errorf("return: %w", ErrNotFound)
	}
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM payment_sessions WHERE return_ref = $1 AND salon_id = $2)
		OR EXISTS (SELECT 1 FROM balance_sales WHERE return_ref = $1 AND salon_id = $2)`, ref, salonID).Scan(&ok)
	if err != nil {
		return fmt.Errorf("return: %w", dbErr(err))
	}
	if !ok {
		return fmt.Errorf("return: %w", ErrNotFound)
	}
	return nil
}

// PayAgain starts, for the client back from a payment that did not go
// through, a new payment of the same booking while its hold lasts: by the
// return reference of the earlier payment, which allows this and nothing
// else (paying a booking's deposit changes nothing but that; cancelling or
// moving it needs the manage token). It returns the booking as its client
// sees it and the payment to make. Errors: ErrNotFound (unknown or expired
// reference), ErrConflict (nothing owed: paid, or the hold ended),
// ErrUnavailable.
func (s *Service) PayAgain(ctx context.Context, ref string, back ReturnLink) (*View, *PaymentSession, error) {
	if _, err := asked(ctx); err != nil {
		return nil, nil, err
	}
	if ref == "" || len(ref) > 100 {
		return nil, nil, fmt.Errorf("payment return: %w", ErrNotFound)
	}
	var bookingID int64
	err := s.pool.QueryRow(ctx, `SELECT booking_id FROM payment_sessions WHERE return_ref = $1 AND created_at > $2`,
		ref, s.now().Add(-ReturnRefTTL)).Scan(&bookingID)
	if isNoRows(err) {
		return nil, nil, fmt.Errorf("payment return: %w", ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("payment return: %w", dbErr(err))
	}
	sys := As(ctx, BySystem())
	sess, err := s.StartPayment(sys, bookingID, back)
	if err != nil {
		return nil, nil, err
	}
	if sess.URL == "" && sess.Status.Terminal() {
		return nil, nil, conflict("booking %d owes no deposit now", bookingID)
	}
	v, err := s.BookingView(sys, 0, bookingID)
	if err != nil {
		return nil, nil, err
	}
	s.decorate(v, Visitor())
	return v, payable(sess, v.Owed() > 0), nil
}

// clientCheckEvery bounds how often a client's page has a payment checked
// with the provider (the webhook and the sweep are not bound by it).
const clientCheckEvery = 3 * time.Second

// clientCheckDue takes the right to check session id with the provider for
// a client's page: at most once every clientCheckEvery, whichever replica
// serves the page.
func (s *Service) clientCheckDue(ctx context.Context, id int64) bool {
	return s.checkDue(ctx, "payment_sessions", id)
}

// checkDue takes, for a row of table (payment_sessions, balance_sales:
// each with client_checked_at), the right to ask the provider about it
// for a client's page: at most once every clientCheckEvery.
func (s *Service) checkDue(ctx context.Context, table string, id int64) bool {
	var ok bool
	err := s.pool.QueryRow(ctx, `WITH c AS (UPDATE `+table+` SET client_checked_at = $2 WHERE id = $1
		AND (client_checked_at IS NULL OR client_checked_at <= $3) RETURNING 1) SELECT EXISTS (SELECT 1 FROM c)`,
		id, s.now(), s.now().Add(-clientCheckEvery)).Scan(&ok)
	return err == nil && ok
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
	if check && !sess.Status.Terminal() && s.psp != nil && s.clientCheckDue(ctx, sess.ID) {
		if next, err := s.checkPayment(ctx, sess.ID); err == nil {
			sess = next
		} else if again, rerr := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, sess.ID)); rerr == nil {
			// The check got part of the way (the payment found paid, its
			// capture not answered): what it got to, not what was before.
			sess = again
		}
	}
	// What the client owes, and the booking's totals over all its
	// payments (the newest alone may be a top-up, or refunded in part).
	var owes bool
	if err := s.pool.QueryRow(ctx, `SELECT b.status = 'pending' OR b.status = 'confirmed' AND b.deposit_due > 0,
		    COALESCE(sum(p.amount - p.refunded) FILTER (WHERE p.status IN ('completed', 'refunding', 'refunded')), 0),
		    COALESCE(sum(p.refunded), 0)
		FROM bookings b JOIN payment_sessions p ON p.booking_id = b.id WHERE b.id = $1 GROUP BY b.id`, bookingID).
		Scan(&owes, &sess.TotalHeld, &sess.TotalRefunded); err != nil {
		return nil, dbErr(err)
	}
	return payable(sess, owes), nil
}

// SweepPayments brings up to date the sessions whose check is due, money
// in flight first (an authorization to capture or release, a refund, a
// create whose answer was lost), then those waiting for their clients,
// each by when it was due. It takes them one at a time, with FOR UPDATE
// SKIP LOCKED and a lease longer than a check can take, so replicas share
// the work and a lease never runs out under a session still being
// checked; at most sweepBatch a sweep, each once. It returns how many it
// checked. Only the platform asks (ErrForbidden).
func (s *Service) SweepPayments(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	if s.psp == nil {
		return 0, nil
	}
	due := s.now()
	seen := []int64{} // (not nil: <> ALL(NULL) is never true)
	for len(seen) < sweepBatch && ctx.Err() == nil {
		now := s.now()
		var id int64
		err := s.pool.QueryRow(ctx, `UPDATE payment_sessions SET lease_until = $2
			WHERE id = (SELECT id FROM payment_sessions
			            WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding')
			              AND next_check_at <= $1 AND (lease_until IS NULL OR lease_until < $3) AND id <> ALL($4)
			            ORDER BY status = 'registered', next_check_at LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING id`, due, now.Add(paymentLease), now, seen).Scan(&id)
		if isNoRows(err) {
			break
		}
		if err != nil {
			return len(seen), fmt.Errorf("sweep payments: %w", dbErr(err))
		}
		seen = append(seen, id)
		if _, err := s.checkPayment(ctx, id); err != nil && !errors.Is(err, ErrUnavailable) {
			s.log.Warn("payment sweep", "session", id, "err", err)
		}
		_, _ = s.pool.Exec(context.WithoutCancel(ctx), `UPDATE payment_sessions SET lease_until = NULL WHERE id = $1`, id)
	}
	if _, err := s.SendSettlementReceipts(ctx); err != nil {
		s.log.Warn("settlement receipts", "err", err)
	}
	return len(seen) + s.sweepSales(ctx), nil
}

// keepsPaid reports whether the salon's refund policy keeps what was paid
// in advance for b (its deposit, what it reserved of a balance) when it is
// cancelled at now: only a cancellation that is the client's (their own,
// or the salon's at their request: byClient); the salon cancelling of its
// own accord gives all of it back.
func (s *Salon) keepsPaid(b *Booking, byClient bool, now time.Time) bool {
	if !byClient {
		return false
	}
	switch s.RefundPolicy {
	case RefundNever:
		return true
	case RefundBeforeCutoff:
		return !now.Before(s.ChangeableUntil(b))
	}
	return false
}

// keepsBalance reports whether cancelling b at now (byClient: the
// client's cancellation) leaves what it reserved of a package or a
// certificate to the salon (spent, not released), by its policy: of a
// confirmed booking only (a hold still awaiting its deposit gives it back,
// as its expiry would).
func (s *Salon) keepsBalance(b *Booking, byClient bool, now time.Time) bool {
	return b.Status == StatusConfirmed && s.keepsPaid(b, byClient, now)
}

// startRefund, in the transaction that cancels booking b (locked), takes
// the one-time right to cancel each of its payments: what the salon holds
// is refunded as its policy says (each paid session moves to refunding for
// what it still holds), a payment not yet captured is released
// (canceling), or captured when the policy keeps it. It returns the
// sessions to follow up after commit.
func startRefund(ctx context.Context, tx pgx.Tx, b *Booking, salon *Salon, byClient bool, now time.Time) ([]int64, error) {
	ss, err := lockSessions(ctx, tx, b.ID)
	if err != nil {
		return nil, err
	}
	keep := salon.keepsPaid(b, byClient, now)
	var ids []int64
	for _, m := range ss {
		if m.status == PayRefunding && !keep {
			// A refund of part of it is under way: the rest follows it.
			if _, err := tx.Exec(ctx, `UPDATE payment_sessions SET refund_rest = true WHERE id = $1`, m.id); err != nil {
				return nil, fmt.Errorf("refund: %w", err)
			}
			continue
		}
		if !m.token {
			continue
		}
		switch {
		case m.status == PayAuthorized && keep:
			// Paid, not yet captured, and the policy keeps it: captured as
			// it would have been a moment later (not released).
			if _, err := tx.Exec(ctx, `UPDATE payment_sessions SET keep = true, cancel_token = NULL, next_check_at = $2, checks = 0,
				updated_at = now() WHERE id = $1`, m.id, now); err != nil {
				return nil, fmt.Errorf("refund: %w", err)
			}
		case m.status == PayAuthorized || m.status == PayRegistering || m.status == PayRegistered || m.status == PayUnknown:
			if _, err := tx.Exec(ctx, `UPDATE payment_sessions SET status = 'canceling', cancel_token = NULL, version = version + 1,
				next_check_at = $2, updated_at = now() WHERE id = $1`, m.id, now); err != nil {
				return nil, fmt.Errorf("refund: %w", err)
			}
		case m.status == PayCompleted && !keep && m.refundable() > 0:
			if _, err := beginRefund(ctx, tx, m.id, m.refundable(), "the booking was cancelled", now); err != nil { // (its history's why, not the capture's)
				return nil, err
			}
			ids = append(ids, m.id)
			continue // (its job is written)
		default:
			continue
		}
		if err := enqueueCheck(ctx, tx, m.id, now); err != nil {
			return nil, err
		}
		ids = append(ids, m.id)
	}
	return ids, nil
}

// WithoutProviderCalls marks a call whose caller may not wait for the
// payment provider (a front end holding a lock or a connection of its
// own, as the bot's turn does): the provider calls the change asks for
// (a refund, a release) are left to the follow-up job, written in the
// change's transaction, which makes them within seconds.
func WithoutProviderCalls(ctx context.Context) context.Context {
	return context.WithValue(ctx, noProviderCallsKey{}, true)
}

type noProviderCallsKey struct{}

func providerCallsAllowed(ctx context.Context) bool { return ctx.Value(noProviderCallsKey{}) == nil }

// followUp runs the provider side of a payment change after its
// transaction, within a short bound; the job and the sweep finish what
// this does not (and all of it, for a caller WithoutProviderCalls).
func (s *Service) followUp(ctx context.Context, sessionIDs ...int64) {
	if s.psp == nil || !providerCallsAllowed(ctx) {
		return
	}
	for _, id := range sessionIDs {
		if id == 0 {
			continue
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), providerCall)
		if _, err := s.checkPayment(cctx, id); err != nil {
			s.log.Info("payment follow-up left to the sweep", "session", id, "err", err)
		}
		cancel()
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
	return s.RefundDepositPart(ctx, salonID, bookingID, 0)
}

// RefundDepositPart refunds amount of a booking's paid deposit (0: all
// that is left of it), as staff decide; again and again, each refund its
// own, until nothing is left. A deposit paid in parts (a top-up) is
// refunded newest payment first. Errors: as RefundDeposit, and ErrInvalid
// (more than is left).
func (s *Service) RefundDepositPart(ctx context.Context, salonID, bookingID int64, amount Money) (*PaymentSession, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	if caller.kind != callerStaff && caller.kind != callerSystem {
		return nil, fmt.Errorf("only the salon refunds a deposit: %w", ErrForbidden)
	}
	if amount < 0 {
		return nil, Invalid("amount", "must be positive")
	}
	var ids []int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b, g, err := readBooking(ctx, tx, caller, salonID, bookingID, "FOR UPDATE OF b")
		if err != nil {
			return err
		}
		if !caller.may(b, g) {
			return fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
		}
		ss, err := lockSessions(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		var left Money
		busy := false
		for _, m := range ss {
			left += m.refundable()
			busy = busy || m.status == PayRefunding
		}
		switch {
		case left == 0 && busy:
			return conflict("a refund of this deposit is under way")
		case left == 0:
			return conflict("no paid deposit to refund")
		case amount > left:
			return Invalid("amount", "at most %s, what is left of the deposit", left)
		case amount == 0:
			amount = left
		}
		if ids, err = refundAcross(ctx, tx, ss, amount, "refunded by the salon", s.now()); err != nil {
			return err
		}
		for _, id := range ids {
			if err := auditPayment(ctx, tx, b.SalonID, caller, "payment_refund", id, PayCompleted, PayRefunding); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, ids...)
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM payment_sessions WHERE id = $1`, ids[len(ids)-1]))
}

// MarkDepositPaid records that the client of a pending booking paid its
// deposit in the salon, as staff say: the booking is confirmed, and a
// payment of it under way online is released (should the client pay it
// after all, nothing is charged). Of a confirmed booking that owes the
// difference a move asked, it records the difference paid. Admins and
// owners. Errors: ErrNotFound, ErrConflict (nothing is owed).
func (s *Service) MarkDepositPaid(ctx context.Context, salonID, bookingID int64) (*Booking, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var out *Booking
	var follow int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b, _, err := lockBooking(ctx, tx, caller, salonID, bookingID)
		if err != nil {
			return err
		}
		due, err := depositDue(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		switch {
		case b.Status == StatusPending:
			if out, err = setStatus(ctx, tx, b, StatusConfirmed, "", caller.actor(b), "deposit_paid_in_salon", nil); err != nil {
				return err
			}
		case b.Status == StatusConfirmed && due > 0:
			// The difference a move asked, paid here: nothing more is due
			// (unless it is paid online already, and being captured).
			var capturing bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM payment_sessions WHERE booking_id = $1 AND status = 'authorized')`,
				b.ID).Scan(&capturing); err != nil {
				return err
			}
			if capturing {
				return conflict("the difference is paid online already")
			}
			actor := caller.actor(b)
			details, _ := json.Marshal(actor.details(map[string]any{"amount": due}))
			if _, err := tx.Exec(ctx, `WITH b AS (UPDATE bookings SET deposit_due = 0, updated_at = now() WHERE id = $2 RETURNING id)
				INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, channel, details)
				SELECT $1, id, 'deposit_due_paid_in_salon', $3, $4, $5, $6 FROM b`,
				b.SalonID, b.ID, actor.Kind, actor.dbID(), actor.Channel, details); err != nil {
				return err
			}
			out = b
		default:
			return conflict("booking %d is %s", b.ID, i18n.New(string(b.Status)))
		}
		var before PaymentStatus
		err = tx.QueryRow(ctx, `WITH old AS (SELECT id, status FROM payment_sessions WHERE booking_id = $1
			AND status IN ('registering', 'registered', 'unknown') FOR UPDATE)
			UPDATE payment_sessions s SET status = 'canceling', cancel_token = NULL, version = version + 1, next_check_at = $2,
			checks = 0, last_error = 'paid in the salon', updated_at = now() FROM old WHERE s.id = old.id RETURNING s.id, old.status`,
			b.ID, s.now()).Scan(&follow, &before)
		switch {
		case isNoRows(err):
			return nil
		case err != nil:
			return err
		}
		if err := enqueueCheck(ctx, tx, follow, s.now()); err != nil {
			return err
		}
		return auditPayment(ctx, tx, salonID, caller, "payment_paid_in_salon", follow, before, PayCanceling)
	})
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, follow)
	return out, nil
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
