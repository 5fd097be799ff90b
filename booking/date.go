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
// loc. Minutes past 24:00 fall on the next day. On a DST gap the wall time is
// moved forward by the gap, as time.Date does.
func (d Date) At(loc *time.Location, minutes int) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, minutes, 0, 0, loc)
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.sortKey() < e.sortKey() }

func (d Date) sortKey() int { return d.Year*10000 + int(d.Month)*100 + d.Day }

// dbDate is the value pgx writes to a date column for d.
func (d Date) dbDate() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }
