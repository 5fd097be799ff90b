package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"salon/booking/psp"
)

// Refunds at the provider, of a sale (balance_sales) or of a deposit
// (payment_sessions) alike: each made once, though the provider forgets
// an idempotence key after a day (psp.KeyWindow) and its answers may be
// lost. A refund's every POST is recorded first (claimRefundPost); one
// never answered is asked again under its key while the provider
// remembers it (refundKeyLife), and past that looked for among the
// payment's refunds (lookForRefund) before it is asked under a new key.

// refundCancelled is a sale's or a payment's last error when the provider
// cancelled its refund; errRefundCancelled says so.
const refundCancelled = "the provider cancelled the refund"

var errRefundCancelled = errors.New(refundCancelled)

// refundKeyMargin is how long before the provider forgets a refund's key
// it is no longer asked under it; refundKeyLife, how long after a refund
// was asked under a key it may still be asked under it.
const (
	refundKeyMargin = time.Hour
	refundKeyLife   = psp.KeyWindow - refundKeyMargin
)

// A refund the checks cannot finish without risking a second one is left
// to a person (its last error says why, and puts it before staff): the
// provider lists no refunds, so one asked under a forgotten key cannot be
// looked for; or the payment's refunds at the provider are not what our
// records and this refund add up to.
const (
	refundUnlisted    = "the provider lists no refunds: check at the provider whether this refund was made; if it was not, ask for it again here"
	refundUnaccounted = "the provider's refunds of the payment are not what ours add up to: check them at the provider; if this refund is not among them, ask for it again here"
)

var (
	errRefundUnlisted    = errors.New(refundUnlisted)
	errRefundUnaccounted = errors.New(refundUnaccounted)
)

// refundToCheck reports whether a row's refund, by its status and last
// error, was left to a person: to check at the provider, and ask again
// if it was not made.
func refundToCheck(status PaymentStatus, lastError string) bool {
	return status == PayRefunding && (lastError == refundUnlisted || lastError == refundUnaccounted)
}

// refundLeftToStaff reports whether a row's refund is one the checks
// will not finish: the provider cancelled it, or it was left to a person.
// Staff ask for it again, or record it as made at the provider.
func refundLeftToStaff(status PaymentStatus, lastError string) bool {
	return status == PayRefunding && (lastError == refundCancelled || refundToCheck(status, lastError))
}

// refundForAPerson reports whether err leaves a refund to a person.
func refundForAPerson(err error) bool {
	return errors.Is(err, errRefundUnlisted) || errors.Is(err, errRefundUnaccounted)
}

// maxRefundPages bounds the pages of one payment's refunds read (100 a
// page: far more refunds than a payment has).
const maxRefundPages = 100

