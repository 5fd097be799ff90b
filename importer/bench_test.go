package importer_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/importer"
)

var (
	scheduleRows = flag.Int("import.schedule", 100_000, "rows of BenchmarkImportSchedule")
	bookingRows  = flag.Int("import.bookings", 20_000, "rows of BenchmarkImportBookings")
	memoryRows   = flag.Int("import.memory", 1_000_000, "rows of the large file of BenchmarkImportMemory")
)

// scheduleFile writes a schedule of rows rows (masters x days) for the
// masters named, from day.
func scheduleFile(w *bufio.Writer, names []string, day booking.Date, rows int) {
	w.WriteString("master;date;start;end;break_start;break_end\n")
	perMaster := (rows + len(names) - 1) / len(names)
	n := 0
	for _, m := range names {
		for d := range perMaster {
			if n == rows {
				return
			}
			fmt.Fprintf(w, "%s;%s;10:00;19:00;14:00;14:30\n", m, day.AddDays(d))
			n++
		}
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchmarkImportSchedule imports a schedule of 100k rows (100 masters x
// 1000 days) into fresh masters, against a bare COPY of the same shifts
// into the shifts table for other fresh masters, interleaved; reported:
// copy-time / import-time (the goal is at least 0.3), rows per second.
func BenchmarkImportSchedule(b *testing.B) {
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{Slug: "bench", Locale: "en"})
	day := salon.Today(e.Clock.Now())
	const masters = 100
	round := 0
	fresh := func() ([]string, []int64) {
		round++
		var names []string
		var ids []int64
		for k := range masters {
			m, err := e.Svc.CreateMaster(ctx, salon.ID, booking.Master{Name: fmt.Sprintf("M%d-%d", round, k)})
			if err != nil {
				b.Fatal(err)
			}
			names, ids = append(names, m.Name), append(ids, m.ID)
		}
		return names, ids
	}
	var ratios, rates []float64
	loc := salon.Location()
	for b.Loop() {
		// The bare COPY.
		_, ids := fresh()
		var rows [][]any
		perMaster := *scheduleRows / masters
		for _, id := range ids {
			for d := range perMaster {
				dd := day.AddDays(d)
				rows = append(rows, []any{salon.ID, id, time.Date(dd.Year, dd.Month, dd.Day, 0, 0, 0, 0, time.UTC),
					dd.At(loc, 600), dd.At(loc, 1140), dd.At(loc, 840), dd.At(loc, 870)})
			}
		}
		t0 := time.Now()
		if _, err := e.Pool.CopyFrom(ctx, pgx.Identifier{"shifts"}, []string{"salon_id", "master_id", "work_date", "starts_at",
			"ends_at", "break_starts_at", "break_ends_at"}, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
		copyTook := time.Since(t0)
		// The import of the same shifts, from the CSV text.
		names, _ := fresh()
		var sb strings.Builder
		w := bufio.NewWriter(&sb)
		scheduleFile(w, names, day, perMaster*masters)
		w.Flush()
		took := timeImport(b, e, importer.Options{Kind: importer.Schedule, Salon: salon}, sb.String(), perMaster*masters)
		ratios = append(ratios, copyTook.Seconds()/took.Seconds())
		rates = append(rates, float64(perMaster*masters)/took.Seconds())
	}
	reportMedians(b, ratios, "copy/import", rates)
}

// timeImport imports text, checks that it created want rows, and returns
// how long the import took.
func timeImport(b *testing.B, e *bookingtest.Env, o importer.Options, text string, want int) time.Duration {
	b.Helper()
	o.File = "bench.csv"
	t0 := time.Now()
	sum, err := importer.Import(bookingtest.System(), e.Svc, strings.NewReader(text), o)
	if err != nil || sum.Created != want {
		b.Fatalf("%+v %v", sum, err)
	}
	return time.Since(t0)
}

// reportMedians reports the medians of a benchmark's ratios and rates.
func reportMedians(b *testing.B, ratios []float64, ratio string, rates []float64) {
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(ratios), ratio)
	b.ReportMetric(median(rates), "rows/s")
}

// BenchmarkImportBookings imports 20k booking rows (20 masters x 1000)
// against a loop of in-process Book calls for the same bookings (other
// fresh masters, the same clients), interleaved; reported:
// book-loop-time / import-time (the goal is at least 1.0).
func BenchmarkImportBookings(b *testing.B) {
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{Slug: "bench", Locale: "en", HorizonDays: 366})
	sv := e.Service(b, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	day := salon.Today(e.Clock.Now()).AddDays(1)
	const masters = 20
	per := *bookingRows / masters
	days := per/24 + 1
	var ratios, rates []float64
	for b.Loop() {
		loopMasters := e.RoundTheClock(b, salon, masters, day, days, sv)
		importMasters := e.RoundTheClock(b, salon, masters, day, days, sv)
		ms, _ := e.Svc.AllMasters(ctx, salon.ID)
		names := map[int64]string{}
		for _, m := range ms {
			names[m.ID] = m.Name
		}
		at := func(k int) time.Time { return day.Start(salon.Location()).Add(time.Duration(k) * time.Hour) }
		t0 := time.Now()
		for _, m := range loopMasters {
			for k := range per {
				if _, err := e.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: at(k),
					Client: booking.ClientInput{Name: "Client", Phone: fmt.Sprintf("+7905%07d", k)}, Source: booking.SourceImport}); err != nil {
					b.Fatal(err)
				}
			}
		}
		loopTook := time.Since(t0)
		var sb strings.Builder
		sb.WriteString("master,service,date,start,client_phone,client_name\n")
		for _, m := range importMasters {
			for k := range per {
				t := at(k).In(salon.Location())
				fmt.Fprintf(&sb, "%s,Cut,%s,%s,+7905%07d,Client\n", names[m.ID], t.Format("2006-01-02"), t.Format("15:04"), k)
			}
		}
		took := timeImport(b, e, importer.Options{Kind: importer.Bookings, Salon: salon}, sb.String(), per*masters)
		ratios = append(ratios, loopTook.Seconds()/took.Seconds())
		rates = append(rates, float64(per*masters)/took.Seconds())
	}
	reportMedians(b, ratios, "book-loop/import", rates)
}

