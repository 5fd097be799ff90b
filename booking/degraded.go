package booking

import (
	"context"
	"errors"
	"sync"
	"time"

	"salon/booking/psp"
)

// While the payment provider does not answer, a new deposit booking does
// not wait 8 s for it each time: after degradedAfter calls in a row with
// no answer, online payment is "down" for degradedFor, and new deposit
// bookings follow their salon's DepositFallback (refused, saying so, or
// booked with the deposit due in the salon). Then calls go through again
// (the saga's own checks never stop); the first answer ends it. Each
// process learns it for itself.

const (
	degradedAfter = 5
	degradedFor   = 30 * time.Second
)

// depositInSalonNote marks a booking made while online payment was down,
// its deposit due in the salon.
const depositInSalonNote = "Deposit due in the salon: online payment was down when this was booked."

// ErrPaymentsDown: the payment provider is not answering, and the salon
// refuses deposit bookings meanwhile (a 503, "try again later").
var ErrPaymentsDown = errors.New("online payment is not available right now; please try again in a few minutes")

// providerHealth counts the provider's calls in a row left unanswered.
type providerHealth struct {
	mu        sync.Mutex
	unknown   int
	downUntil time.Time
}

func (h *providerHealth) record(err error, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil || psp.IsRejected(err):
		h.unknown, h.downUntil = 0, time.Time{} // an answer
	case errors.Is(err, psp.ErrUnknown):
		h.unknown++
		if h.unknown >= degradedAfter {
			h.downUntil = now.Add(degradedFor)
		}
	}
}

func (h *providerHealth) down(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return now.Before(h.downUntil)
}

// PaymentsDown reports whether online payment is down for this process
// (the provider left its last calls unanswered).
func (s *Service) PaymentsDown() bool { return s.psp != nil && s.health.down(s.now()) }

// watched is the provider as the service calls it: every result counted.
type watched struct {
	p psp.Provider
	s *Service
}

func (w watched) Name() string { return w.p.Name() }

func (w watched) Create(ctx context.Context, key string, r psp.CreateRequest) (*psp.Payment, error) {
	p, err := w.p.Create(ctx, key, r)
	w.s.health.record(err, w.s.now())
	return p, err
}

func (w watched) Get(ctx context.Context, id string) (*psp.Payment, error) {
	p, err := w.p.Get(ctx, id)
	w.s.health.record(err, w.s.now())
	return p, err
}

func (w watched) Capture(ctx context.Context, key, id string, amount int64, currency string) (*psp.Payment, error) {
	p, err := w.p.Capture(ctx, key, id, amount, currency)
	w.s.health.record(err, w.s.now())
	return p, err
}

func (w watched) Cancel(ctx context.Context, key, id string) (*psp.Payment, error) {
	p, err := w.p.Cancel(ctx, key, id)
	w.s.health.record(err, w.s.now())
	return p, err
}

func (w watched) Refund(ctx context.Context, key, paymentID string, amount int64, currency string, receipt *psp.Receipt) (*psp.Refund, error) {
	r, err := w.p.Refund(ctx, key, paymentID, amount, currency, receipt)
	w.s.health.record(err, w.s.now())
	return r, err
}

// Unwrap returns the watched provider.
func (w watched) Unwrap() psp.Provider { return w.p }
