package psp

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	callSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "salon_payment_provider_call_duration_seconds", Help: "Payment provider calls, by provider, operation and result.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"provider", "op", "result"})
)

// Collectors are the providers' Prometheus metrics.
func Collectors() []prometheus.Collector { return []prometheus.Collector{callSeconds} }

// Measured wraps a provider so that every call is timed and counted by
// result: ok, rejected (the provider refused) or unknown (no answer).
func Measured(p Provider) Provider { return measured{p} }

type measured struct{ p Provider }

func (m measured) Name() string { return m.p.Name() }

func (m measured) observe(op string, start time.Time, err error) {
	result := "ok"
	switch {
	case IsRejected(err):
		result = "rejected"
	case errors.Is(err, ErrUnknown), err != nil:
		result = "unknown"
	}
	callSeconds.WithLabelValues(m.p.Name(), op, result).Observe(time.Since(start).Seconds())
}

func (m measured) Create(ctx context.Context, key string, r CreateRequest) (p *Payment, err error) {
	defer func(t time.Time) { m.observe("create", t, err) }(time.Now())
	return m.p.Create(ctx, key, r)
}

func (m measured) Get(ctx context.Context, id string) (p *Payment, err error) {
	defer func(t time.Time) { m.observe("get", t, err) }(time.Now())
	return m.p.Get(ctx, id)
}

func (m measured) Capture(ctx context.Context, key, id string, amount int64, currency string) (p *Payment, err error) {
	defer func(t time.Time) { m.observe("capture", t, err) }(time.Now())
	return m.p.Capture(ctx, key, id, amount, currency)
}

func (m measured) Cancel(ctx context.Context, key, id string) (p *Payment, err error) {
	defer func(t time.Time) { m.observe("cancel", t, err) }(time.Now())
	return m.p.Cancel(ctx, key, id)
}

func (m measured) Refund(ctx context.Context, key, paymentID string, amount int64, currency string, receipt *Receipt) (r *Refund, err error) {
	defer func(t time.Time) { m.observe("refund", t, err) }(time.Now())
	return m.p.Refund(ctx, key, paymentID, amount, currency, receipt)
}

func (m measured) GetRefund(ctx context.Context, id string) (r *Refund, err error) {
	defer func(t time.Time) {
		if !errors.Is(err, ErrCannotGetRefund) {
			m.observe("get_refund", t, err)
		}
	}(time.Now())
	return GetRefund(ctx, m.p, id)
}

func (m measured) SendReceipt(ctx context.Context, key string, r Receipt) (err error) {
	defer func(t time.Time) { m.observe("receipt", t, err) }(time.Now())
	return SendReceipt(ctx, m.p, key, r)
}

func (m measured) List(ctx context.Context, since time.Time, cursor string) (p []Payment, next string, err error) {
	defer func(t time.Time) { m.observe("list", t, err) }(time.Now())
	return List(ctx, m.p, since, cursor)
}

func (m measured) ListRefunds(ctx context.Context, paymentID, cursor string) (r []Refund, next string, err error) {
	defer func(t time.Time) {
		if !errors.Is(err, ErrCannotListRefunds) {
			m.observe("list_refunds", t, err)
		}
	}(time.Now())
	return ListRefunds(ctx, m.p, paymentID, cursor)
}

// Unwrap returns the measured provider.
func (m measured) Unwrap() Provider { return m.p }
