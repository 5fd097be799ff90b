package panel_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/requestid"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/demo"
	"salon/panel"
	"salon/widget"
)

func TestMain(m *testing.M) { bookingtest.Main(m) }

// world is the demo salon served over real HTTP on a loopback port, with
// the panel and the public API, and the clock pinned (a Monday 09:00 in
// Moscow).
type world struct {
	*bookingtest.Env
	t     testing.TB
	base  string
	salon *booking.Salon
	app   *fiber.App
}

func newWorld(t *testing.T, cfgs ...func(*panel.Config)) *world {
	t.Helper()
	return newWorldOn(t, bookingtest.New(t), cfgs...)
}

// newWorldOn is newWorld on a given environment.
func newWorldOn(t testing.TB, e *bookingtest.Env, cfgs ...func(*panel.Config)) *world {
	t.Helper()
	return newWorldApp(t, e, nil, cfgs...)
}

// newWorldApp is newWorldOn with the server's app set up by setup (nil:
// as served) before the panel is mounted.
func newWorldApp(t testing.TB, e *bookingtest.Env, setup func(*fiber.App), cfgs ...func(*panel.Config)) *world {
	t.Helper()
	salon, err := demo.Seed(bookingtest.System(), e.Svc, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{Env: e, t: t, salon: salon}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := panel.Config{Log: log, PollInterval: 300 * time.Millisecond}
	for _, f := range cfgs {
		f(&cfg)
	}
	w.app = widget.NewApp(log)
	if setup != nil {
		setup(w.app)
	}
	w.app.Use(requestid.New())
	widget.New(e.Svc, widget.Config{Log: log}).Register(w.app)
	panel.New(e.Svc, cfg).Register(w.app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go w.app.Listener(ln) //nolint:errcheck // ends at Shutdown
	t.Cleanup(func() { _ = w.app.ShutdownWithTimeout(5 * time.Second) })
	w.base = "http://" + ln.Addr().String()
	return w
}

// browserless is an HTTP client with a cookie jar that does not follow
// redirects (the tests look at them).
type browserless struct {
	w    *world
	t    testing.TB
	http *http.Client
	csrf string
}

func (w *world) client() *browserless {
	jar, _ := cookiejar.New(nil)
	return &browserless{w: w, t: w.t, http: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// answer is an HTTP response with its body read.
type answer struct {
	status int
	header http.Header
	body   string
}

func (b *browserless) do(method, path string, form url.Values, headers ...string) answer {
	b.t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.w.base+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	if a.status >= 500 {
		b.t.Errorf("%s %s: %d %s", method, path, a.status, raw)
	}
	if m := csrfRE.FindStringSubmatch(a.body); m != nil {
		b.csrf = m[1]
	}
	return a
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browserless) get(path string) answer { b.t.Helper(); return b.do("GET", path, nil) }

// post sends a form with the session's CSRF token (read from the last page).
func (b *browserless) post(path string, form url.Values) answer {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf") == "" {
		if b.csrf == "" {
			b.get("/panel/")
		}
		form.Set("csrf", b.csrf)
	}
	return b.do("POST", path, form)
}

// login signs in; it fails the test unless the panel lets them in.
func (b *browserless) login(email, password string) {
	b.t.Helper()
	a := b.do("POST", "/panel/login", url.Values{"email": {email}, "password": {password}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/panel/" {
		b.t.Fatalf("login %s: %d %s %s", email, a.status, a.header.Get("Location"), a.body)
	}
	b.get("/panel/")
}

// sessionCookie is the client's session cookie value.
func (b *browserless) sessionCookie() string {
	u, _ := url.Parse(b.w.base + "/panel/")
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == panel.CookieName {
			return c.Value
		}
	}
	return ""
}

// owner signs in as the demo salon's owner.
func (w *world) owner() *browserless {
	b := w.client()
	b.login(demo.Email, demo.Password)
	return b
}

// user creates a panel user of salon and signs them in.
func (w *world) user(salonID int64, email string, role booking.Role) *browserless {
	w.t.Helper()
	if _, err := w.Svc.CreateUser(bookingtest.System(), salonID, email, "password-"+email, role); err != nil {
		w.t.Fatal(err)
	}
	b := w.client()
	b.login(email, "password-"+email)
	return b
}

// invite has the owner b invite email in role on the users page, and
// returns the link the page shows (the e-mail's).
func (b *browserless) invite(email string, role booking.Role) string {
	b.t.Helper()
	a := b.post("/panel/users", url.Values{"email": {email}, "role": {string(role)}})
	m := inviteLinkRE.FindStringSubmatch(a.body)
	if a.status != http.StatusOK || m == nil {
		b.t.Fatalf("invite %s: %d, no link on the page: %s", email, a.status, a.body)
	}
	return html.UnescapeString(m[1])
}

var inviteLinkRE = regexp.MustCompile(`value="(http[^"]*/panel/invite/[^"]+)"`)

// accept opens an invitation's link in a browser of its own and sets the
// password; the new user is then signed in.
func (w *world) accept(link, password string) *browserless {
	w.t.Helper()
	b := w.client()
	path := strings.TrimPrefix(link, w.base)
	if a := b.get(path); a.status != http.StatusOK {
		w.t.Fatalf("the invitation's page: %d %s", a.status, a.body)
	}
	a := b.do("POST", path, url.Values{"password": {password}, "password2": {password}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/panel/" {
		w.t.Fatalf("accept: %d %s %s", a.status, a.header.Get("Location"), a.body)
	}
	b.get("/panel/")
	return b
}

// today is the pinned clock's day in the demo salon.
func (w *world) today() booking.Date { return w.salon.Today(w.Clock.Now()) }

// scalar runs a query that returns one value.
func scalar[T any](t testing.TB, w *world, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := w.Pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}
