package i18n

import (
	"fmt"
	"time"
)

var (
	weekdays = map[string][7]string{
		"en": {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"},
		"ru": {"вс", "пн", "вт", "ср", "чт", "пт", "сб"},
	}
	months = map[string][12]string{
		"en": {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
		// (As the genitive's abbreviations of the language's usage, which
		// browsers write too: "мая" whole, the others with their point.)
		"ru": {"янв.", "февр.", "мар.", "апр.", "мая", "июн.", "июл.", "авг.", "сент.", "окт.", "нояб.", "дек."},
	}
	// dayLayouts put a day's weekday, number and month as the language
	// writes them, and as the widget's browser does: "Tue 3 Mar", "вт, 3 мар.".
	dayLayouts = map[string]string{"en": "%s %d %s", "ru": "%s, %d %s"}
)

// Day is a day as a short label: "Tue 3 Mar" / "вт, 3 мар." (English for a
// language the catalogue does not speak).
func Day(lang string, year int, month time.Month, day int) string {
	if _, ok := weekdays[lang]; !ok {
		lang = "en"
	}
	t := time.Date(year, month, day, 12, 0, 0, 0, time.UTC)
	return fmt.Sprintf(dayLayouts[lang], weekdays[lang][t.Weekday()], day, months[lang][month-1])
}

// When is a moment as a short label on the clock of loc: "Tue 3 Mar, 11:00",
// "вт, 3 мар., 11:00".
func When(lang string, t time.Time, loc *time.Location) string {
	t = t.In(loc)
	return Day(lang, t.Year(), t.Month(), t.Day()) + ", " + Clock(t)
}

// Clock is t's time of day on its own clock: "01:30", and "01:30 GMT-4" /
// "01:30 GMT-5" on the night the clocks show it twice (DST ends), so the
// two are told apart wherever a time is read.
func Clock(t time.Time) string {
	if ShownTwice(t) {
		return ClockInZone(t)
	}
	return t.Format("15:04")
}

// ClockInZone is t's time of day with its offset from UTC: "01:30 GMT-4",
// "01:45 GMT+10:30", "01:30 GMT". The offset, not the zone's abbreviation:
// the same in every language and every zone (many have no letters, and
// "EDT" means nothing in Russian), and what the widget writes too.
func ClockInZone(t time.Time) string {
	_, off := t.Zone()
	zone, sign := "GMT", "+"
	if off < 0 {
		sign, off = "-", -off
	}
	switch h, m := off/3600, off%3600/60; {
	case m != 0:
		zone += fmt.Sprintf("%s%d:%02d", sign, h, m)
	case h != 0:
		zone += fmt.Sprintf("%s%d", sign, h)
	}
	return t.Format("15:04") + " " + zone
}

// ShownTwice reports whether the clock of t's location shows t's wall
// time twice: t is in the hour (or half hour) the clocks are put back
// over, before or after they are.
func ShownTwice(t time.Time) bool {
	start, end := t.ZoneBounds()
	_, off := t.Zone()
	if !start.IsZero() {
		// Put back at start: what t shows was shown before it too.
		if _, before := start.Add(-time.Second).Zone(); before > off && t.Sub(start) < time.Duration(before-off)*time.Second {
			return true
		}
	}
	if !end.IsZero() {
		// To be put back at end: what t shows will be shown again.
		if _, after := end.Zone(); after < off && end.Sub(t) <= time.Duration(off-after)*time.Second {
			return true
		}
	}
	return false
}
