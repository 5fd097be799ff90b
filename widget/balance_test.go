package widget_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/browsertest"
)

func (r reply) num(key string) float64 { v, _ := r.body[key].(float64); return v }

// TestBalanceByItsCode: a certificate and a package read by their codes
// through the API (as the answer's schema says); an unknown code, or one
// of another salon, is 404; the code never reaches the log.
func TestBalanceByItsCode(t *testing.T) {
	s := newSite(t)
	sys := bookingtest.System()
	cert, err := s.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate, Amount: 300000})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := s.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{s.svc.ID},
		Visits: 5, Client: booking.ClientInput{Name: "Regular", Phone: bookingtest.Phone()}, ValidUntil: testDay.AddDays(30)})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do("GET", "/api/v1/salons/studio/balances/"+cert.Code, nil)
	if v, named := r.body["expires_at"]; r.status != 200 || r.str("kind") != "certificate" || r.num("remaining") != 3000 || !named || v != nil {
		t.Fatalf("the certificate (no end: expires_at null): %d %s", r.status, r.raw)
	}
	r = s.do("GET", "/api/v1/salons/studio/balances/"+strings.ToLower(pkg.Code), nil)
	if r.status != 200 || r.str("kind") != "package" || r.num("remaining") != 5 || !strings.HasPrefix(r.str("expires_at"), testDay.AddDays(31).String()) {
		t.Fatalf("the package: %d %s", r.status, r.raw)
	}
	// Typed with spaces (escaped in the path), as good as with dashes.
	if r := s.do("GET", "/api/v1/salons/studio/balances/"+strings.ReplaceAll(pkg.Code, "-", "%20"), nil); r.status != 200 || r.num("remaining") != 5 {
		t.Fatalf("the package's code with spaces: %d %s", r.status, r.raw)
	}
	if r := s.do("GET", "/api/v1/salons/studio/balances/ABCD-EFGH-JKMN", nil); r.status != 404 {
		t.Fatalf("an unknown code: %d", r.status)
	}
	// The same with the code in the body (the widget's way: no URL holds it).
	r = s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": strings.ToLower(cert.Code)})
	if r.status != 200 || r.str("kind") != "certificate" || r.num("remaining") != 3000 {
		t.Fatalf("the certificate by its code in the body: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": "ABCD-EFGH-JKMN"}, "Accept-Language", "ru"); r.status != 404 ||
		r.str("message") != "не найдено" {
		t.Fatalf("an unknown code in the body: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{}); r.status != 422 {
		t.Fatalf("no code in the body: %d", r.status)
	}
	s.Salon(t, booking.Salon{Slug: "rival"})
	if r := s.do("GET", "/api/v1/salons/rival/balances/"+cert.Code, nil); r.status != 404 {
		t.Fatalf("another salon's code: %d", r.status)
	}
	// With what it would pay for: a package for another service, or for
	// another client, is refused as booking with it would be, in the
	// request's language; its own client's phone, however typed, and its
	// service are not. A certificate pays for anyone's anything.
	var phone string
	if err := s.Pool.QueryRow(context.Background(), `SELECT phone FROM clients WHERE id = $1`, pkg.ClientID).Scan(&phone); err != nil {
		t.Fatal(err)
	}
	other := s.Service(t, s.salon, booking.SalonService{Name: "Beard", DurationMin: 30})
	for _, c := range []struct {
		code   string
		body   map[string]any
		status int
		why    string
	}{
		{pkg.Code, map[string]any{"service_ids": []int64{s.svc.ID}, "phone": "8 " + phone[2:5] + " " + phone[5:]}, 200, ""},
		{pkg.Code, map[string]any{"service_ids": []int64{other.ID, s.svc.ID}}, 200, ""},
		{pkg.Code, map[string]any{"service_ids": []int64{other.ID}}, 422, "абонемент не на эту услугу"},
		{pkg.Code, map[string]any{"phone": bookingtest.Phone()}, 422, "абонемент другого клиента"},
		{cert.Code, map[string]any{"service_ids": []int64{other.ID}, "phone": bookingtest.Phone()}, 200, ""},
		{pkg.Code, map[string]any{"service_ids": slices.Repeat([]int64{s.svc.ID}, 21)}, 422, "не больше 20"},
	} {
		c.body["code"] = c.code
		r := s.do("POST", "/api/v1/salons/studio/balances/lookup", c.body, "Accept-Language", "ru")
		f, _ := r.body["fields"].(map[string]any)
		field := "pay_with"
		if _, ok := c.body["service_ids"]; ok && len(c.body["service_ids"].([]int64)) > 20 {
			field = "service_ids"
		}
		if why, _ := f[field].(string); r.status != c.status || !strings.Contains(why, c.why) {
			t.Errorf("%v: %d %s; want %d %q on %s", c.body, r.status, r.raw, c.status, c.why, field)
		}
	}
	// Whoever holds the code cannot try phones against it: past five
	// phones not its client's in a day (one above), the code is locked
	// for the day, and the lookup and the booking answer every phone
	// alike, the client's too.
	wrong := func() reply {
		return s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": pkg.Code, "phone": bookingtest.Phone()}, "Accept-Language", "ru")
	}
	for i := 2; i <= 5; i++ {
		if r := wrong(); r.status != 422 {
			t.Fatalf("wrong phone %d: %d %s", i, r.status, r.raw)
		}
	}
	bookWith := func(phone string) reply {
		return s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": s.masters[0].ID,
			"starts_at": s.at("11:00"), "client": map[string]any{"name": "Guess", "phone": phone},
			"pay_with": map[string]any{"package": pkg.Code}}, "Accept-Language", "ru")
	}
	for what, r := range map[string]reply{"a sixth wrong phone": wrong(), "its client's phone": s.do("POST", "/api/v1/salons/studio/balances/lookup",
		map[string]any{"code": pkg.Code, "phone": phone}, "Accept-Language", "ru"), "booking with a wrong phone": bookWith(bookingtest.Phone()),
		"booking with its client's phone": bookWith(phone)} {
		if f, _ := r.body["fields"].(map[string]any); r.status != 422 || !strings.Contains(fmt.Sprint(f["pay_with"]), "слишком много чужих телефонов") {
			t.Fatalf("past five wrong phones, %s: %d %s", what, r.status, r.raw)
		}
	}
	// Another package's count is its own.
	pkg2, err := s.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{s.svc.ID},
		Visits: 1, Client: booking.ClientInput{Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": pkg2.Code, "phone": bookingtest.Phone()}); r.status != 422 {
		t.Fatalf("another package, a wrong phone: %d %s", r.status, r.raw)
	}
}

// TestBrowserBooksWithACertificate: a client books in the widget with a
// gift certificate's code typed in lower case; the confirmation step shows
// what is left on it before booking, and the done step what the booking
// took; the database holds one reservation. The same code, now spent, is
// refused at its field (nothing booked), and an unknown code is named
// there before anything is sent. The API takes pay_with as the contract
// says. axe-core on the steps; screenshots at 390 px.
func TestBrowserBooksWithACertificate(t *testing.T) {
	s := newSite(t)
	cert, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate,
		Amount: s.svc.Price})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.EmulateViewport(390, 844))
	m := s.masters[0]
	run(t, ctx, withCode(s, m.ID, "11:00", "+7 999 555-77-01", "NOPE-NOPE-NOPE", "#err-code")...)
	if got := text(t, ctx, "#err-code"); !strings.Contains(got, "нет") {
		t.Fatalf("an unknown code: %q", got)
	}
	run(t, ctx, chromedp.SetValue(css("#client-code"), strings.ToLower(cert.Code)), chromedp.Click(css("#contact-next")),
		chromedp.WaitVisible(css("#confirm")))
	// What it will pay, and what it will have left.
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "сертификат: 2\u00a0500") || !strings.Contains(got, "осталось 0") {
		t.Fatalf("the confirmation: %q", got)
	}
	browsertest.Axe(t, ctx, "confirming with a certificate")
	saveShot(t, ctx, "certificate-confirm-390")
	run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css(`section[data-step="done"]`)))
	if got := text(t, ctx, "#done-summary"); !strings.Contains(got, "сертификат: 2\u00a0500") || !strings.Contains(got, "осталось 0") {
		t.Fatalf("the done step: %q", got)
	}
	saveShot(t, ctx, "certificate-done-390")
	link, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#manage-link"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Navigate(link.Value), chromedp.WaitVisible(css("#manage-details dd")))
	if got := text(t, ctx, "#manage-details"); !strings.Contains(got, "Оплата") || !strings.Contains(got, "сертификат") {
		t.Fatalf("the manage page: %q", got)
	}
	var reserved int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND type = 'reserve'`,
		cert.ID).Scan(&reserved); err != nil || reserved != 1 {
		t.Fatalf("%d reservations (%v)", reserved, err)
	}
	// Spent: another time with the same code is refused at its field,
	// before confirming.
	run(t, ctx, withCode(s, m.ID, "13:00", "+7 999 555-77-01", cert.Code, "#err-code")...)
	if got := text(t, ctx, "#err-code"); !strings.Contains(got, "ничего не осталось") {
		t.Fatalf("a spent certificate: %q", got)
	}
	saveShot(t, ctx, "certificate-spent-390")
	if n := countBookings(t, s, `c.phone = '+79995557701'`); n != 1 {
		t.Fatalf("%d bookings, want 1", n)
	}
	// The API, as the contract has it.
	r := s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": m.ID,
		"starts_at": s.at("15:00"),
		"client":    map[string]any{"name": "API", "phone": "+79995557702"}, "pay_with": map[string]any{"certificate": cert.Code}})
	if r.status != 409 || r.str("error") != "balance_exhausted" {
		t.Fatalf("a spent certificate through the API: %d %v", r.status, r.body)
	}
	r = s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": m.ID,
		"starts_at": s.at("15:00"),
		"client":    map[string]any{"name": "API", "phone": "+79995557702"}, "pay_with": map[string]any{"package": "ZZZZ-ZZZZ-ZZZZ"}})
	if fields, _ := r.body["fields"].(map[string]any); r.status != 422 || fields["pay_with"] == nil {
		t.Fatalf("an unknown package through the API: %d %v", r.status, r.body)
	}
	// A package good until today, for a day after it: said at its field
	// with its last day, before confirming; the API says why in the
	// request's language, on pay_with.
	today := s.salon.Today(s.Clock.Now())
	pkg, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{s.svc.ID}, Visits: 2, ValidUntil: today, Client: booking.ClientInput{Name: "Gift Holder", Phone: "+79995557701"}})
	if err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("%02d.%02d.%d", today.Day, today.Month, today.Year)
	run(t, ctx, withCode(s, m.ID, "17:00", "+7 999 555-77-01", pkg.Code, "#err-code")...)
	if got := text(t, ctx, "#err-code"); !strings.Contains(got, "действует до "+last) {
		t.Fatalf("a package past its day: %q", got)
	}
	saveShot(t, ctx, "package-expired-390")
	r = s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": m.ID,
		"starts_at": s.at("17:00"),
		"client":    map[string]any{"name": "Gift Holder", "phone": "+79995557701"}, "pay_with": map[string]any{"package": pkg.Code}},
		"Accept-Language", "ru")
	if fields, _ := r.body["fields"].(map[string]any); r.status != 409 || r.str("error") != "balance_exhausted" ||
		!strings.Contains(r.str("message"), "не может оплатить эту запись: действует до "+last) || fields["pay_with"] != "действует до "+last {
		t.Fatalf("a package past its day through the API: %d %s", r.status, r.raw)
	}
	// Someone else's package: said at its field, as a sentence, before
	// confirming (it was said only once "Book" was pressed).
	theirs, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{s.svc.ID}, Visits: 2, Client: booking.ClientInput{Name: "Gift Holder", Phone: "+79995557701"}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, withCode(s, m.ID, "17:00", "+7 999 555-77-09", theirs.Code, "#err-code")...)
	if got := text(t, ctx, "#err-code"); got != "Это абонемент другого клиента." {
		t.Fatalf("another client's package: %q", got)
	}
	saveShot(t, ctx, "package-theirs-390")
	if n := countBookings(t, s, `c.phone = '+79995557709'`); n != 0 {
		t.Fatalf("%d bookings with another client's package", n)
	}
	// Their own, with their phone: the confirmation says what it will pay
	// and have left, in words (of 2 visits, 1 визит).
	run(t, ctx, withCode(s, m.ID, "17:00", "+7 999 555-77-01", theirs.Code, "#confirm")...)
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "абонемент: 1 визит, на нём осталось 1 визит") {
		t.Fatalf("confirming with a package: %q", got)
	}
}

// TestACancellationThatKeepsPartOfACertificateSaysSo: at a salon whose
// refund policy keeps a client's cancellation, a booking paid with a
// certificate says, before the client cancels, what cancelling would keep
// of it (the deposit's part), on the manage page and in the API; once
// cancelled, what was kept and what went back, and the certificate has
// the rest.
func TestACancellationThatKeepsPartOfACertificateSaysSo(t *testing.T) {
	s := newSite(t)
	salon := s.Salon(t, booking.Salon{Slug: "keeps", Name: "Keeps", CutoffHours: 3, RefundPolicy: booking.RefundNever})
	svc := s.Service(t, salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	m := s.Master(t, salon, svc)
	s.Shift(t, salon, m, testDay, 1, "10:00", "20:00")
	cert, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: salon.ID, Kind: booking.BalanceCertificate, Amount: 600000})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do("POST", "/api/v1/salons/keeps/bookings", map[string]any{"service_id": svc.ID, "master_id": m.ID,
		"starts_at": bookingtest.At(salon, testDay, "12:00").Format(time.RFC3339),
		"client":    map[string]any{"name": "Vera", "phone": "+79995557711"}, "pay_with": map[string]any{"certificate": cert.Code}})
	if r.status != 201 {
		t.Fatalf("booked: %d %s", r.status, r.raw)
	}
	id, token := r.id(), r.str("manage_token")
	paid := func(r reply) map[string]any { p, _ := r.body["paid_with"].(map[string]any); return p }
	got := s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", id), nil, "X-Manage-Token", token)
	if p := paid(r); p["at_salon"] != 0.0 || p["pays"] != 5000.0 || p["back_after_visit"] != nil {
		t.Fatalf("the booking's answer: nothing is left to pay at the salon: %s", r.raw)
	}
	if p := paid(got); got.status != 200 || p["cancel_keeps"] != 1000.0 || p["remaining"] != 1000.0 || p["kept"] != nil || p["at_salon"] != 0.0 {
		t.Fatalf("before the cancel: %d %s", got.status, got.raw)
	}
	ctx := browser(t)
	manage := chromedp.Navigate(fmt.Sprintf("%s/w/keeps/manage/%d?lang=ru#t=%s", s.base, id, token))
	// Under a policy that gives it all back, the page says so.
	policy := func(p booking.RefundPolicy) {
		t.Helper()
		if _, err := s.Pool.Exec(context.Background(), `UPDATE salons SET refund_policy = $2, catalog_version = catalog_version + 1 WHERE id = $1`,
			salon.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	policy(booking.RefundAlways)
	run(t, ctx, chromedp.EmulateViewport(390, 844), manage, chromedp.WaitVisible(css("#cancel-keeps")))
	if got := text(t, ctx, "#cancel-keeps"); got != "При отмене сейчас оплаченное вернётся на сертификат\u00a0…\u2060"+cert.Hint+": 5\u00a0000\u00a0₽." {
		t.Fatalf("the manage page before the cancel, all of it to go back: %q", got)
	}
	policy(booking.RefundNever)
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css("#cancel-keeps")))
	if got := text(t, ctx, "#cancel-keeps"); !strings.Contains(got, "удержание — 1\u00a0000\u00a0₽ с сертификата\u00a0…\u2060"+cert.Hint+
		". Остальное вернётся на него: 4\u00a0000\u00a0₽.") {
		t.Fatalf("the manage page before the cancel: %q", got)
	}
	browsertest.Axe(t, ctx, "a booking whose cancellation keeps part of its certificate")
	saveShot(t, ctx, "cancel-keeps-390")
	run(t, ctx, chromedp.Click(css("#cancel")), chromedp.Click(css("#cancel-yes")), chromedp.WaitVisible(css("#book-again")))
	bookingtest.WaitFor(t, 10*time.Second, "the cancelled booking's words", func() bool {
		return strings.Contains(text(t, ctx, "#manage-details"), "Удержано с сертификата\u00a0…\u2060"+cert.Hint+" по правилам отмены: 1\u00a0000")
	})
	// (What it paid is no longer said as paid: what is left, kept and back.)
	if got := text(t, ctx, "#manage-details"); !strings.Contains(got, "Вернулось на сертификат\u00a0…\u2060"+cert.Hint+": 4\u00a0000") ||
		!strings.Contains(got, "сертификат, осталось 5\u00a0000\u00a0₽") || strings.Contains(got, "на нём осталось") {
		t.Fatalf("the manage page after the cancel: %q", got)
	}
	saveShot(t, ctx, "cancel-kept-390")
	got = s.do("GET", fmt.Sprintf("/api/v1/bookings/%d", id), nil, "X-Manage-Token", token)
	if p := paid(got); got.status != 200 || p["kept"] != 1000.0 || p["returned"] != 4000.0 || p["remaining"] != 5000.0 || p["cancel_keeps"] != nil ||
		p["at_salon"] != nil {
		t.Fatalf("after the cancel: %d %s", got.status, got.raw)
	}
}

// TestBrowserSaysWhatACertificateLeavesToPay: a certificate smaller than
// the price pays what it holds; the confirmation and the done step say
// what is left to pay at the salon.
func TestBrowserSaysWhatACertificateLeavesToPay(t *testing.T) {
	s := newSite(t)
	cert, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate, Amount: 100000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.EmulateViewport(390, 844))
	m := s.masters[0]
	run(t, ctx, withCode(s, m.ID, "11:00", "+7 999 555-77-21", cert.Code, "#confirm")...)
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "Оплатить в салоне") || !strings.Contains(got, "1\u00a0500") {
		t.Fatalf("the confirmation: %q", got)
	}
	run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css(`section[data-step="done"]`)))
	if got := text(t, ctx, "#done-summary"); !strings.Contains(got, "Оплатить в салоне") || !strings.Contains(got, "1\u00a0500") {
		t.Fatalf("the done step: %q", got)
	}
	saveShot(t, ctx, "certificate-part-done-390")
}

// withCode are the widget's steps, in Russian, to master's time hhmm and
// the contact step, filled in for a client of phone paying with code,
// sent; then until sel shows (the confirmation, or the code's error).
func withCode(s *site, master int64, hhmm, phone, code, sel string) []chromedp.Action[chromedp.Void] {
	steps := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(s.base + "/w/studio?lang=ru"), chromedp.WaitVisible(css(`button[data-service-id]`))},
		throughTime(s, master, hhmm)...)
	return append(steps, chromedp.SendKeys(css("#client-name"), "Gift Holder"), chromedp.SendKeys(css("#client-phone"), phone),
		chromedp.SendKeys(css("#client-code"), code), chromedp.Click(css("#contact-next")), chromedp.WaitVisible(css(sel)))
}

// TestBrowserWritesKopecksAsTheServerDoes: a certificate of 1 000,50 ₽
// for a 2 500 ₽ haircut: the confirmation writes its amount and what is
// left to pay with two decimals (1 000,50 ₽; 1,000.50 ₽ in English), as
// the server's e-mails and pages do, and a whole amount with none
// (2 500 ₽): it showed 1 000,5 ₽.
func TestBrowserWritesKopecksAsTheServerDoes(t *testing.T) {
	s := newSite(t)
	cert, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate, Amount: 100050})
	if err != nil {
		t.Fatal(err)
	}
	m := s.masters[0]
	for _, c := range []struct {
		lang  string
		wants []string
	}{
		{"ru", []string{"Стоимость\n2\u00a0500\u00a0₽", "сертификат: 1\u00a0000,50\u00a0₽, на нём осталось 0\u00a0₽", "Оплатить в салоне\n1\u00a0499,50\u00a0₽"}},
		{"en", []string{"Price\n2,500\u00a0₽", "certificate: 1,000.50\u00a0₽, 0\u00a0₽ left on it", "To pay at the salon\n1,499.50\u00a0₽"}},
	} {
		ctx := browser(t)
		steps := append([]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base + "/w/studio?lang=" + c.lang),
			chromedp.WaitVisible(css(`button[data-service-id]`))}, throughTime(s, m.ID, "11:00")...)
		run(t, ctx, append(steps, chromedp.SendKeys(css("#client-name"), "Gift Holder"), chromedp.SendKeys(css("#client-phone"), "+7 999 555-77-31"),
			chromedp.SendKeys(css("#client-code"), cert.Code), chromedp.Click(css("#contact-next")), chromedp.WaitVisible(css("#confirm")))...)
		got := text(t, ctx, "#summary")
		for _, want := range c.wants {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the confirmation %q lacks %q", c.lang, got, want)
			}
		}
		if strings.Contains(got, ",5\u00a0₽") || strings.Contains(got, ".5\u00a0₽") || strings.Contains(got, "500,00") || strings.Contains(got, "500.00") {
			t.Errorf("%s: the confirmation %q writes an amount with one decimal, or a whole one with two", c.lang, got)
		}
		saveShot(t, ctx, "kopecks-confirm-"+c.lang+"-390")
	}
}

// TestBrowserSaysWhatAPackageLeavesToPay: a visit of a haircut (2 500 ₽)
// and a manicure (1 800 ₽) paid with a manicure package: the package pays
// the manicure, and the confirmation (before booking: the lookup says
// what the package is for), the done step and the manage page (the
// server's paid_with.at_salon) say 2 500 ₽ is left to pay at the salon;
// they said only "абонемент: 1 визит". A booking a certificate pays
// whole says nothing is left, in English too.
func TestBrowserSaysWhatAPackageLeavesToPay(t *testing.T) {
	s := newSite(t)
	manicure := s.Service(t, s.salon, booking.SalonService{Name: "Маникюр", DurationMin: 60, Price: 180000})
	nails := s.Master(t, s.salon, manicure)
	s.Shift(t, s.salon, nails, testDay, 1, "10:00", "20:00")
	phone := "+79995557741"
	pkg := s.issuePackage("Ольга", phone, 3, booking.Date{}, manicure.ID)
	if r := s.do("POST", "/api/v1/salons/studio/balances/lookup", map[string]any{"code": pkg.Code}); r.status != 200 ||
		!strings.Contains(string(r.raw), fmt.Sprintf(`"service_ids":[%d]`, manicure.ID)) {
		t.Fatalf("the lookup does not say what the package is for: %d %s", r.status, r.raw)
	}
	ctx := browser(t)
	m := s.masters[0]
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio?lang=ru"), chromedp.WaitVisible(css(`button[data-service-id]`)),
		chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, s.svc.ID))),
		chromedp.Click(css(fmt.Sprintf(`#masters button[data-master-id="%d"]`, m.ID))),
		chromedp.WaitVisible(css(`#add-service`)), chromedp.Click(css(`#add-service`)),
		chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, manicure.ID))),
		chromedp.Click(css(`#masters button[data-master-id="any"]`)),
		chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))),
		chromedp.Click(css(`#times button[data-time="11:00"]`)),
		chromedp.SendKeys(css("#client-name"), "Ольга"), chromedp.SendKeys(css("#client-phone"), "+7 999 555-77-41"),
		chromedp.SendKeys(css("#client-code"), pkg.Code), chromedp.Click(css("#contact-next")), chromedp.WaitVisible(css("#confirm")))
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "Стоимость\n4\u00a0300\u00a0₽") || !strings.Contains(got, "абонемент: 1 визит") ||
		!strings.Contains(got, "Оплатить в салоне\n2\u00a0500\u00a0₽") {
		t.Fatalf("the confirmation: %q", got)
	}
	browsertest.Axe(t, ctx, "confirming a visit paid in part with a package")
	saveShot(t, ctx, "package-part-confirm-ru-390")
	run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css(`section[data-step="done"]`)))
	if got := text(t, ctx, "#done-summary"); !strings.Contains(got, "Оплатить в салоне\n2\u00a0500\u00a0₽") {
		t.Fatalf("the done step: %q", got)
	}
	saveShot(t, ctx, "package-part-done-ru-390")
	link, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#manage-link"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Navigate(link.Value), chromedp.WaitVisible(css("#manage-details dd")))
	if got := text(t, ctx, "#manage-details"); !strings.Contains(got, "Оплатить в салоне\n2\u00a0500\u00a0₽") {
		t.Fatalf("the manage page: %q", got)
	}
	browsertest.Axe(t, ctx, "the manage page of a visit paid in part with a package")
	saveShot(t, ctx, "package-part-manage-ru-390")
	// A certificate that pays it all: nothing is left, said so.
	cert, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate, Amount: 300000})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": s.masters[1].ID,
		"starts_at": s.at("15:00"), "client": map[string]any{"name": "Vera", "phone": "+79995557742"}, "pay_with": map[string]any{"certificate": cert.Code}})
	if r.status != 201 {
		t.Fatalf("booked with the certificate: %d %s", r.status, r.raw)
	}
	for _, c := range []struct{ lang, want string }{{"ru", "Оплатить в салоне\nничего — всё оплачено"}, {"en", "To pay at the salon\nnothing, all paid"}} {
		run(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/w/studio/manage/%d?lang=%s#t=%s", s.base, r.id(), c.lang, r.str("manage_token"))),
			chromedp.WaitVisible(css("#manage-details dd")))
		if got := text(t, ctx, "#manage-details"); !strings.Contains(got, c.want) {
			t.Fatalf("%s: the manage page of a booking the certificate pays whole: %q", c.lang, got)
		}
		saveShot(t, ctx, "certificate-whole-manage-"+c.lang+"-390")
	}
}

