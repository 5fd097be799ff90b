package importer_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/importer"
	"salon/internal/demo"
)

func export(t *testing.T, e *bookingtest.Env, salon *booking.Salon, kind importer.Kind) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := importer.Export(bookingtest.System(), e.Svc, &buf, kind, salon, ""); err != nil {
		t.Fatalf("export %s: %v", kind, err)
	}
	return buf.Bytes()
}

// TestRoundTrip: the demo salon exported, imported into a new salon and
// exported again gives the same bytes, kind by kind.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	src, err := demo.Seed(ctx, e.Svc, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Some history: a completed and a no-show booking, a client's notes and
	// Telegram id.
	var ids []int64
	if err := e.Pool.QueryRow(ctx, `SELECT array_agg(id ORDER BY id) FROM bookings WHERE salon_id = $1`, src.ID).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE bookings SET status = 'completed' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE bookings SET status = 'no_show' WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE clients SET notes = 'Любит чай, "без сахара"' || chr(10) || 'и с лимоном' WHERE salon_id = $1 AND name = 'Мария'`, src.ID); err != nil {
		t.Fatal(err)
	}
	// A price with kopecks: written 1500,50, as a Russian spreadsheet reads a number.
	if _, err := e.Pool.Exec(ctx, `UPDATE services SET price = 1500.50 WHERE salon_id = $1 AND name = 'Маникюр'`, src.ID); err != nil {
		t.Fatal(err)
	}
	if file := export(t, e, src, importer.Services); !bytes.Contains(file, []byte(";1500,50;")) {
		t.Errorf("the Russian services export writes the price as %s", file)
	}
	dst := e.Salon(t, booking.Salon{Slug: "copy", Name: "Copy", Locale: "ru", Timezone: "Europe/Moscow"})
	for _, kind := range importer.Kinds {
		first := export(t, e, src, kind)
		if bytes.Count(first, []byte("\n")) < 2 {
			t.Fatalf("%s: the export has no rows:\n%s", kind, first)
		}
		sum, err := importer.Import(ctx, e.Svc, bytes.NewReader(first), importer.Options{Kind: kind, Salon: dst, File: string(kind) + ".csv"})
		if err != nil {
			t.Fatalf("import %s: %v", kind, err)
		}
		if sum.Rejected != 0 || sum.Created == 0 {
			t.Fatalf("import %s: %+v", kind, sum)
		}
		if again := export(t, e, dst, kind); !bytes.Equal(first, again) {
			t.Errorf("%s: the second export differs:\n%s\n---\n%s", kind, first, again)
		}
	}
	// An English header on request, which imports as well.
	en := bytes.NewBuffer(nil)
	if err := importer.Export(ctx, e.Svc, en, importer.Bookings, src, "en"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(en.String(), "\ufeffmaster,service,date,start,client_phone,client_name,status,visit\n") {
		t.Errorf("English header: %q", strings.SplitN(en.String(), "\n", 2)[0])
	}
}

// TestImportBesideLiveBookings: a bookings import races 16 goroutines
// booking the same masters through the core; afterwards no two active
// bookings of a master overlap, and every rejected row has its reason.
func TestImportBesideLiveBookings(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "race", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	day := salon.Today(e.Clock.Now()).AddDays(1)
	var masters []*booking.Master
	for range 4 {
		m := e.Master(t, salon, sv)
		e.Shift(t, salon, m, day, 1, "08:00", "22:00")
		masters = append(masters, m)
	}
	names := map[int64]string{}
	ms, _ := e.Svc.AllMasters(ctx, salon.ID)
	for _, m := range ms {
		names[m.ID] = m.Name
	}
	// The file: every quarter hour of the day for each master, 30 minutes
	// each, so half the rows overlap the row before them, and the live
	// bookings take some of the rest.
	var file strings.Builder
	file.WriteString("master,service,date,start,client_phone,client_name\n")
	rows := 0
	for _, m := range masters {
		for k := range 56 {
			at := bookingtest.At(salon, day, "08:00").Add(time.Duration(k) * 15 * time.Minute)
			fmt.Fprintf(&file, "%s,Cut,%s,%s,+7999%07d,Imported\n", names[m.ID], day, at.In(salon.Location()).Format("15:04"), rows)
			rows++
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lines []importer.Line
	var sum *importer.Summary
	var importErr error
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		sum, importErr = importer.Import(ctx, e.Svc, strings.NewReader(file.String()), importer.Options{Kind: importer.Bookings,
			Salon: salon, File: "race.csv", Report: func(l importer.Line) error { mu.Lock(); lines = append(lines, l); mu.Unlock(); return nil }})
	})
	live := 0
	var liveMu sync.Mutex
	for g := range 16 {
		wg.Go(func() {
			<-start
			for k := range 14 {
				m := masters[(g+k)%len(masters)]
				at := bookingtest.At(salon, day, "08:00").Add(time.Duration((g*7+k*11)%56) * 15 * time.Minute)
				_, err := e.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: at,
					Client: booking.ClientInput{Name: "Live", Phone: bookingtest.Phone()}})
				if err == nil {
					liveMu.Lock()
					live++
					liveMu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if importErr != nil {
		t.Fatal(importErr)
	}
	var overlaps int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings a JOIN bookings b ON a.master_id = b.master_id AND a.id < b.id
		WHERE a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')
		  AND tstzrange(a.starts_at, booking_slot_end(a.starts_at, a.duration_min)) && tstzrange(b.starts_at, booking_slot_end(b.starts_at, b.duration_min))`).
		Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 {
		t.Errorf("%d overlapping pairs", overlaps)
	}
	if sum.Read != rows || sum.Created+sum.Rejected != rows {
		t.Errorf("summary %+v for %d rows", sum, rows)
	}
	for _, l := range lines {
		if l.Outcome == booking.Rejected && (l.Reason == "" || l.Column == "" || l.Line < 2) {
			t.Errorf("a rejected row without its reason: %+v", l)
		}
	}
	var imported int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE source = 'import'`).Scan(&imported); err != nil {
		t.Fatal(err)
	}
	if imported != sum.Created {
		t.Errorf("%d imported bookings in the database, the summary says %d", imported, sum.Created)
	}
	t.Logf("%d rows: %d imported, %d rejected; %d live bookings", rows, sum.Created, sum.Rejected, live)
}

// TestScheduleOnADSTDay: wall-clock times of a day when the clocks move
// are resolved by the salon's zone.
func TestScheduleOnADSTDay(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "berlin", Timezone: "Europe/Berlin", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	ms, _ := e.Svc.AllMasters(ctx, salon.ID)
	file := fmt.Sprintf("master;date;start;end\n%s;29.03.2026;01:00;05:00\n%s;25.10.2026;01:00;05:00\n", ms[0].Name, ms[0].Name)
	sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon})
	if err != nil || sum.Created != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	spring, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, booking.Date{Year: 2026, Month: 3, Day: 29}, 1)
	autumn, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, booking.Date{Year: 2026, Month: 10, Day: 25}, 1)
	if len(spring) != 1 || spring[0].End.Sub(spring[0].Start) != 3*time.Hour {
		t.Errorf("spring day (02:00 skipped): %+v", spring)
	}
	if len(autumn) != 1 || autumn[0].End.Sub(autumn[0].Start) != 5*time.Hour {
		t.Errorf("autumn day (02:00-03:00 twice): %+v", autumn)
	}
}

// TestBookingAtATimeTheClocksSkip: a booking row at 02:30 of the day
// Berlin's clocks jump from 02:00 to 03:00 is rejected naming its start
// (it was once booked an hour earlier, at 01:30); 03:30 is imported.
func TestBookingAtATimeTheClocksSkip(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "berlin-gap", Timezone: "Europe/Berlin", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	file := fmt.Sprintf("master,service,date,start,client_phone,client_name\n%[1]s,Cut,29.03.2026,02:30,%[2]s,Gap\n%[1]s,Cut,29.03.2026,03:30,%[2]s,Gap\n",
		m.Name, bookingtest.Phone())
	var lines []importer.Line
	sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Bookings, Salon: salon,
		Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
	if err != nil || sum.Created != 1 || sum.Rejected != 1 {
		t.Fatalf("%+v %v %+v", sum, err, lines)
	}
	if l := lines[0]; l.Line != 2 || l.Column != "start" || !strings.Contains(l.Reason, "there is no 02:30 on 29 Mar 2026") {
		t.Errorf("the skipped time's line: %+v", l)
	}
	var at time.Time
	if err := e.Pool.QueryRow(ctx, `SELECT starts_at FROM bookings WHERE salon_id = $1`, salon.ID).Scan(&at); err != nil ||
		!at.Equal(time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)) {
		t.Errorf("03:30 CEST imported at %s (%v), want 01:30 UTC", at.UTC(), err)
	}
}

// TestScheduleDayWithBookingsIsRejected: a day whose new hours would leave
// a booking outside is rejected, naming it; the other days are written.
func TestScheduleDayWithBookingsIsRejected(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "keep", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	e.Shift(t, salon, m, day, 2, "10:00", "20:00")
	b, err := e.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID,
		StartsAt: bookingtest.At(salon, day, "18:00"), Client: booking.ClientInput{Name: "X", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := e.Svc.AllMasters(ctx, salon.ID)
	file := fmt.Sprintf("master,date,start,end\n%[1]s,%[2]s,10:00,15:00\n%[1]s,%[3]s,10:00,15:00\n", ms[0].Name, day, day.AddDays(1))
	var lines []importer.Line
	sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon,
		Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
	if err != nil || sum.Rejected != 1 || sum.Updated != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	if lines[0].Line != 2 || !strings.Contains(lines[0].Reason, fmt.Sprintf("#%d", b.ID)) {
		t.Errorf("the rejected day does not name booking %d: %+v", b.ID, lines[0])
	}
	sh, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, day, 1)
	if len(sh) != 1 || sh[0].End.In(salon.Location()).Hour() != 20 {
		t.Errorf("the rejected day changed: %+v", sh)
	}
}

// TestReversedAndNightShifts: a shift that ends before it starts is
// refused, naming its end (it was once saved as a 19-hour night shift); a
// night shift says so (+02:00 or 26:00), lasts what it says, and comes back
// out of an export as the import reads it.
func TestReversedAndNightShifts(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "night", Locale: "ru"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	a, b := e.Master(t, salon, sv), e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	file := fmt.Sprintf("мастер;дата;начало;конец\n%[1]s;%[3]s;15:00;10:00\n%[1]s;%[4]s;22:00;+02:00\n%[2]s;%[3]s;20:00;26:30\n%[2]s;%[4]s;08:00;+03:00\n",
		a.Name, b.Name, day, day.AddDays(1))
	var lines []importer.Line
	sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon,
		Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
	if err != nil || sum.Created != 2 || sum.Rejected != 2 {
		t.Fatalf("%+v %v %+v", sum, err, lines)
	}
	for i, want := range map[int]string{2: "конец раньше начала", 5: "длиннее 16 часов"} {
		var l *importer.Line
		for j := range lines {
			if lines[j].Line == i {
				l = &lines[j]
			}
		}
		if l == nil || l.Outcome != booking.Rejected || l.Column != "конец" || !strings.Contains(l.Reason, want) {
			t.Errorf("line %d: %+v, want the end rejected: %q", i, l, want)
		}
	}
	for m, want := range map[*booking.Master]time.Duration{a: 0, b: 6*time.Hour + 30*time.Minute} {
		sh, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, day, 1)
		switch {
		case want == 0 && len(sh) != 0:
			t.Errorf("the reversed shift was saved: %+v", sh)
		case want != 0 && (len(sh) != 1 || sh[0].End.Sub(sh[0].Start) != want):
			t.Errorf("20:00-26:30: %+v, want %v", sh, want)
		}
	}
	var out strings.Builder
	if err := importer.Export(ctx, e.Svc, &out, importer.Schedule, salon, "ru"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{";22:00;26:00;", ";20:00;26:30;"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the export has no %q:\n%s", want, out.String())
		}
	}
	again, err := importer.Import(ctx, e.Svc, strings.NewReader(out.String()), importer.Options{Kind: importer.Schedule, Salon: salon})
	if err != nil || again.Rejected != 0 || again.Created+again.Updated+again.Unchanged != 2 {
		t.Fatalf("the export read back: %+v %v", again, err)
	}
}

// TestEmptyShiftsAndBreaksAreRefused: a shift that ends when it starts, one
// starting at 24:00 and a break of no length are each refused naming the
// cell, in words that say which (not "ends before it starts", not a break
// dropped without a word).
func TestEmptyShiftsAndBreaksAreRefused(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "empty-shifts", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	file := fmt.Sprintf("master,date,start,end,break_start,break_end\n%[1]s,%[2]s,10:00,10:00,,\n%[1]s,%[3]s,24:00,+04:00,,\n%[1]s,%[4]s,10:00,18:00,14:00,14:00\n",
		m.Name, day, day.AddDays(1), day.AddDays(2))
	var lines []importer.Line
	sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon,
		Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
	if err != nil || sum.Rejected != 3 {
		t.Fatalf("%+v %v %+v", sum, err, lines)
	}
	want := map[int][2]string{2: {"end", "shift 10:00-10:00 is empty"}, 3: {"start", "a shift starts before 24:00"},
		4: {"break_end", "break 14:00-14:00 is empty"}}
	for _, l := range lines {
		if w := want[l.Line]; l.Column != w[0] || !strings.Contains(l.Reason, w[1]) {
			t.Errorf("line %d: %s %q, want %s %q", l.Line, l.Column, l.Reason, w[0], w[1])
		}
	}
	if sh, _ := e.Svc.Shifts(ctx, salon.ID, m.ID, day, 3); len(sh) != 0 {
		t.Errorf("saved: %+v", sh)
	}
}

// TestABadRowNamesItsFieldsInTheFilesOrder: a row with two bad cells the
// core refuses is reported by both, in the file's order, every run (Go's
// map order once chose: client_name 19 times and client_phone once in 20
// runs), and counted once.
func TestABadRowNamesItsFieldsInTheFilesOrder(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "twice", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	e.Shift(t, salon, m, day, 1, "10:00", "20:00")
	name := strings.Repeat("x", 300)
	for _, c := range []struct{ header, row, first, then string }{
		{"master,service,date,start,client_phone,client_name", fmt.Sprintf("%s,Cut,%s,12:00,12,%s", m.Name, day, name), "client_phone", "client_name"},
		{"master,service,date,start,client_name,client_phone", fmt.Sprintf("%s,Cut,%s,12:00,%s,12", m.Name, day, name), "client_name", "client_phone"},
	} {
		for range 20 {
			var lines []importer.Line
			sum, err := importer.Import(ctx, e.Svc, strings.NewReader(c.header+"\n"+c.row+"\n"), importer.Options{Kind: importer.Bookings, Salon: salon,
				DryRun: true, Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
			if err != nil || sum.Rejected != 1 || len(lines) != 2 || lines[0].Column != c.first || lines[1].Column != c.then {
				t.Fatalf("%s: %v %+v, want %s then %s rejected, in the file's order", c.header, err, lines, c.first, c.then)
			}
		}
	}
}

// TestTemplatesImport: each kind's template, filled in as it comes, is
// taken whole by the import, in order, into an empty salon, in both
// languages; the page's column lists name every column.
func TestTemplatesImport(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	for _, lang := range []string{"en", "ru"} {
		salon := e.Salon(t, booking.Salon{Slug: "tpl-" + lang, Locale: lang, HorizonDays: 366})
		e.Clock.Set(time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC))
		for _, kind := range importer.Kinds {
			var file strings.Builder
			if err := importer.Template(&file, kind, lang); err != nil {
				t.Fatal(err)
			}
			var lines []importer.Line
			sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file.String()), importer.Options{Kind: kind, Salon: salon,
				Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
			if err != nil || sum.Rejected != 0 || sum.Created == 0 {
				t.Fatalf("%s template (%s): %+v %v %+v\n%s", kind, lang, sum, err, lines, file.String())
			}
			if cols := importer.Columns(kind, lang); len(cols) == 0 || cols[0].Example == "" {
				t.Errorf("%s (%s): columns %+v", kind, lang, cols)
			}
		}
	}
}

// TestASetIsRehearsedAsOne: a salon's five files, in any order, are
// checked as one dry run in the order a salon is built: the masters find
// the services, the bookings the masters and clients, that the files
// before them would create; nothing is written. Alone, the masters' dry
// run rejects every row (no such service yet).
func TestASetIsRehearsedAsOne(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	e.Clock.Set(time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC))
	salon := e.Salon(t, booking.Salon{Slug: "set", Locale: "ru", HorizonDays: 366})
	files := map[importer.Kind]string{}
	for _, kind := range importer.Kinds {
		var b strings.Builder
		if err := importer.Template(&b, kind, "ru"); err != nil {
			t.Fatal(err)
		}
		files[kind] = b.String()
	}
	alone, err := importer.Import(ctx, e.Svc, strings.NewReader(files[importer.Masters]), importer.Options{Kind: importer.Masters, Salon: salon, DryRun: true})
	if err != nil || alone.Rejected == 0 {
		t.Fatalf("the masters alone: %+v %v", alone, err)
	}
	var set []importer.File
	for _, name := range []string{"записи.csv", "clients.csv", "мастера.csv", "schedule.csv", "услуги.csv"} {
		k, _ := importer.KindOfName(name)
		set = append(set, importer.File{Name: name, R: strings.NewReader(files[k])})
	}
	res, err := importer.ImportSet(ctx, e.Svc, set, importer.Options{Salon: salon, DryRun: true})
	if err != nil || len(res) != 5 {
		t.Fatalf("%v %+v", err, res)
	}
	for i, r := range res {
		if r.Kind != importer.Kinds[i] || r.Err != nil || r.Summary.Rejected != 0 || r.Summary.Created == 0 {
			t.Errorf("%d: %s (%s): %+v %v %+v", i, r.File, r.Kind, r.Summary, r.Err, r.Lines)
		}
	}
	var n int
	if err := e.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM services WHERE salon_id = $1) + (SELECT count(*) FROM masters WHERE salon_id = $1)
		+ (SELECT count(*) FROM bookings WHERE salon_id = $1) + (SELECT count(*) FROM audit_log WHERE salon_id = $1)`, salon.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a rehearsal wrote %d rows (%v)", n, err)
	}
	// Then for real: the same set, written.
	set = set[:0]
	for _, k := range importer.Kinds {
		set = append(set, importer.File{Name: string(k) + ".csv", R: strings.NewReader(files[k])})
	}
	if res, err := importer.ImportSet(ctx, e.Svc, set, importer.Options{Salon: salon}); err != nil || res[4].Summary.Created != 1 {
		t.Fatalf("applied: %v %+v", err, res)
	}
	if _, err := importer.ImportSet(ctx, e.Svc, []importer.File{{Name: "prices.csv", R: strings.NewReader("")}}, importer.Options{Salon: salon, DryRun: true}); !errors.Is(err, booking.ErrInvalid) {
		t.Errorf("a file of no kind: %v", err)
	}
}

