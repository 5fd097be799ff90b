package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestImportAndExportCommands: exit 0 when every row is accepted, 1 when
// some are rejected (with the report written), 2 for usage and unreadable
// files; export writes what import reads.
func TestImportAndExportCommands(t *testing.T) {
	t.Parallel()
	getenv := envOf("DATABASE_URL", bookingtest.ConnString(t))
	dir := t.TempDir()
	runCmd := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if code, _, errs := runCmd("salon", "create", "--slug", "cli", "--name", "CLI", "--tz", "Europe/Moscow", "--locale", "en"); code != 0 {
		t.Fatal(errs)
	}
	good := write("services.csv", "name;duration_min;price\nCut;60;1 500,00\nShave;30;700\n")
	bad := write("masters.csv", "name,phone,services\nAnna,,Cut|Shave\nBoris,123,Cut\n")
	report := filepath.Join(dir, "report.json")
	// Two bookings of one time: the second is rejected with the nearest
	// free starts printed under it.
	day := time.Now().AddDate(0, 0, 30).Format(time.DateOnly)
	schedule := write("schedule.csv", "master,date,start,end\nAnna,"+day+",10:00,18:00\n")
	// Twelve rows each bad in two columns: both are named, of the first
	// ten rows, and the rest counted as rows.
	twice := "name,duration_min,price\n"
	for i := range 12 {
		twice += fmt.Sprintf("S%d,an hour,free\n", i)
	}
	twoBad := write("twice.csv", twice)
	bookings := write("bookings.csv", "master,service,date,start,client_phone,client_name\nAnna,Cut,"+day+",12:00,+79990001122,A\nAnna,Cut,"+day+",12:00,+79990001133,B\n")
	cases := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"import", "services", good, "--salon", "cli", "--dry-run"}, 0, "created 2, updated 0, unchanged 0, rejected 0 (dry run"},
		{[]string{"import", "services", good, "--salon", "cli"}, 0, "read 2, created 2"},
		{[]string{"import", "services", good, "--salon", "cli"}, 0, "created 0, updated 0, unchanged 2"},
		{[]string{"import", "masters", bad, "--salon", "cli", "--report", report}, 1, "1 row rejected (see " + report},
		{[]string{"import", "masters", "--salon", "cli", bad}, 1, "created 0, updated 0, unchanged 1, rejected 1"},
		// The rejected rows are named without --report: line, column, value, why.
		{[]string{"import", "masters", "--salon", "cli", bad}, 1, `line 3, phone "123": not a valid phone number`},
		{[]string{"import", "services", twoBad, "--salon", "cli"}, 1, "  line 2, duration_min \"an hour\": not a number of minutes like 45, 45 min or 1:30\n  line 2, price \"free\": not an amount like 1500 or 1500.50\n  line 3, duration_min"},
		{[]string{"import", "services", twoBad, "--salon", "cli"}, 1, "  line 11, price \"free\": not an amount like 1500 or 1500.50\n  … and 2 more rejected rows\n"},
		{[]string{"import", "schedule", schedule, "--salon", "cli"}, 0, "created 1"},
		{[]string{"import", "bookings", bookings, "--salon", "cli"}, 1, "this time is taken; the nearest free starts are listed\n    free: " + day + " 10:30 Anna; " + day + " 10:45 Anna; " + day + " 11:00 Anna; " + day + " 13:00 Anna"},
		{[]string{"import", "haircuts", good, "--salon", "cli"}, 2, "unknown kind"},
		{[]string{"import", "services", filepath.Join(dir, "missing.csv"), "--salon", "cli"}, 2, "no such file"},
		{[]string{"import", "services", good}, 2, "usage"},
		{[]string{"import", "services", write("empty.csv", ""), "--salon", "cli"}, 2, "no header"},
		{[]string{"import", "services", write("nocol.csv", "name\nCut\n"), "--salon", "cli"}, 2, "no column duration_min"},
		{[]string{"export", "services", "--salon", "cli"}, 0, "name,duration_min,price,deposit,buffer_min,processing_min,finish_min\nCut,60,1500,0,0,0,0\nShave,30,700,0,0,0,0\n"},
		{[]string{"export", "services", "--salon", "cli", "--lang", "ru"}, 0, "\ufeffназвание;длительность;цена;предоплата;буфер;выдержка;завершение\nCut;60;1500;0;0;0;0\n"},
		{[]string{"export", "wands", "--salon", "cli"}, 2, "unknown kind"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if code != c.code || !strings.Contains(out+errs, c.contains) {
			t.Errorf("salon %s: exit %d, want %d; output %q, want it to contain %q", strings.Join(c.args, " "), code, c.code, out+errs, c.contains)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") > 1 || strings.Contains(errs, "goroutine") {
			t.Errorf("salon %s: stderr is not one clear line: %q", strings.Join(c.args, " "), errs)
		}
	}
	var rep struct {
		Lines []struct {
			Line   int    `json:"line"`
			Column string `json:"column"`
			Value  string `json:"value"`
			Reason string `json:"reason"`
		} `json:"lines"`
		Summary struct {
			Rejected int `json:"rejected"`
		} `json:"summary"`
	}
	b, _ := os.ReadFile(report)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	var rejected int
	for _, l := range rep.Lines {
		if l.Reason != "" {
			rejected++
			if l.Line != 3 || l.Column != "phone" || l.Value != "123" {
				t.Errorf("report line %+v", l)
			}
		}
	}
	if rejected != 1 || rep.Summary.Rejected != 1 {
		t.Errorf("report: %s", b)
	}
	// A CSV report.
	csvReport := filepath.Join(dir, "report.csv")
	runCmd("import", "masters", bad, "--salon", "cli", "--report", csvReport)
	if b, _ := os.ReadFile(csvReport); !strings.HasPrefix(string(b), "line,outcome,key,column,value,reason,alternatives\n") ||
		!strings.Contains(string(b), "3,rejected,Boris,phone,123,") {
		t.Errorf("CSV report:\n%s", b)
	}
}

