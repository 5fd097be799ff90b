package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"salon/booking"
	"salon/booking/bookingtest"
)

// dbProxy is an embedded Toxiproxy between the server and PostgreSQL. The
// test cluster listens on a unix socket, so a small forwarder carries TCP
// to it, behind the proxy.
type dbProxy struct {
	proxy *toxiproxy.Proxy
	url   string // DATABASE_URL through the proxy
}

func newDBProxy(t *testing.T, connString string) *dbProxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	upstream := cfg.Host
	network := "tcp"
	if strings.HasPrefix(upstream, "/") {
		network, upstream = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", upstream, cfg.Port)
	} else {
		upstream = fmt.Sprintf("%s:%d", upstream, cfg.Port)
	}
	fwd, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fwd.Close() })
	go func() {
		for {
			c, err := fwd.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial(network, upstream)
				if err != nil {
					return
				}
				defer u.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "pg", "127.0.0.1:0", fwd.Addr().String())
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return &dbProxy{proxy: p, url: fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", cfg.User, p.Listen, cfg.Database)}
}

func (d *dbProxy) toxic(t *testing.T, js string) {
	t.Helper()
	if _, err := d.proxy.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		t.Fatal(err)
	}
}

func (d *dbProxy) clear() { d.proxy.Toxics.ResetToxics(context.Background()) }

// down stops the proxy: open connections are cut, new ones refused (the
// database "restarts"); up starts it again.
func (d *dbProxy) down() { d.proxy.Stop() }

func (d *dbProxy) up(t *testing.T) {
	t.Helper()
	if err := d.proxy.Start(); err != nil {
		t.Fatal(err)
	}
}