// TestServicesWithProcessingTime: the processing and finish columns, in
// Russian, are read; a finish without processing is rejected naming its
// column; a re-import without the columns keeps them.
func TestServicesWithProcessingTime(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "colour"})
	imp := func(csv string) []importer.Line {
		var lines []importer.Line
		if _, err := importer.Import(ctx, e.Svc, strings.NewReader(csv), importer.Options{Kind: importer.Services, Salon: salon,
			Report: func(l importer.Line) error { lines = append(lines, l); return nil }}); err != nil {
			t.Fatal(err)
		}
		return lines
	}
	lines := imp("название;длительность;цена;выдержка;завершение\nОкрашивание;60;4000;30;20\nТонирование;30;2000;0;15\n")
	var rejected []string
	for _, l := range lines {
		if l.Column != "" {
			rejected = append(rejected, fmt.Sprintf("%d %s", l.Line, l.Column))
		}
	}
	if len(rejected) != 1 || rejected[0] != "3 завершение" {
		t.Fatalf("rejected %v (%+v), want line 3's завершение", rejected, lines)
	}
	check := func() {
		t.Helper()
		list, err := e.Svc.AllServices(ctx, salon.ID)
		if err != nil || len(list) != 1 || list[0].ProcessingMin != 30 || list[0].FinishMin != 20 {
			t.Fatalf("services %+v, %v: want Окрашивание with 30 + 20", list, err)
		}
	}
	check()
	imp("name,duration_min,price\nОкрашивание,60,4000\n")
	check()
}

