package widget_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/widget"
)

// BenchmarkHTTPBook is the load command of the public API: 32 concurrent
// clients, each booking its own master's consecutive slots through
// POST /api/v1/salons/{slug}/bookings on a real loopback server, against
// the same number of in-process Book calls on other masters in the same run
// (rounds interleaved, order rotating). Afterwards the database must hold
// no overlap. It reports HTTP throughput, p50 and p99 latency, and
// http/inproc: the median over rounds of HTTP throughput over in-process.
//
//	go test ./widget -run '^$' -bench HTTPBook -benchtime 6x
func BenchmarkHTTPBook(b *testing.B) {
	const clients = 32
	const perClient = 20 // bookings per client per round and kind
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{Slug: "load", HorizonDays: 366})
	svc := e.Service(b, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	days := (b.N*perClient)/48 + 2
	newMasters := func() []*booking.Master { return e.RoundTheClock(b, salon, clients, testDay, days, svc) }
	httpMasters, localMasters := newMasters(), newMasters()
	first := testDay.Start(salon.Location())
	slotAt := func(n int) time.Time { return first.Add(time.Duration(n) * 30 * time.Minute) }
	phone := func(kind, w int) string { return fmt.Sprintf("+7905%d%06d", kind, w) }

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	base := serve(b, widget.New(e.Svc, widget.Config{Log: log}), log)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}, Timeout: 30 * time.Second}

	var mu sync.Mutex
	var latencies []time.Duration
	viaHTTP := func(round int) error {
		return runClients(clients, func(w int) error {
			for i := range perClient {
				body, _ := json.Marshal(map[string]any{
					"service_id": svc.ID, "master_id": httpMasters[w].ID, "starts_at": slotAt(round*perClient + i).Format(time.RFC3339),
					"client": map[string]any{"name": "Load", "phone": phone(1, w)},
				})
				start := time.Now()
				resp, err := client.Post(base+"/api/v1/salons/load/bookings", "application/json", bytes.NewReader(body))
				if err != nil {
					return err
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				if resp.StatusCode != http.StatusCreated {
					return fmt.Errorf("POST: %d %s", resp.StatusCode, raw)
				}
				mu.Lock()
				latencies = append(latencies, took)
				mu.Unlock()
			}
			return nil
		})
	}
	inProcess := func(round int) error {
		return runClients(clients, func(w int) error {
			for i := range perClient {
				_, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: localMasters[w].ID,
					StartsAt: slotAt(round*perClient + i), Client: booking.ClientInput{Name: "Load", Phone: phone(2, w)}})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}

	var httpTime time.Duration
	var ratios []float64
	b.ResetTimer()
	for round := range b.N {
		var took [2]time.Duration
		phases := []func(int) error{viaHTTP, inProcess}
		for k := range phases { // rotate which goes first
			p := (round + k) % len(phases)
			start := time.Now()
			if err := phases[p](round); err != nil {
				b.Fatal(err)
			}
			took[p] = time.Since(start)
		}
		httpTime += took[0]
		ratios = append(ratios, took[1].Seconds()/took[0].Seconds())
		b.StopTimer()
		if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil { // as autovacuum would, untimed
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()

	var overlaps int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings x JOIN bookings y ON x.id < y.id AND x.master_id = y.master_id
		AND tstzrange(x.starts_at, booking_slot_end(x.starts_at, x.duration_min + x.buffer_min))
		 && tstzrange(y.starts_at, booking_slot_end(y.starts_at, y.duration_min + y.buffer_min))
		WHERE x.status IN ('pending', 'confirmed') AND y.status IN ('pending', 'confirmed')`).Scan(&overlaps); err != nil || overlaps != 0 {
		b.Fatalf("%d overlapping bookings after the load (%v)", overlaps, err)
	}
	slices.Sort(latencies)
	slices.Sort(ratios)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(b.N*clients*perClient)/httpTime.Seconds(), "http-bookings/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(ratios[len(ratios)/2], "http/inproc")
}

// runClients runs fn(i) for n clients at once and returns the first error.
func runClients(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
