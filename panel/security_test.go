package panel_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/mail"
	"salon/booking/mail/mailtest"
	"salon/internal/courier"
	"salon/internal/demo"
	"salon/panel"
)

// snapshot is a digest of everything stored about a salon: a change
// anywhere in it changes the digest.
func snapshot(t *testing.T, w *world, salonID int64) string {
	t.Helper()
	return scalar[string](t, w, `SELECT md5(concat_ws('|',
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM bookings x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM masters x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.master_id, x.service_id) FROM master_services x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM services x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM shifts x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM clients x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM users x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM booking_events x WHERE salon_id = $1),
		(SELECT count(*) FROM master_link_codes WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM messages x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM waitlist_entries x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM waitlist_offers x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM balances x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM balance_offers x WHERE salon_id = $1),
		(SELECT string_agg(to_jsonb(x)::text, ',' ORDER BY x.id) FROM user_invitations x WHERE salon_id = $1),
		(SELECT to_jsonb(x)::text FROM salons x WHERE id = $1)))`, salonID)
}

// other is a second salon on the same server, with a booking, a client, a
// master, a service and an owner of its own.
type other struct {
	salon   *booking.Salon
	booking int64
	client  int64
	master  int64
	service int64
	entry   int64 // a waitlist entry
	balance int64 // a gift certificate
	offer   int64 // a certificate on sale online
	// an invitation to the panel
	invitation int64
	user       int64
	session    int64 // a payment session
	message    int64 // a failed message
}