// TestVisitsImportAndExport: rows sharing a visit are booked as one visit,
// all or none; a second import changes nothing; the export writes the
// visit column that the import reads back.
func TestVisitsImportAndExport(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "visits", Locale: "en"})
	cut := e.Service(t, salon, booking.SalonService{Name: "Cut", DurationMin: 60})
	beard := e.Service(t, salon, booking.SalonService{Name: "Beard", DurationMin: 30})
	anna, boris := e.Master(t, salon, cut, beard), e.Master(t, salon, cut, beard)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	for _, m := range []*booking.Master{anna, boris} {
		e.Shift(t, salon, m, day, 1, "10:00", "20:00")
	}
	imp := func(csv string) []importer.Line {
		t.Helper()
		var lines []importer.Line
		if _, err := importer.Import(ctx, e.Svc, strings.NewReader(csv), importer.Options{Kind: importer.Bookings, Salon: salon,
			Report: func(l importer.Line) error { lines = append(lines, l); return nil }}); err != nil {
			t.Fatal(err)
		}
		return lines
	}
	file := fmt.Sprintf("master,service,date,start,client_phone,client_name,visit\n%s,Cut,%s,10:00,+79990000001,Vera,A\n%s,Beard,%s,11:00,+79990000001,Vera,A\n",
		anna.Name, day, boris.Name, day)
	for _, l := range imp(file) {
		if l.Outcome != booking.Created {
			t.Fatalf("line %d: %s %s", l.Line, l.Outcome, l.Reason)
		}
	}
	var visits, rows int
	if err := e.Pool.QueryRow(ctx, `SELECT count(DISTINCT visit_id), count(*) FROM bookings WHERE salon_id = $1`, salon.ID).Scan(&visits, &rows); err != nil {
		t.Fatal(err)
	}
	if visits != 1 || rows != 2 {
		t.Fatalf("%d visits of %d rows, want 1 of 2", visits, rows)
	}
	for _, l := range imp(file) {
		if l.Outcome != booking.Unchanged {
			t.Fatalf("again, line %d: %s %s", l.Line, l.Outcome, l.Reason)
		}
	}
	// A visit whose second service's time is taken: neither row.
	taken := fmt.Sprintf("master,service,date,start,client_phone,visit\n%s,Cut,%s,14:00,+79990000002,B\n%s,Beard,%s,10:30,+79990000002,B\n",
		boris.Name, day, anna.Name, day)
	for _, l := range imp(taken) {
		if l.Outcome != booking.Rejected {
			t.Fatalf("a visit with a taken row, line %d: %s", l.Line, l.Outcome)
		}
	}
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE salon_id = $1`, salon.ID).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("%d bookings after a refused visit (%v), want 2", rows, err)
	}
	// The export names the visit; importing it into another salon's
	// copy of the catalogue books it as one visit again.
	var out strings.Builder
	if err := importer.Export(ctx, e.Svc, &out, importer.Bookings, salon, "en"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "\ufeffmaster,service,date,start,client_phone,client_name,status,visit\n") {
		t.Fatalf("export header: %q", out.String())
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE bookings SET status = 'cancelled' WHERE salon_id = $1`, salon.ID); err != nil {
		t.Fatal(err)
	}
	for _, l := range imp(out.String()) {
		if l.Outcome != booking.Created {
			t.Fatalf("the export imported, line %d: %s %s", l.Line, l.Outcome, l.Reason)
		}
	}
	if err := e.Pool.QueryRow(ctx, `SELECT count(DISTINCT visit_id), count(*) FROM bookings WHERE salon_id = $1 AND status = 'confirmed'`,
		salon.ID).Scan(&visits, &rows); err != nil || visits != 1 || rows != 2 {
		t.Fatalf("%d visits of %d rows from the export (%v), want 1 of 2", visits, rows, err)
	}
}