// TestPaymentProviderFromTheEnvironment: sandbox by default, YooKassa with
// its credentials, clear errors otherwise; serve names its provider.
func TestPaymentProviderFromTheEnvironment(t *testing.T) {
	cases := []struct {
		env  []string
		name string
		err  string
	}{
		{[]string{"PAYMENT_PROVIDER", "sandbox"}, "sandbox", ""},
		{[]string{"PAYMENT_PROVIDER", "sandbox", "SALON_SANDBOX_DELAY", "200ms", "SALON_SANDBOX_FAILURE_RATE", "0.3"}, "sandbox", ""},
		{[]string{"PAYMENT_PROVIDER", "sandbox", "SALON_SANDBOX_FAILURE_RATE", "2"}, "", "SALON_SANDBOX_FAILURE_RATE"},
		{[]string{"PAYMENT_PROVIDER", "sandbox", "SALON_SANDBOX_DELAY", "soon"}, "", "SALON_SANDBOX_DELAY"},
		{[]string{"PAYMENT_PROVIDER", "yookassa"}, "", "YOOKASSA_SHOP_ID"},
		{[]string{"PAYMENT_PROVIDER", "yookassa", "YOOKASSA_SHOP_ID", "1", "YOOKASSA_SECRET_KEY", "s"}, "yookassa", ""},
		{[]string{"PAYMENT_PROVIDER", "paypal"}, "", "sandbox or yookassa"},
	}
	for _, c := range cases {
		p, err := paymentProvider(envOf(c.env...), nil, "http://x")
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: %v, want an error about %s", c.env, err, c.err)
		case c.err == "" && (err != nil || p.Name() != c.name):
			t.Errorf("%v: %v %v", c.env, p, err)
		}
	}
	// A production server never takes the sandbox (whose Pay button is
	// its own page) for want of a setting: it stops, saying why.
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"serve"}, envOf("DATABASE_URL", "postgres:///nowhere"), nil, &out, &errs)
	if line := strings.TrimSpace(errs.String()); code != exitFatal || !strings.Contains(line, "PAYMENT_PROVIDER must be set") || strings.Contains(line, "\n") {
		t.Errorf("serve without PAYMENT_PROVIDER: exit %d, %q", code, errs.String())
	}
}

