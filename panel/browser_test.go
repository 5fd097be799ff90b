package panel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/browsertest"
	"salon/internal/demo"
)

func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// logIn signs the demo owner in through the login form, landing on the day.
func logIn(w *world) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(w.base + "/panel/"),
		chromedp.WaitVisible(css(`input[name=email]`)),
		chromedp.SendKeys(css(`input[name=email]`), demo.Email),
		chromedp.SendKeys(css(`input[name=password]`), demo.Password),
		chromedp.Submit(css(`input[name=password]`)),
		chromedp.WaitVisible(css(`#grid table.grid`)),
	}
}

// do runs browser steps; on failure it says which page the browser was on
// and what it showed.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		diag, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`location.href + ' | ' + document.body.innerText.slice(0, 1500)`))
		t.Fatalf("%v\npage: %s", err, diag)
	}
}

func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// bookingIDAt reads the booking id from the page's URL (/panel/bookings/ID).
func bookingIDAt(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	loc := value(t, ctx, chromedp.Location())
	var id int64
	if _, err := fmt.Sscanf(loc[strings.Index(loc, "/panel/bookings/"):], "/panel/bookings/%d", &id); err != nil {
		t.Fatalf("not a booking page: %s", loc)
	}
	return id
}

func statusOf(t *testing.T, w *world, id int64) booking.Status {
	return booking.Status(scalar[string](t, w, `SELECT status FROM bookings WHERE id = $1`, id))
}