// BenchmarkImportMemory imports a schedule of 10k rows and one of 1M rows,
// each in a process of its own (this test binary, run again), and reports
// the peak RSS of each and their ratio (the goal is at most 1.5).
func BenchmarkImportMemory(b *testing.B) {
	url := bookingtest.ConnString(b)
	dir := b.TempDir()
	for b.Loop() {
		var rss [2]int64
		for i, rows := range []int{10_000, *memoryRows} {
			path := filepath.Join(dir, fmt.Sprintf("schedule-%d.csv", rows))
			slug := fmt.Sprintf("mem-%d-%d", rows, time.Now().UnixNano())
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "IMPORT_CHILD_DB="+url, "IMPORT_CHILD_FILE="+path, "IMPORT_CHILD_SLUG="+slug,
				fmt.Sprintf("IMPORT_CHILD_ROWS=%d", rows))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "imported") {
				b.Fatalf("child: %v\n%s", err, out)
			}
			rss[i] = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(rss[0])/1024, "MiB-10k")
		b.ReportMetric(float64(rss[1])/1024, fmt.Sprintf("MiB-%dk", *memoryRows/1000))
		b.ReportMetric(float64(rss[1])/float64(rss[0]), "rss-ratio")
	}
}

// importMemoryChild is BenchmarkImportMemory's child process (TestMain
// runs it instead of the tests when IMPORT_CHILD_DB is set): it writes the
// file, then imports it, and prints "imported N rows".
func importMemoryChild(url string) error {
	var rows int
	if _, err := fmt.Sscan(os.Getenv("IMPORT_CHILD_ROWS"), &rows); err != nil {
		return fmt.Errorf("IMPORT_CHILD_ROWS: %w", err)
	}
	ctx := bookingtest.System()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	svc := booking.New(pool)
	salon, err := svc.CreateSalon(ctx, booking.Salon{Slug: os.Getenv("IMPORT_CHILD_SLUG"), Name: "Memory", Timezone: "Europe/Moscow", Locale: "en"})
	if err != nil {
		return err
	}
	const masters = 1000
	names := make([]string, masters)
	for k := range names {
		m, err := svc.CreateMaster(ctx, salon.ID, booking.Master{Name: fmt.Sprintf("M%d", k)})
		if err != nil {
			return err
		}
		names[k] = m.Name
	}
	path := os.Getenv("IMPORT_CHILD_FILE")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	scheduleFile(w, names, booking.Date{Year: 2027, Month: 1, Day: 1}, rows)
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return err
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	sum, err := importer.Import(ctx, svc, in, importer.Options{Kind: importer.Schedule, Salon: salon, File: filepath.Base(path)})
	if err != nil {
		return err
	}
	if sum.Created != rows {
		return fmt.Errorf("created %d of %d rows: %+v", sum.Created, rows, sum)
	}
	fmt.Printf("imported %d rows\n", sum.Created)
	return nil
}
