package widget_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/internal/browsertest"
)

// axe-core finds no violation of WCAG 2.2 AA (nor of its best practices)
// in any state of the widget, in Russian and English, at 390 px and on a
// desktop, and no state is wider than the screen.
func TestAxeOnEveryWidgetState(t *testing.T) {
	s := newSite(t)
	taken := s.book(s.masters[0], "16:00")
	for _, size := range [][2]int64{{390, 844}, {1280, 900}} {
		for i, lang := range []string{"ru", "en"} {
			ctx := browsertest.Tab(t, size[0], size[1])
			check := func(state string) {
				t.Helper()
				browsertest.Axe(t, ctx, fmt.Sprintf("%s (%s, %d px)", state, lang, size[0]))
				if lang == "ru" {
					// No English left on a Russian page but the test salon's
					// own names (Studio, Haircut, Master N, Axe Client).
					words, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(document.body.innerText + ' ' +
						Array.from(document.querySelectorAll('[aria-label],[title],[placeholder]')).map(function (e) {
							return [e.getAttribute('aria-label'), e.getAttribute('title'), e.getAttribute('placeholder')].join(' '); }).join(' '))
						.split(/\s+/).filter(function (w) { return /[A-Za-z]{3,}/.test(w) && !/[@\/:._=0-9+]/.test(w) &&
						['Studio', 'Haircut', 'Master', 'Axe', 'Client', 'English'].indexOf(w.replace(/[^A-Za-z]/g, '')) < 0; })`))
					if err != nil || len(words) > 0 {
						t.Errorf("%s in Russian shows English: %v (%v)", state, words, err)
					}
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
				if err != nil || wide > 0 {
					t.Errorf("%s (%s) at %d px is %d px wider than the screen (%v)", state, lang, size[0], wide, err)
				}
			}
			m := s.masters[0]
			run(t, ctx, chromedp.Navigate(s.base+"/w/studio?lang="+lang), chromedp.WaitVisible(css(`button[data-service-id]`)))
			check("services")
			run(t, ctx, chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, s.svc.ID))), chromedp.WaitVisible(css(`#masters button`)))
			check("masters")
			run(t, ctx, chromedp.Click(css(fmt.Sprintf(`#masters button[data-master-id="%d"]`, m.ID))), chromedp.WaitVisible(css(`#days button`)))
			check("days")
			run(t, ctx, chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))), chromedp.WaitVisible(css(`#times button`)))
			check("times")
			run(t, ctx, chromedp.Click(css(`#times button[data-time="15:00"]`)), chromedp.WaitVisible(css(`#client-name`)))
			check("contact")
			run(t, ctx, chromedp.Click(css("#contact-next")), chromedp.WaitVisible(css(`#err-name`)))
			check("contact with errors")
			run(t, ctx, contact("Axe Client", fmt.Sprintf("+7 999 100-20-%d%d", size[0]%10, i))...)
			check("confirm")
			s.book(m, "15:00") // someone is quicker
			run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css("#taken")))
			check("taken, with the nearest free times")
			run(t, ctx, chromedp.Click(css("#alternatives button")), chromedp.WaitVisible(css("#confirm")),
				chromedp.Click(css("#confirm")), chromedp.WaitVisible(css(`section[data-step="done"]`)))
			check("done")
			run(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/w/studio/manage/%d?lang=%s#t=%s", s.base, taken.id(), lang, taken.str("manage_token"))),
				chromedp.WaitVisible(css("#manage-actions")))
			check("manage")
			run(t, ctx, chromedp.Click(css("#cancel")), chromedp.WaitVisible(css("#cancel-yes")))
			check("cancel?")
			run(t, ctx, chromedp.Navigate(s.base+"/w/nowhere?lang="+lang), chromedp.WaitVisible(css("h1")))
			check("not found")
			// The slot taken by the race is free again for the next pass.
			if _, err := s.Pool.Exec(t.Context(), `UPDATE bookings SET status = 'cancelled' WHERE id <> $1`, taken.id()); err != nil {
				t.Fatal(err)
			}
		}
	}
}
