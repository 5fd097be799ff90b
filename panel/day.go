package panel

import (
	"cmp"
	"fmt"
	"html"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// The day view is a table: a row per slot step, a column per master (or,
// in a master's week, per day). A booking is one cell spanning its rows
// (rowspan), so the layout is plain HTML: no inline style, nothing for the
// CSP to allow. The grid polls its version and is swapped when it moves.

type grid struct {
	Cols    []gridCol
	Rows    []gridRow
	Body    template.HTML // the rows, rendered by body
	Poll    string        // URL the grid polls (with its version)
	Every   string        // htmx trigger
	Empty   bool
	Removed []*cell // cancelled bookings of the range
}

type gridCol struct {
	Title string
	Sub   string
	Href  string
	Off   bool // no shift in the column
}

type gridRow struct {
	Label string // HH:MM on full hours and half hours
	Hour  bool
	Gap   bool // hours when no column works, folded into this row
	Now   bool // the row of now (a day's grid of today)
	Cells []cell
}

type cell struct {
	Kind    string // free, past, off, break, booking
	Span    int
	Href    string
	Time    string
	Client  string
	Phone   string
	Notes   string // the client's (an allergy)
	Service string
	Master  string
	Status  booking.Status
	Deposit string // "", "deposit", "deposit due"
	// Attend is whether the client said they will come: "confirmed"
	// (a tap in a reminder), "unconfirmed" (not, with 2 hours to go), "".
	Attend      string
	AttendLabel string
	Covered     bool // inside another cell's rowspan: not rendered
	// Visit is "2/3" for a segment of a visit of several services; Part
	// marks the finish after a processing gap ("finish") and Processing
	// says until when the master is free while the client stays.
	Visit      string
	Part       string
	Processing string
	// Precomputed for the template (a reflective call per cell costs
	// more than the rest of the view).
	IsBooking, IsFree bool
	Label             string // the status of a booking, or "free HH:MM"
}

// column is what one column of the grid shows.
type column struct {
	master booking.Master
	day    booking.Date
	shifts []booking.Shift // the day's, and the day before's running into it
	books  []booking.Listing
}

// heading is what the column's heading says of its shifts: the day's, and
// first the end of the day before's that runs into it ("…–03:00").
func (col *column) heading(loc *time.Location, l *lang) string {
	var own []booking.Shift
	var from string
	for _, sh := range col.shifts {
		if sh.Date == col.day {
			own = append(own, sh)
		} else {
			from = "…–" + sh.End.In(loc).Format("15:04")
		}
	}
	switch {
	case from == "":
		return shiftText(own, loc, l)
	case len(own) == 0:
		return from
	}
	return from + ", " + shiftText(own, loc, l)
}

// buildGrid lays the columns out on rows of the salon's slot step.
func buildGrid(cal *booking.Calendar, cols []column, now time.Time, l *lang) *grid {
	loc := cal.Salon.Location()
	step := cal.Salon.SlotStepMin
	if step < 10 {
		step = 10
	}
	if step > 60 {
		step = 60
	}
	// A row is a step of the salon's clock, from the hour of the earliest
	// shift or booking (a step that does not divide an hour: from that
	// start, so the rows are its slots): a day when the clocks move has no
	// row for a time they skip and two for one they show twice; the
	// columns' days (a week's) are merged on their rows' wall-clock times.
	hourly := 60%step == 0
	anchor := 24 * 60
	for _, col := range cols {
		for _, sh := range col.shifts {
			anchor = min(anchor, wallMinute(col.day, sh.Start, loc))
		}
		for _, b := range col.books {
			if b.Status != booking.StatusCancelled {
				anchor = min(anchor, wallMinute(col.day, b.StartsAt, loc))
			}
		}
	}
	switch {
	case anchor == 24*60:
		anchor = 0
	case hourly:
		anchor = anchor / 60 * 60
	}
	days := map[booking.Date]*dayClock{}
	for _, col := range cols {
		if days[col.day] == nil {
			days[col.day] = newDayClock(col.day, loc, step, anchor)
		}
	}
	keys := mergeRows(cols, days)
	// Rows from the earliest shift or booking to the latest (whole hours
	// when the step divides one); 9:00-20:00 when there is nothing.
	first, last := len(keys), 0
	for _, col := range cols {
		dc := days[col.day]
		for _, sh := range col.shifts {
			first, last = min(first, dc.row(sh.Start)), max(last, dc.rowAfter(sh.End))
		}
		for _, b := range col.books {
			if b.Status != booking.StatusCancelled {
				first, last = min(first, dc.row(b.StartsAt)), max(last, dc.rowAfter(b.EndsAt()))
			}
		}
	}
	if first >= last {
		at := func(m int) int {
			if i := slices.IndexFunc(keys, func(k rowKey) bool { return k.minute >= m }); i >= 0 {
				return i
			}
			return len(keys)
		}
		first, last = at(9*60), at(20*60)
	}
	for hourly && first > 0 && keys[first].minute%60 != 0 {
		first--
	}
	for hourly && last < len(keys) && keys[last].minute%60 != 0 {
		last++
	}
	keys = keys[first:last]
	n := len(keys)
	g := &grid{Rows: make([]gridRow, n)}
	for i, k := range keys {
		g.Rows[i] = gridRow{Label: k.label, Hour: k.minute%60 == 0, Cells: make([]cell, len(cols))}
	}
	free := l.T("free")
	visits := visitMarks(cal.Bookings)
	for j, col := range cols {
		master := "&master=" + strconv.FormatInt(col.master.ID, 10)
		dc := days[col.day]
		// Bookings first: each takes the rows of its master's busy time (a
		// service with processing time its work and its finish: the gap
		// between is free for others).
		type part struct {
			c          *cell
			start, end time.Time
		}
		var parts []part
		var buffers [][2]time.Time // the master's pause after a service: busy, not bookable
		for _, b := range col.books {
			if b.Status == booking.StatusCancelled {
				continue
			}
			if b.BufferMin > 0 {
				buffers = append(buffers, [2]time.Time{b.EndsAt(), b.EndsAt().Add(time.Duration(b.BufferMin) * time.Minute)})
			}
			c := bookingCell(b, loc, now, l)
			if v := visits[b.ID]; v != "" {
				c.Visit = l.T("service %s of a visit", v)
			}
			ps, pe := b.Processing()
			if ps.IsZero() {
				parts = append(parts, part{c, b.StartsAt, b.EndsAt()})
				continue
			}
			c.Processing = l.T("processing until %s: the master is free", pe.In(loc).Format("15:04"))
			parts = append(parts, part{c, b.StartsAt, ps})
			if pe.Before(b.EndsAt()) {
				fin := *c
				fin.Part, fin.Processing = "finish", ""
				fin.Label = l.T("finish")
				parts = append(parts, part{&fin, pe, b.EndsAt()})
			}
		}
		slices.SortStableFunc(parts, func(a, b part) int { return a.start.Compare(b.start) })
		next := 0
		for _, p := range parts {
			start, end := dc.row(p.start)-first, dc.rowAfter(p.end)-first
			start = max(start, next)
			end = min(max(end, start+1), n)
			if start >= n {
				continue
			}
			c := p.c
			c.Span = end - start
			g.Rows[start].Cells[j] = *c
			for i := start + 1; i < end; i++ {
				g.Rows[i].Cells[j] = cell{Kind: "covered", Covered: true}
			}
			next = end
		}
		for i := range g.Rows {
			if g.Rows[i].Cells[j].Kind != "" {
				continue
			}
			t, key, ok := dc.at(first + i)
			if !ok { // (a time the clocks skip on this column's day)
				g.Rows[i].Cells[j] = cell{Kind: "off", Span: 1}
				continue
			}
			kind := "off"
			for _, sh := range col.shifts {
				if !t.Before(sh.Start) && t.Before(sh.End) {
					kind = "free"
					if !sh.BreakStart.IsZero() && !t.Before(sh.BreakStart) && t.Before(sh.BreakEnd) {
						kind = "break"
					}
				}
			}
			c := &g.Rows[i].Cells[j]
			for _, bf := range buffers {
				if kind == "free" && !t.Before(bf[0]) && t.Before(bf[1]) && !t.Before(now) {
					kind, c.Label = "buffer", l.T("the master's pause after a service")
				}
			}
			c.Kind, c.Span = kind, 1
			if kind == "free" {
				if t.Before(now) {
					c.Kind = "past"
				} else {
					c.IsFree = true
					lt := t.In(loc)
					c.Time = key.label
					// As url.Values would encode at= and master=.
					c.Href = "/panel/bookings/new?at=" + lt.Format("2006-01-02T15") + "%3A" + lt.Format("04") + master
					if key.again > 0 {
						// (The second time the clock shows it: the hour
						// repeated when DST ends.)
						c.Href += "&again=1"
					}
					c.Label = free + " " + c.Time
				}
			}
		}
	}
	// The row of now, when the grid is of one day, today: the page opens
	// on it (a day begun by a night shift's last hours starts at 00:00).
	if len(days) == 1 {
		dc := days[cols[0].day]
		for i := range g.Rows {
			if t, _, ok := dc.at(first + i); ok && !now.Before(t) && now.Before(t.Add(time.Duration(step)*time.Minute)) {
				g.Rows[i].Now = true
			}
		}
	}
	g.Rows = foldIdle(g.Rows, 120/step)
	for _, b := range cal.Bookings {
		if b.Status == booking.StatusCancelled {
			g.Removed = append(g.Removed, bookingCell(b, loc, now, l))
		}
	}
	g.Body = g.body()
	return g
}

// foldIdle folds each run of at least n rows inside the grid in which no
// column works (after a night shift, the hours between its end and the
// morning's first shift) into one row headed by its span ("02:00–10:00").
func foldIdle(rows []gridRow, n int) []gridRow {
	n = max(n, 2) // (one row is no fold)
	idle := func(r gridRow) bool {
		return !slices.ContainsFunc(r.Cells, func(c cell) bool { return c.Kind != "off" })
	}
	out := rows[:0:0]
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && idle(rows[j]) {
			j++
		}
		if i > 0 && j < len(rows) && j-i >= n {
			gap := gridRow{Label: rows[i].Label + "–" + rows[j].Label, Gap: true, Cells: rows[i].Cells,
				Now: slices.ContainsFunc(rows[i:j], func(r gridRow) bool { return r.Now })}
			out, i = append(out, gap), j
			continue
		}
		out = append(out, rows[i])
		i++
	}
	return out
}

// rowKey names a row of a grid: the wall-clock minute of its time, and
// again (1) when it is the second time the clock shows it that day (the
// hour repeated when DST ends). label is how the row is headed.
type rowKey struct {
	minute int
	again  int
	label  string
}

// dayClock is a day's rows: the instants its clock shows each step of the
// grid's wall-clock times (newDayClock), and each one's row in the grid.
type dayClock struct {
	times []time.Time
	keys  []rowKey
	rows  []int     // the grid's row of each of times (mergeRows)
	local []int     // the index in times of each of the grid's rows, -1: none
	end   time.Time // the next day's start
}

// newDayClock lays d's rows out: its wall-clock times every step from
// anchor (minutes after midnight) each at the instants the clock shows it
// (none, or two), in time order.
func newDayClock(d booking.Date, loc *time.Location, step, anchor int) *dayClock {
	dc := &dayClock{end: d.AddDays(1).Start(loc)}
	type row struct {
		t   time.Time
		key rowKey
	}
	var rows []row
	for m := anchor; m < 24*60; m += step {
		all := d.AtAll(loc, m)
		for i, t := range all {
			rows = append(rows, row{t, rowKey{minute: m, again: i, label: clockLabel(t.In(loc), len(all) > 1)}})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return a.t.Compare(b.t) })
	for _, r := range rows {
		dc.times, dc.keys = append(dc.times, r.t), append(dc.keys, r.key)
	}
	return dc
}

// row is the grid's row holding t: the last that starts at or before it
// (the first for a time before the day's rows, the one after the last for
// one after the day).
func (dc *dayClock) row(t time.Time) int {
	if len(dc.times) == 0 {
		return 0
	}
	i, found := slices.BinarySearchFunc(dc.times, t, time.Time.Compare)
	switch {
	case found:
		return dc.rows[i]
	case i == 0:
		return dc.rows[0]
	case !t.Before(dc.end):
		return dc.rows[len(dc.rows)-1] + 1
	}
	return dc.rows[i-1]
}

// rowAfter is the first row of the grid after an interval ending at t:
// the first that starts at or after it.
func (dc *dayClock) rowAfter(t time.Time) int {
	if len(dc.times) == 0 {
		return 0
	}
	i, _ := slices.BinarySearchFunc(dc.times, t, time.Time.Compare)
	if i == len(dc.times) {
		return dc.rows[i-1] + 1
	}
	return dc.rows[i]
}

// at is the instant of the grid's row r on this day, with its key as
// this day has it (its label; again: the second time the clock shows it);
// not ok when the day has no such time (the hour skipped when DST starts).
func (dc *dayClock) at(r int) (t time.Time, key rowKey, ok bool) {
	if r < 0 || r >= len(dc.local) || dc.local[r] < 0 {
		return time.Time{}, rowKey{}, false
	}
	i := dc.local[r]
	return dc.times[i], dc.keys[i], true
}

// mergeRows returns the grid's rows for the columns' days: each day's
// rows in their order, merged on their keys (on most days every day has
// the same; a day when the clocks move has an hour fewer or more), and
// fills in each day's rows. A row the days label differently (01:00 EDT
// on the day the clocks go back, 01:00 on the others) is headed by its
// time alone; the repeat (01:00 EST) keeps its zone.
func mergeRows(cols []column, days map[booking.Date]*dayClock) []rowKey {
	var order []*dayClock // (in the columns' order: the grid is the same each time)
	for _, col := range cols {
		if dc := days[col.day]; !slices.Contains(order, dc) {
			order = append(order, dc)
		}
	}
	if len(order) == 0 {
		return nil
	}
	same := func(a, b rowKey) bool { return a.minute == b.minute && a.again == b.again }
	longest := slices.MaxFunc(order, func(a, b *dayClock) int { return cmp.Compare(len(a.keys), len(b.keys)) })
	merged := slices.Clone(longest.keys)
	for _, dc := range order {
		pos := -1
		for _, k := range dc.keys {
			if i := slices.IndexFunc(merged[pos+1:], func(m rowKey) bool { return same(m, k) }); i >= 0 {
				pos += 1 + i
			} else {
				pos++
				merged = slices.Insert(merged, pos, k)
			}
		}
	}
	shared := make([]bool, len(merged)) // a row other days show once: headed by its time alone
	for _, dc := range order {
		dc.rows = make([]int, len(dc.keys))
		dc.local = slices.Repeat([]int{-1}, len(merged))
		pos := -1
		for i, k := range dc.keys {
			pos += 1 + slices.IndexFunc(merged[pos+1:], func(m rowKey) bool { return same(m, k) })
			dc.rows[i], dc.local[pos] = pos, i
			shared[pos] = shared[pos] || k.label != merged[pos].label
		}
	}
	for i, sh := range shared {
		if sh {
			merged[i].label = fmt.Sprintf("%02d:%02d", merged[i].minute/60, merged[i].minute%60)
		}
	}
	return merged
}

// wallClock is t's time of day in loc ("15:04"), with its zone's name
// ("01:30 EST") when the clock shows that time twice that day (the hour
// repeated when DST ends).
func wallClock(t time.Time, loc *time.Location) string { return i18n.Clock(t.In(loc)) }

// clockLabel is lt's time of day, with its offset when twice.
func clockLabel(lt time.Time, twice bool) string {
	if twice {
		return i18n.ClockInZone(lt)
	}
	return lt.Format("15:04")
}

// wallMinute is the wall-clock minute of t on day d in loc: 0 for a time
// before the day, 24:00 for one after it.
func wallMinute(d booking.Date, t time.Time, loc *time.Location) int {
	lt := t.In(loc)
	switch day := booking.DateOf(lt); {
	case day.Before(d):
		return 0
	case d.Before(day):
		return 24 * 60
	}
	return lt.Hour()*60 + lt.Minute()
}

