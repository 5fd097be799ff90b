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
