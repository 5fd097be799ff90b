package panel_test

import (
	"fmt"
	"net/url"
	"testing"

	"salon/booking/bookingtest"
)

// FuzzPanelForms posts whatever a browser (or an attacker with a session)
// could send to the panel's forms: a page of the panel (the form again with
// its errors, or an error page), never a 500.
func FuzzPanelForms(f *testing.F) {
	w := newWorldOn(f, bookingtest.New(f))
	b := w.owner()
	m := scalar[int64](f, w, `SELECT id FROM masters ORDER BY id LIMIT 1`)
	cl := scalar[int64](f, w, `SELECT id FROM clients ORDER BY id LIMIT 1`)
	sv := scalar[int64](f, w, `SELECT id FROM services ORDER BY id LIMIT 1`)
	paths := []string{"/panel/bookings", "/panel/settings", "/panel/services", fmt.Sprintf("/panel/services/%d", sv),
		fmt.Sprintf("/panel/clients/%d", cl), fmt.Sprintf("/panel/masters/%d/shifts", m), fmt.Sprintf("/panel/masters/%d/template", m),
		fmt.Sprintf("/panel/masters/%d/offers", m), "/panel/users", "/panel/masters"}
	for _, s := range [][3]string{{"2026-03-03", "10:00", "+79991234567"}, {"", "", ""}, {"31.02.2026", "25:61", "abc"},
		{"2026-03-03", "9:5", "\x00"}, {"9999-12-31", "24:00", "+7 (999) 123-45-67"}} {
		f.Add(uint8(0), s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, which uint8, a, c, d string) {
		form := url.Values{}
		for _, k := range []string{"date", "from", "to"} {
			form.Set(k, a)
		}
		for _, k := range []string{"time", "start", "end", "break_start", "break_end", "start_1", "end_1", "duration", "buffer",
			"slot_step_min", "min_notice_min", "hold_min", "cutoff_hours", "horizon_days", fmt.Sprintf("dur_%d", sv)} {
			form.Set(k, c)
		}
		for _, k := range []string{"phone", "name", "notes", "email", "password", "timezone", "price", "deposit", "role", "locale",
			"refund_policy", "master", "service", "key", fmt.Sprintf("price_%d", sv)} {
			form.Set(k, d)
		}
		form.Set(fmt.Sprintf("does_%d", sv), "1")
		b.t = t
		a2 := b.post(paths[int(which)%len(paths)], form)
		if a2.status >= 500 {
			t.Fatalf("%s %v: %d", paths[int(which)%len(paths)], form, a2.status)
		}
	})
}
