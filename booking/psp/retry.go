package psp

import (
	"context"
	"errors"
	"time"
)

// Retrying wraps a provider so that a call whose outcome is unknown (a
// timeout, a reset, a 5xx) is made again at once, up to attempts times in
// all, with the same idempotence key, as YooKassa asks: the same key with
// the same request returns the first call's result, so a retry never does
// the work twice. The pause between attempts doubles from firstPause; the
// caller's context bounds them all. A refusal is not retried.
func Retrying(p Provider, attempts int) Provider {
	if attempts <= 1 {
		return p
	}
	return retrying{p: p, attempts: attempts}
}

type retrying struct {
	p        Provider
	attempts int
}

// firstPause is the pause after a call's first attempt; it doubles after
// each one.
const firstPause = 50 * time.Millisecond

// CallBound is the longest one call through p takes when each attempt of
// it at the provider takes at most perCall: a Retrying provider's every
// attempt and the pauses between them. (The caller's context may end it
// sooner; this is what it can take, not what it usually does.) A call
// begun longer ago than this has landed at the provider, or never will.
func CallBound(p Provider, perCall time.Duration) time.Duration {
	switch w := p.(type) {
	case retrying:
		each := CallBound(w.p, perCall)
		return time.Duration(w.attempts)*each + firstPause*(1<<(w.attempts-1)-1)
	case interface{ Unwrap() Provider }:
		return CallBound(w.Unwrap(), perCall)
	}
	return perCall
}

func retry[T any](ctx context.Context, r retrying, call func() (T, error)) (T, error) {
	pause := firstPause
	for i := 1; ; i++ {
		v, err := call()
		if err == nil || !errors.Is(err, ErrUnknown) || i == r.attempts {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(pause):
		}
		pause *= 2
	}
}

func (r retrying) Name() string { return r.p.Name() }

func (r retrying) Create(ctx context.Context, key string, req CreateRequest) (*Payment, error) {
	return retry(ctx, r, func() (*Payment, error) { return r.p.Create(ctx, key, req) })
}

func (r retrying) Get(ctx context.Context, id string) (*Payment, error) {
	return retry(ctx, r, func() (*Payment, error) { return r.p.Get(ctx, id) })
}

func (r retrying) Capture(ctx context.Context, key, id string, amount int64, currency string) (*Payment, error) {
	return retry(ctx, r, func() (*Payment, error) { return r.p.Capture(ctx, key, id, amount, currency) })
}

func (r retrying) Cancel(ctx context.Context, key, id string) (*Payment, error) {
	return retry(ctx, r, func() (*Payment, error) { return r.p.Cancel(ctx, key, id) })
}

func (r retrying) Refund(ctx context.Context, key, paymentID string, amount int64, currency string, receipt *Receipt) (*Refund, error) {
	return retry(ctx, r, func() (*Refund, error) { return r.p.Refund(ctx, key, paymentID, amount, currency, receipt) })
}

func (r retrying) GetRefund(ctx context.Context, id string) (*Refund, error) {
	return retry(ctx, r, func() (*Refund, error) { return GetRefund(ctx, r.p, id) })
}

func (r retrying) SendReceipt(ctx context.Context, key string, rc Receipt) error {
	_, err := retry(ctx, r, func() (struct{}, error) { return struct{}{}, SendReceipt(ctx, r.p, key, rc) })
	return err
}

func (r retrying) List(ctx context.Context, since time.Time, cursor string) ([]Payment, string, error) {
	type page struct {
		items []Payment
		next  string
	}
	p, err := retry(ctx, r, func() (page, error) {
		items, next, err := List(ctx, r.p, since, cursor)
		return page{items, next}, err
	})
	return p.items, p.next, err
}

func (r retrying) ListRefunds(ctx context.Context, paymentID, cursor string) ([]Refund, string, error) {
	type page struct {
		items []Refund
		next  string
	}
	p, err := retry(ctx, r, func() (page, error) {
		items, next, err := ListRefunds(ctx, r.p, paymentID, cursor)
		return page{items, next}, err
	})
	return p.items, p.next, err
}

// Unwrap returns the retried provider.
func (r retrying) Unwrap() Provider { return r.p }
