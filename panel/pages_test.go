package panel_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
	"salon/internal/demo"
	"salon/panel"
)

func TestClientsSearchAndPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	// A phone however typed: with the country code, or nationally (8 ...),
	// whole or in part.
	for _, q := range []string{"Мари", "мари", "0101", "+7 999 000-01-01", "8 (999) 000-01-01", "89990000101", "8 999 000 0101", "999 000 01 01"} {
		a := b.get("/panel/clients?q=" + url.QueryEscape(q))
		if a.status != 200 || !strings.Contains(a.body, "Мария") || strings.Contains(a.body, "Иван") {
			t.Errorf("search %q: %d, finds Мария only: %v", q, a.status, strings.Contains(a.body, "Мария"))
		}
	}
	if a := b.get("/panel/clients?q=%25"); strings.Contains(a.body, "Мария") {
		t.Error("a % in the search matches everything")
	}
	id := scalar[int64](t, w, `SELECT id FROM clients WHERE name = 'Мария'`)
	a := b.get(fmt.Sprintf("/panel/clients/%d", id))
	if a.status != 200 || !strings.Contains(a.body, `id="noshows">0<`) {
		t.Fatalf("client page: %d", a.status)
	}
	// A bad name is a clear error on the same page, and nothing changes.
	a = b.post(fmt.Sprintf("/panel/clients/%d", id), url.Values{"name": {""}, "notes": {"x"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "name") {
		t.Errorf("empty name: %d", a.status)
	}
	if n := scalar[string](t, w, `SELECT notes FROM clients WHERE id = $1`, id); n != "" {
		t.Errorf("notes changed to %q", n)
	}
}

func TestLanguageFollowsTheUsersChoice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	if a := b.get("/panel/"); !strings.Contains(a.body, "Сегодня") || !strings.Contains(a.body, `lang="ru"`) {
		t.Fatal("the demo salon's panel is not in Russian")
	}
	b.do("POST", "/panel/lang", url.Values{"lang": {"en"}, "csrf": {b.csrf}}, "Referer", w.base+"/panel/clients")
	a := b.get("/panel/")
	if !strings.Contains(a.body, "Today") || !strings.Contains(a.body, `lang="en"`) || strings.Contains(a.body, "Сегодня") {
		t.Error("after choosing English the panel is not in English")
	}
	// Words, not the codes behind them (the refund policy's options).
	if a := b.get("/panel/settings"); !strings.Contains(a.body, ">before the cancellation deadline<") || strings.Contains(a.body, ">before_cutoff<") {
		t.Error("the English settings show the refund policy's codes")
	}
	// Error pages too.
	if a := b.get("/panel/bookings/999999"); a.status != 404 || !strings.Contains(a.body, "Not found.") ||
		!strings.Contains(a.header.Get("Content-Type"), "text/html") {
		t.Errorf("404 page: %d %s", a.status, a.header.Get("Content-Type"))
	}
}

func TestOpenDayViewPollsCheaply(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	day := w.today().AddDays(1)
	a := b.get("/panel/day/" + day.String())
	poll := pollURL(t, a.body)
	if p := b.get(poll); p.status != http.StatusNoContent {
		t.Fatalf("unchanged: %d", p.status)
	}
	// A booking from the widget changes the version: the poll answers the new grid.
	ms, _ := w.Svc.Masters(bookingtest.System(), w.salon.ID, 0)
	var done bool
	for _, m := range ms {
		slots, _ := w.Svc.Slots(bookingtest.System(), booking.SlotQuery{SalonID: w.salon.ID, ServiceID: m.ServiceIDs[0], MasterID: m.ID, From: day})
		if len(slots) == 0 {
			continue
		}
		if _, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: m.ServiceIDs[0], MasterID: m.ID,
			StartsAt: slots[0].Start, Client: booking.ClientInput{Name: "Polled Client", Phone: bookingtest.Phone()}}); err != nil {
			t.Fatal(err)
		}
		done = true
		break
	}
	if !done {
		t.Fatal("no free slot tomorrow")
	}
	p := b.get(poll)
	if p.status != 200 || !strings.Contains(p.body, "Polled Client") || !strings.HasPrefix(p.body, `<div id="grid"`) {
		t.Fatalf("changed: %d %.200s", p.status, p.body)
	}
	if next := pollURL(t, p.body); next == poll {
		t.Error("the new grid polls the old version")
	}
	// A poll without a session tells htmx to go to the login page.
	anon := w.client()
	if a := anon.do("GET", poll, nil, "HX-Request", "true"); a.header.Get("HX-Redirect") != "/panel/login" {
		t.Errorf("anonymous poll: %d %v", a.status, a.header)
	}
}

func TestTemplateThatLosesBookingsNamesThem(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "desk@demo.test", booking.RoleAdmin)
	// A booking of Галина (12:00-21:00) in the evening, then a template ending at 15:00.
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Галина'`)
	bk := scalar[int64](t, w, `SELECT id FROM bookings WHERE master_id = $1 AND status = 'confirmed' ORDER BY starts_at DESC LIMIT 1`, m)
	before := snapshot(t, w, w.salon.ID)
	form := url.Values{"from": {w.today().String()}, "to": {w.today().AddDays(6).String()}}
	for _, d := range []string{"0", "1", "2", "3", "4", "5", "6"} {
		form.Set("start_"+d, "10:00")
		form.Set("end_"+d, "15:00")
	}
	a := b.post(fmt.Sprintf("/panel/masters/%d/template", m), form)
	if a.status != http.StatusConflict || !strings.Contains(a.body, fmt.Sprintf(`href="/panel/bookings/%d"`, bk)) {
		t.Fatalf("template over a booking: %d, names #%d: %v", a.status, bk, strings.Contains(a.body, fmt.Sprint(bk)))
	}
	if snapshot(t, w, w.salon.ID) != before {
		t.Error("a refused template changed the salon")
	}
	// The week view of the master shows their bookings.
	if a := b.get(fmt.Sprintf("/panel/masters/%d/week/%s", m, w.today())); a.status != 200 || !strings.Contains(a.body, fmt.Sprintf("/panel/bookings/%d", bk)) {
		t.Errorf("week view: %d", a.status)
	}
}

