package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// paymentCollector reports, at each scrape, the payment sessions by state
// and how late the sweep is (the oldest due check not yet made), read from
// the database so every replica reports the same.
type paymentCollector struct {
	pool  *pgxpool.Pool
	state *prometheus.Desc
	lag   *prometheus.Desc
}

func newPaymentCollector(pool *pgxpool.Pool) *paymentCollector {
	return &paymentCollector{pool: pool,
		state: prometheus.NewDesc("salon_payment_sessions", "Payment sessions by state.", []string{"status"}, nil),
		lag:   prometheus.NewDesc("salon_payment_sweep_lag_seconds", "How long the oldest due payment check has waited.", nil, nil),
	}
}

func (c *paymentCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.state; ch <- c.lag }

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
		WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding') AND next_check_at < now()`).
		Scan(&lag); err == nil {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag)
	}
}
