package panel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/browsertest"
)

// TestBrowserRunsTheWaitingList: at the desk, a caller is added to the
// waiting list for tomorrow; the list shows them; a free time is offered
// to them by hand (an offer in the database, shown in their row); a time
// that is taken cannot be offered (the reason is shown, nothing is
// written); the fill rate is on the page. axe-core, screenshots at 390 px
// and on a desktop.
func TestBrowserRunsTheWaitingList(t *testing.T) {
	w := newWorld(t)
	sys := bookingtest.System()
	loc := w.salon.Location()
	anna := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 AND name = 'Анна'`, w.salon.ID)
	haircut := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 AND name = 'Женская стрижка'`, w.salon.ID)
	day := w.today().AddDays(1)
	slots, err := w.Svc.Slots(sys, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: haircut, MasterID: anna, From: day})
	if err != nil || len(slots) == 0 {
		t.Fatalf("no free time of Anna's tomorrow (%v)", err)
	}
	free := slots[0].Start.In(loc)
	taken := scalar[string](t, w, `SELECT to_char(starts_at AT TIME ZONE $3, 'HH24:MI') FROM bookings
		WHERE salon_id = $1 AND master_id = $2 AND status IN ('pending', 'confirmed') AND (starts_at AT TIME ZONE $3)::date = $4
		ORDER BY starts_at LIMIT 1`, w.salon.ID, anna, w.salon.Timezone, day.String())

	ctx := browsertest.Tab(t, 1280, 900)
	do(t, ctx, logIn(w)...)
	do(t, ctx, chromedp.Navigate(w.base+"/panel/waitlist?date="+day.String()), chromedp.WaitVisible(css(`#add-waiting`)),
		chromedp.SetValue(css(`#add-waiting select[name=service]`), fmt.Sprint(haircut)),
		chromedp.SetValue(css(`#add-waiting select[name=master]`), fmt.Sprint(anna)),
		chromedp.SetValue(css(`#add-waiting input[name=from]`), day.String()),
		chromedp.SetValue(css(`#add-waiting input[name=to]`), day.AddDays(2).String()),
		chromedp.SendKeys(css(`#add-waiting input[name=phone]`), "+7 999 555-40-01"),
		chromedp.SendKeys(css(`#add-waiting input[name=name]`), "Caller Waiting"),
		chromedp.Click(css(`#add-waiting button[type=submit]`)), chromedp.WaitVisible(css(`p.notice`)), chromedp.WaitVisible(css(`#waitlist`)))
	entry := scalar[int64](t, w, `SELECT w.id FROM waitlist_entries w JOIN clients c ON c.id = w.client_id
		WHERE c.phone = '+79995554001' AND w.status = 'waiting' AND w.source = 'panel'`)
	row := fmt.Sprintf(`#entry-%d`, entry)
	if got := textOf(t, ctx, row); !strings.Contains(got, "Caller Waiting") || !strings.Contains(got, "Анна") {
		t.Fatalf("the list's row: %q", got)
	}
	if got := textOf(t, ctx, "#fill-rate"); !strings.Contains(got, "Заполняемость") {
		t.Fatalf("the fill rate: %q", got)
	}
	// A time is offered of the masters who do the service, and the days
	// are written as the reader writes them.
	offerable := value(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+row+` .offer-form select[name=master] option')].map(o => o.textContent)`))
	doers := scalar[int64](t, w, `SELECT count(*) FROM master_services WHERE service_id = $1`, haircut)
	if len(offerable) != int(doers) || !slices.Contains(offerable, "Анна") {
		t.Errorf("the masters a time may be offered of: %q, want the %d who do the haircut", offerable, doers)
	}
	if got := textOf(t, ctx, row); !strings.Contains(got, fmt.Sprintf("%02d.%02d–%02d.%02d", day.Day, day.Month, day.AddDays(2).Day, day.AddDays(2).Month)) {
		t.Errorf("the row's days: %q", got)
	}
	// A taken time: refused, with why; nothing offered.
	if taken != "" {
		do(t, ctx, chromedp.SetValue(css(row+` .offer-form input[name=time]`), taken),
			chromedp.Click(css(row+` .offer-form button[type=submit]`)), chromedp.WaitVisible(css(`p.error`)))
		if got := textOf(t, ctx, "p.error"); !strings.Contains(got, "не подходит") {
			t.Errorf("offering a taken time: %q", got)
		}
		if n := scalar[int64](t, w, `SELECT count(*) FROM waitlist_offers WHERE entry_id = $1`, entry); n != 0 {
			t.Fatalf("a taken time was offered: %d offers", n)
		}
	}
	do(t, ctx, chromedp.SetValue(css(row+` .offer-form input[name=time]`), free.Format("15:04")),
		chromedp.Click(css(row+` .offer-form button[type=submit]`)), chromedp.WaitVisible(css(`p.notice`)))
	if n := scalar[int64](t, w, `SELECT count(*) FROM waitlist_offers WHERE entry_id = $1 AND starts_at = $2 AND status = 'open'`,
		entry, slots[0].Start); n != 1 {
		t.Fatalf("%d offers of %s, want 1 open", n, free.Format("15:04"))
	}
	if got := textOf(t, ctx, row); !strings.Contains(got, free.Format("15:04")) || !strings.Contains(got, "открыто") {
		t.Fatalf("the row after the offer: %q", got)
	}
	browsertest.Axe(t, ctx, "the waiting list")
	shot(t, ctx, "waitlist-1280.png", 1280, 900)
	shot(t, ctx, "waitlist-390.png", 390, 900)
	// Removed from the list: the row says so, and nothing more is offered.
	do(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Click(css(row+` form[action$="/leave"] button`)),
		chromedp.WaitNotPresent(css(row+` form[action$="/leave"]`)))
	if st := scalar[string](t, w, `SELECT status FROM waitlist_entries WHERE id = $1`, entry); st != booking.WaitLeft {
		t.Fatalf("the entry is %s after removal", st)
	}
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return value(t, ctx, chromedp.Text(css(sel)))
}
