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
		"ru": {"янв", "фев", "мар", "апр", "мая", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"},
	}
)

// Day is a day as a short label: "Tue 3 Mar" / "вт 3 мар" (English for a
// language the catalogue does not speak).
func Day(lang string, year int, month time.Month, day int) string {
	if _, ok := weekdays[lang]; !ok {
		lang = "en"
	}
	t := time.Date(year, month, day, 12, 0, 0, 0, time.UTC)
	return fmt.Sprintf("%s %d %s", weekdays[lang][t.Weekday()], day, months[lang][month-1])
}

// When is a moment as a short label on the clock of loc: "Tue 3 Mar, 11:00".
func When(lang string, t time.Time, loc *time.Location) string {
	t = t.In(loc)
	return Day(lang, t.Year(), t.Month(), t.Day()) + ", " + t.Format("15:04")
}
