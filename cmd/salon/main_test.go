package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking/bookingtest"
	"salon/bot/tgtest"
)

func TestMain(m *testing.M) { bookingtest.Main(m) }

// syncBuffer is a bytes.Buffer safe to write from a running command while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func envOf(kv ...string) env {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The first of the two commands a new user runs: a private cluster is
// created, migrated and seeded, the server answers, and Ctrl-C stops it all.
func TestDevStartsPrivateClusterAndServes(t *testing.T) {
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755) // the server may run as another user (when we are root)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- exitFor(cmdDev(ctx, nil, envOf("SALON_HTTP_ADDR", "127.0.0.1:0"), &out, &errs, devOptions{dir: dir}), &errs)
	}()
	re := regexp.MustCompile(`health:\s+(http://\S+)/healthz`)
	bookingtest.WaitFor(t, 2*time.Minute, "the dev server's URLs", func() bool {
		select {
		case code := <-done:
			t.Fatalf("dev exited with %d: %s %s", code, out.String(), errs.String())
		default:
		}
		return re.MatchString(out.String())
	})
	base := re.FindStringSubmatch(out.String())[1]
	for _, want := range []string{"/w/demo", "/panel/", "admin@demo.salon"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dev output lacks %q:\n%s", want, out.String())
		}
	}
	if code, body := get(t, base+"/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz: %d %s", code, body)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "salon_http_request_duration_seconds") {
		t.Fatalf("metrics: %d", code)
	}
	if code, body := get(t, base+"/no-such-page"); code != 404 || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("404: %d %s", code, body)
	}
	// The printed panel URL and demo login work.
	m := regexp.MustCompile(`panel:\s+(http://\S+/panel/)\s+\(login (\S+), password (\S+)\)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("dev output has no panel URL and login:\n%s", out.String())
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := client.PostForm(strings.TrimSuffix(m[1], "/")+"/login", url.Values{"email": {m[2]}, "password": {m[3]}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/panel/" || !strings.Contains(string(page), `id="grid"`) {
		t.Fatalf("panel login with the printed demo login: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("dev exited with %d: %s", code, errs.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("dev did not stop")
	}
	if _, err := net.Dial("unix", filepath.Join(dir, "pg", ".s.PGSQL.5432")); err == nil {
		t.Fatal("the private PostgreSQL still answers after dev stopped")
	}
}

func TestCommandsAndExitCodes(t *testing.T) {
	t.Parallel()
	url := bookingtest.ConnString(t)
	getenv := envOf("DATABASE_URL", url)
	runCmd := func(stdin string, args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), args, getenv, strings.NewReader(stdin), &out, &errs)
		return code, out.String(), errs.String()
	}
	cases := []struct {
		args     []string
		stdin    string
		code     int
		contains string
	}{
		{[]string{"salon", "create", "--slug", "studio", "--name", "Studio", "--tz", "Europe/Berlin"}, "", 0, "created salon studio"},
		{[]string{"salon", "create", "--slug", "studio", "--name", "Again", "--tz", "Europe/Berlin"}, "", 1, "slug: already taken"},
		{[]string{"salon", "create", "--slug", "x2", "--name", "X", "--tz", "Mars/Base"}, "", 1, "timezone"},
		{[]string{"salon", "create", "--slug", "x4", "--name", "X", "--tz", "london"}, "", 1, "use an IANA time zone: Europe/London?"},
		{[]string{"salon", "create", "--slug", "x5", "--name", "X", "--tz", "New York"}, "", 1, "America/New_York?"},
		{[]string{"salon", "create", "--slug", "x6", "--name", "X", "--tz", "Atlantis"}, "", 1, "like Europe/Moscow"},
		{[]string{"salon", "create", "--slug", "x3"}, "", 2, "needs --slug, --name and --tz"},
		{[]string{"admin", "create", "--salon", "studio", "--email", "Boss@Studio.test", "--role", "owner", "--password-stdin"}, "s3cret-pass\n", 0, "created owner boss@studio.test"},
		{[]string{"admin", "create", "--salon", "studio", "--email", "boss@studio.test", "--password-stdin"}, "another-pass\n", 1, "email"},
		{[]string{"admin", "create", "--salon", "studio", "--email", "short@studio.test", "--password-stdin"}, "short\n", 1, "password"},
		{[]string{"admin", "create", "--salon", "nowhere", "--email", "a@b.test", "--password-stdin"}, "long-enough\n", 2, "not found"},
		{[]string{"migrate", "status"}, "", 0, "00004_bot.sql"},
		// init: a salon and its owner, both or neither.
		{[]string{"init", "--name", "Nails", "--slug", "nails", "--tz", "Europe/Moscow", "--email", "owner@nails.test", "--password-stdin"},
			"long-enough\n", 0, "/panel/login\n(where salon serve listens with this environment's SALON_HTTP_ADDR; SALON_PUBLIC_URL names the address people use)"},
		{[]string{"init", "--name", "Nails 2", "--slug", "nails2", "--tz", "Europe/Moscow", "--email", "owner@nails.test", "--password-stdin"},
			"long-enough\n", 1, "email: a user with this email exists"},
		{[]string{"init", "--name", "Nails 3", "--slug", "nails3", "--tz", "Europe/Moscow", "--email", "x@nails.test", "--password-stdin"},
			"short\n", 1, "password"},
		{[]string{"init", "--name", "Nails 4", "--slug", "nails"}, "", 2, "init needs"},
		{[]string{"master", "link-code", "--salon", "studio", "--master", "Nobody"}, "", 2, "not found"},
		{[]string{"master", "link-code", "--salon", "studio"}, "", 2, "needs --salon and --master"},
		{[]string{"migrate", "sideways"}, "", 2, "usage"},
		{[]string{"frobnicate"}, "", 2, "unknown command"},
		{[]string{}, "", 2, "no command"},
		{[]string{"help"}, "", 0, "salon COMMAND"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.stdin, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.contains) {
			t.Errorf("salon %s: exit %d, want %d; output %q, want it to contain %q", strings.Join(c.args, " "), code, c.code, out+errs, c.contains)
		}
		if strings.Contains(errs, "goroutine ") || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("salon %s: stderr is not one clear line: %q", strings.Join(c.args, " "), errs)
		}
	}
	// A command's --help lists its flags (exit 0), not "help requested".
	for _, args := range [][]string{{"init", "--help"}, {"import", "-h"}, {"salon", "create", "--help"}} {
		code, out, errs := runCmd("", args...)
		if code != 0 || !strings.Contains(out+errs, "usage: salon "+args[0]) || strings.Contains(out+errs, "help requested") {
			t.Errorf("salon %s: exit %d, %q", strings.Join(args, " "), code, out+errs)
		}
	}
	if _, out, errs := runCmd("", "init", "--help"); !strings.Contains(out+errs, "-tz string") || !strings.Contains(out+errs, "-currency") {
		t.Errorf("init --help lists no flags: %q", out+errs)
	}
	// A refused init wrote nothing: no salon without its owner.
	pool := bookingtest.PoolFor(t, url)
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM salons WHERE slug IN ('nails2', 'nails3')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d salons left by refused inits (%v)", n, err)
	}
}

// serve refuses a database whose migrations are behind, and serves one that is current.
func TestServeChecksSchema(t *testing.T) {
	t.Parallel()
	url := bookingtest.ConnString(t)
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "down"}, envOf("DATABASE_URL", url), nil, &out, &errs); code != 0 {
		t.Fatalf("migrate down: %d %s", code, errs.String())
	}
	errs.Reset()
	code := run(context.Background(), []string{"serve"}, envOf("DATABASE_URL", url, "SALON_HTTP_ADDR", "127.0.0.1:0", "PAYMENT_PROVIDER", "sandbox"), nil, &out, &errs)
	if code != exitFatal || !strings.Contains(errs.String(), "migrate up") {
		t.Fatalf("serve on an old schema: exit %d, %q", code, errs.String())
	}
	if code := run(context.Background(), []string{"migrate", "up"}, envOf("DATABASE_URL", url), nil, &out, &errs); code != 0 {
		t.Fatalf("migrate up: %d %s", code, errs.String())
	}
	errs.Reset()
	if code := run(context.Background(), []string{"serve"}, envOf("PAYMENT_PROVIDER", "sandbox"), nil, &out, &errs); code != exitFatal || !strings.Contains(errs.String(), "DATABASE_URL") {
		t.Fatalf("serve without DATABASE_URL: %d %q", code, errs.String())
	}

	// Find a free port, then serve on it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, envOf("DATABASE_URL", url, "SALON_HTTP_ADDR", addr, "PAYMENT_PROVIDER", "sandbox"), nil, &logs, &logs)
	}()
	bookingtest.WaitFor(t, 30*time.Second, "serve to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited with %d: %s", code, logs.String())
	}
}

// salon serve with a bot token runs the bot: in webhook mode here, with
// Telegram (the fake) delivering to serve's /telegram/webhook.
func TestServeRunsTheBot(t *testing.T) {
	t.Parallel()
	url := bookingtest.ConnString(t)
	tg := tgtest.NewServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out syncBuffer
	if code := run(context.Background(), []string{"salon", "create", "--slug", "botsalon", "--name", "Bot Salon", "--tz", "Europe/Moscow"},
		envOf("DATABASE_URL", url), nil, &out, &out); code != 0 {
		t.Fatalf("salon create: %s", out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, envOf("DATABASE_URL", url, "SALON_HTTP_ADDR", addr, "SALON_PUBLIC_URL", "http://"+addr, "PAYMENT_PROVIDER", "sandbox",
			"TELEGRAM_BOT_TOKEN", tg.Token, "TELEGRAM_API_URL", tg.URL, "TELEGRAM_WEBHOOK_SECRET", "hook-secret"), nil, &out, &out)
	}()
	u := tg.NewUser("Visitor", "en")
	bookingtest.WaitFor(t, 30*time.Second, "the webhook to be registered", func() bool {
		for _, c := range tg.Calls() {
			if c.Method == "setWebhook" && c.Params["url"] == "http://"+addr+"/telegram/webhook" {
				return true
			}
		}
		return false
	})
	u.Send("/start botsalon")
	if _, err := u.WaitText("Welcome to Bot Salon", 30*time.Second); err != nil {
		t.Fatalf("%v\nserve log: %s", err, out.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited with %d: %s", code, out.String())
	}
}
