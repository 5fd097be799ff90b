package widget_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/browsertest"
)

// fillDay books master m's whole test day, 10:00 to 20:00, and returns
// the 15:00 booking.
func fillDay(t *testing.T, s *site, m *booking.Master) *booking.Booking {
	t.Helper()
	var at15 *booking.Booking
	for h := 10; h < 20; h++ {
		b, err := s.Svc.Book(bookingtest.System(), booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: m.ID,
			StartsAt: bookingtest.At(s.salon, testDay, fmt.Sprintf("%02d:00", h)), Client: booking.ClientInput{Name: "Busy", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		if h == 15 {
			at15 = b
		}
	}
	return at15
}

// TestBrowserWaitsForAFreedTime: a client finds the master's day full,
// joins the waiting list from the day step, and lands on the page of
// their place; a booking is cancelled; the page shows the freed time, and
// one tap books it (the manage page of the booking follows). At 390 px in
// Russian and on a desktop in English, axe-core at each step, screenshots.
func TestBrowserWaitsForAFreedTime(t *testing.T) {
	s := newSite(t)
	sys := bookingtest.System()
	for i, c := range []struct {
		size int64
		lang string
	}{{390, "ru"}, {1280, "en"}} {
		m := s.masters[i]
		at15 := fillDay(t, s, m)
		tag := fmt.Sprintf("%s-%d", c.lang, c.size)
		phone := bookingtest.Phone()
		ctx := browsertest.Tab(t, c.size, 900)
		run(t, ctx, chromedp.Navigate(s.base+"/w/studio?lang="+c.lang), chromedp.WaitVisible(css(`button[data-service-id]`)),
			chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, s.svc.ID))),
			chromedp.Click(css(fmt.Sprintf(`#masters button[data-master-id="%d"]`, m.ID))),
			chromedp.WaitVisible(css(fmt.Sprintf(`#days button.full[data-date="%s"]`, testDay))))
		saveShot(t, ctx, "wait-1-day-full-"+tag)
		run(t, ctx, chromedp.Click(css(`#wait-start`)), chromedp.WaitVisible(css(`#wait-form`)))
		if got := text(t, ctx, "#wait-what"); !strings.Contains(got, s.svc.Name) || !strings.Contains(got, m.Name) {
			t.Errorf("%s: the waiting list's form says %q, want the service and master chosen", tag, got)
		}
		run(t, ctx, chromedp.SetValue(css("#wait-from"), testDay.String()), chromedp.SetValue(css("#wait-to"), testDay.String()),
			chromedp.SendKeys(css("#wait-name"), "Vera "+tag), chromedp.SendKeys(css("#wait-phone"), phone))
		browsertest.Axe(t, ctx, "waitlist form "+tag)
		saveShot(t, ctx, "wait-2-form-"+tag)
		run(t, ctx, chromedp.Click(css("#wait-join")), chromedp.WaitVisible(css(`section[data-step="entry"]`)),
			chromedp.WaitVisible(css(`#offers-none`)))
		details := text(t, ctx, "#entry-details")
		if !strings.Contains(details, s.svc.Name) || !strings.Contains(details, m.Name) {
			t.Errorf("%s: the entry's page says %q", tag, details)
		}
		browsertest.Axe(t, ctx, "waitlist entry "+tag)
		saveShot(t, ctx, "wait-3-entry-"+tag)

		if _, err := s.Svc.Cancel(sys, booking.CancelRequest{BookingID: at15.ID}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Svc.OfferFreed(sys); err != nil || n != 1 {
			t.Fatalf("%s: %d offers (%v), want 1", tag, n, err)
		}
		run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`#offers button.take`)))
		if got := text(t, ctx, "#offers"); !strings.Contains(got, "15:00") || !strings.Contains(got, m.Name) {
			t.Errorf("%s: the offers read %q, want 15:00 with %s", tag, got, m.Name)
		}
		browsertest.Axe(t, ctx, "waitlist offer "+tag)
		saveShot(t, ctx, "wait-4-offer-"+tag)
		run(t, ctx, chromedp.Click(css(`#offers button.take`)), chromedp.WaitVisible(css(`section[data-step="manage"]`)),
			chromedp.WaitVisible(css(`#manage-actions`)))
		if got := text(t, ctx, "#manage-details"); !strings.Contains(got, "15:00") {
			t.Errorf("%s: the booking's page says %q, want 15:00", tag, got)
		}
		saveShot(t, ctx, "wait-5-booked-"+tag)
		if n := countBookings(t, s, fmt.Sprintf(`c.phone = '%s' AND b.status = 'confirmed' AND b.master_id = %d AND b.starts_at = '%s'`,
			phone, m.ID, bookingtest.At(s.salon, testDay, "15:00").Format("2006-01-02T15:04:05Z07:00"))); n != 1 {
			t.Fatalf("%s: %d bookings of the offer, want 1", tag, n)
		}
	}
}