// TestClientCommands: export a client's data as JSON by phone, then erase
// it (only with --yes).
func TestClientCommands(t *testing.T) {
	t.Parallel()
	getenv := envOf("DATABASE_URL", bookingtest.ConnString(t))
	runCmd := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "clients.csv")
	if err := os.WriteFile(p, []byte("name,phone,notes\nOlga Private,+79990001234,likes jazz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"salon", "create", "--slug", "priv", "--name", "P", "--tz", "Europe/Moscow"},
		{"import", "clients", p, "--salon", "priv"}} {
		if code, _, errs := runCmd(args...); code != 0 {
			t.Fatal(errs)
		}
	}
	code, out, _ := runCmd("client", "export", "--salon", "priv", "--phone", "8 999 000 12 34")
	if code != 0 || !strings.Contains(out, "Olga Private") || !strings.Contains(out, "likes jazz") {
		t.Fatalf("export: %d %s", code, out)
	}
	if code, _, errs := runCmd("client", "erase", "--salon", "priv", "--phone", "+79990001234"); code != 2 || !strings.Contains(errs, "--yes") {
		t.Errorf("erase without --yes: %d %s", code, errs)
	}
	if code, out, errs := runCmd("client", "erase", "--salon", "priv", "--phone", "+79990001234", "--yes"); code != 0 || !strings.Contains(out, "erased") {
		t.Fatalf("erase: %d %s %s", code, out, errs)
	}
	if code, _, errs := runCmd("client", "export", "--salon", "priv", "--phone", "+79990001234"); code != 2 || !strings.Contains(errs, "not found") {
		t.Errorf("export after erase: %d %s", code, errs)
	}
}

