package booking

import (
	"fmt"
	"salon/i18n"
	"time"
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

// Start returns the instant d begins in loc (local midnight, or the first
// instant after it on days when midnight does not exist).
func (d Date) Start(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

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
	t := time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, loc)
	wall := time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, time.UTC)
	if sameWall(t, wall) {
		return t, true
	}
	// time.Date resolves a skipped time with one of the offsets around
	// the gap, leaving which unsaid: read with the offset before it (the
	// smaller), it is the later instant, moved forward.
	_, before := t.Add(-3 * time.Hour).Zone()
	_, after := t.Add(3 * time.Hour).Zone()
	return wall.Add(-time.Duration(min(before, after)) * time.Second).In(loc), false
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
