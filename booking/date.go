package booking

import (
	"fmt"
	"slices"
	"time"

	"salon/i18n"
)

// Date is a calendar day in a salon's time zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate reads YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, i18n.New("%q is not a date like 2026-03-08", s)
	}
	return DateOf(t), nil
}

// DateOf returns the calendar day of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// String formats d as YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// In is the date as a reader of lang writes it: 05.12.2026 in Russian, 5
// Dec 2026 in English (i18n puts a message's dates in its language).
func (d Date) In(lang string) string {
	if lang == "ru" {
		return fmt.Sprintf("%02d.%02d.%d", d.Day, d.Month, d.Year)
	}
	return fmt.Sprintf("%d %s %d", d.Day, d.Month.String()[:3], d.Year)
}

// AddDays returns d moved by n days.
func (d Date) AddDays(n int) Date {
	return DateOf(time.Date(d.Year, d.Month, d.Day+n, 12, 0, 0, 0, time.UTC))
}

// Start returns the instant d begins in loc: local midnight, or, on a day
// whose midnight the clocks skip, the first instant after it.
func (d Date) Start(loc *time.Location) time.Time { return d.At(loc, 0) }

// At returns the instant of the wall clock time minutes after midnight on d in
// loc. Minutes past 24:00 fall on the next day. A time the clocks skip (the
// hour DST starts) is moved forward by the gap: 02:30 on a day they jump
// from 02:00 to 03:00 is 03:30. A time they show twice (the hour DST ends)
// is its first.
func (d Date) At(loc *time.Location, minutes int) time.Time {
	t, _ := d.AtExact(loc, minutes)
	return t
}

// AtExact is At, and whether the clock in loc shows that time on that day
// (false: it skips it, and the instant is moved forward by the gap).
func (d Date) AtExact(loc *time.Location, minutes int) (time.Time, bool) {
	if all := d.AtAll(loc, minutes); len(all) > 0 {
		return all[0], true
	}
	// Skipped: read with the offset in force before the gap, which is
	// at one end of the zone period time.Date chose (it leaves which
	// unsaid).
	wall := time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, time.UTC)
	t := time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, loc)
	start, end := t.ZoneBounds()
	for _, x := range []time.Time{start, end} {
		if x.IsZero() {
			continue
		}
		_, before := x.Add(-time.Second).Zone()
		_, after := x.Zone()
		gapFrom, gapTo := x.UTC().Add(time.Duration(before)*time.Second), x.UTC().Add(time.Duration(after)*time.Second)
		if !wall.Before(gapFrom) && wall.Before(gapTo) {
			return wall.Add(-time.Duration(before) * time.Second).In(loc), false
		}
	}
	return t, false
}

// AtAll returns every instant the clock in loc shows the wall clock time
// minutes after midnight on d, in order: one; two on the hour the clocks
// show twice (DST ends); none when they skip it.
func (d Date) AtAll(loc *time.Location, minutes int) []time.Time {
	wall := time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, time.UTC)
	t := time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, loc)
	start, end := t.ZoneBounds()
	if far := 48 * time.Hour; sameWall(t, wall) && (start.IsZero() || t.Sub(start) > far) && (end.IsZero() || end.Sub(t) > far) {
		return []time.Time{t} // (no change of the clocks near: the common case)
	}
	// The candidates: the wall time read with the offset of the zone
	// period time.Date chose, and of the periods before and after it.
	_, off := t.Zone()
	offsets := []int{off}
	if !start.IsZero() {
		_, o := start.Add(-time.Second).Zone()
		offsets = append(offsets, o)
	}
	if !end.IsZero() {
		_, o := end.Zone()
		offsets = append(offsets, o)
	}
	var out []time.Time
	for _, o := range offsets {
		c := wall.Add(-time.Duration(o) * time.Second).In(loc)
		if sameWall(c, wall) && !slices.ContainsFunc(out, c.Equal) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// AtClock is the instant a time typed for d shows on the clock in loc:
// an error, naming both, when the clocks skip it that day (DST starts),
// so a typed time is never moved.
func (d Date) AtClock(loc *time.Location, c Clock) (time.Time, error) {
	t, ok := d.AtExact(loc, int(c))
	if !ok {
		return time.Time{}, i18n.New("there is no %s on %s: the clocks are put forward then", c, d)
	}
	return t, nil
}

// sameWall reports whether t shows the wall clock date and time of wall
// (a UTC time standing for a local one).
func sameWall(t, wall time.Time) bool {
	y, m, d := t.Date()
	wy, wm, wd := wall.Date()
	return y == wy && m == wm && d == wd && t.Hour() == wall.Hour() && t.Minute() == wall.Minute()
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.sortKey() < e.sortKey() }

func (d Date) sortKey() int { return d.Year*10000 + int(d.Month)*100 + d.Day }

// dbDate is the value pgx writes to a date column for d.
func (d Date) dbDate() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }
