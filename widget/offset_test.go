package widget_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"salon/booking"
	"salon/booking/bookingtest"
	"strings"
	"testing"
	"time"
)

// stampRE is a time in the API: RFC 3339 with seconds and an offset.
var stampRE = regexp.MustCompile(`"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))"`)

// Every time the API writes carries the salon's offset (Moscow, +03:00),
// the 409's alternatives as much as the slots: the client's screen reads
// the wall clock from them.
func TestEveryTimeCarriesTheSalonsOffset(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	check := func(what string, r reply) {
		t.Helper()
		stamps := stampRE.FindAllStringSubmatch(string(r.raw), -1)
		if len(stamps) == 0 {
			t.Fatalf("%s: no times in %d %s", what, r.status, r.raw)
		}
		for _, m := range stamps {
			if !strings.HasSuffix(m[1], "+03:00") {
				t.Errorf("%s: %s is not in the salon's offset: %s", what, m[1], r.raw)
			}
		}
	}
	check("slots", s.do("GET", fmt.Sprintf("/api/v1/salons/studio/slots?service_id=%d&date=%s", s.svc.ID, testDay), nil))
	first := s.book(s.masters[0], "12:00")
	check("created", first)
	r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], "12:00"))
	if r.status != 409 {
		t.Fatalf("a second booking of 12:00: %d %s", r.status, r.raw)
	}
	check("409 of a new booking", r)
	other := s.book(s.masters[1], "15:00")
	path := fmt.Sprintf("/api/v1/bookings/%d", other.id())
	token := other.str("manage_token")
	check("read", s.do("GET", path, nil, "X-Manage-Token", token))
	r = s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("12:00"), "master_id": s.masters[0].ID}, "X-Manage-Token", token)
	if r.status != 409 {
		t.Fatalf("a move into 12:00: %d %s", r.status, r.raw)
	}
	check("409 of a move", r)
	check("moved", s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("16:00")}, "X-Manage-Token", token))
}

// Pages with no salon to say the language (an unknown link) speak the
// client's: ?lang, else their browser's, else Russian; and the API's
// reasons come in the language asked (the widget's page asks its own).
func TestPagesWithoutASalonSpeakTheClientsLanguage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for _, c := range []struct {
		headers   []string
		path      string
		want, not string
	}{
		{nil, "/w/nowhere", `lang="ru"`, "Not found"},
		{[]string{"Accept-Language", "en-GB,en;q=0.9"}, "/w/nowhere", "This booking page does not exist", "Не найдено"},
		{[]string{"Accept-Language", "de-DE,ru;q=0.8"}, "/w/nowhere", "Такой страницы записи нет", "Not found"},
		{[]string{"Accept-Language", "ru"}, "/w/nowhere?lang=en", `lang="en"`, "Не найдено"},
	} {
		r := s.do("GET", c.path, nil, c.headers...)
		if r.status != 404 || !strings.Contains(string(r.raw), c.want) || strings.Contains(string(r.raw), c.not) {
			t.Errorf("%s %v: %d %s", c.path, c.headers, r.status, r.raw)
		}
	}
	body := s.newBooking(s.masters[0], "12:00")
	body["client"] = map[string]any{"name": "", "phone": "12"}
	r := s.do("POST", "/api/v1/salons/studio/bookings", body, "Accept-Language", "ru")
	if r.status != 422 || r.fields()["client.name"] != "обязательное поле" || !strings.Contains(fmt.Sprint(r.fields()["client.phone"]), "неверный номер") {
		t.Errorf("reasons in Russian: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", "/api/v1/salons/studio/bookings", body); r.fields()["client.name"] != "required" {
		t.Errorf("reasons in English by default: %s", r.raw)
	}
}

