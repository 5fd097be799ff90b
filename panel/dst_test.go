package panel_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// dstSalon is a salon in New York (2026: the clocks go forward at 02:00
// on 8 March, back at 02:00 on 1 November), slot step 30 minutes, with a
// master working 00:00-06:00 on both days, and its owner signed in.
type dstSalon struct {
	w      *world
	salon  *booking.Salon
	svc    *booking.SalonService
	master *booking.Master
	owner  *browserless
}

var (
	springDay = booking.Date{Year: 2026, Month: 3, Day: 8}
	autumnDay = booking.Date{Year: 2026, Month: 11, Day: 1}
)

func newDSTSalon(t *testing.T) *dstSalon {
	w := newWorld(t)
	s := w.Env.Salon(t, booking.Salon{Timezone: "America/New_York", Locale: "en", SlotStepMin: 30, Currency: "USD", Country: "US"})
	sv := w.Env.Service(t, s, booking.SalonService{Name: "Cut", DurationMin: 60})
	m := w.Env.Master(t, s, sv)
	for _, d := range []booking.Date{springDay, autumnDay} {
		w.Env.Shift(t, s, m, d, 1, "00:00", "06:00")
	}
	return &dstSalon{w: w, salon: s, svc: sv, master: m, owner: w.user(s.ID, "owner@dst.test", booking.RoleOwner)}
}

// book books the master at the instant at, for an hour.
func (d *dstSalon) book(t *testing.T, at time.Time) {
	t.Helper()
	if _, err := d.w.Svc.Book(bookingtest.System(), booking.BookRequest{SalonID: d.salon.ID, ServiceID: d.svc.ID, MasterID: d.master.ID,
		StartsAt: at, Client: booking.ClientInput{Name: "Night", Phone: fmt.Sprintf("+1212555%04d", at.Unix()%10000)}}); err != nil {
		t.Fatal(err)
	}
}

// nightShift gives the master a night shift 20:00 to 03:00 on 10 April
// 2026; it returns that day and the next.
func (d *dstSalon) nightShift(t *testing.T) (night, next booking.Date) {
	t.Helper()
	night = booking.Date{Year: 2026, Month: 4, Day: 10}
	d.w.Env.Shift(t, d.salon, d.master, night, 1, "20:00", "+03:00")
	return night, night.AddDays(1)
}

// freeLink is the link of the grid's free cell of the master at hh:mm on
// day, as the page writes it.
func (d *dstSalon) freeLink(day booking.Date, hh, mm string) string {
	return fmt.Sprintf(`/panel/bookings/new?at=%sT%s%%3A%s&amp;master=%d`, day, hh, mm, d.master.ID)
}

var (
	gridRowRE   = regexp.MustCompile(`(?s)<tr[^>]*><th class="time" scope="row">([^<]+)</th>(.*?)</tr>`)
	bookingTime = regexp.MustCompile(`<a href="/panel/bookings/\d+" class="booking"><b>([^<]+)</b>`)
)

// gridRows reads a grid's rows: each one's label, and the times of the
// bookings that start on it.
func gridRows(body string) (labels []string, starts map[string]string) {
	starts = map[string]string{}
	for _, m := range gridRowRE.FindAllStringSubmatch(body, -1) {
		labels = append(labels, m[1])
		for _, b := range bookingTime.FindAllStringSubmatch(m[2], -1) {
			starts[b[1]] = m[1]
		}
	}
	return labels, starts
}

