package i18n

import (
	"testing"
	"time"
)

func TestClockNamesTheZoneOfATimeShownTwice(t *testing.T) {
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	ny, berlin, lordHowe, moscow := zone("America/New_York"), zone("Europe/Berlin"), zone("Australia/Lord_Howe"), zone("Europe/Moscow")
	london, stJohns := zone("Europe/London"), zone("America/St_Johns")
	utc := func(s string) time.Time {
		x, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, c := range []struct {
		at   string
		loc  *time.Location
		want string
	}{
		{"2026-11-01T04:59:00Z", ny, "00:59"},       // before the repeated hour
		{"2026-11-01T05:00:00Z", ny, "01:00 GMT-4"}, // its first showing
		{"2026-11-01T05:30:00Z", ny, "01:30 GMT-4"},
		{"2026-11-01T05:59:00Z", ny, "01:59 GMT-4"},
		{"2026-11-01T06:00:00Z", ny, "01:00 GMT-5"}, // and its second
		{"2026-11-01T06:30:00Z", ny, "01:30 GMT-5"},
		{"2026-11-01T06:59:00Z", ny, "01:59 GMT-5"},
		{"2026-11-01T07:00:00Z", ny, "02:00"},
		{"2026-03-08T06:30:00Z", ny, "01:30"}, // the spring night shows each time once
		{"2026-03-08T07:30:00Z", ny, "03:30"},
		{"2026-10-25T00:30:00Z", berlin, "02:30 GMT+2"},
		{"2026-10-25T01:30:00Z", berlin, "02:30 GMT+1"},
		{"2026-10-25T02:30:00Z", berlin, "03:30"},
		{"2026-04-04T14:45:00Z", lordHowe, "01:45 GMT+11"}, // put back half an hour at 02:00
		{"2026-04-04T15:15:00Z", lordHowe, "01:45 GMT+10:30"},
		{"2026-04-04T14:15:00Z", lordHowe, "01:15"},
		{"2026-10-25T00:30:00Z", london, "01:30 GMT+1"}, // an offset of 0 is GMT alone
		{"2026-10-25T01:30:00Z", london, "01:30 GMT"},
		{"2026-11-01T04:00:00Z", stJohns, "01:30 GMT-2:30"}, // west of UTC by hours and minutes
		{"2026-11-01T05:00:00Z", stJohns, "01:30 GMT-3:30"},
		{"2026-10-25T00:30:00Z", moscow, "03:30"},
		{"2026-06-01T12:00:00Z", time.UTC, "12:00"},
	} {
		if got := Clock(utc(c.at).In(c.loc)); got != c.want {
			t.Errorf("%s in %s: %q, want %q", c.at, c.loc, got, c.want)
		}
	}
}

// A day is written as the widget's browser writes it (Chromium's ru-RU and
// en-GB, weekday, day and month short), so an e-mail, the bot and the
// widget name one day alike: "сб, 12 дек." in all three.
func TestADayReadsAsTheWidgetWritesIt(t *testing.T) {
	ru := []string{"пн, 12 янв.", "чт, 12 февр.", "чт, 12 мар.", "вс, 12 апр.", "вт, 12 мая", "пт, 12 июн.",
		"вс, 12 июл.", "ср, 12 авг.", "сб, 12 сент.", "пн, 12 окт.", "чт, 12 нояб.", "сб, 12 дек."}
	for m, want := range ru {
		if got := Day("ru", 2026, time.Month(m+1), 12); got != want {
			t.Errorf("ru, month %d: %q, want %q", m+1, got, want)
		}
	}
	if got := Day("en", 2026, time.December, 12); got != "Sat 12 Dec" {
		t.Errorf("en: %q, want Sat 12 Dec", got)
	}
	loc, _ := time.LoadLocation("Asia/Yekaterinburg")
	if got := When("ru", time.Date(2026, 12, 12, 6, 30, 0, 0, time.UTC), loc); got != "сб, 12 дек., 11:30" {
		t.Errorf("When: %q", got)
	}
}
