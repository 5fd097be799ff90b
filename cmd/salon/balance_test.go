package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestBalanceIssue: `salon balance issue` sells a certificate and a
// package, each printing its code alone on stdout, which then reads the
// balance; bad input is exit 1 naming the field, a missing flag exit 2.
func TestBalanceIssue(t *testing.T) {
	t.Parallel()
	conn := bookingtest.ConnString(t)
	getenv := envOf("DATABASE_URL", conn)
	runCmd := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "services.csv")
	if err := os.WriteFile(p, []byte("name,duration_min,price\nManicure,60,1500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"salon", "create", "--slug", "gift", "--name", "G", "--tz", "Europe/Moscow"},
		{"import", "services", p, "--salon", "gift"}} {
		if code, _, errs := runCmd(args...); code != 0 {
			t.Fatal(errs)
		}
	}
	codeRE := regexp.MustCompile(`^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}\n$`)
	code, cert, errs := runCmd("balance", "issue", "--salon", "gift", "--kind", "certificate", "--amount", "3 000")
	if code != 0 || !codeRE.MatchString(cert) {
		t.Fatalf("certificate: %d %q %s", code, cert, errs)
	}
	// A new client without a name is refused, naming the flag; with one,
	// sold; a second package for the known phone needs none.
	if code, out, errs := runCmd("balance", "issue", "--salon", "gift", "--kind", "package", "--service", "manicure", "--visits", "5",
		"--phone", "+7 999 000-44-55"); code != 1 || out != "" || !strings.Contains(errs, "--name") {
		t.Fatalf("a new client without a name: %d %q %s", code, out, errs)
	}
	code, pkg, errs := runCmd("balance", "issue", "--salon", "gift", "--kind", "package", "--service", "manicure", "--visits", "5",
		"--phone", "+7 999 000-44-55", "--name", "Vera", "--valid-until", "2099-12-31")
	if code != 0 || !codeRE.MatchString(pkg) {
		t.Fatalf("package: %d %q %s", code, pkg, errs)
	}
	if code, again, errs := runCmd("balance", "issue", "--salon", "gift", "--kind", "package", "--service", "manicure", "--visits", "2",
		"--phone", "89990004455"); code != 0 || !codeRE.MatchString(again) {
		t.Fatalf("a second package, by the phone alone: %d %q %s", code, again, errs)
	}
	// A flag of the other kind is refused, named, nothing sold.
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--kind", "certificate", "--amount", "100", "--phone", "+79990004455"}, "--phone"},
		{[]string{"--kind", "certificate", "--amount", "100", "--visits", "2"}, "--visits"},
		{[]string{"--kind", "certificate", "--amount", "100", "--service", "manicure"}, "--service"},
		{[]string{"--kind", "package", "--service", "manicure", "--visits", "2", "--phone", "+79990004455", "--amount", "100"}, "--amount"},
		{[]string{"--kind", "certificate", "--amount", "100", "--price", "a lot"}, "--price"},
	} {
		if code, out, errs := runCmd(append([]string{"balance", "issue", "--salon", "gift"}, c.args...)...); code != 1 || out != "" ||
			!strings.Contains(errs, c.flag) {
			t.Errorf("%v: %d %q %s, want exit 1 naming %s", c.args, code, out, errs, c.flag)
		}
	}
	pool := bookingtest.PoolFor(t, conn)
	svc := booking.New(pool)
	s, err := svc.SalonBySlug(bookingtest.System(), "gift")
	if err != nil {
		t.Fatal(err)
	}
	for code, want := range map[string]int64{strings.TrimSpace(cert): 300000, strings.TrimSpace(pkg): 5} {
		b, err := svc.BalanceByCode(bookingtest.System(), s.ID, code)
		if err != nil || b.Remaining != want {
			t.Fatalf("%s: %+v (%v), want %d left", code, b, err, want)
		}
	}
	// Each is in the salon's audit log and its ledger under the command
	// that sold it, not anonymously; nothing refused is.
	var audited, credits int
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM audit_log WHERE salon_id = $1 AND entity = 'balance'
		    AND action = 'create' AND actor = 'command: salon balance issue'),
		(SELECT count(*) FROM balance_entries WHERE salon_id = $1 AND type = 'credit' AND actor = 'command: salon balance issue')`,
		s.ID).Scan(&audited, &credits); err != nil || audited != 3 || credits != 3 {
		t.Errorf("audited %d, credits by the command %d (%v), want 3 each", audited, credits, err)
	}
	var names []string
	if err := pool.QueryRow(context.Background(), `SELECT array_agg(name) FROM clients WHERE salon_id = $1`, s.ID).Scan(&names); err != nil ||
		len(names) != 1 || names[0] != "Vera" {
		t.Fatalf("the clients: %v (%v)", names, err)
	}
	if code, _, errs := runCmd("balance", "issue", "--salon", "gift", "--kind", "package", "--service", "Pedicure", "--visits", "5",
		"--phone", "+79990004455"); code != 1 || !strings.Contains(errs, "Pedicure") || !strings.Contains(errs, "--service") {
		t.Fatalf("an unknown service: %d %s", code, errs)
	}
	if code, _, errs := runCmd("balance", "issue", "--salon", "gift", "--kind", "certificate", "--amount", "-5"); code != 1 || !strings.Contains(errs, "amount") {
		t.Fatalf("a negative amount: %d %s", code, errs)
	}
	if code, _, _ := runCmd("balance", "issue", "--kind", "certificate"); code != 2 {
		t.Fatalf("no --salon: %d, want 2", code)
	}
}
