package panel_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/browsertest"
)

// TestBrowserBooksAndMovesAVisit: at the desk, a women's haircut with Anna
// and then a manicure with any master, booked as one visit from the new
// booking form; the day view draws its two segments as one visit; the
// booking's page lists both and moves the whole visit; axe-core on each
// page, screenshots at 390 px and on a desktop.
func TestBrowserBooksAndMovesAVisit(t *testing.T) {
	w := newWorld(t)
	ctxb := bookingtest.System()
	loc := w.salon.Location()
	id := func(table, name string) int64 {
		return scalar[int64](t, w, `SELECT id FROM `+table+` WHERE salon_id = $1 AND name = $2`, w.salon.ID, name)
	}
	anna, haircut, manicure := id("masters", "Анна"), id("services", "Женская стрижка"), id("services", "Маникюр")
	items := []booking.VisitItem{{ServiceID: haircut, MasterID: anna}, {ServiceID: manicure}}
	// Two free whole-visit times over the next week: one to book, one to move to.
	var free []booking.VisitSlot
	for d := w.today().AddDays(1); len(free) < 2 && d.Before(w.today().AddDays(9)); d = d.AddDays(1) {
		slots, err := w.Svc.VisitSlots(ctxb, booking.VisitSlotQuery{SalonID: w.salon.ID, Items: items, From: d})
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) > 0 {
			free = append(free, slots[0])
		}
	}
	if len(free) < 2 {
		t.Fatal("no two days with a free visit")
	}
	at := free[0].Start.In(loc)
	ctx := browsertest.Tab(t, 1280, 900)
	do(t, ctx, logIn(w)...)
	do(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/new?master=%d&at=%s", w.base, anna, at.Format("2006-01-02T15:04"))),
		chromedp.WaitVisible(css(`#new-booking`)),
		chromedp.SetValue(css(`#new-booking select[name=service]`), fmt.Sprint(haircut)),
		chromedp.SetValue(css(`#visit-more select[name=more_service]`), fmt.Sprint(manicure)),
		chromedp.SendKeys(css(`#new-booking input[name=phone]`), "+7 999 555-30-01"),
		chromedp.SendKeys(css(`#new-booking input[name=name]`), "Visit Client"),
	)
	browsertest.Axe(t, ctx, "the new booking form with a visit")
	shot(t, ctx, "visit-new-1280.png", 1280, 900)
	do(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Click(css(`#new-booking button[type=submit]`)), chromedp.WaitVisible(css(`#visit`)),
		chromedp.WaitVisible(css(`p.notice`)))
	head := bookingIDAt(t, ctx)
	if n := scalar[int64](t, w, `SELECT count(*) FROM bookings WHERE visit_id = $1 AND status = 'confirmed'`, head); n != 2 {
		t.Fatalf("%d segments of the visit booked, want 2", n)
	}
	list := value(t, ctx, chromedp.Text(css(`#visit`)))
	if !strings.Contains(list, "Женская стрижка") || !strings.Contains(list, "Маникюр") || !strings.Contains(list, "Анна") {
		t.Fatalf("the booking's page lists %q", list)
	}
	if got := value(t, ctx, chromedp.Text(css(`#price`))); !strings.Contains(got, "4") || !strings.Contains(got, "300") {
		t.Errorf("the visit's price reads %q, want 4 300 (2 500 + 1 800)", got)
	}
	browsertest.Axe(t, ctx, "a visit's page")
	shot(t, ctx, "visit-page-390.png", 390, 900)
	// The day view: two cells, each saying it is part of the visit.
	do(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.base+"/panel/day/"+at.Format("2006-01-02")),
		chromedp.WaitVisible(css(`#grid table.grid`)))
	marks := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#grid td.b.visit').length`))
	if marks != 2 {
		t.Fatalf("the day view marks %d cells as the visit's, want 2", marks)
	}
	shot(t, ctx, "visit-day-1280.png", 1280, 900)
	// Its first service alone may be moved: the form names that one.
	svc0 := scalar[string](t, w, `SELECT name FROM services WHERE id = $1`, free[0].Segments[0].ServiceID)
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, head)), chromedp.WaitVisible(css(`#reschedule-one`)))
	if got := textOf(t, ctx, "#reschedule-one h2"); got != "Перенести только: "+svc0 {
		t.Errorf("the one-service move's heading: %q, want its service, %s", got, svc0)
	}
	// Its second service's page: the visit's cutoff (of its first
	// service), and where its money and messages are.
	second := scalar[int64](t, w, `SELECT id FROM bookings WHERE visit_of = $1`, head)
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, head)), chromedp.WaitVisible(css(`#visit`)))
	until := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('p.hint')].map(function (p) { return p.textContent }).join('|')`))
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, second)), chromedp.WaitVisible(css(`#visit-head`)))
	if got := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('p.hint')].map(function (p) { return p.textContent }).join('|')`)); !strings.Contains(got, strings.Split(until, "|")[0]) {
		t.Errorf("the second service's page says %q, the visit's %q", got, until)
	}
	if href := value(t, ctx, chromedp.Evaluate[string](`document.querySelector('#visit-head a').getAttribute('href')`)); href != fmt.Sprintf("/panel/bookings/%d", head) {
		t.Errorf("the second service's page links %q", href)
	}
	// Move the whole visit.
	to := free[1].Start.In(loc)
	do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/panel/bookings/%d", w.base, head)), chromedp.WaitVisible(css(`#reschedule`)),
		chromedp.SetValue(css(`#reschedule input[name=date]`), to.Format("2006-01-02")),
		chromedp.SetValue(css(`#reschedule input[name=time]`), to.Format("15:04")))
	value(t, ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(function () {
		var s = document.querySelectorAll('#reschedule select[name=item_master]');
		s[0].value = '%d'; s[1].value = '%d'; return true; })()`, free[1].Segments[0].MasterID, free[1].Segments[1].MasterID)))
	do(t, ctx, chromedp.Click(css(`#reschedule button[type=submit]`)), chromedp.WaitVisible(css(`p.notice, .error, #alternatives`)))
	if msg := value(t, ctx, chromedp.Evaluate[string](`(document.querySelector('.error, #alternatives') || {}).innerText || ''`)); msg != "" {
		t.Fatalf("the move says %q", msg)
	}
	for i, sg := range free[1].Segments {
		if n := scalar[int64](t, w, `SELECT count(*) FROM bookings WHERE visit_id = $1 AND status = 'confirmed' AND service_id = $2 AND starts_at = $3`,
			head, sg.ServiceID, sg.Start); n != 1 {
			t.Fatalf("segment %d is not at %s after the move", i, sg.Start.In(loc))
		}
	}
}

