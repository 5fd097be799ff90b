package panel

import (
	"testing"
	"time"

	"salon/booking"
)

// weekRows lays out the rows of a week of empty columns from first.
func weekRows(zone string, first booking.Date, step int) ([]rowKey, map[booking.Date]*dayClock) {
	loc, _ := time.LoadLocation(zone)
	var cols []column
	days := map[booking.Date]*dayClock{}
	for k := range 7 {
		d := first.AddDays(k)
		cols = append(cols, column{day: d})
		days[d] = newDayClock(d, loc, step, 0)
	}
	return mergeRows(cols, days), days
}

// A week with a day whose midnight the clocks skip (Santiago, 6 Sep 2026:
// 24:00 -> 01:00) has the rows of any other week, less none: 48 at 30 minutes.
func TestAWeekWhoseMidnightIsSkippedHasItsRows(t *testing.T) {
	keys, days := weekRows("America/Santiago", booking.Date{Year: 2026, Month: 9, Day: 3}, 30)
	dst := days[booking.Date{Year: 2026, Month: 9, Day: 6}]
	if dst.keys[0].minute != 60 {
		t.Errorf("6 Sep's first row is %q, want 01:00", dst.keys[0].label)
	}
	if len(keys) != 48 {
		var labels []string
		for _, k := range keys {
			labels = append(labels, k.label)
		}
		t.Errorf("%d rows, want 48: %v", len(keys), labels)
	}
}

// Rows stay on the wall clock's grid through a gap that is not a multiple
// of the step: 09:00 is a row of every day of a week at 45 minutes (New
// York, 8 Mar 2026) and at 60 (Lord Howe's 30-minute gap, 4 Oct 2026).
func TestRowsStayOnTheClockAfterAGap(t *testing.T) {
	for _, c := range []struct {
		zone string
		day  booking.Date
		step int
	}{
		{"America/New_York", booking.Date{Year: 2026, Month: 3, Day: 8}, 45},
		{"Australia/Lord_Howe", booking.Date{Year: 2026, Month: 10, Day: 4}, 60},
	} {
		keys, days := weekRows(c.zone, c.day.AddDays(-1), c.step)
		dc := days[c.day]
		has := false
		for _, k := range dc.keys {
			has = has || k.minute == 9*60
		}
		if !has {
			t.Errorf("%s %s, step %d: no 09:00 row that day (rows after the gap: %q, %q, ...); the week has %d rows, a day %d",
				c.zone, c.day, c.step, dc.keys[3].label, dc.keys[4].label, len(keys), len(days[c.day.AddDays(-1)].keys))
		}
	}
}