// issuePackage sells at the desk a package of visits of services to the
// client of phone (name), good until until (zero: no end).
func (s *site) issuePackage(name, phone string, visits int, until booking.Date, services ...int64) *booking.Balance {
	s.t.Helper()
	p, err := s.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: services, Visits: visits, ValidUntil: until, Client: booking.ClientInput{Name: name, Phone: phone}})
	if err != nil {
		s.t.Fatal(err)
	}
	return p
}

// TestBrowserSaysWhatAPackageOfBothServicesPays: a visit of a haircut and
// a manicure paid with a package of either pays a visit of it for each:
// the confirmation says two visits and nothing to pay at the salon (it
// said one visit and the haircut's price due), as the booking reserves.
func TestBrowserSaysWhatAPackageOfBothServicesPays(t *testing.T) {
	s := newSite(t)
	manicure := s.Service(t, s.salon, booking.SalonService{Name: "Маникюр", DurationMin: 60, Price: 180000})
	nails := s.Master(t, s.salon, manicure)
	s.Shift(t, s.salon, nails, testDay, 1, "10:00", "20:00")
	phone := "+79995557743"
	pkg := s.issuePackage("Ольга", phone, 5, booking.Date{}, s.svc.ID, manicure.ID)
	ctx := browser(t)
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/w/studio?lang=ru"), chromedp.WaitVisible(css(`button[data-service-id]`)),
		chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, s.svc.ID))),
		chromedp.Click(css(fmt.Sprintf(`#masters button[data-master-id="%d"]`, s.masters[0].ID))),
		chromedp.WaitVisible(css(`#add-service`)), chromedp.Click(css(`#add-service`)),
		chromedp.Click(css(fmt.Sprintf(`button[data-service-id="%d"]`, manicure.ID))),
		chromedp.Click(css(`#masters button[data-master-id="any"]`)),
		chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))),
		chromedp.Click(css(`#times button[data-time="11:00"]`)),
		chromedp.SendKeys(css("#client-name"), "Ольга"), chromedp.SendKeys(css("#client-phone"), "+7 999 555-77-43"),
		chromedp.SendKeys(css("#client-code"), pkg.Code), chromedp.Click(css("#contact-next")), chromedp.WaitVisible(css("#confirm")))
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "абонемент: 2 визита, на нём осталось 3 визита") ||
		!strings.Contains(got, "Оплатить в салоне\nничего — всё оплачено") {
		t.Fatalf("the confirmation: %q", got)
	}
	saveShot(t, ctx, "package-both-confirm-ru-390")
	run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css(`section[data-step="done"]`)))
	if got := text(t, ctx, "#done-summary"); !strings.Contains(got, "Оплатить в салоне\nничего — всё оплачено") {
		t.Fatalf("the done step: %q", got)
	}
	var left int64
	if err := s.Pool.QueryRow(context.Background(), `SELECT remaining FROM balances WHERE id = $1`, pkg.ID).Scan(&left); err != nil || left != 3 {
		t.Fatalf("booked, the package has %d left (%v), want 3", left, err)
	}
}

