package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// startServe runs salon serve on a free port of a fresh database and
// returns its base URL, the database's connection string, a function that
// stops it (as SIGTERM does) and returns its exit code and how long the
// stop took.
func startServe(t *testing.T, kv ...string) (base, dbURL string, stop func() (int, time.Duration), logs *syncBuffer) {
	t.Helper()
	dbURL = bookingtest.ConnString(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logs = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, envOf(append([]string{"DATABASE_URL", dbURL, "SALON_HTTP_ADDR", addr, "PAYMENT_PROVIDER", "sandbox"}, kv...)...), nil, logs, logs)
	}()
	base = "http://" + addr
	bookingtest.WaitFor(t, 30*time.Second, "serve to answer", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	stopped := false
	stop = func() (int, time.Duration) {
		if stopped {
			return 0, 0
		}
		stopped = true
		start := time.Now()
		cancel()
		select {
		case code := <-done:
			return code, time.Since(start)
		case <-time.After(60 * time.Second):
			t.Fatalf("serve did not stop within a minute: %s", logs.String())
			return 0, 0
		}
	}
	t.Cleanup(func() { stop() })
	return base, dbURL, stop, logs
}

// Defect 5: /metrics answered 500 most of the time, its labels garbled
// ("GETETES"): fiber's method string, from a reused buffer, was kept as a
// label. Under a mix of requests every scrape is 200 and every method
// label is a method.
func TestMetricsUnderTraffic(t *testing.T) {
	t.Parallel()
	base, _, _, logs := startServe(t)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 40 {
				method, path := []string{"GET", "POST", "OPTIONS", "DELETE"}[(w+i)%4], []string{"/healthz", "/api/v1/salons/none", "/api/v1/nothing/here", "/w/none"}[i%4]
				req, _ := http.NewRequest(method, base+path, strings.NewReader(`{}`))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body) //nolint:errcheck
					resp.Body.Close()
				}
			}
		})
	}
	// The server takes the panel's uploads; the API still refuses a body
	// over its own limit.
	big := `{"x":"` + strings.Repeat("x", 70<<10) + `"}`
	if resp, err := http.Post(base+"/api/v1/salons/none/bookings", "application/json", strings.NewReader(big)); err != nil || resp.StatusCode != 413 {
		t.Errorf("70 KiB API body: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	scrape := func() string {
		t.Helper()
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("scrape: %d %s\n%s", resp.StatusCode, raw, logs.String())
		}
		return string(raw)
	}
	for range 20 {
		scrape() // while the traffic runs
	}
	wg.Wait()
	last := scrape()
	if !strings.Contains(last, "salon_payment_sweep_lag_seconds ") {
		t.Errorf("no payment sweep lag in the metrics")
	}
	methods := regexp.MustCompile(`salon_http_request_duration_seconds_count\{method="([^"]*)"`).FindAllStringSubmatch(last, -1)
	if len(methods) == 0 {
		t.Fatalf("no request metrics:\n%.2000s", last)
	}
	for _, m := range methods {
		switch m[1] {
		case "GET", "POST", "OPTIONS", "DELETE":
		default:
			t.Fatalf("method label %q", m[1])
		}
	}
}

