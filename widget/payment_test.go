package widget_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/widget"
)

// paySite is the widget with the sandbox provider taking deposits,
// configured by opts.
func paySite(t *testing.T, opts ...func(*widget.Config)) (*site, *psp.Sandbox) {
	t.Helper()
	pool := bookingtest.Pool(t)
	sb := &psp.Sandbox{Pool: pool}
	e := &bookingtest.Env{Pool: pool, Clock: bookingtest.NewClock(bookingtest.DefaultNow)}
	e.Svc = booking.New(pool, booking.WithClock(e.Clock.Now), booking.WithPayments(sb))
	sb.Notify = widget.SandboxNotifier(e.Svc)
	s := &site{Env: e, t: t, client: &http.Client{}, router: openapiRouter(t), sandbox: sb}
	s.salon = e.Salon(t, booking.Salon{Slug: "studio", Name: "Studio", CutoffHours: 3, Locale: "en"})
	s.svc = e.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	m := e.Master(t, s.salon, s.svc)
	e.Shift(t, s.salon, m, testDay, 1, "10:00", "20:00")
	s.masters = []*booking.Master{m}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := widget.Config{Log: log}
	for _, o := range opts {
		o(&cfg)
	}
	base := serve(t, widget.New(e.Svc, cfg), log)
	s.base = base
	sb.BaseURL = base
	return s, sb
}

// TestDepositPaidThroughTheSandbox: the 201 carries the payment's URL; the
// sandbox page pays; the booking reads confirmed, the payment completed,
// with no URL any more; the ledger has the deposit once.
func TestDepositPaidThroughTheSandbox(t *testing.T) {
	t.Parallel()
	s, _ := paySite(t)
	r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], "11:00"))
	if r.status != 201 || r.str("status") != "pending" {
		t.Fatalf("book: %d %s", r.status, r.raw)
	}
	pay, _ := r.body["payment"].(map[string]any)
	url, _ := pay["url"].(string)
	if pay["status"] != "registered" || pay["amount"] != 1000.0 || !strings.HasPrefix(url, s.base+psp.SandboxPath) {
		t.Fatalf("payment %v", pay)
	}
	token := r.str("manage_token")
	id := r.id()
	// The client pays on the sandbox's page and is sent back to the salon.
	page, err := http.Get(url)
	if err != nil || page.StatusCode != 200 {
		t.Fatalf("payment page: %v", err)
	}
	page.Body.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(url, map[string][]string{"do": {"pay"}})
	back := resp.Header.Get("Location")
	if err != nil || resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(back, s.base+"/w/studio/back/") {
		t.Fatalf("pay: %v %v", resp, err)
	}
	resp.Body.Close()
	// The URL the provider keeps (and shows) carries no manage token:
	// nowhere it was stored, and not in what the client came back to.
	var stored string
	if err := s.Pool.QueryRow(context.Background(), `SELECT string_agg(return_url, ' ') FROM sandbox_payments`).Scan(&stored); err != nil ||
		strings.Contains(stored, token) || strings.Contains(back, token) || stored != back {
		t.Fatalf("the return URL %q (stored %q, %v) carries the manage token %q", back, stored, err, token)
	}
	ref := strings.TrimPrefix(back, s.base+"/w/studio/back/")
	// The page is the salon's, and no other salon's page opens it.
	s.Salon(t, booking.Salon{Slug: "rival", Name: "Rival"})
	for path, want := range map[string]int{"/w/studio/back/" + ref: 200, "/w/rival/back/" + ref: 404, "/w/studio/back/no-such-ref": 404} {
		if page, err := http.Get(s.base + path); err != nil || page.StatusCode != want {
			t.Fatalf("%s: %v %v, want %d", path, page, err, want)
		} else {
			page.Body.Close()
		}
	}
	ret := s.do("GET", "/api/v1/returns/"+ref, nil)
	pay, _ = ret.body["payment"].(map[string]any)
	if ret.status != 200 || ret.str("status") != "confirmed" || pay["status"] != "completed" || ret.str("manage_token") != "" {
		t.Fatalf("back from paying: %d %s", ret.status, ret.raw)
	}
	// The reference opens that page and nothing else.
	if c := s.do("POST", "/api/v1/bookings/"+itoa(id)+"/cancel", nil, "X-Manage-Token", ref); c.status != 404 {
		t.Errorf("the return reference as a manage token: %d", c.status)
	}
	g := s.do("GET", "/api/v1/bookings/"+itoa(id), nil, "X-Manage-Token", token)
	pay, _ = g.body["payment"].(map[string]any)
	if g.str("status") != "confirmed" || pay["status"] != "completed" || pay["url"] != nil {
		t.Fatalf("after paying: %s", g.raw)
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM ledger_entries WHERE entry_type = 'deposit_received'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d ledger entries (%v)", n, err)
	}
	// Its page at the provider says it is paid; once the client cancels
	// (refunded by the salon's policy), that it was refunded.
	sandboxStatus := func() string {
		t.Helper()
		page, err := http.Get(url + "?lang=en")
		if err != nil {
			t.Fatal(err)
		}
		defer page.Body.Close()
		b, _ := io.ReadAll(page.Body)
		m := regexp.MustCompile(`<dd id="status" data-status="[a-z_]+">([^<]*)</dd>`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("the sandbox's page: %s", b)
		}
		return string(m[1])
	}
	if got := sandboxStatus(); got != "paid" {
		t.Errorf("the sandbox's page of the paid deposit: %q", got)
	}
	if c := s.do("POST", "/api/v1/bookings/"+itoa(id)+"/cancel", map[string]any{}, "X-Manage-Token", token); c.status != 200 {
		t.Fatalf("cancel: %d %s", c.status, c.raw)
	}
	if got := sandboxStatus(); got != "paid, then refunded" {
		t.Errorf("the sandbox's page of the refunded deposit: %q", got)
	}
	// It is short-lived.
	s.Clock.Advance(booking.ReturnRefTTL + time.Minute)
	if ret := s.do("GET", "/api/v1/returns/"+ref, nil); ret.status != 404 {
		t.Errorf("a day later, the return reference: %d", ret.status)
	}
	// Its page still opens at its salon (and says so in the salon's
	// words, not the site's bare 404), and still at no other.
	for path, want := range map[string]int{"/w/studio/back/" + ref: 200, "/w/rival/back/" + ref: 404} {
		if page, err := http.Get(s.base + path); err != nil || page.StatusCode != want {
			t.Errorf("a day later, %s: %v %v, want %d", path, page, err, want)
		} else {
			page.Body.Close()
		}
	}
}