func (w *world) otherSalon(t *testing.T) other {
	t.Helper()
	ctx := bookingtest.System()
	s := w.Salon(t, booking.Salon{Slug: "rival", Name: "Rival"})
	sv := w.Service(t, s, booking.SalonService{Name: "Rival cut"})
	m := w.Master(t, s, sv)
	w.Shift(t, s, m, w.today(), 7, "09:00", "21:00")
	b, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: s.ID, ServiceID: sv.ID, MasterID: m.ID,
		StartsAt: bookingtest.At(s, w.today().AddDays(1), "12:00"), Client: booking.ClientInput{Name: "Rival client", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := w.Svc.CreateUser(ctx, s.ID, "owner@rival.test", "rival-password", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	// A payment of B's, money held for it (as if authorized).
	var session int64
	if err := w.Pool.QueryRow(ctx, `INSERT INTO payment_sessions (salon_id, booking_id, provider, status, amount, currency, idempotence_key,
		external_id, hold_until) VALUES ($1, $2, 'yookassa', 'authorized', 10, 'RUB', 'rival-key', 'rival-pay', now()) RETURNING id`,
		s.ID, b.ID).Scan(&session); err != nil {
		t.Fatal(err)
	}
	// A message of B's that failed.
	var message int64
	if err := w.Pool.QueryRow(ctx, `INSERT INTO messages (salon_id, booking_id, kind, channel, recipient, state, error)
		VALUES ($1, $2, 'confirmation', 'email', 'rival@example.com', 'failed', 'refused') RETURNING id`, s.ID, b.ID).Scan(&message); err != nil {
		t.Fatal(err)
	}
	// A client of B's waiting.
	e, err := w.Svc.JoinWaitlist(booking.As(ctx, booking.BySystem()), booking.WaitRequest{SalonID: s.ID, ServiceID: sv.ID,
		From: w.today(), To: w.today().AddDays(3), Client: booking.ClientInput{Name: "Rival waiting", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	// A certificate of B's.
	cert, err := w.Svc.IssueBalance(booking.As(ctx, booking.BySystem()), booking.BalanceIssue{SalonID: s.ID, Kind: booking.BalanceCertificate,
		Amount: 100000})
	if err != nil {
		t.Fatal(err)
	}
	offer, err := w.Svc.AddBalanceOffer(booking.As(ctx, booking.BySystem()), booking.BalanceOffer{SalonID: s.ID, Kind: booking.BalanceCertificate,
		Title: "Rival certificate", Amount: 100000, Price: 100000})
	if err != nil {
		t.Fatal(err)
	}
	// An invitation of B's owner's.
	inv, err := w.Svc.InviteUser(booking.As(ctx, booking.ByStaff(*u)), s.ID, "desk@rival.test", booking.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return other{salon: s, booking: b.ID, client: b.ClientID, master: m.ID, service: sv.ID, user: u.ID, session: session, message: message,
		entry: e.ID, balance: cert.ID, offer: offer.ID, invitation: inv.ID}
}

// TestAnotherSalonsIDsAreNotFound: for every panel route that takes an id,
// the owner of salon A asking with an id of salon B gets 404, and nothing of
// B changes. The list of routes is read from the app, so a new route with
// an id fails this test until it is covered here.
func TestAnotherSalonsIDsAreNotFound(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	o := w.otherSalon(t)
	day := w.today().AddDays(1).String()
	form := url.Values{"date": {day}, "time": {"15:00"}, "master": {fmt.Sprint(o.master)}, "reason": {"x"},
		"name": {"Hijack"}, "notes": {"x"}, "phone": {"+79990001122"}, "active": {"1"}, "start": {"10:00"}, "end": {"11:00"},
		"from": {day}, "to": {day}, "start_1": {"10:00"}, "end_1": {"11:00"}, "duration": {"30"}, "price": {"1"},
		fmt.Sprintf("does_%d", o.service): {"1"}}
	cases := map[string][]string{ // route -> concrete paths
		"/panel/bookings/:id":                {fmt.Sprintf("/panel/bookings/%d", o.booking)},
		"/panel/bookings/:id/cancel":         {fmt.Sprintf("/panel/bookings/%d/cancel", o.booking)},
		"/panel/bookings/:id/reschedule":     {fmt.Sprintf("/panel/bookings/%d/reschedule", o.booking)},
		"/panel/bookings/:id/complete":       {fmt.Sprintf("/panel/bookings/%d/complete", o.booking)},
		"/panel/bookings/:id/no-show":        {fmt.Sprintf("/panel/bookings/%d/no-show", o.booking)},
		"/panel/bookings/:id/refund":         {fmt.Sprintf("/panel/bookings/%d/refund", o.booking)},
		"/panel/bookings/:id/pay-link":       {fmt.Sprintf("/panel/bookings/%d/pay-link", o.booking)},
		"/panel/bookings/:id/paid-in-salon":  {fmt.Sprintf("/panel/bookings/%d/paid-in-salon", o.booking)},
		"/panel/attention/:id/retry":         {fmt.Sprintf("/panel/attention/%d/retry", o.session)},
		"/panel/attention/:id/refund-made":   {fmt.Sprintf("/panel/attention/%d/refund-made", o.session)},
		"/panel/attention/:id/release":       {fmt.Sprintf("/panel/attention/%d/release", o.session)},
		"/panel/clients/:id/export":          {fmt.Sprintf("/panel/clients/%d/export", o.client)},
		"/panel/clients/:id/erase":           {fmt.Sprintf("/panel/clients/%d/erase", o.client)},
		"/panel/clients/:id/channels":        {fmt.Sprintf("/panel/clients/%d/channels", o.client)},
		"/panel/clients/:id":                 {fmt.Sprintf("/panel/clients/%d", o.client)},
		"/panel/masters/:id":                 {fmt.Sprintf("/panel/masters/%d", o.master)},
		"/panel/masters/:id/offers":          {fmt.Sprintf("/panel/masters/%d/offers", o.master)},
		"/panel/masters/:id/calendar":        {fmt.Sprintf("/panel/masters/%d/calendar", o.master)},
		"/panel/masters/:id/calendar/revoke": {fmt.Sprintf("/panel/masters/%d/calendar/revoke", o.master)},
		"/panel/masters/:id/link-code":       {fmt.Sprintf("/panel/masters/%d/link-code", o.master)},
		"/panel/masters/:id/shifts":          {fmt.Sprintf("/panel/masters/%d/shifts", o.master)},
		"/panel/masters/:id/template":        {fmt.Sprintf("/panel/masters/%d/template", o.master)},
		"/panel/masters/:id/week/:date":      {fmt.Sprintf("/panel/masters/%d/week/%s", o.master, day)},
		"/panel/masters/:id/week/:date/grid": {fmt.Sprintf("/panel/masters/%d/week/%s/grid", o.master, day)},
		"/panel/services/:id":                {fmt.Sprintf("/panel/services/%d", o.service)},
		"/panel/services/:id/together":       {fmt.Sprintf("/panel/services/%d/together", o.service)},
		"/panel/users/:id/delete":            {fmt.Sprintf("/panel/users/%d/delete", o.user)},
		"/panel/messages/:id/retry":          {fmt.Sprintf("/panel/messages/%d/retry", o.message)},
		"/panel/waitlist/:id/offer":          {fmt.Sprintf("/panel/waitlist/%d/offer", o.entry)},
		"/panel/waitlist/:id/leave":          {fmt.Sprintf("/panel/waitlist/%d/leave", o.entry)},
		"/panel/balances/:id":                {fmt.Sprintf("/panel/balances/%d", o.balance)},
		"/panel/balances/:id/refund":         {fmt.Sprintf("/panel/balances/%d/refund", o.balance)},
		"/panel/bookings/:id/pay-with":       {fmt.Sprintf("/panel/bookings/%d/pay-with", o.booking)},
		"/panel/balances/:id/resend":         {fmt.Sprintf("/panel/balances/%d/resend", o.balance)},
		"/panel/balances/:id/code":           {fmt.Sprintf("/panel/balances/%d/code", o.balance)},
		"/panel/balances/:id/retry-refund":   {fmt.Sprintf("/panel/balances/%d/retry-refund", o.balance)},
		"/panel/balances/:id/refund-made":    {fmt.Sprintf("/panel/balances/%d/refund-made", o.balance)},
		"/panel/balance-offers/:id/active":   {fmt.Sprintf("/panel/balance-offers/%d/active", o.offer)},
		"/panel/invitations/:id/revoke":      {fmt.Sprintf("/panel/invitations/%d/revoke", o.invitation)},
	}
	// Ids in queries and forms: a new booking for another salon's client,
	// master or service.
	queries := []string{
		fmt.Sprintf("/panel/bookings/new?client=%d", o.client),
	}
	before := snapshot(t, w, o.salon.ID)
	var covered []string
	for _, r := range w.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/panel/") || !strings.Contains(r.Path, ":id") || r.Method == "HEAD" {
			continue
		}
		paths, ok := cases[r.Path]
		if !ok {
			t.Errorf("route %s %s takes an id and is not covered by this test", r.Method, r.Path)
			continue
		}
		covered = append(covered, r.Path)
		for _, p := range paths {
			var a answer
			if r.Method == "GET" {
				a = b.get(p)
			} else {
				a = b.post(p, clone(form))
			}
			if a.status != http.StatusNotFound {
				t.Errorf("%s %s (salon B's id, as salon A's owner): %d, want 404\n%.300s", r.Method, p, a.status, a.body)
			}
			if strings.Contains(a.body, "Rival") {
				t.Errorf("%s %s: the page shows salon B's data", r.Method, p)
			}
		}
	}
	for route := range cases {
		if !slices.Contains(covered, route) {
			t.Errorf("case %s is not a route of the panel", route)
		}
	}
	for _, p := range queries {
		if a := b.get(p); a.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, a.status)
		}
	}
	// Booking salon B's master or service through salon A's form.
	a := b.post("/panel/bookings", url.Values{"master": {fmt.Sprint(o.master)}, "service": {fmt.Sprint(o.service)},
		"date": {day}, "time": {"15:00"}, "phone": {"+79990001123"}, "name": {"X"}, "key": {"k1"}})
	if a.status == http.StatusSeeOther || a.status < 400 && !strings.Contains(a.body, "no such") {
		t.Errorf("booking salon B's master from salon A: %d", a.status)
	}
	if after := snapshot(t, w, o.salon.ID); after != before {
		t.Errorf("salon B changed")
	}
}

func clone(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// TestPostsWithoutTheCSRFTokenAreRefused: every POST route of the panel
// (read from the app) answers 403 without the token or with a wrong one,
// and nothing changes.
func TestPostsWithoutTheCSRFTokenAreRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	bk := scalar[int64](t, w, `SELECT id FROM bookings WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	sv := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	cl := scalar[int64](t, w, `SELECT id FROM clients WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	u := scalar[int64](t, w, `SELECT id FROM users WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	ids := map[string]int64{"bookings": bk, "masters": m, "services": sv, "clients": cl, "users": u}
	before := snapshot(t, w, w.salon.ID)
	n := 0
	for _, r := range w.app.GetRoutes(true) {
		// (The login and an invitation's page are open, and refuse forms
		// from other sites by their origin: see TestSecurityHeaders.)
		if r.Method != "POST" || !strings.HasPrefix(r.Path, "/panel/") || r.Path == "/panel/login" || r.Path == "/panel/invite/:code" {
			continue
		}
		path := r.Path
		for kind, id := range ids {
			path = strings.Replace(path, "/"+kind+"/:id", fmt.Sprintf("/%s/%d", kind, id), 1)
		}
		form := url.Values{"reason": {"x"}, "name": {"Changed"}, "email": {"new@demo.test"}, "password": {"long-enough"},
			"role": {"admin"}, "lang": {"en"}, "date": {w.today().String()}, "time": {"15:00"}}
		for _, token := range []string{"", "wrong", b.csrf + "x"} {
			f := clone(form)
			f.Set("csrf", token)
			a := b.do("POST", path, f)
			if a.status != http.StatusForbidden {
				t.Errorf("POST %s with csrf %q: %d, want 403", path, token, a.status)
			}
			n++
		}
		// The header with a wrong token is no better.
		if a := b.do("POST", path, clone(form), "X-CSRF-Token", "wrong"); a.status != http.StatusForbidden {
			t.Errorf("POST %s with a wrong X-CSRF-Token: %d, want 403", path, a.status)
		}
	}
	if n < 20 {
		t.Fatalf("only %d requests: routes not found", n)
	}
	if after := snapshot(t, w, w.salon.ID); after != before {
		t.Error("the salon changed")
	}
	// Logout without the token did not end the session either.
	if a := b.get("/panel/"); a.status != http.StatusOK {
		t.Errorf("after refused posts: %d", a.status)
	}
	// With the token (form field or header) a post goes through.
	if a := b.do("POST", "/panel/lang", url.Values{"lang": {"en"}}, "X-CSRF-Token", b.csrf); a.status != http.StatusSeeOther {
		t.Errorf("POST /panel/lang with the header token: %d", a.status)
	}
}

func TestLoginThrottling(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.client()
	for i := range booking.LoginMaxFailures {
		a := b.do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {fmt.Sprintf("wrong-%d", i)}})
		if a.status != http.StatusOK || !strings.Contains(a.body, `role="alert"`) || b.sessionCookie() != "" {
			t.Fatalf("wrong password %d: %d, cookie %q", i, a.status, b.sessionCookie())
		}
	}
	a := b.do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}}, "Accept-Language", "ru")
	if a.status != http.StatusTooManyRequests || b.sessionCookie() != "" {
		t.Fatalf("right password after 10 failures: %d (cookie %q), want 429 and no session", a.status, b.sessionCookie())
	}
	if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra < 60 {
		t.Errorf("Retry-After %q: want at least a minute", a.header.Get("Retry-After"))
	}
	// The form again, in the page's language alone, saying for how long,
	// the email kept, and no way into the panel offered.
	if !strings.Contains(a.body, "Слишком много неудачных попыток входа. Попробуйте через ") || strings.Contains(a.body, "Too many") ||
		!strings.Contains(a.body, `value="`+demo.Email+`"`) || !strings.Contains(a.body, `name="password"`) || strings.Contains(a.body, `href="/panel/"`) {
		t.Errorf("the refusal's page: %s", a.body)
	}
	// Still refused a minute later (the lockout lasts at least a minute) ...
	w.Clock.Advance(59 * time.Second)
	if a := b.do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}}); a.status != http.StatusTooManyRequests {
		t.Errorf("59 s later: %d, want 429", a.status)
	}
	// ... and let in once the failures are older than the window.
	w.Clock.Advance(booking.LoginWindow)
	b.login(demo.Email, demo.Password)
}

func TestSessionCookieAndFixation(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		w := newWorld(t, func(c *panel.Config) { c.Secure = secure })
		b := w.client()
		// An id planted in the browser before login is not the session's.
		u, _ := url.Parse(w.base + "/panel/")
		b.http.Jar.SetCookies(u, []*http.Cookie{{Name: panel.CookieName, Value: "planted-by-attacker", Path: "/panel"}})
		a := b.do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}})
		if a.status != http.StatusSeeOther {
			t.Fatalf("login: %d", a.status)
		}
		set := strings.ToLower(a.header.Get("Set-Cookie"))
		for _, want := range []string{panel.CookieName + "=", "; httponly", "; samesite=lax", "; path=/panel"} {
			if !strings.Contains(set, want) {
				t.Errorf("Set-Cookie %q lacks %s", set, want)
			}
		}
		if strings.Contains(set, "; secure") != secure {
			t.Errorf("Set-Cookie %q: Secure should be %v", set, secure)
		}
		first := b.sessionCookie()
		if first == "" || first == "planted-by-attacker" || len(first) < 40 {
			t.Fatalf("session id after login: %q", first)
		}
		// Logging in again gives another id.
		b.do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}})
		if second := b.sessionCookie(); second == first {
			t.Error("the session id did not change at the second login")
		}
		// The database keeps no session id, only hashes.
		if n := scalar[int64](t, w, `SELECT count(*) FROM panel_sessions WHERE encode(id_hash, 'escape') LIKE '%' || $1 || '%'`, first); n != 0 {
			t.Error("a session id is stored in the clear")
		}
	}
}

func TestLogoutEndsTheSessionOnTheServer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	cookie := b.sessionCookie()
	if a := b.post("/panel/logout", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/panel/login" {
		t.Fatalf("logout: %d %s", a.status, a.header.Get("Location"))
	}
	// The old cookie, replayed by someone who kept it, opens nothing.
	thief := w.client()
	u, _ := url.Parse(w.base + "/panel/")
	thief.http.Jar.SetCookies(u, []*http.Cookie{{Name: panel.CookieName, Value: cookie, Path: "/panel"}})
	for _, p := range []string{"/panel/", "/panel/clients", fmt.Sprintf("/panel/day/%s", w.today())} {
		if a := thief.get(p); a.status != http.StatusSeeOther || a.header.Get("Location") != "/panel/login" {
			t.Errorf("GET %s with a logged-out cookie: %d %s", p, a.status, a.header.Get("Location"))
		}
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM panel_sessions`); n != 0 {
		t.Errorf("%d sessions left after logout", n)
	}
}

func TestWithoutASessionEveryPageRedirectsToLogin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.client()
	for _, r := range w.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/panel") || r.Path == "/panel/login" || r.Path == "/panel/invite/:code" || r.Method == "HEAD" {
			continue
		}
		p := strings.NewReplacer(":id", "1", ":date", "2026-03-02").Replace(r.Path)
		a := b.do(r.Method, p, url.Values{})
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/panel/login" {
			t.Errorf("%s %s without a session: %d %q", r.Method, p, a.status, a.header.Get("Location"))
		}
	}
	// The login page and the assets are open.
	for _, p := range []string{"/panel/login", "/static/panel.css", "/static/htmx.min.js"} {
		if a := b.get(p); a.status != http.StatusOK {
			t.Errorf("GET %s: %d", p, a.status)
		}
	}
}

