package bot

import "github.com/prometheus/client_golang/prometheus"

var (
	turnSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "salon_bot_turn_duration_seconds", Help: "Time to handle one Telegram update (without sending).",
		Buckets: []float64{.001, .0025, .005, .01, .02, .05, .1, .25, .5, 1},
	})
	sentTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "salon_bot_outbound_total", Help: "Telegram calls made by the sender, by result.",
	}, []string{"op", "result"})
	quarantinedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "salon_bot_updates_quarantined_total", Help: "Telegram updates that could not be read, kept aside in tg_quarantine.",
	})
)

// Collectors are the bot's Prometheus metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{turnSeconds, sentTotal, quarantinedTotal}
}