// TestDepositDeclined: the booking stays held, the payment failed with no
// URL; trying again gives a new payment (by the manage token, or by the
// earlier payment's return reference); a decline left alone releases the
// time when the hold ends.
func TestDepositDeclined(t *testing.T) {
	t.Parallel()
	s, _ := paySite(t)
	r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], "12:00"))
	pay, _ := r.body["payment"].(map[string]any)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	decline := func(url string) string {
		resp, err := noFollow.PostForm(url, map[string][]string{"do": {"decline"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Location")
	}
	back := decline(pay["url"].(string))
	g := s.do("GET", "/api/v1/bookings/"+itoa(r.id()), nil, "X-Manage-Token", r.str("manage_token"))
	pay, _ = g.body["payment"].(map[string]any)
	if g.str("status") != "pending" || pay["status"] != "failed" || pay["url"] != nil {
		t.Fatalf("after declining: %s", g.raw)
	}
	// Again, with the manage token: a new payment.
	again := s.do("POST", "/api/v1/bookings/"+itoa(r.id())+"/payment", map[string]any{}, "X-Manage-Token", r.str("manage_token"))
	p2, _ := again.body["payment"].(map[string]any)
	if again.status != 200 || p2["status"] != "registered" || p2["url"] == nil || p2["url"] == pay["url"] {
		t.Fatalf("pay again: %d %s", again.status, again.raw)
	}
	// Declined again; again from the page the client came back to.
	ref := back[strings.LastIndex(back, "/")+1:]
	decline(p2["url"].(string))
	third := s.do("POST", "/api/v1/returns/"+ref+"/payment", map[string]any{})
	p3, _ := third.body["payment"].(map[string]any)
	if third.status != 200 || p3["status"] != "registered" || p3["url"] == nil || p3["url"] == p2["url"] || third.body["manage_token"] != nil {
		t.Fatalf("pay again by the return reference: %d %s", third.status, third.raw)
	}
	if n := countBookings(t, s, `b.status = 'pending'`); n != 1 {
		t.Errorf("%d pending bookings", n)
	}
	// Left: the hold's end frees the time; nothing is owed any more.
	s.Clock.Advance(20 * time.Minute)
	if _, err := s.Svc.ExpireHolds(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if late := s.do("POST", "/api/v1/bookings/"+itoa(r.id())+"/payment", map[string]any{}, "X-Manage-Token", r.str("manage_token")); late.status != 409 {
		t.Errorf("pay after the hold ended: %d %s", late.status, late.raw)
	}
	if again := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], "12:00")); again.status != 201 {
		t.Errorf("the released slot: %d", again.status)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestBookingCalendarFile: the manage token's holder downloads the booking
// as an .ics file that parses back; without the token, not found.
func TestBookingCalendarFile(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	sal := *s.salon
	sal.Address, sal.Phone = "Москва, ул. Тверская, 1", "+74951234567"
	if _, err := s.Svc.UpdateSalon(bookingtest.System(), sal); err != nil {
		t.Fatal(err)
	}
	r := s.book(s.masters[0], "11:00")
	req, _ := http.NewRequest("GET", s.base+"/api/v1/bookings/"+itoa(r.id())+"/calendar", nil)
	req.Header.Set("X-Manage-Token", r.str("manage_token"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cal, err := ics.ParseCalendar(bytes.NewReader(raw))
	if err != nil || len(cal.Events()) != 1 {
		t.Fatalf("the .ics does not parse: %v", err)
	}
	e := cal.Events()[0]
	start, _ := e.GetStartAt()
	if !start.Equal(bookingtest.At(s.salon, testDay, "11:00")) {
		t.Errorf("event starts %v", start)
	}
	// Where to go, a way back, a reminder; never the manage token.
	if loc := e.GetProperty(ics.ComponentPropertyLocation); loc == nil || !strings.Contains(loc.Value, "Тверская") {
		t.Errorf("LOCATION %v", loc)
	}
	if u := e.GetProperty(ics.ComponentPropertyUrl); u == nil || u.Value != s.base+"/w/studio" {
		t.Errorf("URL %v", u)
	}
	if len(e.Alarms()) != 1 || e.Alarms()[0].GetProperty(ics.ComponentPropertyTrigger).Value != "-PT2H" {
		t.Errorf("alarms %v", e.Alarms())
	}
	if strings.Contains(string(raw), r.str("manage_token")) {
		t.Error("the .ics carries the manage token")
	}
	if g := s.do("GET", "/api/v1/bookings/"+itoa(r.id())+"/calendar", nil, "X-Manage-Token", "wrong"); g.status != 404 {
		t.Errorf("a wrong token: %d", g.status)
	}
}

// TestAReplayAfterPayingSaysThePayment: the booking sent again under its
// Idempotency-Key after its deposit was paid answers as the booking is
// now: confirmed, its payment completed and paid, with no URL to pay at.
func TestAReplayAfterPayingSaysThePayment(t *testing.T) {
	t.Parallel()
	s, _ := paySite(t)
	body := s.newBooking(s.masters[0], "11:00")
	r := s.do("POST", "/api/v1/salons/studio/bookings", body, "Idempotency-Key", "pay-then-replay")
	pay, _ := r.body["payment"].(map[string]any)
	url, _ := pay["url"].(string)
	if r.status != 201 || r.str("status") != "pending" || url == "" {
		t.Fatalf("book: %d %s", r.status, r.raw)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(url, map[string][]string{"do": {"pay"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay: %v %v", resp, err)
	}
	resp.Body.Close()
	again := s.do("POST", "/api/v1/salons/studio/bookings", body, "Idempotency-Key", "pay-then-replay")
	pay, _ = again.body["payment"].(map[string]any)
	if again.status != 201 || again.id() != r.id() || again.str("status") != "confirmed" || pay == nil ||
		pay["status"] != "completed" || pay["amount"] != 1000.0 || pay["paid"] != 1000.0 || pay["url"] != nil {
		t.Fatalf("replayed after paying: %d %s", again.status, again.raw)
	}
}