// The day and the week on the days the clocks move: every booking on the
// row of its own start as the salon's clock shows it, no row for the hour
// skipped, two (named by their zone) for the hour repeated.
func TestTheGridOnDaysTheClocksMove(t *testing.T) {
	t.Parallel()
	d := newDSTSalon(t)
	loc := d.salon.Location()
	// Spring: 01:30 EST for an hour (to 03:30 EDT: the clock skips
	// 02:00-03:00), and 03:30 EDT.
	early := time.Date(2026, 3, 8, 1, 30, 0, 0, loc)
	d.book(t, early)
	d.book(t, early.Add(time.Hour))
	a := d.owner.get("/panel/day/" + springDay.String())
	labels, starts := gridRows(a.body)
	if a.status != http.StatusOK || len(labels) == 0 {
		t.Fatalf("the spring day: %d, %d rows", a.status, len(labels))
	}
	want := []string{"00:00", "00:30", "01:00", "01:30", "03:00", "03:30", "04:00", "04:30", "05:00", "05:30"}
	if !slices.Equal(labels, want) {
		t.Errorf("the spring day's rows: %v, want %v", labels, want)
	}
	if starts["01:30–02:30"] != "" || starts["01:30–03:30"] != "01:30" || starts["03:30–04:30"] != "03:30" {
		t.Errorf("the spring day's bookings start on rows %v, want 01:30–03:30 on 01:30 and 03:30–04:30 on 03:30", starts)
	}
	// Its week, with days the clock does not skip: they have the rows
	// 02:00 and 02:30, the spring day's column has nothing there, and its
	// bookings are still on their own rows.
	a = d.owner.get(fmt.Sprintf("/panel/masters/%d/week/%s", d.master.ID, springDay.AddDays(-3)))
	labels, starts = gridRows(a.body)
	if !slices.Contains(labels, "02:30") || starts["03:30–04:30"] != "03:30" || starts["01:30–03:30"] != "01:30" {
		t.Errorf("the spring week: rows %v, bookings on %v", labels, starts)
	}
	// Autumn: 01:30 the first time (EDT) and the second (EST), an hour
	// apart in real time.
	first := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)
	d.book(t, first)
	d.book(t, first.Add(time.Hour))
	a = d.owner.get("/panel/day/" + autumnDay.String())
	labels, starts = gridRows(a.body)
	want = []string{"00:00", "00:30", "01:00 GMT-4", "01:30 GMT-4", "01:00 GMT-5", "01:30 GMT-5", "02:00", "02:30", "03:00", "03:30", "04:00",
		"04:30", "05:00", "05:30"}
	if !slices.Equal(labels, want) {
		t.Errorf("the autumn day's rows: %v, want %v", labels, want)
	}
	if starts["01:30 GMT-4–01:30 GMT-5"] != "01:30 GMT-4" || starts["01:30 GMT-5–02:30"] != "01:30 GMT-5" {
		t.Errorf("the autumn day's bookings start on rows %v, want 01:30 GMT-4–01:30 GMT-5 on 01:30 GMT-4, 01:30 GMT-5–02:30 on 01:30 GMT-5", starts)
	}
	// Its week: the other days show 01:00 once, so that row is 01:00 for
	// all of them; the repeat is the autumn day's alone, and keeps its zone.
	d.w.Env.Shift(t, d.salon, d.master, autumnDay.AddDays(-3), 1, "00:00", "06:00")
	a = d.owner.get(fmt.Sprintf("/panel/masters/%d/week/%s", d.master.ID, autumnDay.AddDays(-3)))
	labels, starts = gridRows(a.body)
	want = []string{"00:00", "00:30", "01:00", "01:30", "01:00 GMT-5", "01:30 GMT-5", "02:00", "02:30", "03:00", "03:30", "04:00",
		"04:30", "05:00", "05:30"}
	if !slices.Equal(labels, want) || starts["01:30 GMT-4–01:30 GMT-5"] != "01:30" || starts["01:30 GMT-5–02:30"] != "01:30 GMT-5" {
		t.Errorf("the autumn week: rows %v, want %v; bookings on %v", labels, want, starts)
	}
	if !strings.Contains(a.body, `aria-label="free 01:00 GMT-4"`) || !strings.Contains(a.body, `aria-label="free 01:00"`) {
		t.Error("the autumn week's free cells at 01:00 do not say which 01:00 each is")
	}
}

