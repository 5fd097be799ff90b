package main

import (
	"bufio"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/bot"
	"salon/bot/tgtest"
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
	addr := bookingtest.FreeAddr(t)
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

// panelLogin signs in to the panel at base and returns a client holding
// the session (it does not follow redirects).
func panelLogin(t *testing.T, base, email, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(base+"/panel/login", url.Values{"email": {email}, "password": {password}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %v %v", resp, err)
	}
	resp.Body.Close()
	return client
}

// csrfOf returns the CSRF token on a panel page.
func csrfOf(t *testing.T, client *http.Client, page string) string {
	t.Helper()
	resp, err := client.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF token on %s: %.300s", page, html)
	}
	return string(m[1])
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
// (a wrong password, or 503: at once when the queue is full, after at
// most booking.PasswordCheckWait in it when the machine is slow). A burst
// of 40 wrong passwords for one e-mail from one address has exactly 10
// checked; then the right password is refused too (429).
//
// It runs alone among this package's tests: a machine busy with the others
// hashes slower than the queue's wait, and a guess refused as too many at
// once (503) is not one that was checked.
func TestLoginsAreBounded(t *testing.T) {
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
		if c == http.StatusServiceUnavailable && took[i] > booking.PasswordCheckWait+2*time.Second {
			t.Errorf("a refused login answered after %v, want at once (a full queue) or after at most %v in it", took[i], booking.PasswordCheckWait)
		}
	}

	bookingtest.Race(40, func(i int) {
		codes[i], _ = login("owner@logins.test", fmt.Sprintf("guess %d", i), "203.0.113.7")
	})
	got = statuses(codes)
	t.Logf("a burst of 40 guesses: %v", got)
	if got[http.StatusOK] != booking.LoginMaxFailures || got[http.StatusTooManyRequests] != 40-booking.LoginMaxFailures {
		t.Errorf("a burst of 40 guesses: %v, want %d checked and the rest 429", got, booking.LoginMaxFailures)
	}
	if c, _ := login("owner@logins.test", "the right password", "203.0.113.8"); c != http.StatusTooManyRequests {
		t.Errorf("the right password after the burst: %d, want 429", c)
	}
	if slices.Contains(codes, 0) {
		t.Errorf("some logins got no answer: %v", codes)
	}
}

// TestBusyMasterStallsNoOneElse: with one master's lock held 15 s (a long
// transaction stands in for it) and 60 widget bookings for that master,
// all 60 answered 503 only at 10 s, another salon's API and widget page
// waited up to 9.1 s and /readyz said "database unreachable": the waiters
// held every pool connection. Now the waiters for one master wait without
// a connection (one per process waits in the database), so they are
// answered 503 within the 5 s lock wait (and a little), while another
// salon's API keeps a p99 of at most 200 ms and /readyz stays 200.
func TestBusyMasterStallsNoOneElse(t *testing.T) {
	t.Parallel()
	dbURL := bookingtest.ConnString(t)
	pool := bookingtest.PoolFor(t, dbURL)
	e := &bookingtest.Env{Pool: pool, Svc: booking.New(pool), Clock: bookingtest.NewClock(time.Now())}
	busy := e.Salon(t, booking.Salon{Slug: "busy", Locale: "en", MinNoticeMin: 0, HorizonDays: 30})
	calm := e.Salon(t, booking.Salon{Slug: "calm", Locale: "en", MinNoticeMin: 0, HorizonDays: 30})
	day := busy.Today(time.Now()).AddDays(1)
	sv := e.Service(t, busy, booking.SalonService{Name: "Cut", DurationMin: 30})
	m := e.Master(t, busy, sv)
	e.AllDay(t, busy, m, day, 1)
	calmSv := e.Service(t, calm, booking.SalonService{Name: "Cut", DurationMin: 30})
	calmM := e.Master(t, calm, calmSv)
	e.AllDay(t, calm, calmM, day, 1)
	p := startProcess(t, dbURL, "SALON_BOOKING_RATE_LIMIT=0")

	release := bookingtest.HoldMaster(t, pool, m.ID)
	time.AfterFunc(15*time.Second, release)
	held := time.Now()

	// The other salon, and readiness, all along.
	stop := make(chan struct{})
	var mu sync.Mutex
	var calmTook []time.Duration
	var calmBad, readyBad []int
	var bg sync.WaitGroup
	for w := range 4 {
		bg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				u := []string{"/api/v1/salons/calm/services", fmt.Sprintf("/api/v1/salons/calm/slots?service_id=%d&date=%s", calmSv.ID, day), "/w/calm"}[(w+i)%3]
				code, took := send("GET", p.base+u, "", nil)
				mu.Lock()
				calmTook = append(calmTook, took)
				if code != http.StatusOK {
					calmBad = append(calmBad, code)
				}
				mu.Unlock()
			}
		})
	}
	bg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if code, _ := send("GET", p.base+"/readyz", "", nil); code != http.StatusOK {
				mu.Lock()
				readyBad = append(readyBad, code)
				mu.Unlock()
			}
		}
	})

	codes := make([]int, 60)
	took := make([]time.Duration, 60)
	bookingtest.Race(60, func(i int) {
		at := bookingtest.At(busy, day, "08:00").Add(time.Duration(i) * 30 * time.Minute)
		body := fmt.Sprintf(`{"service_id":%d,"master_id":%d,"starts_at":%q,"client":{"name":"Waiter","phone":"+7990%07d"}}`,
			sv.ID, m.ID, at.Format(time.RFC3339), i)
		codes[i], took[i] = send("POST", p.base+"/api/v1/salons/busy/bookings", "application/json", strings.NewReader(body))
	})
	// The background load runs until the lock is released, and a second more.
	<-time.After(time.Until(held.Add(16 * time.Second)))
	close(stop)
	bg.Wait()

	slices.Sort(took)
	if got := statuses(codes); got[http.StatusServiceUnavailable] != 60 {
		t.Errorf("the 60 bookings for the busy master: %v, want 60 answered 503", got)
	}
	// (The lock wait, 5 s, and a second for the request on a loaded
	// machine: 5.6 s seen beside the other packages' tests; before the
	// gate, 10 s.)
	if slowest := took[len(took)-1]; slowest > 6*time.Second {
		t.Errorf("the slowest waiter was answered after %v, want within 6 s", slowest)
	}
	slices.Sort(calmTook)
	p99 := calmTook[len(calmTook)*99/100]
	t.Logf("busy master: waiters answered in %v..%v; the other salon: %d requests, p99 %v, max %v; readyz failures %v",
		took[0], took[len(took)-1], len(calmTook), p99, calmTook[len(calmTook)-1], readyBad)
	// (At most 500 ms: 4-10 ms alone, 185-202 ms beside the other
	// packages' tests on two cores; the stall this guards against held the
	// other salon for seconds, 9.1 s before the gate.)
	if p99 > 500*time.Millisecond || len(calmBad) > 0 {
		t.Errorf("the other salon: p99 %v (want at most 500 ms), failures %v", p99, calmBad)
	}
	if len(readyBad) > 0 {
		t.Errorf("/readyz answered %v while one master was busy", readyBad)
	}
}

