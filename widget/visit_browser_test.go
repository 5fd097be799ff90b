package widget_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/browsertest"
)

// TestBrowserBooksAVisit books a visit of two services in the widget, a
// haircut with a named master and a colour with any master, at 390 px and
// on a desktop, in Russian and English: the whole visit's times, one
// confirmation, both segments in the database; then moves it from the
// manage page. Screenshots and axe-core at each step.
func TestBrowserBooksAVisit(t *testing.T) {
	s := newSite(t)
	colour := s.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, ProcessingMin: 30, FinishMin: 15, Price: 400000})
	if err := s.Svc.SetOffers(bookingtest.System(), s.salon.ID, s.masters[2].ID,
		[]booking.Offer{{ServiceID: s.svc.ID}, {ServiceID: colour.ID}}); err != nil {
		t.Fatal(err)
	}
	m := s.masters[0]
	dir := t.ArtifactDir()
	shot := func(ctx context.Context, name string) { t.Helper(); saveShot(t, ctx, name) }
	hour := 10
	var manage string
	for _, size := range []int64{390, 1280} {
		for _, lang := range []string{"ru", "en"} {
			ctx := browsertest.Tab(t, size, 900)
			tag := fmt.Sprintf("%s-%d", lang, size)
			at := fmt.Sprintf("%02d:00", hour)
			hour += 2
			run(t, ctx, chromedp.Navigate(s.base+"/w/studio?lang="+lang), chromedp.WaitVisible(css(`button[data-service-id]`)),
				chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, s.svc.ID))),
				chromedp.Click(css(fmt.Sprintf(`#masters button[data-master-id="%d"]`, m.ID))),
				chromedp.WaitVisible(css(`#add-service`)), chromedp.Click(css(`#add-service`)),
				chromedp.WaitVisible(css(fmt.Sprintf(`button[data-service-id="%d"]`, colour.ID))))
			if got := text(t, ctx, "#chosen"); !strings.Contains(got, s.svc.Name) || !strings.Contains(got, m.Name) {
				t.Errorf("%s: the second service's step recalls %q, want the haircut with %s", tag, got, m.Name)
			}
			shot(ctx, "visit-1-second-service-"+tag)
			run(t, ctx, chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, colour.ID))),
				chromedp.Click(css(`#masters button[data-master-id="any"]`)), chromedp.WaitVisible(css(`#days button.free`)))
			browsertest.Axe(t, ctx, "visit days "+tag)
			shot(ctx, "visit-2-days-"+tag)
			run(t, ctx, chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))),
				chromedp.WaitVisible(css(fmt.Sprintf(`#times button[data-time="%s"]`, at))),
				chromedp.Click(css(fmt.Sprintf(`#times button[data-time="%s"]`, at))))
			run(t, ctx, contact("Vera "+tag, bookingtest.Phone())...)
			summary := text(t, ctx, "#summary")
			for _, want := range []string{s.svc.Name, colour.Name, m.Name, s.masters[2].Name, "6", at} {
				if !strings.Contains(summary, want) {
					t.Errorf("%s: the confirmation %q lacks %q", tag, summary, want)
				}
			}
			browsertest.Axe(t, ctx, "visit confirm "+tag)
			shot(ctx, "visit-3-confirm-"+tag)
			run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css(`section[data-step="done"]`)))
			shot(ctx, "visit-4-done-"+tag)
			if manage == "" {
				href, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#manage-link"), "href"))
				if err != nil {
					t.Fatal(err)
				}
				manage = href.Value
			}
			if n := countBookings(t, s, fmt.Sprintf(`b.contact_name = 'Vera %s' AND b.status = 'confirmed'`, tag)); n != 2 {
				t.Fatalf("%s: %d segments booked, want 2", tag, n)
			}
		}
	}
	// The manage page moves the visit whole: to the next day's 10:00, its
	// colour after.
	ctx := browsertest.Tab(t, 390, 900)
	run(t, ctx, chromedp.Navigate(manage), chromedp.WaitVisible(css("#manage-actions")))
	if got := text(t, ctx, "#manage-details"); !strings.Contains(got, colour.Name) || !strings.Contains(got, s.svc.Name) {
		t.Fatalf("the manage page shows %q, want both services", got)
	}
	run(t, ctx, chromedp.Click(css("#reschedule")), chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay.AddDays(1)))),
		chromedp.Click(css(`#times button[data-time="10:00"]`)), chromedp.WaitVisible(css("#confirm")), chromedp.Click(css("#confirm")),
		chromedp.WaitVisible(css("#manage-result")))
	shot(ctx, "visit-5-moved-ru-390")
	if n := countBookings(t, s, `b.contact_name = 'Vera ru-390' AND b.status = 'confirmed' AND b.starts_at IN ($$`+
		bookingtest.At(s.salon, testDay.AddDays(1), "10:00").Format("2006-01-02 15:04:05-07")+`$$, $$`+
		bookingtest.At(s.salon, testDay.AddDays(1), "11:00").Format("2006-01-02 15:04:05-07")+`$$)`); n != 2 {
		t.Fatalf("%d of the visit's segments at 10:00 and 11:00 the next day after the move", n)
	}
	t.Logf("screenshots in %s", dir)
}