// TestServicesDoneTogetherAreSetOnTheServicePage: an owner ticks a
// manicure as done at the same time as a pedicure; a visit of the two then
// starts both at once, by two masters.
func TestServicesDoneTogetherAreSetOnTheServicePage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctxb := bookingtest.System()
	o := w.owner()
	manicure := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Маникюр'`, w.salon.ID)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Женская стрижка'`, w.salon.ID)
	page := o.get(fmt.Sprintf("/panel/services/%d", manicure))
	if page.status != 200 || !strings.Contains(page.body, `id="together"`) {
		t.Fatalf("the service page: %d, no together form", page.status)
	}
	if a := o.post(fmt.Sprintf("/panel/services/%d/together", manicure), url.Values{"with": {fmt.Sprint(haircut)}}); a.status >= 400 {
		t.Fatalf("save: %d %s", a.status, a.body)
	}
	ids, err := w.Svc.TogetherWith(ctxb, w.salon.ID, haircut)
	if err != nil || len(ids) != 1 || ids[0] != manicure {
		t.Fatalf("together with the haircut: %v %v", ids, err)
	}
	slots, err := w.Svc.VisitSlots(ctxb, booking.VisitSlotQuery{SalonID: w.salon.ID, From: w.today().AddDays(1), Days: 7,
		Items: []booking.VisitItem{{ServiceID: haircut}, {ServiceID: manicure}}})
	if err != nil || len(slots) == 0 {
		t.Fatalf("visit slots: %d %v", len(slots), err)
	}
	if s := slots[0].Segments; !s[0].Start.Equal(s[1].Start) || s[0].MasterID == s[1].MasterID {
		t.Fatalf("the two start %s and %s with masters %d and %d: want at once, by two", s[0].Start, s[1].Start, s[0].MasterID, s[1].MasterID)
	}
	// Another salon's service among the ticked is not found, named, and
	// nothing of the form is saved.
	rival := w.Service(t, w.Salon(t, booking.Salon{Slug: "rival-together", Name: "Rival"}), booking.SalonService{Name: "Педикюр", DurationMin: 60})
	pedicure := w.Service(t, w.salon, booking.SalonService{Name: "Педикюр", DurationMin: 60}).ID
	a := o.post(fmt.Sprintf("/panel/services/%d/together", manicure), url.Values{"with": {fmt.Sprint(haircut), fmt.Sprint(pedicure), fmt.Sprint(rival.ID)}})
	if a.status != 404 || !strings.Contains(a.body, fmt.Sprintf("№%d", rival.ID)) {
		t.Fatalf("another salon's service ticked: %d, want 404 naming it", a.status)
	}
	if ids, _ := w.Svc.TogetherWith(ctxb, w.salon.ID, manicure); len(ids) != 1 || ids[0] != haircut {
		t.Fatalf("after a refused form the manicure goes with %v, want the haircut alone", ids)
	}
	// Unticked, they follow one another again.
	if a := o.post(fmt.Sprintf("/panel/services/%d/together", manicure), url.Values{}); a.status >= 400 {
		t.Fatalf("save: %d", a.status)
	}
	if ids, _ := w.Svc.TogetherWith(ctxb, w.salon.ID, haircut); len(ids) != 0 {
		t.Fatalf("still together: %v", ids)
	}
}

// TestALaterServiceOfAVisitAsksWhoCancels: a visit whose first service
// asks a deposit: its later service's page (whose own deposit is none)
// asks who cancels too, and cancelling from it at the client's request
// is recorded so.
func TestALaterServiceOfAVisitAsksWhoCancels(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	colour := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Окрашивание'`, w.salon.ID)
	manicure := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Маникюр'`, w.salon.ID)
	b, _ := bookFirstVisit(t, w, colour, manicure)
	second := scalar[int64](t, w, `SELECT id FROM bookings WHERE visit_of = $1`, b.ID)
	if d := scalar[string](t, w, `SELECT deposit::text FROM bookings WHERE id = $1`, second); d != "0.00" {
		t.Fatalf("the later service's own deposit: %s", d)
	}
	o := w.owner()
	page := o.get(fmt.Sprintf("/panel/bookings/%d", second))
	if !strings.Contains(page.body, `id="cancel-asked"`) || !strings.Contains(page.body, `id="visit-head"`) {
		t.Fatalf("the later service's page does not ask who cancels: %.3000s", page.body)
	}
	terms := regexp.MustCompile(`name="terms" value="([^"]*)"`).FindStringSubmatch(page.body)
	if r := o.post(fmt.Sprintf("/panel/bookings/%d/cancel", second), url.Values{"asked": {"client"}, "terms": {terms[1]}}); r.status != http.StatusSeeOther {
		t.Fatalf("cancel: %d %.300s", r.status, r.body)
	}
	if got := scalar[string](t, w, `SELECT details->>'for_client' FROM booking_events WHERE booking_id = $1 AND action = 'cancelled'`, b.ID); got != "true" {
		t.Errorf("the visit's cancellation recorded for_client %q", got)
	}
}