// zeros is an endless reader of one byte.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestBodiesAreBoundedBeforeTheyAreRead: every route buffered bodies up to
// 33 MiB before any check: 20 parallel 33 MB POSTs to the booking API all
// got 413, but the resident set went from 123 to 709 MB; the Telegram
// webhook read a 30 MB body before its 401. Now bodies stream, and each
// route refuses what is over its limit from the headers (or, for a body of
// unknown length, at its limit): 20 parallel 33 MB POSTs of each kind grow
// the resident set by at most 50 MB; a webhook with a wrong secret is
// refused before its body is read. And the panel's upload streams its
// file into the database: a 30 MB file grows the process by less than the
// file.
func TestBodiesAreBoundedBeforeTheyAreRead(t *testing.T) {
	t.Parallel()
	dbURL := bookingtest.ConnString(t)
	pool := bookingtest.PoolFor(t, dbURL)
	svc := booking.New(pool)
	e := &bookingtest.Env{Pool: pool, Svc: svc, Clock: bookingtest.NewClock(time.Now())}
	s := e.Salon(t, booking.Salon{Slug: "bodies", Locale: "en"})
	if _, err := svc.CreateUser(bookingtest.System(), s.ID, "owner@bodies.test", "the right password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	tg := tgtest.NewServer(t)
	p := startProcess(t, dbURL, "SALON_BOOKING_RATE_LIMIT=0", "TELEGRAM_BOT_TOKEN="+tg.Token, "TELEGRAM_API_URL="+tg.URL,
		"TELEGRAM_WEBHOOK_SECRET=the-secret")
	const size = 33 << 20
	measure := func(what string, limit float64, do func(i int) int) map[int]int {
		t.Helper()
		p.resetPeak(t)
		base, _ := p.memory(t)
		codes := make([]int, 20)
		bookingtest.Race(20, func(i int) { codes[i] = do(i) })
		_, peak := p.memory(t)
		got := statuses(codes)
		t.Logf("%s: resident set %.0f MiB, peak +%.0f MiB; answers %v", what, base, peak-base, got)
		if peak-base > limit {
			t.Errorf("%s: the resident set grew by %.0f MiB, want at most %.0f", what, peak-base, limit)
		}
		return got
	}
	// A refused body is answered from its headers and its connection
	// closed, unread: a client still writing it may see only the reset.
	post := func(path string, length int64, headers ...string) int {
		req, _ := http.NewRequest("POST", p.base+path, io.LimitReader(zeros{}, size))
		req.ContentLength = length // -1: chunked, of unknown length
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1 // the server closed the connection without reading the rest: refused
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	refused := func(what string, got map[int]int, want int) {
		t.Helper()
		if got[want]+got[-1] != 20 {
			t.Errorf("%s: %v, want every one refused with %d (or its connection closed)", what, got, want)
		}
	}
	refused("33 MB API bodies", measure("33 MB API bodies", 50, func(int) int { return post("/api/v1/salons/bodies/bookings", size) }), 413)
	refused("33 MB chunked API bodies", measure("33 MB chunked API bodies", 50, func(int) int { return post("/api/v1/salons/bodies/bookings", -1) }), 413)
	refused("33 MB webhooks with a wrong secret", measure("33 MB webhooks with a wrong secret", 50, func(int) int {
		return post(bot.WebhookPath, size, bot.SecretHeader, "wrong")
	}), 401)
	refused("33 MB chunked webhooks", measure("33 MB chunked webhooks", 50, func(int) int {
		return post(bot.WebhookPath, -1, bot.SecretHeader, "the-secret")
	}), 413)
	refused("33 MB panel forms", measure("33 MB panel forms", 50, func(int) int { return post("/panel/login", size) }), 413)

	// A 30 MB upload, as a browser sends it.
	client := panelLogin(t, p.base, "owner@bodies.test", "the right password")
	csrf := csrfOf(t, client, p.base+"/panel/import")
	// A browser knows the form's length and sends it in large writes: the
	// form is written once to count it, then streamed as it is written.
	// (Streamed in 20-byte chunks of unknown length, it cost a loaded
	// machine over 30 s in chunk headers alone.)
	const boundary = "the-upload-boundary"
	form := func(w io.Writer) string {
		bw := bufio.NewWriterSize(w, 64<<10)
		mw := multipart.NewWriter(bw)
		_ = mw.SetBoundary(boundary)
		_ = mw.WriteField("csrf", csrf)
		_ = mw.WriteField("kind", "clients")
		fw, _ := mw.CreateFormFile("file", "clients.csv")
		_, _ = io.WriteString(fw, "name,phone\n")
		row := []byte("Client,+79990000000\n")
		for n := 0; n < 30<<20; n += len(row) {
			_, _ = fw.Write(row)
		}
		_ = mw.Close()
		_ = bw.Flush()
		return mw.FormDataContentType()
	}
	var length countingWriter
	contentType := form(&length)
	pr, pw := io.Pipe()
	go func() { form(pw); _ = pw.Close() }()
	p.resetPeak(t)
	base, _ := p.memory(t)
	req, _ := http.NewRequest("POST", p.base+"/panel/import", pr)
	req.ContentLength = int64(length)
	req.Header.Set("Content-Type", contentType)
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, peak := p.memory(t)
	t.Logf("a 30 MB upload: %d in %v, resident set %.0f MiB, peak +%.0f MiB", resp.StatusCode, time.Since(began).Round(time.Millisecond), base, peak-base)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the upload: %d", resp.StatusCode)
	}
	if peak-base > 30 {
		t.Errorf("a 30 MB upload grew the process by %.0f MiB: it was held whole", peak-base)
	}
	var stored int64
	if err := pool.QueryRow(bookingtest.System(), `SELECT sum(length(data)) FROM upload_chunks`).Scan(&stored); err != nil || stored < 30<<20 {
		t.Errorf("stored %d bytes of the upload (%v)", stored, err)
	}
}

// TestNoticesOutliveAReplicaWithoutABot: a replica without
// TELEGRAM_BOT_TOKEN completed Telegram notification jobs without sending
// anything: a bot client's booking cancelled in the panel while the bot's
// replica was down never reached them, even after it came back. Now any
// replica writes the notice to the bot's outbox, and the bot's replica,
// once back, sends it, once.
func TestNoticesOutliveAReplicaWithoutABot(t *testing.T) {
	t.Parallel()
	dbURL := bookingtest.ConnString(t)
	pool := bookingtest.PoolFor(t, dbURL)
	svc := booking.New(pool)
	e := &bookingtest.Env{Pool: pool, Svc: svc, Clock: bookingtest.NewClock(time.Now())}
	s := e.Salon(t, booking.Salon{Slug: "notices", Locale: "en", MinNoticeMin: 0})
	// The test runs on the real clock: a salon without quiet hours, so the
	// notice is due now whatever the hour.
	if _, err := svc.UpdateMessageSettings(bookingtest.System(), s.ID, booking.MessageSettings{QuietFrom: "00:00", QuietTo: "00:00",
		ReminderOffsets: []time.Duration{24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	sv := e.Service(t, s, booking.SalonService{Name: "Cut", DurationMin: 30})
	m := e.Master(t, s, sv)
	day := s.Today(time.Now()).AddDays(2)
	e.Shift(t, s, m, day, 1, "10:00", "20:00")
	sys := bookingtest.System()
	if _, err := svc.CreateUser(sys, s.ID, "owner@notices.test", "owner-password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	tg := tgtest.NewServer(t)
	u := tg.NewUser("Client", "en")
	// Booked in the bot: its chat is the booking's origin, its contact proven.
	b, err := svc.Book(booking.As(sys, booking.ByIdentity(booking.TelegramUser(u.ID))), booking.BookRequest{SalonID: s.ID,
		ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(s, day, "11:00"),
		Client: booking.ClientInput{Name: "Client", Phone: "+79990001122", Verified: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(sys, `DELETE FROM river_job`); err != nil { // the booking's own notice: not this test's
		t.Fatal(err)
	}

	// Only the replica without a bot runs; the salon cancels in its panel.
	plain := startProcess(t, dbURL)
	client := panelLogin(t, plain.base, "owner@notices.test", "owner-password")
	csrf := csrfOf(t, client, fmt.Sprintf("%s/panel/bookings/%d", plain.base, b.ID))
	resp, err := client.PostForm(fmt.Sprintf("%s/panel/bookings/%d/cancel", plain.base, b.ID), url.Values{"csrf": {csrf}, "reason": {"the master is ill"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel in the panel: %v %v", resp, err)
	}
	resp.Body.Close()
	bookingtest.WaitFor(t, 30*time.Second, "the cancellation's notice to be written", func() bool {
		var queued int
		_ = pool.QueryRow(sys, `SELECT count(*) FROM tg_outbox WHERE chat_id = $1 AND state = 'queued'`, u.ID).Scan(&queued)
		return queued == 1
	})
	if len(u.Messages()) != 0 {
		t.Fatal("a message reached Telegram with no bot running")
	}

	// The bot's replica comes (back): the client hears, once.
	startProcess(t, dbURL, "TELEGRAM_BOT_TOKEN="+tg.Token, "TELEGRAM_API_URL="+tg.URL)
	if _, err := u.WaitText("cancelled", 30*time.Second); err != nil {
		t.Fatalf("the client never heard: %v%s", err, u.Dump())
	}
	bookingtest.WaitFor(t, 30*time.Second, "the outbox to be sent", func() bool {
		var queued int
		_ = pool.QueryRow(sys, `SELECT count(*) FROM tg_outbox WHERE state = 'queued'`).Scan(&queued)
		return queued == 0
	})
	if n := len(u.Messages()); n != 1 {
		t.Errorf("the client got %d messages, want the one cancellation:%s", n, u.Dump())
	}
}

// countingWriter counts what is written to it.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
