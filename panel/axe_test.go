package panel_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking/bookingtest"
	"salon/internal/browsertest"
	"salon/internal/demo"
)

// axe-core finds no violation of WCAG 2.2 AA (nor of its best practices:
// tap targets, labels, named landmarks) on any page of the panel, in
// Russian and English, on a desktop and at 390 px, where no page is wider
// than the screen.
func TestAxeOnEveryPanelPage(t *testing.T) {
	w := newWorld(t)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	sv := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	cl := scalar[int64](t, w, `SELECT id FROM clients WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	bk := scalar[int64](t, w, `SELECT id FROM bookings WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	day := w.today().String()
	// The booking has messages, one of them failed, and its client's
	// confirmation: the tables the booking and attention pages show.
	if _, err := w.Pool.Exec(bookingtest.System(), `INSERT INTO messages (salon_id, booking_id, kind, channel, recipient, state, error, segments, sent_at)
		VALUES ($1, $2, 'confirmation', 'email', 'client@example.com', 'sent', NULL, NULL, now()),
		       ($1, $2, 'reminder', 'sms', '+79990000001', 'failed', 'sms provider refused (207): На этот номер нельзя отправлять сообщения', 2, NULL)`,
		w.salon.ID, bk); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pool.Exec(bookingtest.System(), `UPDATE bookings SET client_confirmed_at = now(), client_confirmed_via = 'sms' WHERE id = $1`, bk); err != nil {
		t.Fatal(err)
	}
	shots := map[string]string{fmt.Sprintf("/panel/bookings/%d", bk): "booking", "/panel/attention": "attention", "/panel/settings": "settings",
		"/panel/reminders": "reminders", fmt.Sprintf("/panel/clients/%d", cl): "client", "/panel/waitlist?date=" + day: "waitlist"}
	pages := []string{"/panel/", "/panel/day/" + day, fmt.Sprintf("/panel/masters/%d/week/%s", m, day), "/panel/bookings/new",
		fmt.Sprintf("/panel/bookings/%d", bk), "/panel/payments", "/panel/attention", "/panel/reminders", "/panel/clients", fmt.Sprintf("/panel/clients/%d", cl),
		"/panel/masters", fmt.Sprintf("/panel/masters/%d", m), "/panel/services", fmt.Sprintf("/panel/services/%d", sv),
		"/panel/settings", "/panel/users", "/panel/import", "/panel/audit", "/panel/online", "/panel/bookings/999999",
		"/panel/waitlist?date=" + day}
	for i, size := range [][2]int64{{1280, 900}, {390, 844}} {
		ctx := browsertest.Tab(t, size[0], size[1])
		if i == 0 { // the tabs share the browser's cookies: one login
			do(t, ctx, chromedp.Navigate(w.base+"/panel/login"), chromedp.WaitVisible(css(`input[name=email]`)))
			browsertest.Axe(t, ctx, "the login page")
			do(t, ctx,
				chromedp.SendKeys(css(`input[name=email]`), demo.Email),
				chromedp.SendKeys(css(`input[name=password]`), demo.Password),
				chromedp.Submit(css(`input[name=password]`)),
				chromedp.WaitVisible(css(`#grid`)),
			)
		}
		for _, lang := range []string{"ru", "en"} {
			do(t, ctx, chromedp.Navigate(w.base+"/panel/settings"), chromedp.WaitVisible(css(`#main`)))
			value(t, ctx, chromedp.Evaluate[bool](`(function(){var f=document.querySelector('form[action="/panel/lang"]');`+
				`var i=f.querySelector('[name=lang]');i.value='`+lang+`';f.submit();return true})()`))
			do(t, ctx, chromedp.WaitVisible(css(fmt.Sprintf(`html[lang=%s]`, lang))))
			for _, p := range pages {
				do(t, ctx, chromedp.Navigate(w.base+p), chromedp.WaitReady(css(`#main`)))
				browsertest.Axe(t, ctx, fmt.Sprintf("%s (%s, %d px)", p, lang, size[0]))
				if name, ok := shots[p]; ok {
					png := value(t, ctx, chromedp.FullScreenshot(100))
					if err := os.WriteFile(filepath.Join(t.ArtifactDir(), fmt.Sprintf("%s-%s-%d.png", name, lang, size[0])), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				// Nothing wider than the screen: the page never scrolls
				// sideways (the day grid scrolls inside its own box).
				if wide := value(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); wide > 0 {
					t.Errorf("%s (%s) at %d px is %d px wider than the screen", p, lang, size[0], wide)
				}
			}
		}
	}
}