// TestBrowserRunsTheDay walks the panel in Chromium as an admin at the
// desk: log in, see the demo day, book a free time, lose an occupied time
// and take an offered one, move, cancel, mark a no-show, edit a shift, see
// a booking made on the public API appear on the open day view without a
// reload, log out. Screenshots of the day view (desktop and 390 px) are
// saved in the test's artifact directory (go test -artifacts keeps them).
func TestBrowserRunsTheDay(t *testing.T) {
	w := newWorld(t)
	ctx := browsertest.Tab(t, 1280, 900)
	ctxb := bookingtest.System()
	tomorrow := w.today().AddDays(1)
	loc := w.salon.Location()

	do(t, ctx, logIn(w)...)
	// The day view shows the demo bookings of today, per master.
	n := scalar[int64](t, w, `SELECT count(*) FROM bookings WHERE salon_id = $1 AND status = 'confirmed'
		AND starts_at >= $2 AND starts_at < $3`, w.salon.ID, w.today().Start(loc), tomorrow.Start(loc))
	shown := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#grid td.b').length`))
	if n == 0 || int64(shown) != n {
		t.Fatalf("day view shows %d bookings, the database has %d today", shown, n)
	}
	names := value(t, ctx, chromedp.Text(css(`#grid thead`)))
	for _, m := range []string{"Борис", "Вера", "Галина"} {
		if !strings.Contains(names, m) {
			t.Errorf("day view columns %q lack %s", names, m)
		}
	}

	// Book a free time picked on tomorrow's grid: a start where Vera's
	// manicure fits.
	vera := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 AND name = 'Вера'`, w.salon.ID)
	manicure := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Маникюр'`, w.salon.ID)
	fits, err := w.Svc.Slots(ctxb, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: manicure, MasterID: vera, From: tomorrow})
	if err != nil || len(fits) < 3 {
		t.Fatalf("slots: %v", err)
	}
	cell := fmt.Sprintf(`#grid td.free a[href="/panel/bookings/new?at=%s&master=%d"]`,
		strings.ReplaceAll(fits[1].Start.In(loc).Format("2006-01-02T15:04"), ":", "%3A"), vera)
	do(t, ctx,
		chromedp.Navigate(w.base+"/panel/day/"+tomorrow.String()),
		chromedp.WaitVisible(css(cell)),
		chromedp.Click(css(cell)),
		chromedp.WaitVisible(css(`#new-booking`)),
		chromedp.SendKeys(css(`#new-booking input[name=phone]`), "+7 999 555-10-01"),
		chromedp.SendKeys(css(`#new-booking input[name=name]`), "Desk Client"),
		chromedp.Click(css(`#new-booking button[type=submit]`)),
		chromedp.WaitVisible(css(`#status.confirmed`)),
	)
	created := bookingIDAt(t, ctx)
	if statusOf(t, w, created) != booking.StatusConfirmed {
		t.Fatalf("booking %d is not confirmed", created)
	}
	var master int64
	var start time.Time
	if err := w.Pool.QueryRow(ctxb, `SELECT master_id, starts_at FROM bookings WHERE id = $1`, created).Scan(&master, &start); err != nil {
		t.Fatal(err)
	}

	// Try the same time again: taken; the offered alternatives book in one click.
	do(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/new?master=%d&at=%s", w.base, master, start.In(loc).Format("2006-01-02T15:04"))),
		chromedp.WaitVisible(css(`#new-booking`)),
		chromedp.SendKeys(css(`#new-booking input[name=phone]`), "+7 999 555-10-02"),
		chromedp.SendKeys(css(`#new-booking input[name=name]`), "Second Client"),
		chromedp.Click(css(`#new-booking button[type=submit]`)),
		chromedp.WaitVisible(css(`#alternatives .alts button`)),
		chromedp.Click(css(`#alternatives .alts button`)),
		chromedp.WaitVisible(css(`#status.confirmed`)),
	)
	alt := bookingIDAt(t, ctx)
	if alt == created || statusOf(t, w, alt) != booking.StatusConfirmed {
		t.Fatalf("the alternative booked %d", alt)
	}

	// Move the first booking an hour later (a free time of the same master).
	slots, err := w.Svc.Slots(ctxb, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: scalar[int64](t, w,
		`SELECT service_id FROM bookings WHERE id = $1`, created), MasterID: master, From: tomorrow})
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %v", err)
	}
	to := slots[len(slots)-1].Start.In(loc)
	do(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, created)),
		chromedp.WaitVisible(css(`#reschedule`)),
		chromedp.SetValue(css(`#reschedule input[name=time]`), to.Format("15:04")),
		chromedp.Click(css(`#reschedule button[type=submit]`)),
		chromedp.WaitVisible(css(`p.notice`)),
	)
	var moved time.Time
	if err := w.Pool.QueryRow(ctxb, `SELECT starts_at FROM bookings WHERE id = $1`, created).Scan(&moved); err != nil || !moved.Equal(to) {
		t.Fatalf("moved to %v, want %v (%v)", moved, to, err)
	}

	// Cancel it with a reason.
	do(t, ctx,
		chromedp.SendKeys(css(`#cancel input[name=reason]`), "called to cancel"),
		chromedp.Click(css(`#cancel button[type=submit]`)),
		chromedp.WaitVisible(css(`#status.cancelled`)),
	)
	if statusOf(t, w, created) != booking.StatusCancelled {
		t.Fatal("not cancelled")
	}

	// Mark a no-show: a booking that started this morning.
	early, err := w.Svc.Book(booking.As(ctxb, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: scalar[int64](t, w,
		`SELECT service_id FROM bookings WHERE id = $1`, created), MasterID: master,
		StartsAt: bookingtest.At(w.salon, w.today(), "08:00"), Client: booking.ClientInput{Name: "Late Riser", Phone: bookingtest.Phone()},
		Source: booking.SourceImport})
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, early.ID)),
		chromedp.Click(css(`#no-show button`)),
		chromedp.WaitVisible(css(`#status.no_show`)),
	)
	if statusOf(t, w, early.ID) != booking.StatusNoShow {
		t.Fatal("not a no-show")
	}
	shot(t, ctx, "booking.png", 1280, 900)

	// Edit a shift: a day off becomes 10:00-16:00 with a break.
	free := w.today().AddDays(20)
	do(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/panel/masters/%d", w.base, master)),
		chromedp.WaitVisible(css(`#edit-day`)),
		chromedp.SetValue(css(`#edit-day input[name=date]`), free.String()),
		chromedp.SetValue(css(`#edit-day input[name=start]`), "10:00"),
		chromedp.SetValue(css(`#edit-day input[name=end]`), "16:00"),
		chromedp.SetValue(css(`#edit-day input[name=break_start]`), "13:00"),
		chromedp.SetValue(css(`#edit-day input[name=break_end]`), "13:30"),
		chromedp.Click(css(`#edit-day button[type=submit]`)),
		chromedp.WaitVisible(css(`p.notice`)),
	)
	shot(t, ctx, "master.png", 1280, 900)
	sh, err := w.Svc.Shifts(ctxb, w.salon.ID, master, free, 1)
	if err != nil || len(sh) != 1 || sh[0].Start.In(loc).Format("15:04") != "10:00" || sh[0].BreakEnd.In(loc).Format("15:04") != "13:30" {
		t.Fatalf("shift after the edit: %+v %v", sh, err)
	}

	// An open day view shows a booking made on the public API, by itself.
	do(t, ctx,
		chromedp.Navigate(w.base+"/panel/day/"+tomorrow.String()),
		chromedp.WaitVisible(css(`#grid`)),
	)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	svc := scalar[int64](t, w, `SELECT service_id FROM bookings WHERE id = $1`, alt)
	free2, err := w.Svc.Slots(ctxb, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: svc, MasterID: master, From: tomorrow})
	if err != nil || len(free2) == 0 {
		t.Fatalf("slots: %v", err)
	}
	api := w.client()
	body := fmt.Sprintf(`{"service_id": %d, "master_id": %d, "starts_at": %q, "client": {"name": "Widget Walkin", "phone": "+79995551003"}}`,
		svc, master, free2[0].Start.Format(time.RFC3339))
	resp, err := api.http.Post(w.base+"/api/v1/salons/demo/bookings", "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("API booking: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	deadline, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(deadline, chromedp.Poll[bool](`document.querySelector('#grid').innerText.includes('Widget Walkin')`,
		chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the API booking did not appear on the open day view: %v", err)
	}
	if !value(t, ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)) {
		t.Error("the day view reloaded the whole page")
	}

	// Screenshots of today's view, on a desk and on a phone.
	do(t, ctx, chromedp.Navigate(w.base+"/panel/"), chromedp.WaitVisible(css(`#grid table.grid`)))
	shot(t, ctx, "day-desktop.png", 1280, 900)
	shot(t, ctx, "day-390.png", 390, 844)

	// Log out: the panel is closed again.
	do(t, ctx,
		chromedp.Click(css(`#logout button`)),
		chromedp.WaitVisible(css(`input[name=password]`)),
		chromedp.Navigate(w.base+"/panel/"),
		chromedp.WaitVisible(css(`input[name=password]`)),
	)
	if n := scalar[int64](t, w, `SELECT count(*) FROM panel_sessions`); n != 0 {
		t.Errorf("%d sessions after logout", n)
	}
}

