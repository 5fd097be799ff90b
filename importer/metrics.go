package importer

import "github.com/prometheus/client_golang/prometheus"

var rowsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "salon_import_rows_total", Help: "Imported CSV rows, by kind and outcome (created, updated, unchanged, rejected; dry runs not counted).",
}, []string{"kind", "outcome"})

// Collectors are the importer's Prometheus metrics.
func Collectors() []prometheus.Collector { return []prometheus.Collector{rowsTotal} }

// count adds a finished run's rows to the metrics.
func count(kind Kind, s *Summary) {
	if s.DryRun {
		return
	}
	for outcome, n := range map[string]int{"created": s.Created, "updated": s.Updated, "unchanged": s.Unchanged, "rejected": s.Rejected} {
		if n > 0 {
			rowsTotal.WithLabelValues(string(kind), outcome).Add(float64(n))
		}
	}
}