// TestBrowserMovesNoLaterThanThePackage: a booking paid with a package
// good until the test day offers, to move it, no later day, and says why
// (it offered the next day, and only "Move here" said it could not).
func TestBrowserMovesNoLaterThanThePackage(t *testing.T) {
	s := newSite(t)
	phone := "+79995557744"
	pkg := s.issuePackage("Ольга", phone, 3, testDay, s.svc.ID)
	r := s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": s.masters[0].ID,
		"starts_at": s.at("12:00"), "client": map[string]any{"name": "Ольга", "phone": phone}, "pay_with": map[string]any{"package": pkg.Code}})
	if r.status != 201 {
		t.Fatalf("booked with the package: %d %s", r.status, r.raw)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(fmt.Sprintf("%s/w/studio/manage/%d?lang=ru#t=%s", s.base, r.id(), r.str("manage_token"))),
		chromedp.WaitVisible(css("#manage-actions")), chromedp.Click(css("#reschedule")),
		chromedp.WaitVisible(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))))
	if got := text(t, ctx, "#move-until"); !strings.Contains(got, "действует до 03.03.2026: перенести её можно не позже этого дня") {
		t.Errorf("the day step says %q", got)
	}
	next, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](fmt.Sprintf(`[document.querySelector('#days button[data-date="%s"]').disabled,
		document.querySelector('#days button[data-date="%s"]').disabled]`, testDay, testDay.AddDays(1))))
	if err != nil || len(next) != 2 || next[0] || !next[1] {
		t.Errorf("the test day, then the next, disabled: %v (%v); want the next only", next, err)
	}
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('later-days').hidden`)); err != nil || !hidden {
		t.Errorf("later days are offered past the package's last day (%v)", err)
	}
	saveShot(t, ctx, "move-until-package-ru-390")
	// The day's last time, and every other of that day, taken meanwhile:
	// the nearest free times, on the next day, are not offered instead.
	run(t, ctx, chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))),
		chromedp.Click(css(`#times button[data-time="19:00"]`)), chromedp.WaitVisible(css("#confirm")))
	sys := booking.As(context.Background(), booking.BySystem())
	for range 50 {
		free, err := s.Svc.Slots(sys, booking.SlotQuery{SalonID: s.salon.ID, ServiceID: s.svc.ID, From: testDay})
		if err != nil {
			t.Fatal(err)
		}
		if len(free) == 0 {
			break
		}
		if _, err := s.Svc.Book(sys, booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.svc.ID, MasterID: free[0].MasterID, StartsAt: free[0].Start,
			Client: booking.ClientInput{Name: "Занято", Phone: bookingtest.Phone()}, Source: booking.SourceImport}); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css("#taken")))
	alts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.prototype.map.call(document.querySelectorAll('#alternatives button'),
		function (b) { return b.getAttribute('data-starts-at'); })`))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#taken-text"); len(alts) == 0 && got == "" {
		t.Errorf("the taken time says nothing")
	}
	for _, a := range alts {
		if at, err := time.Parse(time.RFC3339, a); err != nil || !at.Before(testDay.AddDays(1).Start(s.salon.Location())) {
			t.Errorf("an alternative past the package's last day: %s (%v)", a, err)
		}
	}
}

// TestBrowserAsksAboutTheCodeAgainForAnotherDay: a package good until the
// test day pays the confirmation of that day; the client goes back three
// times and picks the next day: the code is asked about again, and the
// contact step says at its field that it is good until the test day (it
// went straight to the confirmation, the package still shown, and only
// "Book" bounced back with the server's words in lower case). Back on the
// test day it pays again; spent meanwhile, "Book" says why from a capital
// letter.
func TestBrowserAsksAboutTheCodeAgainForAnotherDay(t *testing.T) {
	s := newSite(t)
	phone := "+79995557751"
	pkg := s.issuePackage("Gift Holder", phone, 1, testDay, s.svc.ID)
	last := fmt.Sprintf("%02d.%02d.%d", testDay.Day, testDay.Month, testDay.Year)
	ctx := browser(t)
	m := s.masters[0]
	run(t, ctx, chromedp.EmulateViewport(390, 844))
	run(t, ctx, withCode(s, m.ID, "11:00", "+7 999 555-77-51", pkg.Code, "#confirm")...)
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "абонемент: 1 визит") {
		t.Fatalf("the confirmation on the test day: %q", got)
	}
	back := func(step string) chromedp.Action[chromedp.Void] {
		return chromedp.Click(css(`section[data-step="` + step + `"] button.back`))
	}
	next := testDay.AddDays(1)
	run(t, ctx, back("confirm"), back("contact"), back("time"), chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, next))),
		chromedp.Click(css(`#times button[data-time="11:00"]`)))
	bookingtest.WaitFor(t, 10*time.Second, "the code's error for the next day", func() bool { return text(t, ctx, "#err-code") != "" })
	if got := text(t, ctx, "#err-code"); !strings.Contains(got, "действует до "+last) {
		t.Fatalf("the code on the next day: %q", got)
	}
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](`[!document.querySelector('section[data-step="contact"]').hidden,
		!document.querySelector('section[data-step="confirm"]').hidden]`))
	if err != nil || !visible[0] || visible[1] {
		t.Fatalf("the contact step shown, the confirmation not: %v (%v)", visible, err)
	}
	browsertest.Axe(t, ctx, "the code past its day, asked again")
	saveShot(t, ctx, "package-past-day-again-390")
	// Back on its day: it pays.
	run(t, ctx, back("contact"), back("time"), chromedp.Click(css(fmt.Sprintf(`#days button[data-date="%s"]`, testDay))),
		chromedp.Click(css(`#times button[data-time="12:00"]`)), chromedp.WaitVisible(css("#confirm")))
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "абонемент: 1 визит") || !strings.Contains(got, "12:00") {
		t.Fatalf("the confirmation back on the test day: %q", got)
	}
	// Spent meanwhile (its one visit booked elsewhere): "Book" says why,
	// as a sentence.
	r := s.do("POST", "/api/v1/salons/studio/bookings", map[string]any{"service_id": s.svc.ID, "master_id": s.masters[1].ID,
		"starts_at": s.at("15:00"), "client": map[string]any{"name": "Gift Holder", "phone": phone}, "pay_with": map[string]any{"package": pkg.Code}})
	if r.status != 201 {
		t.Fatalf("the package spent: %d %s", r.status, r.raw)
	}
	run(t, ctx, chromedp.Click(css("#confirm")), chromedp.WaitVisible(css("#err-code")))
	bookingtest.WaitFor(t, 10*time.Second, "the code's error", func() bool { return text(t, ctx, "#err-code") != "" })
	if got := text(t, ctx, "#err-code"); !strings.HasPrefix(got, "Этот абонемент или сертификат не может оплатить эту запись") {
		t.Fatalf("the spent package's words: %q", got)
	}
	saveShot(t, ctx, "package-spent-meanwhile-390")
}