// TestDatesAndTimesAsSalonsAbroadWriteThem: a schedule as a spreadsheet in
// English writes it: dates with slashes (day first in London, month first
// in New York) and 12-hour times, an end at 12 am the day's end; a date
// that cannot be one in the salon's order is refused saying the order.
func TestDatesAndTimesAsSalonsAbroadWriteThem(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	for _, c := range []struct {
		zone, date, bad, reason string
	}{
		{"Europe/London", "14/12/2026", "12/14/2026", "not a date like 2026-03-08, 08/03/2026 (day first) or 8 Mar 2026"},
		{"America/New_York", "12/14/2026", "14/12/2026", "not a date like 2026-03-08, 03/08/2026 (month first) or Mar 8, 2026"},
	} {
		salon := e.Salon(t, booking.Salon{Timezone: c.zone, Locale: "en"})
		sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
		a, b := e.Master(t, salon, sv), e.Master(t, salon, sv)
		file := fmt.Sprintf("master,date,start,end,break_start,break_end\n%[1]s,%[3]s,9:30 am,6 PM,1 p.m.,1:30pm\n%[2]s,%[3]s,4pm,12 am,,\n%[1]s,%[4]s,9:00,18:00,,\n",
			a.Name, b.Name, c.date, c.bad)
		var lines []importer.Line
		sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon,
			Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
		if err != nil || sum.Created != 2 || sum.Rejected != 1 {
			t.Fatalf("%s: %+v %v %+v", c.zone, sum, err, lines)
		}
		for _, l := range lines {
			if l.Outcome == booking.Rejected && (l.Line != 4 || l.Column != "date" || l.Reason != c.reason) {
				t.Errorf("%s: %+v, want the date of line 4 refused: %q", c.zone, l, c.reason)
			}
		}
		day := booking.Date{Year: 2026, Month: 12, Day: 14}
		loc := salon.Location()
		for m, want := range map[*booking.Master]string{a: "09:30-18:00 break 13:00-13:30", b: "16:00-24:00"} {
			sh, err := e.Svc.Shifts(ctx, salon.ID, m.ID, day, 1)
			if err != nil || len(sh) != 1 {
				t.Fatalf("%s: %+v %v", c.zone, sh, err)
			}
			got := sh[0].Start.In(loc).Format("15:04") + "-" + sh[0].End.In(loc).Format("15:04")
			if sh[0].End.Sub(sh[0].Start) == 8*time.Hour && got == "16:00-00:00" {
				got = "16:00-24:00"
			}
			if !sh[0].BreakStart.IsZero() {
				got += " break " + sh[0].BreakStart.In(loc).Format("15:04") + "-" + sh[0].BreakEnd.In(loc).Format("15:04")
			}
			if got != want {
				t.Errorf("%s: the shift %s, want %s", c.zone, got, want)
			}
		}
	}
}