// A time the clocks skip, typed in the panel, is refused naming it, not
// moved an hour: nothing is booked.
func TestATimeTheClocksSkipIsRefused(t *testing.T) {
	t.Parallel()
	d := newDSTSalon(t)
	a := d.owner.post("/panel/bookings", url.Values{"master": {fmt.Sprint(d.master.ID)}, "service": {fmt.Sprint(d.svc.ID)},
		"date": {springDay.String()}, "time": {"02:30"}, "phone": {"+12125550100"}, "name": {"Gap"}, "key": {"gap-1"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "there is no 02:30 on 8 Mar 2026") {
		t.Errorf("02:30 on the spring day: %d %s", a.status, fieldErrorsOf(a.body))
	}
	if n := scalar[int](t, d.w, `SELECT count(*) FROM bookings WHERE salon_id = $1`, d.salon.ID); n != 0 {
		t.Errorf("%d bookings written", n)
	}
	// 03:30 is there, and is EDT.
	a = d.owner.post("/panel/bookings", url.Values{"master": {fmt.Sprint(d.master.ID)}, "service": {fmt.Sprint(d.svc.ID)},
		"date": {springDay.String()}, "time": {"03:30"}, "phone": {"+12125550100"}, "name": {"Gap"}, "key": {"gap-2"}})
	if a.status != http.StatusSeeOther {
		t.Fatalf("03:30 on the spring day: %d", a.status)
	}
	at := scalar[time.Time](t, d.w, `SELECT starts_at FROM bookings WHERE salon_id = $1`, d.salon.ID)
	if want := time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC); !at.Equal(want) {
		t.Errorf("03:30 booked at %s, want %s", at.UTC(), want)
	}
}

// A night shift runs into its next day's grid: the day after shows the
// master free (bookable from the grid) until it ends, its heading says
// so, and a booking then is on its row; the week shows the same.
func TestANightShiftRunsIntoTheNextDay(t *testing.T) {
	t.Parallel()
	d := newDSTSalon(t)
	night, next := d.nightShift(t)
	d.w.Env.Shift(t, d.salon, d.master, next, 1, "10:00", "14:00")
	d.book(t, next.At(d.salon.Location(), 60))
	a := d.owner.get("/panel/day/" + next.String())
	labels, starts := gridRows(a.body)
	if len(labels) == 0 || labels[0] != "00:00" || starts["01:00–02:00"] != "01:00" {
		t.Errorf("the day after a night shift: rows %v, bookings on %v", labels, starts)
	}
	// The hours nobody works, between the night's end and the morning, are
	// one row, not seven hours of empty ones.
	if !slices.Contains(labels, "03:00–10:00") || slices.Contains(labels, "05:00") || !slices.Contains(labels, "10:00") {
		t.Errorf("the day after a night shift: rows %v, want 03:00–10:00 folded into one", labels)
	}
	free := d.freeLink(next, "02", "30")
	if !strings.Contains(a.body, free) {
		t.Errorf("02:30, inside the night shift, is not offered: no %s", free)
	}
	if strings.Contains(a.body, d.freeLink(next, "03", "00")) {
		t.Error("03:00, after the night shift, is offered")
	}
	if !strings.Contains(a.body, "…–03:00, 10:00–14:00") {
		t.Error("the heading does not say the night shift's end")
	}
	a = d.owner.get(fmt.Sprintf("/panel/masters/%d/week/%s", d.master.ID, night))
	if !strings.Contains(a.body, "…–03:00, 10:00–14:00") || !strings.Contains(a.body, free) {
		t.Error("the week does not carry the night shift into its next day")
	}
}

// A booking that crosses midnight from a night shift keeps the next day's
// column busy in the week as it does in the day: its time is not offered.
func TestABookingAcrossMidnightKeepsTheWeekBusy(t *testing.T) {
	t.Parallel()
	d := newDSTSalon(t)
	night, next := d.nightShift(t)
	d.book(t, night.At(d.salon.Location(), 23*60+30)) // 23:30-00:30
	offered := d.freeLink(next, "00", "00")
	if a := d.owner.get("/panel/day/" + next.String()); strings.Contains(a.body, offered) {
		t.Error("the day view offers 00:00, inside the 23:30-00:30 booking")
	}
	for _, from := range []booking.Date{night, next} {
		if a := d.owner.get(fmt.Sprintf("/panel/masters/%d/week/%s", d.master.ID, from)); strings.Contains(a.body, offered) {
			t.Errorf("the week from %s offers %s 00:00, inside the 23:30-00:30 booking", from, next)
		}
	}
}

// The "edit a day" form names the field the core refuses (an empty shift:
// its end; an empty break: its end), not "shift".
func TestEditADayNamesTheCoresField(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "desk2@demo.test", booking.RoleAdmin)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Галина'`)
	day := w.today().AddDays(40)
	path := fmt.Sprintf("/panel/masters/%d/shifts", m)
	for _, c := range []struct {
		v    url.Values
		want string
	}{
		{url.Values{"date": {day.String()}, "start": {"10:00"}, "end": {"10:00"}}, "<b>Конец</b>"},
		{url.Values{"date": {day.String()}, "start": {"10:00"}, "end": {"18:00"}, "break_start": {"14:00"}, "break_end": {"14:00"}}, "<b>Конец перерыва</b>"},
	} {
		a := b.post(path, c.v)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(fieldErrorsOf(a.body), c.want) {
			t.Errorf("%v: %d %s, want %s", c.v, a.status, fieldErrorsOf(a.body), c.want)
		}
	}
}

// The hour the clocks show twice is bookable both times from the grid:
// the second time's free cell asks the form for it, and the form books
// it (without, the same time is the first).
func TestTheRepeatedHourIsBookableTwice(t *testing.T) {
	t.Parallel()
	d := newDSTSalon(t)
	a := d.owner.get("/panel/day/" + autumnDay.String())
	second := d.freeLink(autumnDay, "01", "00") + "&amp;again=1"
	first := d.freeLink(autumnDay, "01", "00") + `"`
	if !strings.Contains(a.body, second) || !strings.Contains(a.body, first) {
		t.Fatalf("the autumn day's 01:00 rows do not both link to a new booking")
	}
	form := d.owner.get(strings.ReplaceAll(second, "&amp;", "&"))
	if !strings.Contains(form.body, `name="again" value="1" checked`) {
		t.Errorf("the form does not carry the second time")
	}
	for i, c := range []struct {
		again string
		want  time.Time
	}{{"1", time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)}, {"", time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC)}} {
		v := url.Values{"master": {fmt.Sprint(d.master.ID)}, "service": {fmt.Sprint(d.svc.ID)}, "date": {autumnDay.String()},
			"time": {"01:00"}, "phone": {fmt.Sprintf("+1212555010%d", i)}, "name": {"Twice"}, "key": {fmt.Sprintf("twice-%d", i)}}
		if c.again != "" {
			v.Set("again", c.again)
		}
		if a := d.owner.post("/panel/bookings", v); a.status != http.StatusSeeOther {
			t.Fatalf("book 01:00 (again %q): %d %s", c.again, a.status, fieldErrorsOf(a.body))
		}
		var at time.Time
		if err := d.w.Pool.QueryRow(bookingtest.System(), `SELECT starts_at FROM bookings b JOIN clients c ON c.id = b.client_id
			WHERE c.phone = $1`, v.Get("phone")).Scan(&at); err != nil || !at.Equal(c.want) {
			t.Errorf("01:00 (again %q) booked at %s (%v), want %s", c.again, at.UTC(), err, c.want)
		}
	}
}

// A booking in the repeated hour's second showing is moved within it:
// its page's move form carries which showing it is (ticked), names its
// time by its offset, and a move to 01:45 keeps to the second 01:45
// unless unticked.
func TestAMoveInTheRepeatedHourKeepsWhichOne(t *testing.T) {
	t.Parallel()
	d := newDSTSalon(t)
	second := time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC) // 01:30 GMT-5
	d.book(t, second)
	var id int64
	if err := d.w.Pool.QueryRow(bookingtest.System(), `SELECT id FROM bookings WHERE starts_at = $1`, second).Scan(&id); err != nil {
		t.Fatal(err)
	}
	page := d.owner.get(fmt.Sprintf("/panel/bookings/%d", id))
	form := regexp.MustCompile(`(?s)<form method="post" action="/panel/bookings/\d+/reschedule" class="card" id="reschedule">.*?</form>`).FindString(page.body)
	if !strings.Contains(form, `name="again" value="1" checked`) || !strings.Contains(page.body, "01:30 GMT-5") {
		t.Fatalf("the booking's page does not say it is the second 01:30: %s", form)
	}
	for _, c := range []struct {
		again string
		want  time.Time
	}{{"1", time.Date(2026, 11, 1, 6, 45, 0, 0, time.UTC)}, {"", time.Date(2026, 11, 1, 5, 45, 0, 0, time.UTC)}} {
		v := url.Values{"date": {autumnDay.String()}, "time": {"01:45"}, "master": {fmt.Sprint(d.master.ID)}}
		if c.again != "" {
			v.Set("again", c.again)
		}
		if a := d.owner.post(fmt.Sprintf("/panel/bookings/%d/reschedule", id), v); a.status != http.StatusSeeOther {
			t.Fatalf("move to 01:45 (again %q): %d %s", c.again, a.status, fieldErrorsOf(a.body))
		}
		var at time.Time
		if err := d.w.Pool.QueryRow(bookingtest.System(), `SELECT starts_at FROM bookings WHERE id = $1`, id).Scan(&at); err != nil || !at.Equal(c.want) {
			t.Errorf("moved to 01:45 (again %q): at %s (%v), want %s", c.again, at.UTC(), err, c.want)
		}
	}
}

// With a slot step that does not divide an hour, the rows are the
// earliest shift's slots (a shift from 10:00, 45 minutes: 10:00, 10:45,
// 11:30, ...), so every free start the widget offers has its row.
func TestRowsOfAStepThatDoesNotDivideAnHour(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.Env.Salon(t, booking.Salon{Locale: "en", SlotStepMin: 45})
	sv := w.Env.Service(t, s, booking.SalonService{Name: "Cut", DurationMin: 45})
	m := w.Env.Master(t, s, sv)
	day := s.Today(w.Clock.Now()).AddDays(2)
	w.Env.Shift(t, s, m, day, 1, "10:30", "14:00")
	labels, _ := gridRows(w.user(s.ID, "owner@step.test", booking.RoleOwner).get("/panel/day/" + day.String()).body)
	if want := []string{"10:30", "11:15", "12:00", "12:45", "13:30"}; !slices.Equal(labels, want) {
		t.Errorf("rows %v, want %v", labels, want)
	}
}
