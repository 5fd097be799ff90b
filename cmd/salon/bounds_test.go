package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// process is a salon serve process of its own (this test binary, run
// again as the command), so its memory is its own to measure.
type process struct {
	base string
	cmd  *exec.Cmd
	logs *syncBuffer
}

// startProcess starts salon serve on the database with the environment
// kv (KEY=value) and waits until it is ready; it is stopped (SIGTERM, then
// killed) when t ends.
func startProcess(t *testing.T, dbURL string, kv ...string) *process {
	t.Helper()
	addr := freeAddr(t)
	p := &process{base: "http://" + addr, logs: &syncBuffer{}}
	p.cmd = child(t, append([]string{"DATABASE_URL=" + dbURL, "SALON_HTTP_ADDR=" + addr, "SALON_PUBLIC_URL=" + p.base,
		"PAYMENT_PROVIDER=sandbox"}, kv...), "serve")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("process log (tail): %s", tail(p.logs.String(), 3000))
		}
	})
	bookingtest.WaitFor(t, 60*time.Second, "the process to be ready", func() bool {
		resp, err := http.Get(p.base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

// memory returns the process's resident set and its peak since the last
// resetPeak, in MiB (from /proc).
func (p *process) memory(t *testing.T) (rss, peak float64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kib float64
		if n, _ := fmt.Sscanf(sc.Text(), "VmRSS: %f kB", &kib); n == 1 {
			rss = kib / 1024
		}
		if n, _ := fmt.Sscanf(sc.Text(), "VmHWM: %f kB", &kib); n == 1 {
			peak = kib / 1024
		}
	}
	return rss, peak
}

// resetPeak starts the peak resident set over from the current one.
func (p *process) resetPeak(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
}

// send makes a request with a client of its own and returns its status
// and how long the answer took.
func send(method, u, contentType string, body io.Reader, headers ...string) (int, time.Duration) {
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return 0, 0
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, time.Since(start)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// statuses counts answers by status.
func statuses(codes []int) map[int]int {
	out := map[int]int{}
	for _, c := range codes {
		out[c]++
	}
	return out
}

// TestLoginsAreBounded: 20 parallel logins for unknown e-mails took the
// server from 190 MB to 1.5 GB (each runs argon2id with 64 MiB), 40 to
// 4.2 GB with 17 answered 503 after 10 s. Now: forty logins at once, each
// from its own address (a trusted proxy says so) so that no throttle
// stops them, grow the resident set by at most 150 MB; each is answered
// (a wrong password, or 503 at once when the queue is full). And a burst
// of 40 wrong passwords for one e-mail from one address has exactly 10
// checked; then the right password is refused too (429).
func TestLoginsAreBounded(t *testing.T) {
	t.Parallel()
	dbURL := bookingtest.ConnString(t)
	pool := bookingtest.PoolFor(t, dbURL)
	svc := booking.New(pool)
	e := &bookingtest.Env{Pool: pool, Svc: svc, Clock: bookingtest.NewClock(time.Now())}
	s := e.Salon(t, booking.Salon{Slug: "logins", Locale: "en"})
	if _, err := svc.CreateUser(bookingtest.System(), s.ID, "owner@logins.test", "the right password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, dbURL, "SALON_TRUSTED_PROXIES=127.0.0.1/32")
	login := func(email, password, from string) (int, time.Duration) {
		form := url.Values{"email": {email}, "password": {password}}
		return send("POST", p.base+"/panel/login", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()),
			"X-Forwarded-For", from)
	}
	// From before the process ever hashed a password.
	p.resetPeak(t)
	base, _ := p.memory(t)
	codes := make([]int, 40)
	took := make([]time.Duration, 40)
	bookingtest.Race(40, func(i int) {
		codes[i], took[i] = login(fmt.Sprintf("nobody%d@logins.test", i), "wrong", fmt.Sprintf("198.51.100.%d", i))
	})
	_, peak := p.memory(t)
	got := statuses(codes)
	t.Logf("40 parallel logins: resident set %.0f MiB, peak %.0f MiB (+%.0f MiB); answers %v", base, peak, peak-base, got)
	if got[http.StatusOK]+got[http.StatusServiceUnavailable] != 40 || got[http.StatusOK] == 0 {
		t.Errorf("answers %v, want each a wrong-password page or 503", got)
	}
	if peak-base > 150 {
		t.Errorf("the resident set grew by %.0f MiB, want at most 150", peak-base)
	}
	for i, c := range codes {
		if c == http.StatusServiceUnavailable && took[i] > 2*time.Second {
			t.Errorf("a refused login answered after %v, want at once", took[i])
		}
	}

	bookingtest.Race(40, func(i int) {
		codes[i], _ = login("owner@logins.test", fmt.Sprintf("guess %d", i), "203.0.113.7")
	})
	if got := statuses(codes); got[http.StatusOK] != booking.LoginMaxFailures || got[http.StatusTooManyRequests] != 40-booking.LoginMaxFailures {
		t.Errorf("a burst of 40 guesses: %v, want %d checked and the rest 429", got, booking.LoginMaxFailures)
	}
	if c, _ := login("owner@logins.test", "the right password", "203.0.113.8"); c != http.StatusTooManyRequests {
		t.Errorf("the right password after the burst: %d, want 429", c)
	}
	if slices.Contains(codes, 0) {
		t.Errorf("some logins got no answer: %v", codes)
	}
}