// body renders the rows. A grid has a cell per master and slot step (a
// thousand for 20 masters), and html/template's reflective evaluation of
// each cell cost ten times the queries; here every value is escaped by
// hand instead (html.EscapeString for text and attributes alike; the
// classes are fixed words).
func (g *grid) body() template.HTML {
	var b strings.Builder
	b.Grow(len(g.Rows) * (len(g.Cols) + 1) * 48)
	esc := html.EscapeString
	for _, r := range g.Rows {
		class := ""
		if r.Hour || r.Gap {
			class += " hour"
		}
		if r.Gap {
			class += " gap"
		}
		if r.Now {
			class += " now"
		}
		if class != "" {
			b.WriteString(`<tr class="` + class[1:] + `">`)
		} else {
			b.WriteString(`<tr>`)
		}
		b.WriteString(`<th class="time" scope="row">` + esc(r.Label) + `</th>`)
		for i, c := range r.Cells {
			col := ` data-col="` + strconv.Itoa(i) + `"` // the master's column, for the phone's switcher
			switch {
			case c.Covered:
			case c.IsFree:
				b.WriteString(`<td class="free"` + col + `><a href="` + esc(c.Href) + `" aria-label="` + esc(c.Label) + `">+</a></td>`)
			case c.IsBooking:
				extra := ""
				if c.Visit != "" {
					extra += " visit"
				}
				if c.Part == "finish" {
					extra += " finish"
				}
				fmt.Fprintf(&b, `<td rowspan="%d" class="b %s%s"%s><a href="%s" class="booking"><b>%s</b> <span class="client">%s</span>`+
					`<span class="svc">%s</span><span class="st">%s</span>`, c.Span, esc(string(c.Status)), extra, col, esc(c.Href), esc(c.Time),
					esc(c.Client), esc(c.Service), esc(c.Label))
				if c.Deposit != "" {
					b.WriteString(` <span class="dep">` + esc(c.Deposit) + `</span>`)
				}
				if c.Attend != "" {
					b.WriteString(` <span class="attend ` + esc(c.Attend) + `">` + esc(c.AttendLabel) + `</span>`)
				}
				if c.Visit != "" {
					b.WriteString(` <span class="visit">` + esc(c.Visit) + `</span>`)
				}
				if c.Processing != "" {
					b.WriteString(`<span class="processing">` + esc(c.Processing) + `</span>`)
				}
				if c.Notes != "" {
					b.WriteString(`<span class="notes" title="` + esc(c.Notes) + `">⚠ ` + esc(shorten(c.Notes, 60)) + `</span>`)
				}
				b.WriteString(`</a></td>`)
			case c.Label != "": // (a pause after a service: said)
				b.WriteString(`<td class="` + esc(c.Kind) + `"` + col + ` title="` + esc(c.Label) + `"><span class="sr">` + esc(c.Label) + `</span></td>`)
			default:
				b.WriteString(`<td class="` + esc(c.Kind) + `"` + col + `></td>`)
			}
		}
		b.WriteString("</tr>\n")
	}
	return template.HTML(b.String()) //nolint:gosec // every value above is escaped
}

// visitMarks labels the segments of visits of several services among
// bookings: "1/2", "2/2" (a cell says "service 1/2 of a visit"), by booking id (in id order, the
// visit's order).
func visitMarks(bookings []booking.Listing) map[int64]string {
	by := map[int64][]int64{}
	for _, b := range bookings {
		if b.Status != booking.StatusCancelled {
			by[b.VisitID] = append(by[b.VisitID], b.ID)
		}
	}
	out := map[int64]string{}
	for _, ids := range by {
		if len(ids) < 2 {
			continue
		}
		slices.Sort(ids)
		for i, id := range ids {
			out[id] = fmt.Sprintf("%d/%d", i+1, len(ids))
		}
	}
	return out
}

// UnconfirmedMark is how long before its start a booking its client has
// not confirmed is marked for the admin.
const UnconfirmedMark = 2 * time.Hour

func bookingCell(b booking.Listing, loc *time.Location, now time.Time, l *lang) *cell {
	c := &cell{
		Kind: "booking", Href: fmt.Sprintf("/panel/bookings/%d", b.ID),
		Time:   wallClock(b.StartsAt, loc) + "–" + wallClock(b.EndsAt(), loc),
		Client: b.ClientName, Phone: b.ClientPhone, Notes: b.ClientNotes, Service: b.ServiceName, Master: b.MasterName, Status: b.Status,
		IsBooking: true, Label: l.Status(b.Status),
	}
	if c.Client == "" {
		c.Client = b.ContactName
	}
	switch {
	case b.Status == booking.StatusPending:
		// (Its status, awaiting the deposit, says it.)
	case b.PaidWith == booking.BalancePackage:
		c.Deposit = l.T("paid with a package")
	case b.PaidWith == booking.BalanceCertificate && b.InPart:
		c.Deposit = l.T("paid in part with a certificate: the rest at the salon")
	case b.PaidWith == booking.BalanceCertificate:
		c.Deposit = l.T("paid with a certificate")
	case b.Deposit > 0:
		c.Deposit = l.T("deposit")
	}
	switch {
	case !b.Status.Active():
	case !b.ConfirmedAt.IsZero():
		c.Attend, c.AttendLabel = "confirmed", "✓ "+l.T("the client confirmed")
	case b.Status == booking.StatusConfirmed && !now.Before(b.StartsAt.Add(-UnconfirmedMark)) && now.Before(b.StartsAt):
		c.Attend, c.AttendLabel = "unconfirmed", "? "+l.T("not confirmed by the client")
	}
	return c
}