// TestOfferLinkPage: the link of an offer's message shows the time and
// changes nothing on GET (a link preview books nothing); its POST books
// and goes on to the booking's page; the same link again says the time is
// the client's; an unknown link is not found.
func TestOfferLinkPage(t *testing.T) {
	s := newSite(t)
	sys := bookingtest.System()
	m := s.masters[0]
	at15 := fillDay(t, s, m)
	e, err := s.Svc.JoinWaitlist(booking.As(context.Background(), booking.Visitor()), booking.WaitRequest{SalonID: s.salon.ID,
		ServiceID: s.svc.ID, MasterID: m.ID, From: testDay, To: testDay, Client: booking.ClientInput{Name: "Olga", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.Cancel(sys, booking.CancelRequest{BookingID: at15.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Svc.OfferFreed(sys); err != nil {
		t.Fatal(err)
	}
	// The link an e-mail would carry (this site sends no e-mail).
	token := "offer-link-token-0123456789"
	sum := sha256.Sum256([]byte(token))
	if _, err := s.Pool.Exec(context.Background(), `INSERT INTO waitlist_links (token_hash, offer_id, expires_at)
		SELECT $1, id, starts_at FROM waitlist_offers WHERE entry_id = $2`, sum[:], e.ID); err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		t.Helper()
		r, err := noRedirect.Get(s.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	code, page := get("/o/" + token + "?lang=en")
	if code != http.StatusOK || !strings.Contains(page, "A time is free") || !strings.Contains(page, `id="action-do"`) {
		t.Fatalf("GET: %d\n%s", code, page)
	}
	// What it costs is said before it is taken.
	if price := `id="action-price">` + s.svc.Price.Format(s.salon.Currency, "en") + "<"; s.svc.Price == 0 || !strings.Contains(page, price) {
		t.Errorf("the offer's page does not say its price %s:\n%s", price, page)
	}
	if n := countBookings(t, s, `c.name = 'Olga'`); n != 0 {
		t.Fatalf("a GET booked %d", n)
	}
	r, err := noRedirect.PostForm(s.base+"/o/"+token+"?lang=en", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if loc := r.Header.Get("Location"); r.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "/w/studio/manage/") || !strings.Contains(loc, "#t=") {
		t.Fatalf("POST: %d to %q", r.StatusCode, loc)
	}
	if n := countBookings(t, s, `c.name = 'Olga' AND b.status = 'confirmed'`); n != 1 {
		t.Fatalf("%d bookings after the POST, want 1", n)
	}
	if code, page := get("/o/" + token + "?lang=en"); code != http.StatusOK || !strings.Contains(page, "You have booked this time") ||
		strings.Contains(page, `id="action-do"`) {
		t.Fatalf("the link again: %d\n%s", code, page)
	}
	if code, _ := get("/o/no-such-token"); code != http.StatusNotFound {
		t.Fatalf("an unknown link: %d, want 404", code)
	}
}

// TestBrowserWaitingWhileTimeIsFreeIsSaid: a client who joins the waiting
// list for days that have free times already is told so once, with the
// way to book one; sent again, she joins.
func TestBrowserWaitingWhileTimeIsFreeIsSaid(t *testing.T) {
	s := newSite(t)
	m := s.masters[0]
	ctx := browsertest.Tab(t, 390, 900)
	run(t, ctx, chromedp.Navigate(s.base+"/w/studio?lang=en"), chromedp.WaitVisible(css(`button[data-service-id]`)),
		chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, s.svc.ID))),
		chromedp.Click(css(fmt.Sprintf(`#masters button[data-master-id="%d"]`, m.ID))),
		chromedp.WaitVisible(css(fmt.Sprintf(`#days button.free[data-date="%s"]`, testDay))),
		chromedp.Click(css(`#wait-start`)), chromedp.WaitVisible(css(`#wait-form`)),
		chromedp.SetValue(css("#wait-from"), testDay.String()), chromedp.SetValue(css("#wait-to"), testDay.String()),
		chromedp.SetValue(css("#wait-part"), "12:00-17:00"),
		chromedp.SendKeys(css("#wait-name"), "Vera"), chromedp.SendKeys(css("#wait-phone"), bookingtest.Phone()),
		chromedp.Click(css("#wait-join")), chromedp.WaitVisible(css("#wait-free")))
	if got := text(t, ctx, "#wait-free"); !strings.Contains(got, "There is free time on these days already") || !strings.Contains(got, "12:00") ||
		strings.Contains(got, "11:") {
		t.Errorf("the waiting list's form says %q", got)
	}
	browsertest.Axe(t, ctx, "waitlist form, time free")
	if n := s.count(`SELECT count(*) FROM waitlist_entries`); n != 0 {
		t.Errorf("%d entries before the client sent the form again", n)
	}
	run(t, ctx, chromedp.Click(css("#wait-join")), chromedp.WaitVisible(css(`section[data-step="entry"]`)))
	if n := s.count(`SELECT count(*) FROM waitlist_entries`); n != 1 {
		t.Errorf("%d entries, want 1", n)
	}
}