func TestPasswordsAreStoredOnlyAsArgon2idHashes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	const pw = "a-secret-pass-phrase"
	w.accept(b.invite("new.admin@demo.test", booking.RoleAdmin), pw)
	rows, err := w.Pool.Query(context.Background(), `SELECT password_hash FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") || strings.Contains(h, pw) || strings.Contains(h, demo.Password) {
			t.Errorf("stored password %q is not an argon2id hash", h)
		}
	}
	// Nothing else in the database holds the password, or a hash of it.
	if n := scalar[int64](t, w, `SELECT count(*) FROM audit_log WHERE old::text LIKE '%argon2%' OR new::text LIKE '%argon2%'
		OR new::text LIKE '%' || $1 || '%'`, pw); n != 0 {
		t.Errorf("the audit log holds a password or its hash")
	}
	// The new admin can log in with it.
	w.client().login("new.admin@demo.test", pw)
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	for _, p := range []string{"/panel/login", "/panel/", "/panel/nope"} {
		a := b.get(p)
		csp := a.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q", p, csp)
		}
		if a.header.Get("X-Frame-Options") != "DENY" || a.header.Get("X-Content-Type-Options") != "nosniff" ||
			a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: headers %v", p, a.header)
		}
		if strings.Contains(a.body, "<script>") || strings.Contains(a.body, " style=") || strings.Contains(a.body, " onclick=") {
			t.Errorf("GET %s: inline script or style", p)
		}
	}
	// A login form posted from another site is refused.
	a := w.client().do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}},
		"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if a.status != http.StatusForbidden {
		t.Errorf("cross-site login: %d, want 403", a.status)
	}
}

// TestAdminsCannotDoOwnersWork: an admin runs the day but cannot change
// the catalogue, settings or users (the core decides: 403), nor open the
// pages that do.
func TestAdminsCannotDoOwnersWork(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.user(w.salon.ID, "admin@demo.test", booking.RoleAdmin)
	m := scalar[int64](t, w, `SELECT id FROM masters WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	sv := scalar[int64](t, w, `SELECT id FROM services WHERE salon_id = $1 ORDER BY id LIMIT 1`, w.salon.ID)
	u := scalar[int64](t, w, `SELECT id FROM users WHERE salon_id = $1 AND role = 'owner' LIMIT 1`, w.salon.ID)
	before := snapshot(t, w, w.salon.ID)
	for _, p := range []string{"/panel/settings", "/panel/users", "/panel/masters", "/panel/services",
		fmt.Sprintf("/panel/masters/%d", m), fmt.Sprintf("/panel/masters/%d/offers", m), fmt.Sprintf("/panel/services/%d", sv),
		fmt.Sprintf("/panel/services/%d/together", sv),
		fmt.Sprintf("/panel/users/%d/delete", u)} {
		a := b.post(p, url.Values{"name": {"Owned"}, "timezone": {"Europe/Moscow"}, "email": {"x@demo.test"}, "password": {"long-enough"},
			"role": {"owner"}, "duration": {"30"}, "slot_step_min": {"15"}, "min_notice_min": {"0"}, "hold_min": {"15"},
			"cutoff_hours": {"1"}, "horizon_days": {"30"}, "locale": {"en"}, "refund_policy": {"always"}})
		if a.status != http.StatusForbidden {
			t.Errorf("admin POST %s: %d, want 403", p, a.status)
		}
		// In the admin's Russian alone (the core's English reasons are
		// for the log).
		if m := regexp.MustCompile(`<p class="detail">[^<]*[a-zA-Z]{3,}[^<]*</p>`).FindString(a.body); m != "" {
			t.Errorf("admin POST %s: English on the page: %s", p, m)
		}
	}
	if after := snapshot(t, w, w.salon.ID); after != before {
		t.Error("an admin changed what only owners may")
	}
	// A form the panel itself finds invalid is refused before it is read:
	// its page would show the settings.
	if a := b.post("/panel/settings", url.Values{"name": {"Owned"}, "slot_step_min": {"many"}}); a.status != http.StatusForbidden ||
		strings.Contains(a.body, `name="slot_step_min"`) {
		t.Errorf("admin POST /panel/settings, invalid: %d, the settings form shown: %v", a.status, strings.Contains(a.body, `name="slot_step_min"`))
	}
	// The pages follow the actions: an admin opened /panel/settings, whose
	// POST they are refused, and saw every kind on the import page.
	for _, p := range []string{"/panel/settings", "/panel/users"} {
		if a := b.get(p); a.status != http.StatusForbidden {
			t.Errorf("admin GET %s: %d, want 403", p, a.status)
		}
	}
	imp := b.get("/panel/import")
	if imp.status != http.StatusOK || !strings.Contains(imp.body, `value="schedule"`) || strings.Contains(imp.body, `value="masters"`) {
		t.Errorf("an admin's import page offers other kinds than the schedule: %d %.2000s", imp.status, imp.body)
	}
	// Shifts are the admin's work.
	if a := b.post(fmt.Sprintf("/panel/masters/%d/shifts", m), url.Values{"date": {w.today().AddDays(20).String()},
		"start": {"10:00"}, "end": {"18:00"}}); a.status != http.StatusSeeOther {
		t.Errorf("admin sets shifts: %d %s", a.status, a.body)
	}
}