type dayData struct {
	Date, Prev, Next, Today string
	Title                   string
	Grid                    *grid
	Setup                   *booking.Setup // shown as a checklist until clients can book
}

func (h *Handler) today(c *fiber.Ctx) error {
	s := salonOf(c)
	return h.dayView(c, s.Today(h.svc.Now()), false)
}

func (h *Handler) day(c *fiber.Ctx) error {
	if q := c.Query("d"); q != "" {
		// The date picker's jump.
		if d, err := booking.ParseDate(q); err == nil {
			return c.Redirect("/panel/day/"+d.String(), fiber.StatusSeeOther)
		}
	}
	d, err := booking.ParseDate(c.Params("date"))
	if err != nil {
		return errNoPage
	}
	return h.dayView(c, d, false)
}

// dayGrid answers an open day view's poll: 204 while its version holds,
// the new grid when it moved.
func (h *Handler) dayGrid(c *fiber.Ctx) error {
	d, err := booking.ParseDate(c.Params("date"))
	if err != nil {
		return errNoPage
	}
	q := booking.CalendarQuery{SalonID: user(c).SalonID, First: d, Days: 1}
	if unchanged, err := h.unchanged(c, q); err != nil || unchanged {
		return err
	}
	return h.dayView(c, d, true)
}

// unchanged reports whether the calendar still has the version the poll
// names (then it answers 204).
func (h *Handler) unchanged(c *fiber.Ctx, q booking.CalendarQuery) (bool, error) {
	v := c.Query("v")
	if v == "" {
		return false, nil
	}
	cur, err := h.svc.CalendarVersion(c.UserContext(), q)
	if err != nil {
		return false, err
	}
	if cur == v {
		return true, c.SendStatus(fiber.StatusNoContent)
	}
	return false, nil
}

func (h *Handler) dayView(c *fiber.Ctx, d booking.Date, fragment bool) error {
	u := user(c)
	l := langOf(c)
	cal, err := h.svc.Calendar(c.UserContext(), booking.CalendarQuery{SalonID: u.SalonID, First: d, Days: 1})
	if err != nil {
		return err
	}
	cols := make([]column, 0, len(cal.Masters))
	byMaster := map[int64]int{}
	for _, m := range cal.Masters {
		byMaster[m.ID] = len(cols)
		cols = append(cols, column{master: m, day: d})
	}
	for _, sh := range cal.Shifts {
		if i, ok := byMaster[sh.MasterID]; ok {
			cols[i].shifts = append(cols[i].shifts, sh)
		}
	}
	for _, b := range cal.Bookings {
		if i, ok := byMaster[b.MasterID]; ok {
			cols[i].books = append(cols[i].books, b)
		}
	}
	now := h.svc.Now()
	g := buildGrid(cal, cols, now, l)
	for _, col := range cols {
		g.Cols = append(g.Cols, gridCol{Title: col.master.Name, Sub: col.heading(cal.Salon.Location(), l),
			Href: fmt.Sprintf("/panel/masters/%d/week/%s", col.master.ID, d), Off: len(col.shifts) == 0})
	}
	g.Empty = len(cols) == 0
	g.Poll = fmt.Sprintf("/panel/day/%s/grid?v=%s", d, cal.Version)
	g.Every = fmt.Sprintf("every %dms", h.cfg.PollInterval.Milliseconds())
	data := dayData{Date: d.String(), Prev: d.AddDays(-1).String(), Next: d.AddDays(1).String(),
		Today: cal.Salon.Today(now).String(), Title: longDate(d, l), Grid: g}
	if fragment {
		return h.fragment(c, "day", "grid", data)
	}
	if st, err := h.svc.SetupOf(c.UserContext(), u.SalonID); err != nil {
		return err
	} else if !st.Ready() {
		data.Setup = st
	}
	return h.render(c, "day", data.Title, data)
}