// TestARefusedMoveOfAVisitShowsItsFormAsFilledIn: a move of a whole visit
// refused (a time outside the hours) shows the form again with the master
// chosen for each service; a refused move of one service shows its own
// form as filled in (time, master, who asks), the whole-visit form as it
// was.
func TestARefusedMoveOfAVisitShowsItsFormAsFilledIn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Женская стрижка'`, w.salon.ID)
	manicure := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Маникюр'`, w.salon.ID)
	b, slot := bookFirstVisit(t, w, haircut, manicure)
	other := scalar[int64](t, w, `SELECT master_id FROM master_services WHERE service_id = $1 AND master_id <> $2 ORDER BY master_id LIMIT 1`,
		manicure, b.Segments[1].MasterID)
	loc := w.salon.Location()
	date, start := slot.Start.In(loc).Format("2006-01-02"), slot.Start.In(loc).Format("15:04")
	o := w.owner()
	form := func(body, id string) string {
		return regexp.MustCompile(`(?s)<form [^>]*id="` + id + `">.*?</form>`).FindString(body)
	}
	selected := func(f string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<option value="(\d+)" selected>`).FindAllStringSubmatch(f, -1) {
			out = append(out, m[1])
		}
		return out
	}
	r := o.post(fmt.Sprintf("/panel/bookings/%d/reschedule", b.ID), url.Values{"date": {date}, "time": {"03:00"},
		"item_service": {fmt.Sprint(haircut), fmt.Sprint(manicure)}, "item_master": {fmt.Sprint(b.Segments[0].MasterID), fmt.Sprint(other)},
		"asked": {"client"}})
	whole := form(r.body, "reschedule")
	if want := []string{fmt.Sprint(b.Segments[0].MasterID), fmt.Sprint(other)}; r.status < 400 || fmt.Sprint(selected(whole)) != fmt.Sprint(want) ||
		!strings.Contains(whole, `value="03:00"`) || !strings.Contains(whole, `value="client" checked>`) {
		t.Errorf("a refused move of the visit: %d, masters %v (want %v): %s", r.status, selected(whole), want, whole)
	}
	if !strings.Contains(r.body, "Женская стрижка: мастер в это время не работает") { // (which of the visit's)
		t.Errorf("a move of the visit outside the hours: %s", fieldErrorsOf(r.body))
	}
	second := b.Segments[1].ID
	r = o.post(fmt.Sprintf("/panel/bookings/%d/reschedule", second), url.Values{"date": {date}, "time": {"03:00"},
		"master": {fmt.Sprint(other)}, "only": {"1"}, "asked": {"salon"}})
	one, whole := form(r.body, "reschedule-one"), form(r.body, "reschedule")
	if r.status < 400 || fmt.Sprint(selected(one)) != fmt.Sprint([]string{fmt.Sprint(other)}) || !strings.Contains(one, `value="03:00"`) ||
		!strings.Contains(one, `value="salon" aria-describedby="move-one-salon" checked>`) {
		t.Errorf("a refused move of one service: %d: %s", r.status, one)
	}
	if !strings.Contains(whole, `value="`+start+`"`) || strings.Contains(whole, "checked>") {
		t.Errorf("a refused move of one service changed the whole visit's form: %s", whole)
	}
}

// bookFirstVisit books, at the desk, the first free visit of services
// (in that order) over the next week, with the masters its slot names.
func bookFirstVisit(t *testing.T, w *world, services ...int64) (*booking.Booking, *booking.VisitSlot) {
	t.Helper()
	ctx := bookingtest.System()
	items := make([]booking.VisitItem, len(services))
	for i, id := range services {
		items[i].ServiceID = id
	}
	var slot *booking.VisitSlot
	for d := w.today().AddDays(1); slot == nil && d.Before(w.today().AddDays(9)); d = d.AddDays(1) {
		slots, err := w.Svc.VisitSlots(ctx, booking.VisitSlotQuery{SalonID: w.salon.ID, Items: items, From: d})
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) > 0 {
			slot = &slots[0]
		}
	}
	if slot == nil {
		t.Fatal("no free visit")
	}
	for i := range items {
		items[i].MasterID = slot.Segments[i].MasterID
	}
	b, err := w.Svc.Book(ctx, booking.BookRequest{SalonID: w.salon.ID, Items: items, StartsAt: slot.Start,
		Client: booking.ClientInput{Name: "Visit Client", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	return b, slot
}