// TestADayRefusedForOneShiftNamesItsRow: a day of two rows (two shifts)
// refused for the second one's times reports that row with its value and
// reason, and the first row as refused for it, not with the second's
// reason beside the first's value.
func TestADayRefusedForOneShiftNamesItsRow(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "blame", Locale: "en"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	file := fmt.Sprintf("master,date,start,end\n%[1]s,%[2]s,9:00,13:00\n%[1]s,%[3]s,9:00,13:00\n%[1]s,%[2]s,18:00,15:00\n", m.Name, day, day.AddDays(1))
	var lines []importer.Line
	sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon,
		Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
	if err != nil || sum.Created != 1 || sum.Rejected != 2 {
		t.Fatalf("%+v %v %+v", sum, err, lines)
	}
	got := map[int]importer.Line{}
	for _, l := range lines {
		got[l.Line] = l
	}
	if l := got[4]; l.Column != "end" || l.Value != "15:00" || !strings.Contains(l.Reason, "ends before it starts") {
		t.Errorf("the wrong row: %+v", l)
	}
	if l := got[2]; l.Outcome != booking.Rejected || l.Value == "15:00" || l.Reason != "line 4 of this day is wrong, and a day is taken whole" {
		t.Errorf("the day's other row: %+v", l)
	}
	// A row refused as it is read (a value past the header, a time that
	// is none) refuses its day too: the day's other rows do not replace
	// the day without it.
	later := day.AddDays(2)
	e.Shift(t, salon, m, later, 1, "09:00", "20:00")
	for _, bad := range []string{"14:00,18:00,x", "14:00,18h"} {
		file = fmt.Sprintf("master,date,start,end\n%[1]s,%[2]s,9:00,13:00\n%[1]s,%[2]s,%[3]s\n", m.Name, later, bad)
		lines = nil
		sum, err = importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Schedule, Salon: salon,
			Report: func(l importer.Line) error { lines = append(lines, l); return nil }})
		if err != nil || sum.Rejected != 2 || sum.Updated+sum.Created != 0 {
			t.Errorf("a day with the row %q: %+v %v %+v", bad, sum, err, lines)
		}
		sh, err := e.Svc.Shifts(ctx, salon.ID, m.ID, later, 1)
		if err != nil || len(sh) != 1 || sh[0].End.Sub(sh[0].Start) != 11*time.Hour {
			t.Errorf("after a day with the row %q: %+v %v, want 09:00-20:00 kept", bad, sh, err)
		}
	}
}

