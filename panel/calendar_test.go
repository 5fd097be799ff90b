package panel_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	ics "github.com/arran4/golang-ical"
)

// TestMasterCalendarFeed: the panel makes a master's calendar link; the
// feed parses back as iCalendar with the master's bookings; a new link
// revokes the old one, and a revoked link is 404.
func TestMasterCalendarFeed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Вера'`)
	want := scalar[int64](t, w, `SELECT count(*) FROM bookings WHERE master_id = $1`, m)
	a := b.post(fmt.Sprintf("/panel/masters/%d/calendar", m), nil)
	link := regexp.MustCompile(`id="calendar-url">([^<]+)<`).FindStringSubmatch(a.body)
	if a.status != 200 || link == nil || !strings.HasPrefix(link[1], w.base+"/calendar/") {
		t.Fatalf("no calendar link: %d", a.status)
	}
	feed := func(url string) (int, *ics.Calendar) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return resp.StatusCode, nil
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
			t.Errorf("content type %q", ct)
		}
		raw, _ := io.ReadAll(resp.Body)
		cal, err := ics.ParseCalendar(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatalf("the feed does not parse: %v\n%s", err, raw)
		}
		return 200, cal
	}
	status, cal := feed(link[1])
	if status != 200 || int64(len(cal.Events())) != want || want == 0 {
		t.Fatalf("feed: %d, %d events, want %d", status, len(cal.Events()), want)
	}
	e := cal.Events()[0]
	start, err := e.GetStartAt()
	if err != nil || start.IsZero() || e.GetProperty(ics.ComponentPropertySummary) == nil ||
		!strings.Contains(e.GetProperty(ics.ComponentPropertySummary).Value, "Маникюр") {
		t.Errorf("event: %v %v", start, err)
	}
	// A new link revokes the old one.
	a = b.post(fmt.Sprintf("/panel/masters/%d/calendar", m), nil)
	second := regexp.MustCompile(`id="calendar-url">([^<]+)<`).FindStringSubmatch(a.body)
	if status, _ := feed(link[1]); status != 404 {
		t.Errorf("the replaced link: %d", status)
	}
	if status, _ := feed(second[1]); status != 200 {
		t.Errorf("the new link: %d", status)
	}
	b.post(fmt.Sprintf("/panel/masters/%d/calendar/revoke", m), nil)
	if status, _ := feed(second[1]); status != 404 {
		t.Errorf("the revoked link: %d", status)
	}
	if status, _ := feed(w.base + "/calendar/nothing.ics"); status != 404 {
		t.Errorf("an unknown link: %d", status)
	}
}