// TestServerUnderDatabaseFaults runs salon serve with the database behind
// Toxiproxy: latency, connections reset in the middle of transactions, and
// the database going away and coming back. Requests succeed or fail
// cleanly (503, never a 500), nothing is half-written (every booking
// retried with its idempotency key exists once), /readyz reports the
// outage and the recovery, and the server serves again within 5 s of the
// database's return, without a restart.
func TestServerUnderDatabaseFaults(t *testing.T) {
	t.Parallel()
	conn := bookingtest.ConnString(t)
	ctx := bookingtest.System()
	e := &bookingtest.Env{Pool: bookingtest.PoolFor(t, conn), Clock: bookingtest.NewClock(time.Now())}
	e.Svc = booking.New(e.Pool)
	salon := e.Salon(t, booking.Salon{Slug: "faulty", Name: "Faulty"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	day := salon.Today(time.Now()).AddDays(2)
	var masters []*booking.Master
	for range 4 {
		m := e.Master(t, salon, sv)
		e.Shift(t, salon, m, day, 1, "08:00", "22:00")
		masters = append(masters, m)
	}
	db := newDBProxy(t, conn)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logs := &syncBuffer{}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- run(sctx, []string{"serve"}, envOf("DATABASE_URL", db.url+"&application_name=salon-serve", "SALON_HTTP_ADDR", addr,
			"SALON_BOOKING_RATE_LIMIT", "0", "PAYMENT_PROVIDER", "sandbox"), nil, logs, logs)
	}()
	t.Cleanup(func() { stop(); <-done })
	base := "http://" + addr
	ready := func() int {
		c := http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get(base + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bookingtest.WaitFor(t, 30*time.Second, "serve", func() bool { return ready() == 200 })

	type attempt struct {
		key  string
		body string
	}
	var mu sync.Mutex
	statuses := map[int]int{}
	var failed []attempt
	n := 0
	book := func(a attempt) int {
		c := http.Client{Timeout: 15 * time.Second}
		req, _ := http.NewRequest("POST", base+"/api/v1/salons/faulty/bookings", strings.NewReader(a.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", a.key)
		resp, err := c.Do(req)
		if err != nil {
			return 0
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != 503 {
			t.Errorf("%d %s", resp.StatusCode, raw)
		}
		return resp.StatusCode
	}
	phase := func(name string, count int) {
		var wg sync.WaitGroup
		for range count {
			mu.Lock()
			i := n
			n++
			mu.Unlock()
			m := masters[i%len(masters)]
			at := bookingtest.At(salon, day, "08:00").Add(time.Duration(i/len(masters)) * 30 * time.Minute)
			a := attempt{key: fmt.Sprintf("fault-%d", i), body: fmt.Sprintf(`{"service_id": %d, "master_id": %d, "starts_at": %q,
				"client": {"name": "Client %d", "phone": "+7999%07d"}}`, sv.ID, m.ID, at.Format(time.RFC3339), i, i)}
			wg.Go(func() {
				st := book(a)
				mu.Lock()
				statuses[st]++
				if st != 201 {
					failed = append(failed, a)
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		t.Logf("%s: %v", name, statuses)
		clear(statuses)
	}

	// A calendar feed and a panel session, for the pages the outage hits.
	token, err := e.Svc.NewCalendarToken(ctx, salon.ID, masters[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.CreateUser(ctx, salon.ID, "owner@faulty.test", "owner-password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	panelClient := panelLogin(t, base, "owner@faulty.test", "owner-password")
	pages := map[string]*http.Client{"/w/faulty": http.DefaultClient, "/api/v1/salons/faulty": http.DefaultClient,
		"/calendar/" + token + ".ics": http.DefaultClient, "/panel/": panelClient}

	// 1. Latency: slow, but served.
	db.toxic(t, `{"name": "latency", "type": "latency", "stream": "downstream", "attributes": {"latency": 50, "jitter": 20}}`)
	phase("50±20 ms of latency", 20)
	db.clear()
	// 2. Connections reset in the middle of transactions.
	db.toxic(t, `{"name": "reset", "type": "reset_peer", "stream": "downstream", "toxicity": 0.3, "attributes": {"timeout": 20}}`)
	phase("30% of connections reset", 40)
	db.clear()
	// 3. An administrator terminates the server's connections (SQLSTATE
	// 57P01, "terminating connection due to administrator command"): 503s,
	// not 500s.
	terminating := make(chan struct{})
	var term sync.WaitGroup
	term.Go(func() {
		for {
			select {
			case <-terminating:
				return
			case <-time.After(30 * time.Millisecond):
			}
			_, _ = e.Pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name = 'salon-serve'`)
		}
	})
	phase("connections terminated by an administrator", 30)
	close(terminating)
	term.Wait()
	// 4. The database goes away.
	db.down()
	outage := time.Now()
	bookingtest.WaitFor(t, 15*time.Second, "/readyz to report the outage", func() bool { return ready() == 503 })
	reported := time.Since(outage)
	phase("the database down", 8)
	// Every page and API answers 503 with Retry-After meanwhile.
	for path, client := range pages {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Errorf("%s in the outage: %v", path, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s in the outage: %d (Retry-After %q), want 503 with Retry-After", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	// ... and comes back.
	db.up(t)
	back := time.Now()
	bookingtest.WaitFor(t, 15*time.Second, "/readyz to report the recovery", func() bool { return ready() == 200 })
	readyAfter := time.Since(back)
	var servedAfter time.Duration
	bookingtest.WaitFor(t, 15*time.Second, "a booking after the recovery", func() bool {
		resp, err := http.Get(base + "/api/v1/salons/faulty")
		if err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			servedAfter = time.Since(back)
			return true
		}
		return false
	})
	if servedAfter > 5*time.Second {
		t.Errorf("serving again %v after the database came back (goal: 5 s)", servedAfter)
	}
	// Nothing half-written: every request that did not end 201 is retried
	// with its idempotency key; each key is then exactly one booking, or
	// a clear refusal (the time taken).
	for _, a := range failed {
		if st := book(a); st != 201 && st != 409 {
			t.Errorf("retry of %s: %d", a.key, st)
		}
	}
	var bookings, distinct, orphans int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (master_id, starts_at)),
		(SELECT count(*) FROM idempotency_keys WHERE result IS NULL) FROM bookings WHERE salon_id = $1`, salon.ID).
		Scan(&bookings, &distinct, &orphans); err != nil {
		t.Fatal(err)
	}
	if bookings != distinct || bookings != n || orphans != 0 {
		t.Errorf("%d bookings for %d requests (%d distinct slots), %d idempotency keys without a result", bookings, n, distinct, orphans)
	}
	// The log and the metrics say what was answered: no 500 anywhere.
	if strings.Contains(logs.String(), `"status":500`) {
		t.Errorf("the access log records a 500: %s", tail(logs.String(), 2000))
	}
	for path := range pages {
		if strings.HasPrefix(path, "/calendar/") {
			path = "/calendar/:file" // a path that grants access is logged as its route
		}
		if !regexp.MustCompile(`"path":"` + regexp.QuoteMeta(path) + `","status":503`).MatchString(logs.String()) {
			t.Errorf("the access log has no 503 for %s", path)
		}
	}
	if resp, err := http.Get(base + "/metrics"); err == nil {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if regexp.MustCompile(`salon_http_request_duration_seconds_count\{[^}]*status="500"`).Match(raw) {
			t.Errorf("the metrics count 500s")
		}
		if !regexp.MustCompile(`salon_http_request_duration_seconds_count\{[^}]*route="/calendar/:file",status="503"`).Match(raw) {
			t.Errorf("the metrics have no 503 of the calendar feed")
		}
	}
	t.Logf("outage reported by /readyz after %v; /readyz ok %v and serving %v after the database returned; "+
		"%d requests, %d retried with their keys, %d bookings, none twice", reported.Round(time.Millisecond),
		readyAfter.Round(time.Millisecond), servedAfter.Round(time.Millisecond), n, len(failed), bookings)
}