// TestImportOfAnEndlessLine: `salon import clients /dev/zero` grew to
// 23.8 GB and ignored SIGTERM. Now it stops at the line's bound: exit 1,
// naming the line, in at most 100 MB; and an import reading a pipe that
// never ends stops within a second of SIGTERM, with only whole chunks
// written.
func TestImportOfAnEndlessLine(t *testing.T) {
	t.Parallel()
	dbURL := bookingtest.ConnString(t)
	pool := bookingtest.PoolFor(t, dbURL)
	e := &bookingtest.Env{Pool: pool, Svc: booking.New(pool), Clock: bookingtest.NewClock(time.Now())}
	e.Salon(t, booking.Salon{Slug: "endless", Locale: "en"})

	cmd := child(t, []string{"DATABASE_URL=" + dbURL}, "import", "clients", "/dev/zero", "--salon", "endless")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	rss, err := runWatched(cmd)
	t.Logf("import of /dev/zero: %v, peak resident set %d MiB: %s", err, rss, strings.TrimSpace(out.String()))
	if code := cmd.ProcessState.ExitCode(); code != exitRejected || !strings.Contains(out.String(), "line 1:") {
		t.Errorf("import of /dev/zero: exit %d, %q; want exit 1 naming line 1", code, out.String())
	}
	if rss > 100 {
		t.Errorf("import of /dev/zero peaked at %d MiB, want at most 100", rss)
	}

	// A pipe of good rows, for ever.
	cmd = child(t, []string{"DATABASE_URL=" + dbURL}, "import", "clients", "/dev/stdin", "--salon", "endless")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w := bufio.NewWriter(in)
		fmt.Fprintln(w, "name,phone")
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "Client %d,+7999%07d\n", i, i); err != nil {
				return // the import stopped
			}
		}
	}()
	count := func() (n int) {
		_ = pool.QueryRow(bookingtest.System(), `SELECT count(*) FROM clients`).Scan(&n)
		return n
	}
	bookingtest.WaitFor(t, 60*time.Second, "the first chunks to be written", func() bool { return count() >= 4000 })
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	took := time.Since(start)
	in.Close()
	n := count()
	t.Logf("SIGTERM: stopped after %v with %d clients written: %s", took, n, strings.TrimSpace(out.String()))
	if took > time.Second {
		t.Errorf("the import stopped %v after SIGTERM, want within a second", took)
	}
	if n%2000 != 0 { // clients are written 2000 to a chunk, each in one transaction
		t.Errorf("%d clients written: a chunk was half-written", n)
	}

	// A pipe that stops sending: the import waits for input, and still
	// stops at once.
	// (Its connections are told apart by their application name: the
	// imports before may still be closing theirs.)
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	conns := func() (n int) {
		_ = pool.QueryRow(bookingtest.System(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND application_name = 'import-waiting'`).Scan(&n)
		return n
	}
	cmd = child(t, []string{"DATABASE_URL=" + dbURL + sep + "application_name=import-waiting"}, "import", "clients", "/dev/stdin", "--salon", "endless")
	in, _ = cmd.StdinPipe()
	out.Reset()
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fmt.Fprint(in, "name,phone\nAnna,+79990000001\n")
	// It opened the database (its signals are handled by then), and reads.
	bookingtest.WaitFor(t, 30*time.Second, "the import to connect", func() bool { return conns() > 0 })
	start = time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if took := time.Since(start); took > time.Second {
		t.Errorf("an import waiting for input stopped %v after SIGTERM, want within a second", took)
	}
}

// runWatched runs cmd and returns its peak resident set in MiB, read from
// /proc while it runs (the rusage of a child started by vfork counts its
// parent's memory too).
func runWatched(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
			for _, line := range strings.Split(string(raw), "\n") {
				var kib int64
				if n, _ := fmt.Sscanf(line, "VmHWM: %d kB", &kib); n == 1 {
					peak = max(peak, kib/1024)
				}
			}
		}
		select {
		case err := <-done:
			return peak, err
		case <-tick.C:
		}
	}
}

// salon import all: a salon's files (here one zip) checked as one dry run,
// then imported, in the order a salon is built.
func TestImportASet(t *testing.T) {
	t.Parallel()
	getenv := envOf("DATABASE_URL", bookingtest.ConnString(t))
	runCmd := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(context.Background(), args, getenv, strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	if code, out := runCmd("salon", "create", "--slug", "set", "--name", "Set", "--tz", "Europe/Moscow"); code != 0 {
		t.Fatal(out)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{
		"masters.csv":  "name;phone;services\nАнна;;Стрижка\n",
		"services.csv": "name;duration_min;price\nСтрижка;60;2500\n",
		"photo.jpg":    "not a file of the set",
	} {
		w, _ := zw.Create(name)
		_, _ = io.WriteString(w, body)
	}
	_ = zw.Close()
	p := filepath.Join(t.TempDir(), "salon.zip")
	if err := os.WriteFile(p, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runCmd("import", "all", p, "--salon", "set", "--dry-run")
	if code != 0 || !strings.Contains(out, "services.csv: services: read 1, created 1") || !strings.Contains(out, "masters.csv: masters: read 1, created 1") {
		t.Fatalf("the dry run of the set: %d %s", code, out)
	}
	var n int
	if err := bookingtest.PoolFor(t, getenv("DATABASE_URL")).QueryRow(context.Background(),
		`SELECT count(*) FROM masters m JOIN salons s ON s.id = m.salon_id WHERE s.slug = 'set'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the dry run wrote %d masters (%v)", n, err)
	}
	if code, out := runCmd("import", "all", p, "--salon", "set"); code != 0 || !strings.Contains(out, "masters: read 1, created 1") {
		t.Fatalf("the set: %d %s", code, out)
	}
}