// TestAHoldAwaitingItsDepositIsNotExported: the export of bookings leaves
// out a booking held for its deposit (not a booking yet, and not one the
// import takes), so the file imports whole into another salon.
func TestAHoldAwaitingItsDepositIsNotExported(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	var salons [2]*booking.Salon
	for i, slug := range []string{"holds", "holds-copy"} {
		salons[i] = e.Salon(t, booking.Salon{Slug: slug, Locale: "en"})
		cut := e.Service(t, salons[i], booking.SalonService{Name: "Cut", DurationMin: 60})
		m := e.Master(t, salons[i], cut)
		if _, err := e.Pool.Exec(ctx, `UPDATE masters SET name = 'Anna' WHERE id = $1`, m.ID); err != nil {
			t.Fatal(err)
		}
		e.Shift(t, salons[i], m, salons[i].Today(e.Clock.Now()).AddDays(1), 1, "10:00", "20:00")
	}
	day := salons[0].Today(e.Clock.Now()).AddDays(1)
	file := fmt.Sprintf("master,service,date,start,client_phone\nAnna,Cut,%[1]s,10:00,+79990000001\nAnna,Cut,%[1]s,12:00,+79990000002\n", day)
	if sum, err := importer.Import(ctx, e.Svc, strings.NewReader(file), importer.Options{Kind: importer.Bookings, Salon: salons[0]}); err != nil || sum.Created != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE bookings SET status = 'pending', hold_expires_at = now() + interval '1 hour'
		WHERE salon_id = $1 AND starts_at = (SELECT max(starts_at) FROM bookings WHERE salon_id = $1)`, salons[0].ID); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := importer.Export(ctx, e.Svc, &out, importer.Bookings, salons[0], "en"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "12:00") || !strings.Contains(out.String(), "10:00") {
		t.Fatalf("the export:\n%s", out.String())
	}
	if sum, err := importer.Import(ctx, e.Svc, strings.NewReader(out.String()), importer.Options{Kind: importer.Bookings, Salon: salons[1]}); err != nil ||
		sum.Created != 1 || sum.Rejected != 0 {
		t.Fatalf("the export imported elsewhere: %+v %v", sum, err)
	}
}
