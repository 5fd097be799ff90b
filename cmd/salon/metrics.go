package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"salon/booking"
)

// bookingMetrics are the core's Book calls, by channel and outcome.
type bookingMetrics struct {
	total        *prometheus.CounterVec
	seconds      *prometheus.HistogramVec
	alternatives prometheus.Histogram
	messages     *prometheus.CounterVec
}

func newBookingMetrics() *bookingMetrics {
	alts := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "salon_booking_alternatives_offered", Help: "Alternatives offered with a taken time.",
		Buckets: []float64{0, 1, 2, 3, 4, 5, 6},
	})
	return &bookingMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "salon_bookings_total", Help: "Book calls, by channel (web, telegram, panel, import, system) and outcome (booked, taken, invalid, unavailable, error).",
		}, []string{"channel", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "salon_booking_duration_seconds", Help: "Book calls' latency, by outcome (alternatives included for a taken time).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"outcome"}),
		alternatives: alts,
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "salon_messages_total", Help: "Messages to clients by e-mail and SMS, by channel and outcome (sent, failed, retry, delivered, undelivered).",
		}, []string{"channel", "outcome"}),
	}
}

func (m *bookingMetrics) observeMessage(ch booking.Channel, outcome string) {
	m.messages.WithLabelValues(string(ch), outcome).Inc()
}

func (m *bookingMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.total, m.seconds, m.alternatives, m.messages}
}

func (m *bookingMetrics) observe(o booking.Observation) {
	m.total.WithLabelValues(string(o.Channel), o.Outcome).Inc()
	m.seconds.WithLabelValues(o.Outcome).Observe(o.Took.Seconds())
	if o.Outcome == "taken" {
		m.alternatives.Observe(float64(o.Alternatives))
	}
}

// jobCollector reports River's queue: jobs waiting to run, and how long
// the oldest has waited past its time.
type jobCollector struct {
	pool  *pgxpool.Pool
	depth *prometheus.Desc
	lag   *prometheus.Desc
}

func newJobCollector(pool *pgxpool.Pool) *jobCollector {
	return &jobCollector{pool: pool,
		depth: prometheus.NewDesc("salon_jobs_waiting", "Background jobs waiting to run, by kind.", []string{"kind"}, nil),
		lag:   prometheus.NewDesc("salon_jobs_lag_seconds", "How long the oldest job due has waited past its time.", nil, nil),
	}
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth; ch <- c.lag }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT kind, count(*) FROM river_job WHERE state IN ('available', 'retryable', 'scheduled') GROUP BY kind`)
	if err != nil {
		return
	}
	for rows.Next() {
		var kind string
		var n float64
		if rows.Scan(&kind, &n) == nil {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, n, kind)
		}
	}
	rows.Close()
	var lag float64
	if err := c.pool.QueryRow(ctx, `SELECT COALESCE(EXTRACT(epoch FROM now() - min(scheduled_at)), 0) FROM river_job
		WHERE state IN ('available', 'retryable') AND scheduled_at < now()`).Scan(&lag); err == nil {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag)
	}
}

// paymentCollector reports, at each scrape, the payment sessions by state
// and how late the sweep is (the oldest due check not yet made), read from
// the database so every replica reports the same.
type paymentCollector struct {
	pool       *pgxpool.Pool
	state      *prometheus.Desc
	lag        *prometheus.Desc
	reconciled *prometheus.Desc
}

func newPaymentCollector(pool *pgxpool.Pool) *paymentCollector {
	return &paymentCollector{pool: pool,
		state: prometheus.NewDesc("salon_payment_sessions", "Payment sessions by state.", []string{"status"}, nil),
		lag:   prometheus.NewDesc("salon_payment_sweep_lag_seconds", "How late the payment sweep is: how long the oldest due check not being made has waited.", nil, nil),
		reconciled: prometheus.NewDesc("salon_payment_reconciled_total",
			"Payment sessions the reading of the provider's own list found out of step, and settled.", nil, nil),
	}
}

func (c *paymentCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.lag
	ch <- c.reconciled
}

func (c *paymentCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT status, count(*) FROM payment_sessions GROUP BY status`)
	if err != nil {
		return
	}
	for rows.Next() {
		var st string
		var n float64
		if rows.Scan(&st, &n) == nil {
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, n, st)
		}
	}
	rows.Close()
	var lag float64
	if err := c.pool.QueryRow(ctx, `SELECT COALESCE(EXTRACT(epoch FROM now() - min(next_check_at)), 0) FROM payment_sessions
		WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding') AND next_check_at < now()
		  AND (lease_until IS NULL OR lease_until < now())`).
		Scan(&lag); err == nil {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag)
	}
	var reconciled float64
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'payment_reconciled'`).Scan(&reconciled); err == nil {
		ch <- prometheus.MustNewConstMetric(c.reconciled, prometheus.CounterValue, reconciled)
	}
}