// shot saves a full-page screenshot at a viewport size.
func shot(t *testing.T, ctx context.Context, name string, width, height int64) {
	t.Helper()
	do(t, ctx, chromedp.EmulateViewport(width, height))
	png := value(t, ctx, chromedp.FullScreenshot(100))
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes)", path, len(png))
	// The page fits a phone: nothing wider than the viewport but the grid
	// and what else scrolls sideways inside a box that fits (the sections'
	// row).
	if width < 500 {
		wide := value(t, ctx, chromedp.Evaluate[string](`Array.prototype.filter.call(document.querySelectorAll('body *'),
			function (e) {
				if (e.getBoundingClientRect().right <= window.innerWidth + 1 || e.closest('.grid-wrap')) return false;
				for (var p = e.parentElement; p; p = p.parentElement) {
					var o = getComputedStyle(p).overflowX;
					if ((o === 'auto' || o === 'scroll') && p.getBoundingClientRect().right <= window.innerWidth + 1) return false;
				}
				return true;
			})
			.map(function (e) { return e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right); }).join(', ')`))
		if wide != "" {
			t.Errorf("at %d px these stick out of the page: %s", width, wide)
		}
	}
}

// TestBrowserImportsMasters: the upload page checks a file (a dry run,
// with the rejected rows and their reasons), applies it, and the new
// masters appear on the day view.
func TestBrowserImportsMasters(t *testing.T) {
	w := newWorld(t)
	ctx := browsertest.Tab(t, 1280, 900)
	file := filepath.Join(t.TempDir(), "мастера.csv")
	if err := os.WriteFile(file, []byte("Мастер;Телефон;Услуги\nЕлена;+7 999 111-22-33;Маникюр\nЖанна;;\"Маникюр|Женская стрижка\"\nЗоя;;Педикюр\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx,
		chromedp.Navigate(w.base+"/panel/login"),
		chromedp.SendKeys(css(`input[name=email]`), demo.Email),
		chromedp.SendKeys(css(`input[name=password]`), demo.Password),
		chromedp.Submit(css(`input[name=password]`)),
		chromedp.WaitVisible(css(`#grid`)),
		chromedp.Navigate(w.base+"/panel/import"),
		chromedp.WaitVisible(css(`#upload`)),
		chromedp.SetValue(css(`#upload select[name=kind]`), "masters"),
		chromedp.SetUploadFiles(css(`#upload input[type=file]`), []string{file}),
		chromedp.Click(css(`#upload button[type=submit]`)),
		chromedp.WaitVisible(css(`#apply`)), // the dry run is done
	)
	if n := scalar[int64](t, w, `SELECT count(*) FROM masters WHERE name IN ('Елена', 'Жанна')`); n != 0 {
		t.Fatal("the dry run wrote masters")
	}
	if got := value(t, ctx, chromedp.Text(css(`#created`))); got != "2" {
		t.Errorf("dry run: %s created, want 2", got)
	}
	if got := value(t, ctx, chromedp.Text(css(`#rejected-rows`))); !strings.Contains(got, "Педикюр") || !strings.Contains(got, "4") {
		t.Errorf("the rejected row: %q", got)
	}
	do(t, ctx,
		chromedp.Click(css(`#apply button`)),
		chromedp.WaitVisible(css(`#phase.phase-applied`)),
		chromedp.Navigate(w.base+"/panel/"),
		chromedp.WaitVisible(css(`#grid`)),
	)
	cols := value(t, ctx, chromedp.Text(css(`#grid thead`)))
	if !strings.Contains(cols, "Елена") || !strings.Contains(cols, "Жанна") || strings.Contains(cols, "Зоя") {
		t.Errorf("day view columns after the import: %q", cols)
	}
	if actor := scalar[string](t, w, `SELECT actor FROM audit_log WHERE entity = 'master' ORDER BY id DESC LIMIT 1`); actor != "import:мастера.csv (admin@demo.salon)" {
		t.Errorf("audit actor %q", actor)
	}
}

// On a phone the day view shows one master at a time, chosen with a
// switcher that the grid's refreshes keep; a desktop shows them all.
func TestBrowserDayOneMasterPerScreenOnAPhone(t *testing.T) {
	w := newWorld(t)
	ctx := browsertest.Tab(t, 390, 844)
	do(t, ctx,
		chromedp.Navigate(w.base+"/panel/"),
		chromedp.SendKeys(css(`input[name=email]`), demo.Email),
		chromedp.SendKeys(css(`input[name=password]`), demo.Password),
		chromedp.Submit(css(`input[name=password]`)),
		chromedp.WaitVisible(css(`.master-switch`)),
	)
	shown := func() []string {
		t.Helper()
		return value(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.grid thead th[data-col]'))`+
			`.filter(function (th) { return !th.hidden && th.offsetWidth > 0; }).map(function (th) { return th.querySelector('a').textContent; })`))
	}
	if got := shown(); len(got) != 1 {
		t.Fatalf("a phone shows the columns %v, want one", got)
	}
	second := value(t, ctx, chromedp.Text(css(`.master-switch button[data-show-col="1"]`)))
	do(t, ctx, chromedp.Click(css(`.master-switch button[data-show-col="1"]`)))
	if got := shown(); len(got) != 1 || got[0] != second {
		t.Fatalf("after choosing %s: %v", second, got)
	}
	png := value(t, ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "day-390-one-master.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	// Wider, every master again (once the page has heard of the new
	// width: the media query's change event comes after the resize).
	do(t, ctx, chromedp.EmulateViewport(1280, 900))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.querySelectorAll('table.grid thead th[data-col]'))`+
		`.filter(function (th) { return !th.hidden && th.offsetWidth > 0; }).length >= 2`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("a desktop shows %v (%v)", shown(), err)
	}
}

// The day after a night shift: its tail from midnight, then the hours
// nobody works folded into one row, then the morning; on a desk and a phone.
func TestBrowserTheDayAfterANightShift(t *testing.T) {
	w := newWorld(t)
	ctx := browsertest.Tab(t, 1280, 900)
	night := w.today().AddDays(3)
	for _, name := range []string{"Борис", "Вера", "Галина"} {
		m := &booking.Master{ID: scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 AND name = $2`, w.salon.ID, name)}
		if name == "Вера" {
			w.Env.Shift(t, w.salon, m, night, 1, "22:00", "+02:00")
		}
		w.Env.Shift(t, w.salon, m, night.AddDays(1), 1, "10:00", "19:00")
	}
	// (It is that day, 15:10.)
	w.Clock.Set(bookingtest.At(w.salon, night.AddDays(1), "15:10"))
	do(t, ctx, logIn(w)...)
	do(t, ctx, chromedp.Navigate(w.base+"/panel/day/"+night.AddDays(1).String()), chromedp.WaitVisible(css(`#grid table.grid`)))
	labels := value(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#grid tbody th.time')).map(function (th) { return th.textContent; })`))
	if len(labels) < 3 || labels[0] != "00:00" || !slices.Contains(labels, "02:00–10:00") || slices.Contains(labels, "05:00") {
		t.Errorf("the day after a night shift has rows %v: want 00:00, then 02:00–10:00 folded into one", labels)
	}
	shot(t, ctx, "day-after-night-desktop.png", 1280, 900)
	shot(t, ctx, "day-after-night-390.png", 390, 844)
	// On a phone the page opens on now (helper-49 L4: on 00:00, hours
	// before the day's work), its row marked.
	phone := browsertest.Tab(t, 390, 844)
	do(t, phone, chromedp.Navigate(w.base+"/panel/"), chromedp.WaitVisible(css(`#grid tr.now`)))
	at := value(t, phone, chromedp.Evaluate[[]float64](`(function(){ var r = document.querySelector('#grid tr.now').getBoundingClientRect();
		return [r.top, r.bottom, window.innerHeight, window.scrollY]; })()`))
	if now := value(t, phone, chromedp.Text(css(`#grid tr.now th.time`))); now != "15:00" || at[0] < 0 || at[1] > at[2] || at[3] == 0 {
		t.Errorf("the phone's page opens with the row of now (%q) at %v, want 15:00 in sight, scrolled to", now, at)
	}
	png := value(t, phone, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "day-now-390.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An owner invites a colleague on the users page and hands over the link
// it shows; the colleague opens it (on a phone), sets a password and is in
// the panel. Both pages pass axe, at 1280 and 390 px.
func TestBrowserInvitesAColleague(t *testing.T) {
	w := newWorld(t)
	ctx := browsertest.Tab(t, 1280, 900)
	do(t, ctx, logIn(w)...)
	do(t, ctx,
		chromedp.Navigate(w.base+"/panel/users"),
		chromedp.SendKeys(css(`form[action="/panel/users"] input[name=email]`), "colleague@demo.test"),
		chromedp.Submit(css(`form[action="/panel/users"] input[name=email]`)),
		chromedp.WaitVisible(css(`input.copy`)),
	)
	browsertest.Axe(t, ctx, "the users page with an invitation made")
	shot(t, ctx, "invited-desktop.png", 1280, 900)
	shot(t, ctx, "invited-390.png", 390, 844)
	link := value(t, ctx, chromedp.Value(css(`input.copy`)))
	if !strings.Contains(link, "/panel/invite/") {
		t.Fatalf("the link shown: %q", link)
	}
	phone := browsertest.Tab(t, 390, 844)
	do(t, phone, chromedp.Navigate("about:blank"), chromedp.Navigate(link), chromedp.WaitVisible(css(`input[name=password2]`)))
	browsertest.Axe(t, phone, "the invitation's page")
	shot(t, phone, "invitation-390.png", 390, 844)
	do(t, phone,
		chromedp.SendKeys(css(`input[name=password]`), "colleague-password"),
		chromedp.SendKeys(css(`input[name=password2]`), "colleague-password"),
		chromedp.Submit(css(`input[name=password2]`)),
		chromedp.WaitVisible(css(`#grid`)),
	)
	if who := value(t, phone, chromedp.Text(css(`.who`))); who != "colleague@demo.test" {
		t.Errorf("signed in as %q", who)
	}
}