func shiftText(shifts []booking.Shift, loc *time.Location, l *lang) string {
	if len(shifts) == 0 {
		return l.T("day off")
	}
	s := ""
	for i, sh := range shifts {
		if i > 0 {
			s += ", "
		}
		s += sh.Start.In(loc).Format("15:04") + "–" + sh.End.In(loc).Format("15:04")
		if sh.EndClock(loc) > 24*60 {
			s += " " + l.T("(the next day)")
		}
		if !sh.BreakStart.IsZero() {
			s += " " + l.T("(break %s)", sh.BreakStart.In(loc).Format("15:04")+"–"+sh.BreakEnd.In(loc).Format("15:04"))
		}
	}
	return s
}

var monthsRU = []string{"", "января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября",
	"октября", "ноября", "декабря"}

// longDate is "Mon, 30 November 2026" in the page's language.
func longDate(d booking.Date, l *lang) string {
	t := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC)
	if l.Code == "ru" {
		return fmt.Sprintf("%s, %d %s %d", l.Weekday(int(t.Weekday())), d.Day, monthsRU[d.Month], d.Year)
	}
	return t.Format("Mon, 2 January 2006")
}

type weekData struct {
	Master           booking.Master
	Date, Prev, Next string
	Today            string
	Title            string
	Grid             *grid
}

func (h *Handler) week(c *fiber.Ctx) error { return h.weekView(c, false) }

func (h *Handler) weekGrid(c *fiber.Ctx) error { return h.weekView(c, true) }

// weekView is one master's seven days from the date.
func (h *Handler) weekView(c *fiber.Ctx, fragment bool) error {
	u := user(c)
	l := langOf(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	d, err := booking.ParseDate(c.Params("date"))
	if err != nil {
		return errNoPage
	}
	q := booking.CalendarQuery{SalonID: u.SalonID, MasterID: id, First: d, Days: 7}
	if fragment {
		if unchanged, err := h.unchanged(c, q); err != nil || unchanged {
			return err
		}
	}
	cal, err := h.svc.Calendar(c.UserContext(), q)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(cal.Masters, func(m booking.Master) bool { return m.ID == id })
	if i < 0 {
		// An inactive master without bookings this week.
		md, err := h.svc.MasterByID(c.UserContext(), u.SalonID, id)
		if err != nil {
			return err
		}
		cal.Masters = append(cal.Masters, md.Master)
		i = len(cal.Masters) - 1
	}
	m := cal.Masters[i]
	cols := make([]column, 7)
	loc := cal.Salon.Location()
	for k := range cols {
		cols[k] = column{master: m, day: d.AddDays(k)}
	}
	starts := make([]time.Time, len(cols)+1) // each column's day's start, and the week's end
	for k := range starts {
		starts[k] = d.AddDays(k).Start(loc)
	}
	for _, sh := range cal.Shifts {
		for k := range cols {
			// (A night shift is in its next day's column too, until it ends.)
			if sh.Date == cols[k].day || (sh.Date == cols[k].day.AddDays(-1) && sh.End.After(starts[k])) {
				cols[k].shifts = append(cols[k].shifts, sh)
			}
		}
	}
	for _, b := range cal.Bookings {
		for k := range cols {
			// (One across midnight is in both its days' columns.)
			if b.StartsAt.Before(starts[k+1]) && b.EndsAt().After(starts[k]) {
				cols[k].books = append(cols[k].books, b)
			}
		}
	}
	now := h.svc.Now()
	g := buildGrid(cal, cols, now, l)
	for _, col := range cols {
		g.Cols = append(g.Cols, gridCol{Title: longDate(col.day, l), Sub: col.heading(loc, l),
			Href: "/panel/day/" + col.day.String(), Off: len(col.shifts) == 0})
	}
	g.Poll = fmt.Sprintf("/panel/masters/%d/week/%s/grid?v=%s", id, d, cal.Version)
	g.Every = fmt.Sprintf("every %dms", h.cfg.PollInterval.Milliseconds())
	data := weekData{Master: m, Date: d.String(), Prev: d.AddDays(-7).String(), Next: d.AddDays(7).String(),
		Today: cal.Salon.Today(now).String(), Title: l.T("Week of %s", m.Name), Grid: g}
	if fragment {
		return h.fragment(c, "week", "grid", data)
	}
	return h.render(c, "week", data.Title, data)
}

func salonOf(c *fiber.Ctx) *booking.Salon { return c.Locals(salonKey).(*booking.Salon) }

// idParam reads :id; anything but a positive number is not found.
func idParam(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNoPage
	}
	return id, nil
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