// Defect 10: a request waiting on a busy master had no deadline, so a
// SIGTERM's shutdown overran its bound and the process exited 2. A clean
// stop with a request in flight ends within the bound and exits 0; the
// request itself answered 503 and wrote nothing.
func TestServeStopsInBoundedTimeWithRequestsInFlight(t *testing.T) {
	t.Parallel()
	base, dbURL, stop, logs := startServe(t, "SALON_BOOKING_RATE_LIMIT", "0")
	ctx := bookingtest.System()
	pool := bookingtest.PoolFor(t, dbURL)
	svc := booking.New(pool)
	salon, err := svc.CreateSalon(ctx, booking.Salon{Slug: "stop", Name: "Stop", Timezone: "Europe/Moscow", HorizonDays: 366})
	if err != nil {
		t.Fatal(err)
	}
	sv, err := svc.CreateService(ctx, salon.ID, booking.SalonService{Name: "Cut", DurationMin: 60})
	if err != nil {
		t.Fatal(err)
	}
	m, err := svc.CreateMaster(ctx, salon.ID, booking.Master{Name: "M"}, booking.Offer{ServiceID: sv.ID})
	if err != nil {
		t.Fatal(err)
	}
	day := salon.Today(time.Now()).AddDays(3)
	if err := svc.SetShifts(ctx, salon.ID, m.ID, day, []booking.ShiftInput{{Start: 600, End: 1200}}); err != nil {
		t.Fatal(err)
	}
	// Someone holds the master: requests queue on its lock.
	bookingtest.HoldMaster(t, pool, m.ID)
	statuses := make(chan int, 4)
	for i := range 4 {
		go func() {
			body := fmt.Sprintf(`{"service_id":%d,"master_id":%d,"starts_at":%q,"client":{"name":"A","phone":"+7999000%04d"}}`,
				sv.ID, m.ID, day.At(salon.Location(), 660+60*i).Format(time.RFC3339), i)
			resp, err := http.Post(base+"/api/v1/salons/stop/bookings", "application/json", bytes.NewBufferString(body))
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	// One of them waits in the database, the others at the master's gate.
	bookingtest.WaitFor(t, 30*time.Second, "the requests to queue on the master's lock", func() bool {
		var waiting int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting)
		return waiting == 1
	})
	code, took := stop()
	if code != 0 {
		t.Fatalf("serve exited %d after a clean stop: %s", code, logs.String())
	}
	if took > drainTime+stopTime {
		t.Fatalf("stopping took %v, more than its bound", took)
	}
	for range 4 {
		select {
		case s := <-statuses:
			if s != 503 && s != 0 {
				t.Errorf("a request queued on a held master answered %d, want 503 (or a closed connection)", s)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a request never answered")
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM bookings`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d bookings written", n)
	}
}

// TestMetricsOnTheirOwnAddress: with SALON_METRICS_ADDR, /metrics is not
// public; the metrics address serves the core's (bookings by channel and
// outcome, jobs, payments), and the access log is JSON with the request id
// and the salon.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	maddr := ln.Addr().String()
	ln.Close()
	base, dbURL, _, logs := startServe(t, "SALON_METRICS_ADDR", maddr)
	if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("public /metrics: %v %v", resp, err)
	}
	// A salon and a booking attempt through the API.
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"salon", "create", "--slug", "metrics", "--name", "M", "--tz", "Europe/Moscow"},
		envOf("DATABASE_URL", dbURL), nil, &out, &errs); code != 0 {
		t.Fatal(errs.String())
	}
	resp, err := http.Post(base+"/api/v1/salons/metrics/bookings", "application/json", strings.NewReader(`{"service_id": 1, "master_id": 1,
		"starts_at": "2030-01-01T10:00:00+03:00", "client": {"name": "A", "phone": "+79991234567"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Paths that grant access (a calendar feed, a payment's return) are
	// logged as their routes.
	for _, p := range []string{"/calendar/sEcReTfEeD.ics", "/w/metrics/back/sEcReTrEf", "/api/v1/returns/sEcReTrEf"} {
		if resp, err := http.Get(base + p); err == nil {
			resp.Body.Close()
		}
	}
	resp, err = http.Get("http://" + maddr + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics address: %v %v", resp, err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`salon_bookings_total{channel="web",outcome="invalid"} 1`, "salon_booking_duration_seconds_bucket",
		"salon_jobs_lag_seconds", "salon_payment_sweep_lag_seconds", "salon_http_request_duration_seconds"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	var line map[string]any
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"path":"/api/v1/salons/metrics/bookings"`) {
			_ = json.Unmarshal([]byte(l), &line)
		}
	}
	if line["salon"] != "metrics" || line["request_id"] == nil || line["status"] == nil {
		t.Errorf("access log line: %v", line)
	}
	if strings.Contains(logs.String(), "sEcReT") {
		t.Errorf("the log shows a path that grants access: %s", tail(logs.String(), 2000))
	}
	for _, route := range []string{`"path":"/calendar/:file"`, `"path":"/w/:slug/back/:ref"`, `"path":"/api/v1/returns/:ref"`} {
		if !strings.Contains(logs.String(), route) {
			t.Errorf("the log has no %s", route)
		}
	}
}