// paymentRefunds lists every refund the provider made of payment id,
// whatever its state, page by page; errRefundUnlisted when the provider
// lists none.
func (s *Service) paymentRefunds(ctx context.Context, id string) ([]psp.Refund, error) {
	var all []psp.Refund
	cursor := ""
	for range maxRefundPages {
		page, next, err := psp.ListRefunds(ctx, s.psp, id, cursor)
		if errors.Is(err, psp.ErrCannotListRefunds) {
			return nil, errRefundUnlisted
		}
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" || next == cursor {
			return all, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("refunds of payment %s: more than %d pages: %w", id, maxRefundPages, psp.ErrUnknown)
}

// unaccountedRefund finds, among a payment's refunds at the provider, the
// one a refund of amount asked under a key now forgotten made, when its
// answers were all lost (the payment's refunded amount does not show a
// pending one: it counts only the refunds that succeeded). Of the refunds
// pending or made, oldest first, ours before this one are the first ones,
// adding up to accounted (what of the payment our records have refunded
// already); what comes after them is this one's: nothing (none is true:
// the refund was not made, and may be asked anew), or one refund of
// amount, which is it. Anything else is errRefundUnaccounted: the provider
// has refunded what we cannot tell ours (a refund made by hand, say), and
// a new refund could be a second one.
func unaccountedRefund(refunds []psp.Refund, accounted, amount int64) (r *psp.Refund, none bool, err error) {
	var live []*psp.Refund
	for i := len(refunds) - 1; i >= 0; i-- { // (the provider lists newest first)
		if f := &refunds[i]; f.Status == "pending" || f.Status == "succeeded" { // (canceled: nothing went back)
			live = append(live, f)
		}
	}
	slices.SortStableFunc(live, func(a, b *psp.Refund) int { return a.CreatedAt.Compare(b.CreatedAt) })
	var sum int64
	for len(live) > 0 && sum < accounted {
		sum += live[0].Amount
		live = live[1:]
	}
	switch {
	case sum != accounted:
	case len(live) == 0:
		return nil, true, nil
	case len(live) == 1 && live[0].Amount == amount:
		return live[0], false, nil
	}
	return nil, false, errRefundUnaccounted
}

// refundByID is the refund of id among refunds (nil: none, or id "").
func refundByID(refunds []psp.Refund, id string) *psp.Refund {
	if id == "" {
		return nil
	}
	for i := range refunds {
		if refunds[i].ID == id {
			return &refunds[i]
		}
	}
	return nil
}

// owedRefund is a refund a row owes (a sale's, or a payment session's),
// as lookForRefund looks for it at the provider.
type owedRefund struct {
	table     string // balance_sales or payment_sessions
	id        int64
	paymentID string // the provider's payment refunded
	key       string // the key it was asked under
	refundID  string // the provider's refund, if it ever answered ("": never)
	accounted int64  // what of the payment the row's earlier refunds gave back
	amount    int64
}

// lookForRefund looks for o among its payment's refunds at the provider,
// once the provider has (nearly) forgotten the key it was asked under
// and never answered, or cannot read it by its id: the one the provider
// lists by its id, or the one after those the row accounted for
// (unaccountedRefund), is followed by its id from then. None there, it
// was not made, and o is given key, asked from now (renewed, its POST
// recorded: the caller makes it at once); unless a POST under the old key
// was recorded within refundPostBound before the list was read (it may
// yet land) or another path moved the refund on: errRefundLater, and it
// is looked for again at the next check. A provider that lists no
// refunds, or refunds that are not ours alone, leave it to a person
// (refundForAPerson): no new key, no second refund risked.
func (s *Service) lookForRefund(ctx context.Context, o owedRefund, key string) (found *psp.Refund, renewed bool, err error) {
	listed := s.now()
	refunds, err := s.paymentRefunds(ctx, o.paymentID)
	if err != nil {
		return nil, false, err
	}
	if r := refundByID(refunds, o.refundID); r != nil {
		return r, false, nil
	}
	r, none, err := unaccountedRefund(refunds, o.accounted, o.amount)
	if err != nil || !none {
		return r, false, err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE `+o.table+` SET refund_key = $3, refund_id = NULL, refund_asked_at = $4, refund_posted_at = $4
		WHERE id = $1 AND status = 'refunding' AND refund_key = $2 AND (refund_posted_at IS NULL OR refund_posted_at < $5)`,
		o.id, o.key, key, s.now(), listed.Add(-s.refundPostBound()))
	if err != nil {
		return nil, false, fmt.Errorf("%s %d: %w", o.table, o.id, dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		return nil, false, fmt.Errorf("%s %d: %w", o.table, o.id, errRefundLater)
	}
	return nil, true, nil
}

// refundPostBound is how long after a refund's POST began the refund it
// made is surely among the payment's refunds: the longest the POST can
// take (every attempt of the retrying provider a whole providerCall, and
// the pauses between them: psp.CallBound), and refundLandMargin. A POST
// recorded longer ago has landed at the provider, or never will: the
// refunds listed since show what it made.
func (s *Service) refundPostBound() time.Duration {
	return psp.CallBound(s.psp, providerCall) + refundLandMargin
}

// refundLandMargin is how long after our call a refund may still come to
// be among the payment's refunds: the provider may finish a refund asked
// of it after our call gave up, and its list may lag behind. It also
// covers the replicas' clocks, which stamp a POST and compare the stamp
// (each its own: they differ by far less). The key's last hour leaves it
// room: nothing is asked under a key once it is 23 hours old, and a key
// is renewed a quarter of an hour after its last POST at the earliest.
const refundLandMargin = 15 * time.Minute

// errRefundKeyMoved: a refund's POST was not made under the key read,
// which is no longer the refund's (another path renewed it, or finished
// the refund) or is near the end of the provider's memory of it (the
// refund is looked for instead).
var errRefundKeyMoved = errors.New("the refund's key moved on, or is nearly forgotten by the provider: not asked under it")

// errRefundLater: a refund's key was not renewed (lookForRefund), as
// another path moved the refund on meanwhile, or a POST under the key may
// still land.
var errRefundLater = errors.New("the refund moved on meanwhile, or a POST of it may still land: looked for again at the next check")

// claimRefundPost records, just before a refund's POST under key, that it
// is made now (refund_posted_at of row id of table, balance_sales or
// payment_sessions), and only while key is still the refund's and within
// the provider's memory of it (refundKeyLife); errRefundKeyMoved, and the
// POST is not to be made, when not. A key is renewed only once the last
// POST under it is older than refundPostBound.
func (s *Service) claimRefundPost(ctx context.Context, table string, id int64, key string) error {
	now := s.now()
	tag, err := s.pool.Exec(ctx, `UPDATE `+table+` SET refund_posted_at = $3
		WHERE id = $1 AND status = 'refunding' AND refund_key = $2 AND COALESCE(refund_asked_at, updated_at) > $4`,
		id, key, now, now.Add(-refundKeyLife))
	if err != nil {
		return fmt.Errorf("%s %d: %w", table, id, dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		return errRefundKeyMoved
	}
	return nil
}

// A deposit refund's record says who found it made: the provider's word
// (refundMade), or staff who found it at the provider (refundRecorded).
const (
	refundMade     = "refunded"
	refundRecorded = "refunded: the salon found the refund made at the provider"
)

// refundRecordable is nil when staff may record a row's refund as made
// at the provider (found there by them): the row owes one (refunding)
// that the checks will not finish, the provider having cancelled it or
// the checks having left it to a person, and no POST of it may still be
// on its way (posted: when the last one began). Else ErrConflict, saying
// why.
func (s *Service) refundRecordable(status PaymentStatus, lastError string, posted *time.Time) error {
	switch {
	case status != PayRefunding:
		return conflict("no refund is owed")
	case !refundLeftToStaff(status, lastError):
		return conflict("the refund is on its way: the checks follow it")
	case posted != nil && s.now().Before(posted.Add(s.refundPostBound())):
		return conflict("the refund was asked of the payment service a moment ago: look again in a quarter of an hour")
	}
	return nil
}

// refundShown returns what the provider's payment paymentID shows
// refunded when that covers a refund of amount after before (what our
// records refunded of it already): its refunds that succeeded add up to
// both at least. Staff record a refund as made only so: one still pending
// there, or never made, is refused (ErrConflict, saying what the payment
// shows), as is one of a payment whose provider this server does not
// speak to; ErrUnavailable when the provider does not answer.
func (s *Service) refundShown(ctx context.Context, provider, paymentID string, before, amount Money) (Money, error) {
	switch {
	case s.psp == nil || provider != s.psp.Name() || paymentID == "":
		return 0, conflict("this server does not reach the payment service of this payment: its refund cannot be checked here")
	case !providerCallsAllowed(ctx):
		return 0, fmt.Errorf("no provider calls from here: %w", ErrUnavailable)
	}
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	p, err := s.psp.Get(cctx, paymentID)
	if err != nil {
		s.log.Warn("refund record: the provider's payment", "payment", paymentID, "err", err)
		return 0, fmt.Errorf("the payment provider did not answer: %v: %w", err, ErrUnavailable)
	}
	if p.Refunded < int64(before+amount) {
		return 0, conflict("the payment service shows %s refunded of this payment; our records and this refund make %s: the refund has not succeeded there",
			Money(p.Refunded), before+amount)
	}
	return Money(p.Refunded), nil
}

// refundNotMadeElsewhere is nil when the provider's payment paymentID
// (of provider) shows nothing refunded beyond what our records refunded
// of it (before): staff asking for a refund again, after the provider
// cancelled it or after finding it not made, ask for one that is not
// there. A payment showing more (a refund made there by hand, this one
// perhaps, or one of ours whose answers were lost) is ErrConflict,
// saying what it shows: a new refund would reach the client as a second
// one, and staff record this one as made instead (refundShown). Refunds
// still pending there count too, when the provider lists them.
// ErrUnavailable when the provider does not answer, or is not this
// server's.
func (s *Service) refundNotMadeElsewhere(ctx context.Context, provider, paymentID string, before Money) error {
	if s.psp == nil || provider != s.psp.Name() || paymentID == "" || !providerCallsAllowed(ctx) {
		return fmt.Errorf("the payment provider is not reachable from here: %w", ErrUnavailable)
	}
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	p, err := s.psp.Get(cctx, paymentID)
	if err != nil {
		s.log.Warn("refund asked again: the provider's payment", "payment", paymentID, "err", err)
		return fmt.Errorf("the payment provider did not answer: %v: %w", err, ErrUnavailable)
	}
	shown := p.Refunded
	switch refunds, err := s.paymentRefunds(cctx, paymentID); {
	case errors.Is(err, errRefundUnlisted): // (what succeeded is all it shows)
	case err != nil:
		s.log.Warn("refund asked again: the provider's refunds", "payment", paymentID, "err", err)
		return fmt.Errorf("the payment provider did not answer: %v: %w", err, ErrUnavailable)
	default:
		var live int64
		for _, r := range refunds {
			if r.Status == "pending" || r.Status == "succeeded" {
				live += r.Amount
			}
		}
		shown = max(shown, live)
	}
	if shown > int64(before) {
		return conflict("the payment service shows %s refunded of this payment, our records %s: the refund is not asked again, as a second one would reach the client too; if this refund was made there, record it as made",
			Money(shown), before)
	}
	return nil
}