// The booking page says where the salon is and how to call it, and asks
// for consent with the salon's privacy policy before the name and phone.
func TestTheSalonsContactsAndConsent(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	sal := *s.salon
	sal.Address, sal.Phone, sal.About = "Москва, ул. Тверская, 1", "8 495 123-45-67", "Стрижки и окрашивание у метро"
	sal.PrivacyURL = "https://studio.example/privacy"
	if _, err := s.Svc.UpdateSalon(bookingtest.System(), sal); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(s.do("GET", "/w/studio", nil).raw))
	for _, want := range []string{"Москва, ул. Тверская, 1", `href="tel:+74951234567"`, "+7 495 123-45-67", "Стрижки и окрашивание у метро",
		"соглашаетесь на обработку", `href="https://studio.example/privacy"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the booking page lacks %q", want)
		}
	}
	sal.PrivacyURL = "javascript:alert(1)"
	if _, err := s.Svc.UpdateSalon(bookingtest.System(), sal); !errors.Is(err, booking.ErrInvalid) {
		t.Errorf("a javascript: privacy link: %v", err)
	}
}

// Static files come compressed and, asked for by their version (as every
// page asks), are kept for a year; a favicon is there.
func TestStaticFilesAreCompressedAndCached(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	page := string(s.do("GET", "/w/studio", nil).raw)
	m := regexp.MustCompile(`src="(/static/app\.js\?v=[0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page does not ask for app.js by its version")
	}
	req, _ := http.NewRequest("GET", s.base+html.UnescapeString(m[1]), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" ||
		!strings.Contains(resp.Header.Get("Cache-Control"), "immutable") || len(body) > 18000 { // (18 KB compressed: the widget, its manage and waitlist pages, the balances' words, later days, the repeated hour, the browser's Back, free times said on the waiting list's form, a booking kept across the language switch)
		t.Errorf("app.js: %d %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	if r := s.do("GET", "/static/app.js?v=old", nil); strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Error("an old version is kept for a year")
	}
	resp, err = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(s.base + "/favicon.ico")
	if err != nil || resp.StatusCode != 301 || !strings.HasPrefix(resp.Header.Get("Location"), "/static/favicon.svg?v=") {
		t.Errorf("favicon: %v %v", resp, err)
	}
}

// An e-mail given with a booking is the booking's (where its messages go),
// checked, and never the client record's: another booking with the same
// phone and another e-mail does not move the first one's.
func TestAnEmailGivenWithABooking(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	body := s.newBooking(s.masters[0], "12:00")
	body["client"] = map[string]any{"name": "Мария", "phone": "+79161234567", "email": "  Maria@Example.com "}
	r := s.do("POST", "/api/v1/salons/studio/bookings", body)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	other := s.newBooking(s.masters[1], "12:00")
	other["client"] = map[string]any{"name": "Не Мария", "phone": "+79161234567", "email": "intruder@example.com"}
	if r := s.do("POST", "/api/v1/salons/studio/bookings", other); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	var email string
	if err := s.Pool.QueryRow(context.Background(), `SELECT contact_email FROM bookings WHERE id = $1`, r.id()).Scan(&email); err != nil || email != "maria@example.com" {
		t.Fatalf("the booking's e-mail: %q %v", email, err)
	}
	bad := s.newBooking(s.masters[2], "12:00")
	bad["client"] = map[string]any{"name": "X", "phone": bookingtest.Phone(), "email": "not-an-address"}
	if r := s.do("POST", "/api/v1/salons/studio/bookings", bad, "Accept-Language", "ru"); r.status != 422 || r.fields()["client.email"] != "это не адрес эл. почты" {
		t.Errorf("a bad e-mail: %d %s", r.status, r.raw)
	}
}

// londonSite is a site with a salon in London ("london", GBP, English):
// a 30-minute service and its master, working 10:00-12:00 on testDay.
func londonSite(t *testing.T) (*site, *booking.Salon, *booking.SalonService, *booking.Master) {
	t.Helper()
	s := newSite(t)
	london := s.Salon(t, booking.Salon{Slug: "london", Name: "London", Timezone: "Europe/London", Country: "GB", Currency: "GBP", Locale: "en"})
	svc := s.Service(t, london, booking.SalonService{Name: "Cut", DurationMin: 30, Price: 3000})
	m := s.Master(t, london, svc)
	s.Shift(t, london, m, testDay, 1, "10:00", "12:00")
	return s, london, svc, m
}

// TestAnOffsetOfZeroIsWrittenAsOne: a salon in London in winter (UTC+0)
// writes its times +00:00, never Z, as the contract says.
func TestAnOffsetOfZeroIsWrittenAsOne(t *testing.T) {
	t.Parallel()
	s, _, svc, _ := londonSite(t)
	r := s.do("GET", fmt.Sprintf("/api/v1/salons/london/slots?service_id=%d&date=%s", svc.ID, testDay), nil)
	stamps := stampRE.FindAllStringSubmatch(string(r.raw), -1)
	if r.status != 200 || len(stamps) == 0 {
		t.Fatalf("slots: %d %s", r.status, r.raw)
	}
	for _, st := range stamps {
		if !strings.HasSuffix(st[1], "+00:00") {
			t.Errorf("%s: want +00:00", st[1])
		}
	}
}

// TestASalonAbroadHintsItsCountrysPhones: a London salon's pages and
// errors give a British number as the example, not a Russian one.
func TestASalonAbroadHintsItsCountrysPhones(t *testing.T) {
	t.Parallel()
	s, london, svc, m := londonSite(t)
	want := booking.ExamplePhone("GB")
	if !strings.HasPrefix(want, "+44 ") {
		t.Fatalf("the British example: %q", want)
	}
	for _, path := range []string{"/w/london?lang=en", "/w/london?lang=ru"} {
		r := s.do("GET", path, nil)
		if page := html.UnescapeString(string(r.raw)); r.status != 200 || !strings.Contains(page, want) || strings.Contains(page, "+7 9") {
			t.Errorf("%s: the phone's hint is not %q", path, want)
		}
	}
	r := s.do("POST", "/api/v1/salons/london/bookings", map[string]any{"service_id": svc.ID, "master_id": m.ID,
		"starts_at": bookingtest.At(london, testDay, "10:00").Format(time.RFC3339), "client": map[string]any{"name": "Ann", "phone": "12345"}})
	if r.status != 422 || !strings.Contains(string(r.raw), want) {
		t.Fatalf("a bad phone: %d %s", r.status, r.raw)
	}
}

// TestThePageOffersWhatAMasterDoesInTheSalonsCurrency: the booking page
// of a salon of rupees lists only the services some master does (one
// nobody does would end in "no free time" on every day), with prices
// written "₹", and gives its script the sign to write amounts with.
func TestThePageOffersWhatAMasterDoesInTheSalonsCurrency(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	glow := s.Salon(t, booking.Salon{Slug: "glow", Name: "Glow", Timezone: "Asia/Kolkata", Country: "IN", Currency: "INR", Locale: "en"})
	cut := s.Service(t, glow, booking.SalonService{Name: "Ladies Haircut", DurationMin: 30, Price: 250050})
	s.Service(t, glow, booking.SalonService{Name: "Beard trim", DurationMin: 30, Price: 30000})
	s.Master(t, glow, cut)
	r := s.do("GET", "/w/glow", nil)
	page := string(r.raw)
	if r.status != 200 || !strings.Contains(page, "Ladies Haircut") || !strings.Contains(page, "₹2,500.50") {
		t.Fatalf("the page: %d, want Ladies Haircut at ₹2,500.50:\n%s", r.status, page)
	}
	if strings.Contains(page, "Beard trim") {
		t.Error("the page offers a service no master does")
	}
	if !strings.Contains(page, `"sign":"₹","signBefore":true`) {
		t.Error("the page's script is not given the rupee's sign")
	}
}
