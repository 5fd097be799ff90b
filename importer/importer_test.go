package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/importer"
)

func TestMain(m *testing.M) {
	if url := os.Getenv("IMPORT_CHILD_DB"); url != "" {
		if err := importMemoryChild(url); err != nil {
			fmt.Fprintln(os.Stderr, "import child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	bookingtest.Main(m)
}

var update = flag.Bool("update", false, "rewrite the expected reports in testdata/reports")

// sequence is the sample files in the order a salon imports them.
var sequence = []struct {
	kind importer.Kind
	file string
}{
	{importer.Services, "services_en.csv"},
	{importer.Services, "services_ru_1251.csv"},
	{importer.Masters, "masters_ru_bom.csv"},
	{importer.Masters, "masters_en_1252.csv"},
	{importer.Schedule, "schedule_en_tab.csv"},
	{importer.Clients, "clients_ru.csv"},
	{importer.Bookings, "bookings_en.csv"},
	{importer.Bookings, "bookings_ru_1251.csv"},
}

// report is what a run produced: the summary and the lines.
type report struct {
	Summary *importer.Summary `json:"summary"`
	Lines   []importer.Line   `json:"lines"`
}

func importFile(t *testing.T, e *bookingtest.Env, salon *booking.Salon, kind importer.Kind, path string, dry bool) report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rep report
	rep.Summary, err = importer.Import(bookingtest.System(), e.Svc, f, importer.Options{Kind: kind, Salon: salon,
		File: filepath.Base(path), DryRun: dry, Report: func(l importer.Line) error { rep.Lines = append(rep.Lines, l); return nil }})
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	return rep
}

// TestSampleFiles imports every sample file of testdata/files, in order,
// into a salon in each language, and compares each report with the
// expected one in testdata/reports/LANG/FILE.json (go test -update rewrites
// them; read the diff before committing).
func TestSampleFiles(t *testing.T) {
	for _, lang := range []string{"ru", "en"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			e := bookingtest.New(t)
			salon := e.Salon(t, booking.Salon{Slug: "import-" + lang, Locale: lang, Timezone: "Europe/Moscow"})
			for _, step := range sequence {
				if step.file == "bookings_en.csv" {
					// A booking already there, which the file's 15:00 overlaps.
					existingBooking(t, e, salon, "Анна", "Haircut", "15:30")
				}
				rep := importFile(t, e, salon, step.kind, filepath.Join("testdata", "files", step.file), false)
				got, _ := json.MarshalIndent(rep, "", "  ")
				want := filepath.Join("testdata", "reports", lang, strings.TrimSuffix(step.file, ".csv")+".json")
				if *update {
					_ = os.MkdirAll(filepath.Dir(want), 0o755)
					if err := os.WriteFile(want, append(got, '\n'), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				exp, err := os.ReadFile(want)
				if err != nil {
					t.Fatalf("%v (run go test -update to write it)", err)
				}
				if !bytes.Equal(bytes.TrimSpace(exp), bytes.TrimSpace(got)) {
					t.Errorf("%s: the report differs from %s:\n%s", step.file, want, got)
				}
			}
		})
	}
}

// existingBooking books a client through the core, as a widget would.
func existingBooking(t *testing.T, e *bookingtest.Env, salon *booking.Salon, master, service, hhmm string) {
	t.Helper()
	ctx := bookingtest.System()
	ms, err := e.Svc.AllMasters(ctx, salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	svs, err := e.Svc.AllServices(ctx, salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	var m, sv int64
	for _, x := range ms {
		if x.Name == master {
			m = x.ID
		}
	}
	for _, x := range svs {
		if x.Name == service {
			sv = x.ID
		}
	}
	if _, err := e.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv, MasterID: m,
		StartsAt: bookingtest.At(salon, booking.Date{Year: 2026, Month: 3, Day: 3}, hhmm),
		Client:   booking.ClientInput{Name: "Walk-in", Phone: "+79990009999"}}); err != nil {
		t.Fatal(err)
	}
}

// TestSecondImportChangesNothing: the same five kinds imported twice; the
// second run creates and updates nothing, and writes no audit row.
func TestSecondImportChangesNothing(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	salon := e.Salon(t, booking.Salon{Slug: "twice", Locale: "en"})
	for round := range 2 {
		var audit int64
		if err := e.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log`).Scan(&audit); err != nil {
			t.Fatal(err)
		}
		for _, step := range sequence {
			rep := importFile(t, e, salon, step.kind, filepath.Join("testdata", "files", step.file), false)
			if round == 1 && (rep.Summary.Created != 0 || rep.Summary.Updated != 0) {
				t.Errorf("second import of %s: %+v", step.file, rep.Summary)
			}
			if round == 0 && rep.Summary.Created == 0 {
				t.Errorf("first import of %s created nothing: %+v", step.file, rep.Summary)
			}
		}
		var after int64
		if err := e.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log`).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if round == 1 && after != audit {
			t.Errorf("the second import wrote %d audit rows", after-audit)
		}
		if round == 0 {
			var actor string
			if err := e.Pool.QueryRow(context.Background(), `SELECT DISTINCT actor FROM audit_log WHERE entity = 'shift'`).Scan(&actor); err != nil || actor != "import:schedule_en_tab.csv" {
				t.Errorf("audit actor of the schedule import: %q %v", actor, err)
			}
		}
	}
}

// TestDryRunWritesNothing: a dry run reports what the real run then does,
// and leaves the database as it was.
func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	salon := e.Salon(t, booking.Salon{Slug: "dry", Locale: "en"})
	digest := func() string {
		var s string
		if err := e.Pool.QueryRow(context.Background(), `SELECT md5(concat_ws('|',
			(SELECT count(*) FROM services), (SELECT count(*) FROM masters), (SELECT count(*) FROM master_services),
			(SELECT count(*) FROM shifts), (SELECT count(*) FROM clients), (SELECT count(*) FROM bookings),
			(SELECT count(*) FROM audit_log), (SELECT count(*) FROM client_identities)))`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, step := range sequence {
		before := digest()
		dry := importFile(t, e, salon, step.kind, filepath.Join("testdata", "files", step.file), true)
		if digest() != before {
			t.Fatalf("dry run of %s wrote something", step.file)
		}
		real := importFile(t, e, salon, step.kind, filepath.Join("testdata", "files", step.file), false)
		dry.Summary.DryRun = false
		dj, _ := json.Marshal(dry)
		rj, _ := json.Marshal(real)
		if string(dj) != string(rj) {
			t.Errorf("%s: the dry run reported\n%s\nthe real run\n%s", step.file, dj, rj)
		}
	}
}

// TestAMasterWithNoServicesNamedDoesEvery: a new master whose services
// cell is empty (or whose file has no such column) does every service the
// salon offers, as one added in the panel does; an existing master's
// empty cell keeps what they do. A row wrong in two columns (a phone and
// a service) is reported for both.
func TestAMasterWithNoServicesNamedDoesEvery(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	salon := e.Salon(t, booking.Salon{Slug: "every", Locale: "en"})
	ctx := bookingtest.System()
	cut := e.Service(t, salon, booking.SalonService{Name: "Haircut", DurationMin: 60, Price: 250000})
	trim := e.Service(t, salon, booking.SalonService{Name: "Beard trim", DurationMin: 30, Price: 90000})
	old := e.Service(t, salon, booking.SalonService{Name: "Perm", DurationMin: 90, Price: 500000})
	if _, err := e.Pool.Exec(ctx, `UPDATE services SET active = false WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	run := func(file string) []importer.Line {
		var lines []importer.Line
		if _, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Masters, Salon: salon,
			Report: func(l importer.Line) error { lines = append(lines, l); return nil }}); err != nil {
			t.Fatal(err)
		}
		return lines
	}
	run("name,phone,services\nNeha,,\nArjun,,Haircut\nRavi,12345,Nonexistent\n")
	run("name\nMeera\n")
	lines := run("name,services\nArjun,\n")
	does := map[string][]int64{}
	ms, err := e.Svc.AllMasters(ctx, salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		does[m.Name] = m.ServiceIDs
	}
	every := []int64{cut.ID, trim.ID}
	slices.Sort(every)
	for _, name := range []string{"Neha", "Meera"} {
		got := slices.Sorted(slices.Values(does[name]))
		if !slices.Equal(got, every) {
			t.Errorf("%s does %v, want every service on offer %v", name, got, every)
		}
	}
	if !slices.Equal(does["Arjun"], []int64{cut.ID}) || len(lines) != 0 {
		t.Errorf("Arjun does %v after an empty cell (report %+v), want his Haircut kept", does["Arjun"], lines)
	}
	if _, ok := does["Ravi"]; ok {
		t.Error("Ravi was created")
	}
	// "—" (as the export writes a master who does nothing) or "-": none,
	// on purpose; and the export reads back the same.
	run("name,services\nIdle,—\nMeera,-\n")
	ms, err = e.Svc.AllMasters(ctx, salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if (m.Name == "Idle" || m.Name == "Meera") && len(m.ServiceIDs) != 0 {
			t.Errorf("%s does %v, want none", m.Name, m.ServiceIDs)
		}
	}
	var out strings.Builder
	if err := importer.Export(ctx, e.Svc, &out, importer.Masters, salon, "en"); err != nil || !strings.Contains(out.String(), "\nIdle,,—\n") {
		t.Errorf("the export of a master who does nothing: %v\n%s", err, out.String())
	}
	lines = run("name,phone,services\nRavi,12345,Nonexistent\n")
	var cols []string
	for _, l := range lines {
		cols = append(cols, l.Column)
	}
	if !slices.Equal(cols, []string{"phone", "services"}) {
		t.Errorf("Ravi's row reported for %q, want phone and services: %+v", cols, lines)
	}
}