func TestServiceFormErrorsNameTheField(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	// In the salon's language, by the label the form shows: never the
	// core's field names (deposit, duration_min) or its English.
	a := b.post("/panel/services", url.Values{"name": {"Cheap"}, "duration": {"30"}, "price": {"100"}, "deposit": {"500"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "<b>Предоплата</b>: не может быть больше цены") {
		t.Errorf("deposit over the price: %d %s", a.status, fieldErrorsOf(a.body))
	}
	// Where the admin typed it: in the form, below the list of services,
	// with the field it names marked, and only that one.
	form := a.body[strings.Index(a.body, `action="/panel/services"`)+1:]
	if !strings.Contains(form, "не может быть больше цены") ||
		!regexp.MustCompile(`name="deposit"[^>]*aria-invalid="true"`).MatchString(form) ||
		regexp.MustCompile(`name="price"[^>]*aria-invalid`).MatchString(form) {
		t.Errorf("the error is not at its field: %s", form)
	}
	a = b.post("/panel/services", url.Values{"name": {"Cheap"}, "duration": {"30"}, "price": {"$25"}})
	if a.status != http.StatusUnprocessableEntity || !regexp.MustCompile(`name="price"[^>]*aria-invalid="true"`).MatchString(a.body) ||
		!strings.Contains(a.body, "USD") {
		t.Errorf("a price in dollars: %d %s", a.status, fieldErrorsOf(a.body))
	}
	a = b.post("/panel/services", url.Values{"name": {"Cheap"}, "duration": {"half an hour"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "<b>Длительность</b>: не целое число минут") ||
		strings.Contains(a.body, "duration_min") {
		t.Errorf("duration in words: %d %s", a.status, fieldErrorsOf(a.body))
	}
	// Every field at fault at once, not one at a time (helper-49 L2): a
	// name left empty and a price that is no amount.
	a = b.post("/panel/services", url.Values{"name": {""}, "duration": {"30"}, "price": {"abc"}, "deposit": {"100"}})
	if errs := fieldErrorsOf(a.body); a.status != http.StatusUnprocessableEntity || !strings.Contains(errs, "<b>Название</b>") ||
		!strings.Contains(errs, "<b>Цена</b>") || strings.Contains(errs, "<b>Предоплата</b>") {
		t.Errorf("an empty name and a price of abc: %d %s", a.status, errs)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM services WHERE name = 'Cheap'`); n != 0 {
		t.Error("an invalid service was saved")
	}
}

// TestDayViewEscapesWhatClientsType: the grid's rows are written by hand
// (for speed); a client's name with markup is shown as text.
func TestDayViewEscapesWhatClientsType(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	day := w.today().AddDays(1)
	ms, _ := w.Svc.Masters(bookingtest.System(), w.salon.ID, 0)
	for _, m := range ms {
		slots, _ := w.Svc.Slots(bookingtest.System(), booking.SlotQuery{SalonID: w.salon.ID, ServiceID: m.ServiceIDs[0], MasterID: m.ID, From: day})
		if len(slots) == 0 {
			continue
		}
		if _, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: m.ServiceIDs[0], MasterID: m.ID,
			StartsAt: slots[0].Start, Client: booking.ClientInput{Name: `<img src=x onerror="alert(1)">&`, Phone: bookingtest.Phone()}}); err != nil {
			t.Fatal(err)
		}
		break
	}
	a := b.get("/panel/day/" + day.String())
	if strings.Contains(a.body, "<img") || !strings.Contains(a.body, `&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;`) {
		t.Errorf("the name is not escaped in the grid")
	}
}

// TestRescheduleOntoATakenTimeOffersAlternatives: the booking keeps its
// time, the page offers the core's nearest free times, one click moves it.
func TestRescheduleOntoATakenTimeOffersAlternatives(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	loc := w.salon.Location()
	var id, master int64
	var start time.Time
	// Two bookings of one master on one day: move the first onto the second.
	if err := w.Pool.QueryRow(context.Background(), `SELECT a.id, a.master_id, x.starts_at FROM bookings a
		JOIN bookings x ON x.master_id = a.master_id AND x.id <> a.id AND x.starts_at::date = a.starts_at::date
		WHERE a.salon_id = $1 AND a.starts_at > $2 ORDER BY a.id LIMIT 1`, w.salon.ID, w.Clock.Now()).Scan(&id, &master, &start); err != nil {
		t.Fatal(err)
	}
	before := scalar[time.Time](t, w, `SELECT starts_at FROM bookings WHERE id = $1`, id)
	a := b.post(fmt.Sprintf("/panel/bookings/%d/reschedule", id), url.Values{"date": {start.In(loc).Format("2006-01-02")},
		"time": {start.In(loc).Format("15:04")}, "master": {fmt.Sprint(master)}, "asked": {"salon"}})
	action := fmt.Sprintf(`action="/panel/bookings/%d/reschedule"`, id)
	if a.status != http.StatusConflict || strings.Count(a.body, action) < 2 {
		t.Fatalf("move onto a taken time: %d, %d choices", a.status, strings.Count(a.body, action)-1)
	}
	if now := scalar[time.Time](t, w, `SELECT starts_at FROM bookings WHERE id = $1`, id); !now.Equal(before) {
		t.Fatal("the refused move changed the booking")
	}
	// Take the first choice, as its form would post it.
	form := url.Values{}
	i := strings.Index(a.body, `<div class="alts">`)
	chunk := a.body[i:]
	chunk = chunk[:strings.Index(chunk, "</form>")]
	for _, m := range regexp.MustCompile(`name="(\w+)" value="([^"]*)"`).FindAllStringSubmatch(chunk, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("asked") != "salon" { // (a choice moves as the form asked: the salon's own move)
		t.Errorf("the first choice's form does not keep who asks: %v", form)
	}
	if r := b.do("POST", fmt.Sprintf("/panel/bookings/%d/reschedule", id), form); r.status != http.StatusSeeOther {
		t.Fatalf("the first choice: %d", r.status)
	}
	if now := scalar[time.Time](t, w, `SELECT starts_at FROM bookings WHERE id = $1`, id); now.Equal(before) {
		t.Error("the chosen alternative did not move the booking")
	}
	// A refused move to another master shows the form again as it was
	// filled in: that master, and who asks.
	var other int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT b.id, ms.master_id FROM bookings b
		JOIN master_services ms ON ms.service_id = b.service_id AND ms.master_id <> b.master_id
		WHERE b.salon_id = $1 AND b.starts_at > $2 AND b.status = 'confirmed' ORDER BY b.id LIMIT 1`, w.salon.ID, w.Clock.Now()).Scan(&id, &other); err != nil {
		t.Fatal(err)
	}
	r := b.post(fmt.Sprintf("/panel/bookings/%d/reschedule", id), url.Values{"date": {start.In(loc).Format("2006-01-02")},
		"time": {"03:00"}, "master": {fmt.Sprint(other)}, "asked": {"salon"}})
	form2 := regexp.MustCompile(`(?s)<form method="post" action="/panel/bookings/\d+/reschedule" class="card" id="reschedule">.*?</form>`).FindString(r.body)
	if r.status < 400 || !strings.Contains(form2, fmt.Sprintf(`<option value="%d" selected>`, other)) ||
		!strings.Contains(form2, `value="salon" aria-describedby="move-salon" checked>`) {
		t.Errorf("a refused move's form: %d %s", r.status, form2)
	}
	// A move to where it is: nothing moved, and the page says so.
	var at time.Time
	var own int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT starts_at, master_id FROM bookings WHERE id = $1`, id).Scan(&at, &own); err != nil {
		t.Fatal(err)
	}
	r = b.post(fmt.Sprintf("/panel/bookings/%d/reschedule", id), url.Values{"date": {at.In(loc).Format("2006-01-02")},
		"time": {at.In(loc).Format("15:04")}, "master": {fmt.Sprint(own)}})
	if r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), "?done=unmoved") {
		t.Errorf("a move to where it is: %d %s", r.status, r.header.Get("Location"))
	}
	if page := b.get(r.header.Get("Location")).body; !strings.Contains(page, "Переносить нечего") {
		t.Errorf("a move to where it is says: %s", regexp.MustCompile(`<p class="notice"[^<]*`).FindString(page))
	}
}

// postUpload posts a file to the import page as a browser would; it
// returns the status and where the answer points.
func (b *browserless) postUpload(kind, name, body string) (int, string) {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", b.csrf)
	_ = mw.WriteField("kind", kind)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = io.WriteString(fw, body)
	mw.Close()
	req, _ := http.NewRequest("POST", b.w.base+"/panel/import", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// upload posts a file to the import page and waits (with a deadline) for
// the dry run to end; it returns the job's page.
func (b *browserless) upload(kind, name, body string) answer {
	b.t.Helper()
	status, job := b.postUpload(kind, name, body)
	if status != http.StatusSeeOther {
		b.t.Fatalf("upload: %d", status)
	}
	var a answer
	bookingtest.WaitFor(b.t, 20*time.Second, "the dry run", func() bool {
		a = b.get(job)
		return !strings.Contains(a.body, `hx-trigger="every 1s"`)
	})
	return a
}

// TestAdminsImportOnlyShifts: an admin's upload of masters is refused
// (owners import the catalogue) and not even stored; a schedule goes
// through.
func TestAdminsImportOnlyShifts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "desk2@demo.test", booking.RoleAdmin)
	if status, _ := b.postUpload("masters", "m.csv", "name\nNew Master\n"); status != http.StatusForbidden {
		t.Errorf("an admin's masters upload: %d, want 403", status)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM uploads`); n != 0 {
		t.Errorf("an admin's refused upload was stored (%d uploads)", n)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM masters WHERE name = 'New Master'`); n != 0 {
		t.Error("an admin imported a master")
	}
	a := b.upload("schedule", "s.csv", "master,date,start,end\nВера,2026-04-01,10:00,18:00\n")
	if !strings.Contains(a.body, `id="apply"`) || !strings.Contains(a.body, `id="created">1<`) {
		t.Errorf("an admin's schedule dry run: %.1500s", a.body)
	}
	// Another user cannot see or apply this upload.
	job := regexp.MustCompile(`/panel/import/([0-9a-f]+)/apply`).FindStringSubmatch(a.body)
	other := w.owner()
	if r := other.get("/panel/import/" + job[1]); r.status != http.StatusNotFound {
		t.Errorf("another user's upload: %d", r.status)
	}
	if r := other.post("/panel/import/"+job[1]+"/apply", nil); r.status != http.StatusNotFound {
		t.Errorf("another user applies an upload: %d", r.status)
	}
}