// TestLoginBehindAProxy: a proxy may pass another Host; a form posted from
// the public URL's origin is still same-site, and another origin is not.
func TestLoginBehindAProxy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *panel.Config) { c.PublicURL = "https://salon.example" })
	a := w.client().do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}},
		"Origin", "https://salon.example", "Sec-Fetch-Site", "same-origin")
	if a.status != http.StatusSeeOther {
		t.Errorf("login from the public origin: %d", a.status)
	}
	a = w.client().do("POST", "/panel/login", url.Values{"email": {demo.Email}, "password": {demo.Password}},
		"Origin", "https://salon.example.evil")
	if a.status != http.StatusForbidden {
		t.Errorf("login from another origin: %d", a.status)
	}
}

// TestAnOwnerLearnsNothingOfAnotherSalonsUsers: inviting the address of
// another salon's user answers as inviting a new address does (helper-47
// F2: "a user with this email exists" told one salon's owner who works
// at another), and the link goes to the mailbox alone (helper-50: an
// owner holding it could open it and learn the same). Whoever opens it
// there is told; the invitation's page is in the link's language,
// refuses a form from another site, and a used link opens nothing.
func TestAnOwnerLearnsNothingOfAnotherSalonsUsers(t *testing.T) {
	t.Parallel()
	mp := mailtest.Start(t)
	sender, err := mail.New("smtp://salon:secret@"+mp.SMTP, "Salons <panel@salon.example>")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorldOn(t, bookingtest.New(t, booking.WithCourier(booking.ChannelEmail, &courier.Email{Mail: sender, Base: "https://salon.test"}, 0)))
	if _, _, err := w.Svc.CreateSalonWithOwner(bookingtest.System(), booking.Salon{Slug: "rival", Name: "Rival", Timezone: "Europe/Moscow", Locale: "ru"},
		"owner@rival.test", "rival-password"); err != nil {
		t.Fatal(err)
	}
	rival := w.client()
	rival.login("owner@rival.test", "rival-password")
	invite := func(email string) answer {
		a := rival.post("/panel/users", url.Values{"email": {email}, "role": {"admin"}})
		if a.status != http.StatusSeeOther || strings.Contains(a.body, "/panel/invite/") {
			t.Fatalf("invite %s: %d %s", email, a.status, a.body)
		}
		return a
	}
	taken, free := invite(demo.Email), invite("nobody@demo.salon")
	if taken.header.Get("Location") != free.header.Get("Location") || taken.header.Get("Location") != "/panel/users?done=invited" {
		t.Errorf("inviting another salon's owner answers %q, a new address %q", taken.header.Get("Location"), free.header.Get("Location"))
	}
	page := rival.get("/panel/users").body
	if strings.Contains(page, "/panel/invite/") || strings.Count(page, "письмо отправлено") != 2 || strings.Contains(page, "уже есть") {
		t.Errorf("the users page after both: %s", page)
	}
	// The mailbox's link: the one who opens it is told; the demo owner is
	// untouched.
	link := func(to string) string {
		t.Helper()
		for _, m := range mp.Messages(t) {
			if len(m.To) == 1 && m.To[0].Address == to {
				if l := regexp.MustCompile(`https://salon\.test(/panel/invite/\S+)`).FindStringSubmatch(m.Text); l != nil {
					return l[1]
				}
			}
		}
		t.Fatalf("no invitation e-mailed to %s", to)
		return ""
	}
	opener := w.client()
	path := link(demo.Email)
	if a := opener.get(path); a.status != http.StatusOK || !strings.Contains(a.body, "Rival приглашает вас в свою панель как администратор.") {
		t.Fatalf("the invitation's page: %d %s", a.status, a.body)
	}
	a := opener.do("POST", path, url.Values{"password": {"a-new-password"}, "password2": {"a-new-password"}})
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "у этого адреса уже есть учётная запись") {
		t.Fatalf("accepting for an address with an account: %d %s", a.status, a.body)
	}
	w.client().login(demo.Email, demo.Password)
	// A new address: the passwords must match; a form from another site
	// is refused; then the new user is in, and the link is spent.
	path = link("nobody@demo.salon")
	if a := opener.do("POST", path, url.Values{"password": {"a-new-password"}, "password2": {"a-new-passw0rd"}}); a.status != http.StatusUnprocessableEntity ||
		!strings.Contains(a.body, "пароли не совпадают") {
		t.Errorf("passwords that differ: %d", a.status)
	}
	if a := opener.do("POST", path, url.Values{"password": {"a-new-password"}, "password2": {"a-new-password"}},
		"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); a.status != http.StatusForbidden {
		t.Errorf("an invitation accepted from another site: %d", a.status)
	}
	desk := w.accept(w.base+path, "a-new-password")
	if a := desk.get("/panel/"); a.status != http.StatusOK || !strings.Contains(a.body, "nobody@demo.salon") {
		t.Errorf("the new user's panel: %d", a.status)
	}
	if a := w.client().get(path); a.status != http.StatusNotFound || !strings.Contains(a.body, "Это приглашение не действует") {
		t.Errorf("a used link: %d", a.status)
	}
	// The audit log says it was accepted, not withdrawn (helper-51 L6).
	if got := rival.get("/panel/audit?entity=invitation").body; !strings.Contains(got, "Принято: приглашение nobody@demo.salon") {
		t.Errorf("the audit log of the accepted invitation: %s", got)
	}
	// The users page withdraws the invitation still open (the demo
	// owner's address).
	id := scalar[int64](t, w, `SELECT id FROM user_invitations WHERE email = $1`, demo.Email)
	if a := rival.post(fmt.Sprintf("/panel/invitations/%d/revoke", id), nil); a.status != http.StatusSeeOther {
		t.Errorf("withdraw: %d", a.status)
	}
	if n := scalar[int64](t, w, `SELECT count(*) FROM user_invitations WHERE email = $1`, demo.Email); n != 0 {
		t.Errorf("the withdrawn invitation is left")
	}
}
