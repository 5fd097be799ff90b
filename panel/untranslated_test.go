package panel_test

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"salon/panel"
)

var (
	tagRE    = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`)
	latinRE  = regexp.MustCompile(`[A-Za-z][A-Za-z'-]{2,}`)
	tokenRE  = regexp.MustCompile(`\S+`)
	shownRE  = regexp.MustCompile(`(?:title|aria-label|placeholder|alt)="([^"]*)"`)
	allowRU  = []string{"Telegram", "SMS", "PNG", "SVG", "QR", "YooKassa", "Kassa", "UTC", "RUB", "USD", "EUR", "English", "CSV", "Excel", "JSON"}
	latinWRD = func(tok string) bool {
		// Addresses, links, zones, codes and e-mails are what they are.
		return !strings.ContainsAny(tok, "@/:._=<>0123456789")
	}
)

// The panel in Russian has no English left: every page (and a refused
// form) is rendered for a Russian salon's owner; no text is asked for that
// Russian lacks, and the visible text (and what screen readers say) has
// no Latin words but names like Telegram or PNG. A missing translation
// fails here, not on a page.
func TestNoEnglishInTheRussianPanel(t *testing.T) {
	w := newWorld(t)
	b := w.owner()
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	sv := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	cl := scalar[int64](t, w, `SELECT id FROM clients WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	day := w.today().String()
	var bookings []int64
	rows, err := w.Pool.Query(t.Context(), `SELECT id FROM bookings WHERE salon_id = $1 ORDER BY id`, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		_ = rows.Scan(&id)
		bookings = append(bookings, id)
	}
	pages := []string{"/panel/", "/panel/day/" + day, fmt.Sprintf("/panel/masters/%d/week/%s", m, day), "/panel/bookings/new",
		"/panel/payments", "/panel/attention", "/panel/reminders", "/panel/clients", fmt.Sprintf("/panel/clients/%d", cl), "/panel/masters",
		fmt.Sprintf("/panel/masters/%d", m), "/panel/services", fmt.Sprintf("/panel/services/%d", sv), "/panel/settings",
		"/panel/users", "/panel/import", "/panel/audit", "/panel/online", "/panel/bookings/999999", "/panel/nowhere"}
	for _, id := range bookings {
		pages = append(pages, fmt.Sprintf("/panel/bookings/%d", id))
	}
	check := func(what, body string) {
		t.Helper()
		text := tagRE.ReplaceAllString(body, " ")
		for _, m := range shownRE.FindAllStringSubmatch(body, -1) {
			text += " " + m[1]
		}
		text = html.UnescapeString(text)
		var english []string
		for _, tok := range tokenRE.FindAllString(text, -1) {
			if !latinWRD(tok) {
				continue
			}
			for _, word := range latinRE.FindAllString(tok, -1) {
				word = strings.Trim(word, "-'")
				if !slices.Contains(allowRU, word) && !slices.Contains(english, word) {
					english = append(english, word)
				}
			}
		}
		if len(english) > 0 {
			t.Errorf("%s shows English in Russian: %v", what, english)
		}
	}
	for _, p := range pages {
		check(p, b.get(p).body)
	}
	// Refused forms, with the core's reasons.
	for _, f := range []struct {
		path string
		form url.Values
	}{
		{"/panel/services", url.Values{"name": {""}, "duration": {"полчаса"}, "price": {"абв"}, "deposit": {"-1"}}},
		{fmt.Sprintf("/panel/masters/%d/shifts", m), url.Values{"date": {day}, "start": {"15:00"}, "end": {"10:00"}}},
		{"/panel/bookings", url.Values{"master": {fmt.Sprint(m)}, "service": {fmt.Sprint(sv)}, "date": {day}, "time": {"03:00"}, "phone": {"12"}, "name": {""}}},
		{"/panel/settings", url.Values{"name": {""}, "timezone": {"Mars/Base"}, "slot_step_min": {"x"}, "privacy_url": {"ftp://x"}}},
		{"/panel/users", url.Values{"email": {"not-an-email"}, "password": {"short"}, "role": {"admin"}}},
	} {
		a := b.post(f.path, f.form)
		check("POST "+f.path, a.body)
	}
	// A change the booking's state refuses: the core's reason in Russian.
	b.post(fmt.Sprintf("/panel/bookings/%d/cancel", bookings[0]), url.Values{"reason": {"тест"}})
	noShow := fmt.Sprintf("/panel/bookings/%d/no-show", bookings[0])
	a := b.post(noShow, url.Values{})
	if a.status != 409 || !strings.Contains(a.body, fmt.Sprintf("Запись №%d — отменена.", bookings[0])) {
		t.Errorf("a no-show of a cancelled booking: %d %s", a.status, a.body[max(0, strings.Index(a.body, `class="error"`)):][:min(600, len(a.body))])
	}
	check("POST "+noShow+" of a cancelled booking", a.body)
	if missing := panel.Untranslated(); len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("asked for in Russian and missing: %q", missing)
	}
}