// TestPanelShowsPaymentsAndRefunds: a paid deposit shows on the booking
// and on the day's payments; the salon refunds it in full from the panel;
// the ledger shows both entries.
func TestPanelShowsPaymentsAndRefunds(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(yk))}
	w := newWorldOn(t, e)
	ctx := bookingtest.System()
	svc := scalar[int64](t, w, `SELECT id FROM services WHERE name = 'Окрашивание'`)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Галина'`)
	slots, err := w.Svc.Slots(ctx, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: svc, MasterID: m, From: w.today().AddDays(1)})
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %v", err)
	}
	bk, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: svc, MasterID: m, StartsAt: slots[0].Start,
		Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.Svc.StartPayment(booking.As(ctx, booking.ByToken(bk.ManageToken)), bk.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake.Pay(p.ExternalID)
	if _, err := w.Svc.CheckPayment(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	b := w.owner()
	if a := b.get(fmt.Sprintf("/panel/bookings/%d", bk.ID)); !strings.Contains(a.body, `id="refund"`) || !strings.Contains(a.body, p.ExternalID) {
		t.Fatalf("the booking page shows no paid deposit")
	}
	if a := b.post(fmt.Sprintf("/panel/bookings/%d/refund", bk.ID), nil); a.status != http.StatusSeeOther {
		t.Fatalf("refund: %d %s", a.status, a.body)
	}
	if _, refunded := fake.Totals(); refunded != 100000 {
		t.Errorf("refunded %d at the provider", refunded)
	}
	// Again: nothing more to refund.
	if a := b.post(fmt.Sprintf("/panel/bookings/%d/refund", bk.ID), nil); a.status != http.StatusConflict {
		t.Errorf("second refund: %d", a.status)
	}
	a := b.get("/panel/payments")
	if !strings.Contains(a.body, `id="received"`) || strings.Count(a.body, fmt.Sprintf(`/panel/bookings/%d"`, bk.ID)) < 3 {
		t.Errorf("payments page: %.400s", a.body)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM ledger_entries`); n != 2 {
		t.Errorf("%d ledger entries", n)
	}
}

// TestUploadOverTheLimitIsRefusedAndNotKept: the upload streams into the
// database and stops at its limit; a larger file is refused (413, with
// the limit named) and nothing of it is kept.
func TestUploadOverTheLimitIsRefusedAndNotKept(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	row := "Client,+79990000000\n"
	big := "name,phone\n" + strings.Repeat(row, (panel.MaxUpload+len(row))/len(row)+1)
	if status, _ := b.postUpload("clients", "big.csv", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a file over %d MiB: %d, want 413", panel.MaxUpload>>20, status)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM uploads`) + scalar[int64](t, w, `SELECT count(*) FROM upload_chunks`); n != 0 {
		t.Errorf("%d upload rows kept of a refused file", n)
	}
	if status, _ := b.postUpload("clients", "empty.csv", ""); status != http.StatusUnprocessableEntity {
		t.Errorf("an empty file: %d, want 422", status)
	}
}

// TestPanelNeedsAttention: what the saga cannot finish alone is listed
// with its actions, each audited: money held for a cancelled booking is
// released at the provider; a deposit kept by the policy for a cancelled
// booking is refunded in part; a stuck capture is checked again once the
// provider answers; a pending booking's deposit paid in the salon confirms
// it and cancels its payment online. The booking page shows its payment's
// history.
func TestPanelNeedsAttention(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	pool := bookingtest.Pool(t)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(yk),
		booking.WithProviderAttempts(1))}
	w := newWorldOn(t, e)
	ctx := bookingtest.System()
	if _, err := pool.Exec(ctx, `UPDATE salons SET refund_policy = 'never' WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	svc := scalar[int64](t, w, `SELECT id FROM services WHERE name = 'Окрашивание'`)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Галина'`)
	all, err := w.Svc.Slots(ctx, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: svc, MasterID: m, From: w.today().AddDays(1), Days: 3})
	if err != nil {
		t.Fatal(err)
	}
	var slots []booking.Slot // four that do not overlap
	for _, sl := range all {
		if len(slots) == 0 || !sl.Start.Before(slots[len(slots)-1].End) {
			slots = append(slots, sl)
		}
	}
	if len(slots) < 4 {
		t.Fatalf("%d slots", len(slots))
	}
	book := func(i int) (*booking.Booking, *booking.PaymentSession) {
		bk, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: svc, MasterID: m,
			StartsAt: slots[i].Start, Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.Svc.StartPayment(booking.As(ctx, booking.ByToken(bk.ManageToken)), bk.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return bk, p
	}
	var captureDown atomic.Bool
	fake.Fault = func(method, path string) psptest.Fault {
		if captureDown.Load() && path == "POST /payments/{id}/capture" {
			return psptest.Error
		}
		return psptest.None
	}
	// Kept: paid, then cancelled by the client under "never".
	kept, kp := book(0)
	fake.Pay(kp.ExternalID)
	if _, err := w.Svc.CheckPayment(ctx, kp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(booking.As(ctx, booking.ByToken(kept.ManageToken)), booking.CancelRequest{BookingID: kept.ID}); err != nil {
		t.Fatal(err)
	}
	// Stuck: paid, the capture keeps failing.
	captureDown.Store(true)
	_, sp := book(1)
	fake.Pay(sp.ExternalID)
	for range 4 {
		_, _ = w.Svc.CheckPayment(ctx, sp.ID)
	}
	// Held: authorized for a booking the salon cancelled; the release
	// keeps failing... (here: recorded as held for long, by hand).
	held, hp := book(2)
	fake.Pay(hp.ExternalID)
	if _, err := pool.Exec(ctx, `UPDATE payment_sessions SET status = 'authorized', external_id = $2, updated_at = now() - interval '1 hour' WHERE id = $1`, hp.ID, hp.ExternalID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE bookings SET status = 'cancelled', cancel_reason = 'by hand' WHERE id = $1`, held.ID); err != nil {
		t.Fatal(err)
	}
	// Due: pending, the client pays in the salon.
	due, dp := book(3)

	b := w.owner()
	a := b.get("/panel/attention")
	for _, want := range []string{fmt.Sprintf(`data-session="%d" data-kind="kept"`, kp.ID), fmt.Sprintf(`data-session="%d" data-kind="stuck"`, sp.ID),
		fmt.Sprintf(`data-session="%d" data-kind="held"`, hp.ID)} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the attention page lacks %s", want)
		}
	}
	if r := b.post(fmt.Sprintf("/panel/attention/%d/release", hp.ID), nil); r.status != http.StatusSeeOther {
		t.Errorf("release: %d", r.status)
	}
	if st := fake.Status(hp.ExternalID); st != "canceled" {
		t.Errorf("released: the provider's payment is %s", st)
	}
	if r := b.post(fmt.Sprintf("/panel/bookings/%d/refund", kept.ID), url.Values{"amount": {"400"}}); r.status != http.StatusSeeOther {
		t.Errorf("partial refund: %d %s", r.status, r.body)
	}
	if _, refunded := fake.Totals(); refunded != 40000 {
		t.Errorf("refunded %d at the provider, want 40000", refunded)
	}
	captureDown.Store(false)
	if r := b.post(fmt.Sprintf("/panel/attention/%d/retry", sp.ID), nil); r.status != http.StatusSeeOther {
		t.Errorf("retry: %d", r.status)
	}
	if st := fake.Status(sp.ExternalID); st != "succeeded" {
		t.Errorf("checked again: the provider's payment is %s, want succeeded", st)
	}
	if r := b.post(fmt.Sprintf("/panel/bookings/%d/paid-in-salon", due.ID), nil); r.status != http.StatusSeeOther {
		t.Errorf("paid in the salon: %d", r.status)
	}
	if st := scalar[string](t, w, `SELECT status FROM bookings WHERE id = $1`, due.ID); st != "confirmed" {
		t.Errorf("paid in the salon: the booking is %s", st)
	}
	if st := scalar[string](t, w, `SELECT status FROM payment_sessions WHERE id = $1`, dp.ID); st != "canceling" {
		t.Errorf("paid in the salon: its online payment is %s, want canceling", st)
	}
	if a := b.get("/panel/attention"); strings.Contains(a.body, "data-kind=") {
		t.Errorf("still listed after the actions: %.600s", a.body)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM audit_log WHERE action IN ('payment_release', 'payment_refund', 'payment_retry', 'payment_paid_in_salon')`); n != 4 {
		t.Errorf("%d audit rows for 4 actions", n)
	}
	if a := b.get(fmt.Sprintf("/panel/bookings/%d", kept.ID)); !strings.Contains(a.body, `id="payment-history"`) || !strings.Contains(a.body, "возвращена салоном") {
		t.Errorf("the booking page lacks its payment's history")
	}
}

// TestOwnerSetsReceiptCodes: the settings page sets what the salon's
// fiscal receipts say; a code YooKassa does not know is refused, naming
// the field.
func TestOwnerSetsReceiptCodes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	if a := b.get("/panel/settings"); !strings.Contains(a.body, `id="receipts"`) || !strings.Contains(a.body, "без НДС") {
		t.Fatalf("the settings page has no receipts form: %.300s", a.body)
	}
	if a := b.post("/panel/settings/receipts", url.Values{"vat_code": {"4"}, "tax_system": {"2"}, "receipt_item": {"Стрижка"}}); a.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", a.status, a.body)
	}
	if got := scalar[string](t, w, `SELECT receipt_vat_code || ' ' || receipt_tax_system || ' ' || receipt_item FROM salons WHERE id = $1`, w.salon.ID); got != "4 2 Стрижка" {
		t.Errorf("saved %q", got)
	}
	if a := b.post("/panel/settings/receipts", url.Values{"vat_code": {"40"}, "tax_system": {"2"}}); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "vat_code") {
		t.Errorf("a VAT code YooKassa does not know: %d", a.status)
	}
}

// fieldErrorsOf is the list of refused fields on a page, for a message.
func fieldErrorsOf(page string) string {
	if i := strings.Index(page, `<ul class="errors"`); i >= 0 {
		if j := strings.Index(page[i:], "</ul>"); j >= 0 {
			return page[i : i+j]
		}
	}
	return "(no field errors shown)"
}

// A shift that ends before it starts is refused, in Russian, and nothing
// is saved (15:00 -> 10:00 was once a 19-hour night shift); a night shift
// is asked for with its box and shown as one.
func TestReversedShiftIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "desk@demo.test", booking.RoleAdmin)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Галина'`)
	day := w.today().AddDays(40) // beyond the demo's bookings
	before := snapshot(t, w, w.salon.ID)
	path := fmt.Sprintf("/panel/masters/%d/shifts", m)
	a := b.post(path, url.Values{"date": {day.String()}, "start": {"15:00"}, "end": {"10:00"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "конец раньше начала") ||
		!strings.Contains(a.body, "отметьте «Заканчивается на следующий день»") || strings.Contains(a.body, "+02:00") {
		t.Fatalf("15:00 -> 10:00: %d %s", a.status, fieldErrorsOf(a.body))
	}
	if snapshot(t, w, w.salon.ID) != before {
		t.Fatal("a refused shift changed the salon")
	}
	// The form comes back as it was typed (a quick fix and save changes
	// the day typed, not today), naming the field refused.
	kept := func(a answer, fields ...string) {
		t.Helper()
		for i := 0; i+1 < len(fields); i += 2 {
			if !regexp.MustCompile(`name="` + fields[i] + `" value="` + regexp.QuoteMeta(fields[i+1]) + `"`).MatchString(a.body) {
				t.Errorf("the form lost %s=%s", fields[i], fields[i+1])
			}
		}
	}
	kept(a, "date", day.String(), "start", "15:00", "end", "10:00")
	a = b.post(path, url.Values{"date": {day.String()}, "start": {"10:00"}, "end": {"18:00"}, "break_start": {"14:00"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(fieldErrorsOf(a.body), "<b>Конец перерыва</b>: обязательное поле") {
		t.Errorf("a break with no end: %d %s", a.status, fieldErrorsOf(a.body))
	}
	kept(a, "date", day.String(), "start", "10:00", "end", "18:00", "break_start", "14:00")
	a = b.post(path, url.Values{"date": {day.String()}, "start": {"10:00"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(fieldErrorsOf(a.body), "<b>Конец</b>: обязательное поле") {
		t.Errorf("a shift with no end: %d %s", a.status, fieldErrorsOf(a.body))
	}
	a = b.post(path, url.Values{"date": {day.String()}, "start": {"08:00"}, "end": {"03:00"}, "next_day": {"1"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "длиннее 16 часов") {
		t.Fatalf("08:00 -> 03:00 the next day: %d %s", a.status, fieldErrorsOf(a.body))
	}
	a = b.post(path, url.Values{"date": {day.String()}, "start": {"20:00"}, "end": {"02:00"}, "next_day": {"1"}})
	if a.status >= 400 {
		t.Fatalf("a night shift: %d %s", a.status, fieldErrorsOf(a.body))
	}
	hours := scalar[float64](t, w, `SELECT extract(epoch FROM ends_at - starts_at) / 3600 FROM shifts WHERE master_id = $1 AND work_date = $2`, m, day.String())
	if hours != 6 {
		t.Fatalf("20:00 to 02:00 the next day lasts %v h", hours)
	}
	// The weekly template refuses a reversed day by its weekday's name.
	form := url.Values{"from": {day.AddDays(1).String()}, "to": {day.AddDays(7).String()}, "start_3": {"18:00"}, "end_3": {"09:00"}}
	a = b.post(fmt.Sprintf("/panel/masters/%d/template", m), form)
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "конец раньше начала") {
		t.Fatalf("template with a reversed Wednesday: %d %s", a.status, fieldErrorsOf(a.body))
	}
}

// The new booking form knows a client by the phone however it is typed:
// it fills in their name (not over one typed) and shows their notes; the
// notes (an allergy) are on the booking page and the day's card too.
func TestKnownClientAndTheirNotes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "desk@demo.test", booking.RoleAdmin)
	id := scalar[int64](t, w, `UPDATE clients SET notes = 'аллергия на аммиак' WHERE name = 'Мария' RETURNING id`)
	a := b.get("/panel/clients/by-phone?" + url.Values{"phone": {"8 (999) 000-01-01"}, "name": {""}}.Encode())
	if a.status != 200 || !strings.Contains(a.body, `id="name-field" hx-swap-oob="true"`) || !strings.Contains(a.body, `value="Мария"`) ||
		!strings.Contains(a.body, "аллергия на аммиак") {
		t.Fatalf("a known phone: %d %s", a.status, a.body)
	}
	a = b.get("/panel/clients/by-phone?" + url.Values{"phone": {"+7 999 000-01-01"}, "name": {"Маша"}}.Encode())
	if strings.Contains(a.body, `id="name-field" hx-swap-oob`) || !strings.Contains(a.body, "Мария") {
		t.Errorf("a typed name was replaced: %s", a.body)
	}
	if a := b.get("/panel/clients/by-phone?phone=%2B79990009999&name="); a.status != 200 || strings.Contains(a.body, `id="name-field" hx-swap-oob`) ||
		!strings.Contains(a.body, "создаётся") {
		t.Errorf("an unknown phone: %d %s", a.status, a.body)
	}
	// The name filled in from a phone is marked so; the phone changed to
	// one the salon does not know, it goes (a new client would have been
	// made under it); one typed over it stays.
	if a := b.get("/panel/clients/by-phone?" + url.Values{"phone": {"8 (999) 000-01-01"}, "name": {""}}.Encode()); !strings.Contains(a.body,
		`<input type="hidden" name="name_auto" value="Мария">`) {
		t.Errorf("a name filled in is not marked: %s", a.body)
	}
	if a := b.get("/panel/clients/by-phone?" + url.Values{"phone": {"+79990009999"}, "name": {"Мария"}, "name_auto": {"Мария"}}.Encode()); !strings.Contains(a.body,
		`<label id="name-field" hx-swap-oob="true">Имя <input type="text" name="name" value="" maxlength="100" required></label>`) {
		t.Errorf("the phone changed to an unknown one, the name filled in stays: %s", a.body)
	}
	if a := b.get("/panel/clients/by-phone?" + url.Values{"phone": {"+79990009999"}, "name": {"Маша"}, "name_auto": {"Мария"}}.Encode()); strings.Contains(a.body,
		`id="name-field" hx-swap-oob`) {
		t.Errorf("a name typed over the one filled in is replaced: %s", a.body)
	}
	// The form drawn again (refused), or opened for the client, keeps it so.
	marked := `<input type="hidden" name="name_auto" value="Мария">`
	if a := b.post("/panel/bookings", url.Values{"phone": {"+79990000101"}, "name": {"Мария"}, "name_auto": {"Мария"}, "date": {"2026-13-01"},
		"time": {"10:00"}}); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, marked) {
		t.Errorf("a refused form loses the name's mark: %d", a.status)
	}
	if a := b.get(fmt.Sprintf("/panel/bookings/new?client=%d", id)); !strings.Contains(a.body, marked) {
		t.Errorf("the form for the client does not mark the name filled in")
	}
	bk := scalar[int64](t, w, `SELECT id FROM bookings WHERE client_id = $1 ORDER BY starts_at DESC LIMIT 1`, id)
	if a := b.get(fmt.Sprintf("/panel/bookings/%d", bk)); !strings.Contains(a.body, `id="client-notes">аллергия на аммиак<`) {
		t.Errorf("the booking page does not show the client's notes")
	}
	day := scalar[time.Time](t, w, `SELECT starts_at FROM bookings WHERE id = $1`, bk).In(w.salon.Location())
	if a := b.get("/panel/day/" + day.Format("2006-01-02")); !strings.Contains(a.body, "⚠ аллергия на аммиак") {
		t.Errorf("the day's card does not show the client's notes")
	}
	// On a day she is booked, the form says when and with whom (a second
	// booking at that time is the desk's to notice).
	if bkStatus := scalar[string](t, w, `SELECT status FROM bookings WHERE id = $1`, bk); bkStatus == "confirmed" || bkStatus == "pending" {
		a := b.get("/panel/clients/by-phone?" + url.Values{"phone": {"+79990000101"}, "date": {day.Format("2006-01-02")}}.Encode())
		line := regexp.MustCompile(`<p class="hint" id="same-day">Записи клиента в этот день: [^<]*</p>`).FindString(a.body)
		if want := " " + day.Format("15:04") + "–"; !strings.Contains(line, want) {
			t.Errorf("the form for a day she is booked lacks %q: %s", want, a.body)
		}
	}
}

// A new salon's panel says what is left before clients can book, and
// where; the online booking page gives the link, the code for a site, a
// QR code of the link, and the bot's link when a bot runs.
func TestANewSalonGoesLive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := bookingtest.System()
	s := w.Salon(t, booking.Salon{Slug: "fresh", Name: "Fresh", Locale: "ru"})
	b := w.user(s.ID, "owner@fresh.test", booking.RoleOwner)
	steps := func() string {
		a := b.get("/panel/")
		i := strings.Index(a.body, `id="setup"`)
		if i < 0 {
			return ""
		}
		return a.body[i : i+strings.Index(a.body[i:], "</section>")]
	}
	if got := steps(); !strings.Contains(got, "Добавьте услуги") || strings.Contains(got, "✓") {
		t.Fatalf("an empty salon's checklist: %q", got)
	}
	if a := b.post("/panel/services", url.Values{"name": {"Стрижка"}, "duration": {"60"}, "price": {"2 500 ₽"}}); a.status >= 400 {
		t.Fatalf("add a service: %d %s", a.status, fieldErrorsOf(a.body))
	}
	if a := b.post("/panel/masters", url.Values{"name": {"Анна"}}); a.status >= 400 {
		t.Fatalf("add a master: %d", a.status)
	}
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1`, s.ID)
	if n := scalar[int64](t, w, `SELECT count(*) FROM master_services WHERE master_id = $1`, m); n != 1 {
		t.Fatalf("a new master does %d services, want every one (1)", n)
	}
	if got := steps(); strings.Count(got, "✓") != 2 || !strings.Contains(got, fmt.Sprintf("/panel/masters/%d#template", m)) {
		t.Fatalf("after a service and a master: %q", got)
	}
	form := url.Values{"from": {w.today().String()}, "to": {w.today().AddDays(27).String()}}
	for d := range 7 {
		form.Set(fmt.Sprintf("start_%d", d), "10:00")
		form.Set(fmt.Sprintf("end_%d", d), "20:00")
	}
	if a := b.post(fmt.Sprintf("/panel/masters/%d/template", m), form); a.status >= 400 {
		t.Fatalf("working hours: %d %s", a.status, fieldErrorsOf(a.body))
	}
	if got := steps(); got != "" {
		t.Fatalf("a salon that can take bookings still shows the checklist: %q", got)
	}
	if st, err := w.Svc.SetupOf(ctx, s.ID); err != nil || !st.Ready() {
		t.Fatalf("setup %+v %v", st, err)
	}
	a := b.get("/panel/online")
	if a.status != 200 || !strings.Contains(a.body, w.base+"/w/fresh") || !strings.Contains(a.body, html.EscapeString(`data-salon="fresh"`)) ||
		!strings.Contains(a.body, `src="/panel/online/qr.svg"`) {
		t.Fatalf("online booking page: %d", a.status)
	}
	for _, f := range []string{"svg", "png"} {
		q := b.get("/panel/online/qr." + f + "?download=1")
		if q.status != 200 || !strings.Contains(q.header.Get("Content-Disposition"), "fresh-booking-qr."+f) || len(q.body) < 200 {
			t.Fatalf("qr.%s: %d %v %d bytes", f, q.status, q.header, len(q.body))
		}
	}
	if q := b.get("/panel/online/qr.png"); !strings.HasPrefix(q.body, "\x89PNG") {
		t.Fatal("qr.png is not a PNG")
	}
}

// A booking's history and the audit log read as sentences with names and
// the salon's time: no internal columns, ids or <nil>.
func TestHistoryAndAuditReadAsSentences(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	day := w.today().AddDays(30)
	sv := w.Service(t, w.salon, booking.SalonService{Name: "Укладка", DurationMin: 30})
	anna, err := w.Svc.CreateMaster(ctx, w.salon.ID, booking.Master{Name: "Анна Смирнова"}, booking.Offer{ServiceID: sv.ID})
	if err != nil {
		t.Fatal(err)
	}
	dima, err := w.Svc.CreateMaster(ctx, w.salon.ID, booking.Master{Name: "Дмитрий Волков"}, booking.Offer{ServiceID: sv.ID})
	if err != nil {
		t.Fatal(err)
	}
	w.Shift(t, w.salon, anna, day, 1, "10:00", "20:00")
	w.Shift(t, w.salon, dima, day, 1, "10:00", "20:00")
	bk, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv.ID,
		MasterID: dima.ID, StartsAt: bookingtest.At(w.salon, day, "12:15"), Client: booking.ClientInput{Name: "Ольга", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if a := b.post(fmt.Sprintf("/panel/bookings/%d/reschedule", bk.ID), url.Values{"date": {day.String()}, "time": {"11:30"},
		"master": {fmt.Sprint(anna.ID)}}); a.status >= 400 {
		t.Fatalf("move: %d %s", a.status, fieldErrorsOf(a.body))
	}
	page := html.UnescapeString(b.get(fmt.Sprintf("/panel/bookings/%d", bk.ID)).body)
	if !strings.Contains(page, "Перенесена: Дмитрий Волков "+day.String()[8:10]+"."+day.String()[5:7]+" 12:15 → Анна Смирнова ") ||
		!strings.Contains(page, "<b>Создана</b> · онлайн-запись") {
		i := strings.Index(page, `class="history"`)
		t.Errorf("history: %s", page[i:min(len(page), i+800)])
	}
	// One service of a visit moved: the history names it, and its times.
	gloss := w.Service(t, w.salon, booking.SalonService{Name: "Блеск", DurationMin: 30})
	for _, m := range []*booking.Master{anna, dima} {
		if err := w.Svc.SetOffers(ctx, w.salon.ID, m.ID, []booking.Offer{{ServiceID: sv.ID}, {ServiceID: gloss.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	visit, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		Items:    []booking.VisitItem{{ServiceID: sv.ID, MasterID: anna.ID}, {ServiceID: gloss.ID, MasterID: anna.ID}},
		StartsAt: bookingtest.At(w.salon, day, "15:00"), Client: booking.ClientInput{Name: "Ольга", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if a := b.post(fmt.Sprintf("/panel/bookings/%d/reschedule", visit.Segments[1].ID), url.Values{"date": {day.String()}, "time": {"16:00"},
		"master": {fmt.Sprint(dima.ID)}, "only": {"1"}}); a.status >= 400 {
		t.Fatalf("move the gloss: %d %s", a.status, fieldErrorsOf(a.body))
	}
	// The visit's page shows the client's wait the move made.
	if page := html.UnescapeString(b.get(fmt.Sprintf("/panel/bookings/%d", visit.ID)).body); !strings.Contains(page, "(клиент ждёт 15:30–16:00)") {
		t.Errorf("the visit's page does not show the wait: %s", regexp.MustCompile(`(?s)<ol class="visit".*?</ol>`).FindString(page))
	}
	// (On the visit's page, and on the moved service's own, once; a
	// cancellation of the visit, recorded on each service, once too.)
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.BySystem()), booking.CancelRequest{SalonID: w.salon.ID, BookingID: visit.ID}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{visit.ID, visit.Segments[1].ID} {
		page = html.UnescapeString(b.get(fmt.Sprintf("/panel/bookings/%d", id)).body)
		i := strings.Index(page, `class="history"`)
		history := page[i:min(len(page), i+2000)]
		if strings.Count(history, "Перенесена: Блеск, Анна Смирнова "+day.String()[8:10]+"."+day.String()[5:7]+" 15:30 → Дмитрий Волков ") != 1 ||
			strings.Count(history, "<b>Отменена") != 1 {
			t.Errorf("the history of booking %d, a visit with one service moved, then cancelled: %s", id, history)
		}
	}
	audit := html.UnescapeString(b.get("/panel/audit?entity=booking").body)
	for _, bad := range []string{"<nil>", "master_id", "salon_id", "service_id", "starts_at", "map["} {
		if strings.Contains(audit, bad) {
			t.Errorf("the audit log shows %q", bad)
		}
	}
	if !strings.Contains(audit, "Мастер: Дмитрий Волков → Анна Смирнова") {
		i := strings.Index(audit, `id="audit"`)
		t.Errorf("audit: %s", audit[i:min(len(audit), i+1500)])
	}
}

// The import page lists each kind's columns with an example, offers each
// kind's template, and an owner exports each kind as a Russian Excel opens
// it (a BOM and semicolons); an admin may not export.
func TestImportPageTemplatesAndExports(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	page := b.get("/panel/import").body
	for _, want := range []string{`id="format-services"`, `id="format-bookings"`, "<code>длительность</code>", "Стрижка", `/panel/import/template/schedule`, `/panel/export/clients`} {
		if !strings.Contains(page, want) {
			t.Errorf("the import page lacks %q", want)
		}
	}
	for _, kind := range []string{"services", "masters", "schedule", "clients", "bookings"} {
		tpl := b.get("/panel/import/template/" + kind)
		if tpl.status != 200 || !strings.HasPrefix(tpl.body, "\ufeff") || !strings.Contains(strings.SplitN(tpl.body, "\n", 2)[0], ";") ||
			!strings.Contains(tpl.header.Get("Content-Disposition"), kind+"-template.csv") {
			t.Errorf("%s template: %d %v %q", kind, tpl.status, tpl.header, tpl.body)
		}
		ex := b.get("/panel/export/" + kind)
		if ex.status != 200 || !strings.HasPrefix(ex.body, "\ufeff") || strings.Count(ex.body, "\n") < 2 {
			t.Errorf("%s export: %d %q", kind, ex.status, ex.body)
		}
	}
	admin := w.user(w.salon.ID, "desk@demo.test", booking.RoleAdmin)
	if a := admin.get("/panel/export/clients"); a.status != 403 {
		t.Errorf("an admin's export of the clients: %d", a.status)
	}
}

// The weekly template for every master: the salon's hours copied to each
// active master at once; refused whole when a booking of any master would
// fall outside (naming it), and then nobody's hours change.
func TestTemplateForEveryMaster(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "desk@demo.test", booking.RoleAdmin)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	far := w.today().AddDays(60)
	form := url.Values{"from": {far.String()}, "to": {far.AddDays(6).String()}, "all_masters": {"1"}}
	for d := range 7 {
		form.Set(fmt.Sprintf("start_%d", d), "09:00")
		form.Set(fmt.Sprintf("end_%d", d), "21:00")
	}
	if a := b.post(fmt.Sprintf("/panel/masters/%d/template", m), form); a.status >= 400 {
		t.Fatalf("every master: %d %s", a.status, fieldErrorsOf(a.body))
	}
	active := scalar[int64](t, w, `SELECT count(*) FROM masters WHERE salon_id = $1 AND active`, w.salon.ID)
	if got := scalar[int64](t, w, `SELECT count(*) FROM shifts WHERE salon_id = $1 AND work_date BETWEEN $2 AND $3`,
		w.salon.ID, far.String(), far.AddDays(6).String()); got != active*7 {
		t.Fatalf("%d shifts, want 7 for each of %d masters", got, active)
	}
	// Over the demo's bookings of today and tomorrow: refused whole.
	before := snapshot(t, w, w.salon.ID)
	form.Set("from", w.today().String())
	form.Set("to", w.today().AddDays(6).String())
	for d := range 7 {
		form.Set(fmt.Sprintf("start_%d", d), "10:00")
		form.Set(fmt.Sprintf("end_%d", d), "11:00")
	}
	a := b.post(fmt.Sprintf("/panel/masters/%d/template", m), form)
	if a.status != http.StatusConflict || !strings.Contains(a.body, `id="lost"`) {
		t.Fatalf("every master over bookings: %d", a.status)
	}
	// Each as the reader writes its time, with its service and client,
	// and what to do about them.
	if !regexp.MustCompile(`#\d+ \d\d\.\d\d\.\d{4} \d\d:\d\d</a> · [^<·]+ · [^<·]+</li>`).MatchString(a.body) ||
		!strings.Contains(a.body, "Сначала перенесите или отмените их.") {
		t.Errorf("the bookings left outside working hours: %s", a.body)
	}
	if snapshot(t, w, w.salon.ID) != before {
		t.Error("a refused template for every master changed the salon")
	}
}

// An owner uploads a zip of several kinds: it is checked as one (the
// masters find the services the same zip creates), then applied.
func TestUploadASetAsAZip(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{
		"мастера.csv": "мастер;телефон;услуги\nНовый мастер;;Новая услуга\n",
		"услуги.csv":  "название;длительность;цена\nНовая услуга;45;1 800\n",
	} {
		f, _ := zw.Create(name)
		_, _ = io.WriteString(f, body)
	}
	_ = zw.Close()
	a := b.upload("all", "salon.zip", zb.String())
	if !strings.Contains(a.body, `id="apply"`) || !strings.Contains(a.body, `id="created">2<`) || !strings.Contains(a.body, `id="rejected">0<`) {
		t.Fatalf("the set's dry run: %.2000s", a.body[strings.Index(a.body, `id="job"`):])
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM masters WHERE name = 'Новый мастер'`); n != 0 {
		t.Fatal("the dry run wrote")
	}
	job := regexp.MustCompile(`/panel/import/([0-9a-f]+)/apply`).FindStringSubmatch(a.body)
	b.post("/panel/import/"+job[1]+"/apply", nil)
	bookingtest.WaitFor(t, 20*time.Second, "the set to be applied", func() bool {
		return scalar[int64](t, w, `SELECT count(*) FROM master_services ms JOIN masters m ON m.id = ms.master_id
			JOIN services s ON s.id = ms.service_id WHERE m.name = 'Новый мастер' AND s.name = 'Новая услуга'`) == 1
	})
	// Not a zip: a clear refusal, in Russian.
	if a := b.upload("all", "salon.zip", "name\nx\n"); !strings.Contains(a.body, "это не архив .zip") {
		t.Errorf("a set that is not a zip: %.800s", a.body[strings.Index(a.body, `id="job"`):])
	}
}

// The new booking form's services say how long they take with the chosen
// master: their own duration.
func TestNewBookingShowsTheMastersOwnDuration(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	sv := w.Service(t, w.salon, booking.SalonService{Name: "Долгая укладка", DurationMin: 60, Price: 200000})
	slow, err := w.Svc.CreateMaster(ctx, w.salon.ID, booking.Master{Name: "Неспешная"}, booking.Offer{ServiceID: sv.ID, DurationMin: 90, Price: 250000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.CreateMaster(ctx, w.salon.ID, booking.Master{Name: "Быстрая"}, booking.Offer{ServiceID: sv.ID}); err != nil {
		t.Fatal(err)
	}
	// (And what it costs: a caller asks.)
	page := strings.ReplaceAll(html.UnescapeString(b.get(fmt.Sprintf("/panel/bookings/new?master=%d", slow.ID)).body), "\u00a0", " ")
	if !strings.Contains(page, ">Долгая укладка · 90 мин · 2 500 ₽<") {
		t.Errorf("with the slow master chosen the service does not say 90 min and 2 500 ₽")
	}
	page = strings.ReplaceAll(html.UnescapeString(b.get("/panel/bookings/new").body), "\u00a0", " ")
	if !strings.Contains(page, ">Долгая укладка · 60–90 мин · 2 000 ₽–2 500 ₽<") ||
		!strings.Contains(page, fmt.Sprintf(`data-terms="%d=90=2 500 ₽`, slow.ID)) && !strings.Contains(page, fmt.Sprintf(`|%d=90=2 500 ₽`, slow.ID)) {
		t.Errorf("without a master the service does not give its ranges and each master's minutes and price")
	}
}

// TestASlowUploadIsNotCut: a file that takes longer to arrive than the
// server gives any other request's body (the server's read timeout, 1 s
// here) is still taken, within the upload's own deadline; a form as slow
// on another page is cut at the server's.
func TestASlowUploadIsNotCut(t *testing.T) {
	t.Parallel()
	w := newWorldApp(t, bookingtest.New(t), func(app *fiber.App) { app.Server().ReadTimeout = time.Second })
	b := w.owner()
	// slowly posts body in chunks, 700 ms apart.
	slowly := func(path, contentType string, body []byte, chunks int) (*http.Response, error) {
		pr, pw := io.Pipe()
		go func() {
			step := len(body)/chunks + 1
			tick := time.NewTicker(700 * time.Millisecond) // (a client's pace, not a wait for a condition)
			defer tick.Stop()
			for i := 0; i < len(body); i += step {
				<-tick.C
				if _, err := pw.Write(body[i:min(i+step, len(body))]); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", w.base+path, pr)
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", contentType)
		return b.http.Do(req)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", b.csrf)
	_ = mw.WriteField("kind", "schedule")
	fw, _ := mw.CreateFormFile("file", "s.csv")
	_, _ = io.WriteString(fw, "master,date,start,end\nВера,2026-04-01,10:00,18:00\n")
	mw.Close()
	began := time.Now()
	resp, err := slowly("/panel/import", mw.FormDataContentType(), buf.Bytes(), 4)
	if err != nil {
		t.Fatalf("a slow upload: %v after %v", err, time.Since(began))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/panel/import/") || time.Since(began) < 2*time.Second {
		t.Fatalf("a slow upload: %d to %q after %v", resp.StatusCode, resp.Header.Get("Location"), time.Since(began))
	}
	// Anyone else's upload, as slow, keeps the server's read timeout, not
	// the upload's minutes.
	anon := w.client()
	b.http, b.csrf = anon.http, ""
	began = time.Now()
	if resp, err := slowly("/panel/import", mw.FormDataContentType(), bytes.Repeat(buf.Bytes(), 4), 12); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/panel/import/") {
			t.Fatalf("an anonymous upload: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("an anonymous slow upload held its connection %v", took)
	}
	b = w.owner()
	form := []byte(url.Values{"csrf": {b.csrf}, "name": {"Slow"}, "notes": {strings.Repeat("x", 400)}}.Encode())
	if resp, err := slowly("/panel/clients/1", "application/x-www-form-urlencoded", form, 4); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("a form as slow elsewhere: %d, want it cut", resp.StatusCode)
		}
	}
}

// TestDatesAsTheReaderWritesThem: a booking's page says when it is and
// when it was booked as its reader writes dates: 05.03.2026 in Russian,
// 5 Mar 2026 in English (where 05.03 reads as May 3rd), never ISO.
func TestDatesAsTheReaderWritesThem(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND active ORDER BY id LIMIT 1`, w.salon.ID)
	master := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 ORDER BY master_id LIMIT 1`, haircut)
	day := w.today().AddDays(3)
	w.Shift(t, w.salon, &booking.Master{ID: master}, day, 1, "10:00", "18:00")
	b, err := w.Svc.Book(bookingtest.System(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: haircut, MasterID: master,
		StartsAt: bookingtest.At(w.salon, day, "11:00"), Client: booking.ClientInput{Name: "Dates", Phone: "+79995556079"}})
	if err != nil {
		t.Fatal(err)
	}
	start := bookingtest.At(w.salon, day, "11:00").In(w.salon.Location())
	o := w.owner()
	page := fmt.Sprintf("/panel/bookings/%d", b.ID)
	ru := o.get(page)
	if !strings.Contains(ru.body, `<dd id="when">`+start.Format("02.01.2006 15:04")+"–") {
		t.Errorf("the Russian booking page does not say %s", start.Format("02.01.2006 15:04"))
	}
	o.do("POST", "/panel/lang", url.Values{"lang": {"en"}, "csrf": {o.csrf}}, "Referer", w.base+page)
	en := o.get(page)
	if !strings.Contains(en.body, `<dd id="when">`+start.Format("2 Jan 2006, 15:04")+"–") || strings.Contains(en.body, start.Format("02.01.2006")) ||
		strings.Contains(en.body, start.Format("2006-01-02 15:04")) {
		t.Errorf("the English booking page does not say %s alone", start.Format("2 Jan 2006, 15:04"))
	}
}

// TestTheZoneListStartsWithTheSalonsCountry: the settings' time zones come
// first those of the salon's country (Russia's for the demo salon; the
// United Kingdom's once it moved to London), then the rest by region, in
// the reader's words; saving the form keeps the zone.
func TestTheZoneListStartsWithTheSalonsCountry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	groups := regexp.MustCompile(`<optgroup label="([^"]+)">(.*?)</optgroup>`)
	first := func(want string, zones ...string) string {
		t.Helper()
		a := b.get("/panel/settings")
		found := groups.FindAllStringSubmatch(a.body, -1)
		if len(found) < 5 || found[0][1] != want {
			t.Fatalf("the zone list's groups: %d, the first %q", len(found), found)
		}
		for _, z := range zones {
			if !strings.Contains(found[0][2], `value="`+z+`"`) {
				t.Errorf("%s is not in the first group %q", z, found[0][1])
			}
		}
		if strings.Count(a.body, `<option value="Europe/London"`) != 1 {
			t.Errorf("Europe/London is listed %d times", strings.Count(a.body, `<option value="Europe/London"`))
		}
		return a.body
	}
	page := first("Страна салона", "Europe/Moscow", "Asia/Vladivostok", "Europe/Kaliningrad")
	// West to east, as Russians list their zones.
	if k, m, v := strings.Index(page, `"Europe/Kaliningrad"`), strings.Index(page, `"Europe/Moscow"`), strings.Index(page, `"Asia/Vladivostok"`); k > m || m > v {
		t.Errorf("the country's zones are not from west to east: %d %d %d", k, m, v)
	}
	if !strings.Contains(page, `<optgroup label="Европа">`) || !strings.Contains(page, `<optgroup label="Америка">`) {
		t.Errorf("the regions are not in Russian")
	}
	// The regions after it in the order of the reader's alphabet.
	var labels []string
	for _, g := range groups.FindAllStringSubmatch(page, -1)[1:] {
		labels = append(labels, g[1])
	}
	if !slices.IsSorted(labels[:len(labels)-1]) || labels[0] != "Австралия" || labels[len(labels)-1] != "UTC" {
		t.Errorf("the regions are not in Russian alphabetical order: %q", labels)
	}
	if _, err := w.Pool.Exec(context.Background(), `UPDATE salons SET timezone = 'Europe/London', country = 'GB', catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	b.do("POST", "/panel/lang", url.Values{"lang": {"en"}, "csrf": {b.csrf}}, "Referer", w.base+"/panel/settings")
	page = first("The salon&#39;s country", "Europe/London")
	if strings.Contains(page, `<optgroup label="zone `) || !strings.Contains(page, `<optgroup label="Indian Ocean">`) {
		t.Errorf("the regions are not in English")
	}
	if !strings.Contains(page, `<option value="Europe/London" selected>`) {
		t.Errorf("the salon's zone is not chosen")
	}
	// A name the list does not have is kept, chosen, in a group of its own.
	if _, err := w.Pool.Exec(context.Background(), `UPDATE salons SET timezone = 'Etc/GMT-3', catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	page = first("The salon&#39;s country", "Europe/London")
	if !strings.Contains(page, `<optgroup label="Other"><option value="Etc/GMT-3" selected>Etc/GMT-3</option></optgroup>`) {
		t.Errorf("the salon's zone, one the list does not have, is not kept in its own group")
	}
}

// TestAnImportOfOnlyBadRowsListsEveryColumn: a file whose rows are all
// rejected lists each bad column of each row (a line each), counts the
// rows once, and offers nothing to apply.
func TestAnImportOfOnlyBadRowsListsEveryColumn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	a := b.upload("services", "s.csv", "название;длительность;цена\nМаникюр;час;бесплатно\nПедикюр;0;100\n")
	if !strings.Contains(a.body, `id="rejected">2<`) || strings.Contains(a.body, `id="apply"`) || !strings.Contains(a.body, `id="nothing-to-apply"`) {
		t.Errorf("all rows rejected: %.3000s", a.body)
	}
	rows := regexp.MustCompile(`<tr><td[^>]*>(\d+)</td><td[^>]*>[^<]*</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>`).FindAllStringSubmatch(a.body, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+" "+r[2]+" "+r[3])
	}
	if want := []string{"2 длительность час", "2 цена бесплатно", "3 длительность 0"}; !slices.Equal(got, want) {
		t.Errorf("the rejected rows: %q, want %q", got, want)
	}
}

// TestTheClientsListSaysTheLastVisitAndTheNext: a visit that took place is
// the client's last; a booking still to come is their next, not their
// "last visit"; a cancelled one is neither. On the salon's clock, as the
// other pages write dates.
func TestTheClientsListSaysTheLastVisitAndTheNext(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := context.Background()
	owner, sv, m, day := w.ownerWithMaster(t, booking.SalonService{Name: "Укладка", DurationMin: 30, Price: 150000})
	book := func(name, at string) *booking.Booking {
		t.Helper()
		bk, err := w.Svc.Book(owner, booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, day, at),
			Client: booking.ClientInput{Name: name, Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		return bk
	}
	gone, came := book("Отменившая", "10:00"), book("Бывшая", "12:00")
	book("Придущая", "11:00")
	if _, err := w.Svc.Cancel(owner, booking.CancelRequest{SalonID: w.salon.ID, BookingID: gone.ID, Reason: "передумала", ForClient: true, Stated: true}); err != nil {
		t.Fatal(err)
	}
	// (A visit of last week that took place, booked the week before; the
	// cancelled booking made a month ago.)
	if _, err := w.Pool.Exec(ctx, `UPDATE bookings SET starts_at = starts_at - interval '9 days', status = 'completed',
		created_at = created_at - interval '16 days' WHERE id = $1`, came.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE bookings SET created_at = created_at - interval '30 days' WHERE id = $1`, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE clients SET created_at = created_at - interval '30 days' WHERE id = ANY ($1)`,
		[]int64{gone.ClientID, came.ClientID}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.get("/panel/clients").body)
	// The latest seen first: the one who just booked, the one who came
	// last week, the one who booked a month ago (not by how far ahead a
	// booking is).
	if i, j, k := strings.Index(page, ">Придущая<"), strings.Index(page, ">Бывшая<"), strings.Index(page, ">Отменившая<"); !(i < j && j < k) {
		t.Errorf("the clients list orders the new booking, last week's visit and a month-old booking at %d, %d, %d", i, j, k)
	}
	row := func(name string) string {
		t.Helper()
		i := strings.Index(page, ">"+name+"<")
		if i < 0 {
			t.Fatalf("%s is not listed", name)
		}
		return page[i : i+strings.Index(page[i:], "</tr>")]
	}
	cell := regexp.MustCompile(`data-label="([^"]+)">([^<]*)<`)
	cells := func(name string) map[string]string {
		out := map[string]string{}
		for _, c := range cell.FindAllStringSubmatch(row(name), -1) {
			out[c[1]] = c[2]
		}
		return out
	}
	lastDay := day.AddDays(-9)
	for name, want := range map[string][2]string{
		"Отменившая": {"—", "—"},
		"Придущая":   {"—", fmt.Sprintf("%02d.%02d.%d 11:00", day.Day, day.Month, day.Year)},
		"Бывшая":     {fmt.Sprintf("%02d.%02d.%d", lastDay.Day, lastDay.Month, lastDay.Year), "—"},
	} {
		if c := cells(name); c["Последний визит"] != want[0] || c["Следующая запись"] != want[1] {
			t.Errorf("%s: last visit %q, next booking %q; want %q and %q", name, c["Последний визит"], c["Следующая запись"], want[0], want[1])
		}
	}
}

// TestAMoveSaysWhoAskedForIt: the desk says who asks to move a booking,
// and its history keeps it, as a cancellation's does.
func TestAMoveSaysWhoAskedForIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	owner, sv, m, day := w.ownerWithMaster(t, booking.SalonService{Name: "Укладка", DurationMin: 30, Price: 150000})
	for _, c := range []struct{ asked, want string }{{"client", "Перенесена по просьбе клиента: "}, {"salon", "Перенесена по решению салона: "}} {
		bk, err := w.Svc.Book(owner, booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, day, "10:00"),
			Client: booking.ClientInput{Name: "Вера", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		if a := b.post(fmt.Sprintf("/panel/bookings/%d/reschedule", bk.ID), url.Values{"date": {day.String()}, "time": {"14:15"}, "asked": {c.asked}}); a.status != http.StatusSeeOther {
			t.Fatalf("the move asked by the %s: %d %s", c.asked, a.status, fieldErrorsOf(a.body))
		}
		if page := html.UnescapeString(b.get(fmt.Sprintf("/panel/bookings/%d", bk.ID)).body); !strings.Contains(page, c.want) {
			t.Errorf("the history of a move asked by the %s lacks %q", c.asked, c.want)
		}
		if _, err := w.Svc.Cancel(owner, booking.CancelRequest{SalonID: w.salon.ID, BookingID: bk.ID, ForClient: true, Stated: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTheDayShowsTheMastersPauseAsBusy: a service's pause after it (its
// buffer) is the master's busy time: the grid drew it free, with a "+",
// and a booking there was refused as taken.
func TestTheDayShowsTheMastersPauseAsBusy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	owner, sv, m, day := w.ownerWithMaster(t, booking.SalonService{Name: "Тонирование", DurationMin: 60, BufferMin: 30, Price: 500000})
	if _, err := w.Svc.Book(owner, booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, day, "12:00"),
		Client: booking.ClientInput{Name: "Вера", Phone: bookingtest.Phone()}}); err != nil {
		t.Fatal(err)
	}
	page := b.get("/panel/day/" + day.String()).body
	free := func(hhmm string) bool {
		return strings.Contains(page, fmt.Sprintf(`href="/panel/bookings/new?at=%sT%s%%3A%s&amp;master=%d"`, day, hhmm[:2], hhmm[3:], m.ID))
	}
	for hhmm, want := range map[string]bool{"11:45": true, "13:00": false, "13:15": false, "13:30": true} {
		if free(hhmm) != want {
			t.Errorf("%s drawn free: %v, want %v", hhmm, free(hhmm), want)
		}
	}
	if !strings.Contains(page, `class="buffer"`) || !strings.Contains(page, "перерыв мастера после услуги") {
		t.Error("the pause after the service is not drawn as such")
	}
}

// ownerWithMaster is the demo salon's owner (as the core's caller), a
// service sv of the salon, a master who does it, and the day after
// tomorrow, on which the master works 10:00-18:00.
func (w *world) ownerWithMaster(t *testing.T, sv booking.SalonService) (context.Context, *booking.SalonService, *booking.Master, booking.Date) {
	t.Helper()
	owner := booking.As(context.Background(), booking.ByStaff(booking.User{ID: scalar[int64](t, w, `SELECT id FROM users WHERE email = $1`, demo.Email),
		SalonID: w.salon.ID, Role: booking.RoleOwner, Email: demo.Email}))
	svc, err := w.Svc.CreateService(owner, w.salon.ID, sv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Svc.CreateMaster(owner, w.salon.ID, booking.Master{Name: "Ника"}, booking.Offer{ServiceID: svc.ID})
	if err != nil {
		t.Fatal(err)
	}
	day := w.today().AddDays(2)
	w.Shift(t, w.salon, m, day, 1, "10:00", "18:00")
	return owner, svc, m, day
}

// TestAnAppliedTemplateReadsBack: a weekly template applied shows on the
// master's page as it was set, breaks included, in its list of days and in
// the template's form (helper-49 L12: no break, an empty form after
// saving, as if nothing were saved).
func TestAnAppliedTemplateReadsBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	_, _, m, _ := w.ownerWithMaster(t, booking.SalonService{Name: "Укладка", DurationMin: 30, Price: 150000})
	form := url.Values{"from": {w.today().String()}, "to": {w.today().AddDays(27).String()}}
	for _, d := range []string{"1", "2", "3", "4", "5", "6"} {
		form.Set("start_"+d, "10:00")
		form.Set("end_"+d, "19:00")
		form.Set("bs_"+d, "13:00")
		form.Set("be_"+d, "14:00")
	}
	if a := b.post(fmt.Sprintf("/panel/masters/%d/template", m.ID), form); a.status != http.StatusSeeOther {
		t.Fatalf("apply: %d %s", a.status, fieldErrorsOf(a.body))
	}
	page := b.get(fmt.Sprintf("/panel/masters/%d", m.ID)).body
	if !strings.Contains(page, "10:00–19:00 (перерыв 13:00–14:00)") {
		t.Error("the master's days do not say the break")
	}
	for name, want := range map[string]string{"start_1": "10:00", "end_6": "19:00", "bs_3": "13:00", "be_5": "14:00", "start_0": ""} {
		if !regexp.MustCompile(`name="` + name + `"[^>]*value="` + want + `"`).MatchString(page) {
			t.Errorf("the template's %s does not read %q", name, want)
		}
	}
}
