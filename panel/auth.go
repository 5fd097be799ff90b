package panel

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

type loginData struct {
	Email string
	Error string
}

func (h *Handler) loginPage(c *fiber.Ctx) error {
	// A signed-in user goes straight to the day.
	if _, err := h.svc.SessionUser(c.UserContext(), c.Cookies(CookieName)); err == nil {
		return c.Redirect("/panel/", fiber.StatusSeeOther)
	}
	return h.render(c, "login", langOf(c).T("Log in"), loginData{})
}

// login checks the form and opens a session with a fresh id; any session
// cookie the browser had is replaced (no fixation).
func (h *Handler) login(c *fiber.Ctx) error {
	if !h.sameOrigin(c) {
		return errOrigin
	}
	email := strings.Clone(strings.TrimSpace(c.FormValue("email")))
	password := c.FormValue("password")
	id, _, err := h.svc.Login(c.UserContext(), email, password, h.cfg.ClientIP(c).String())
	var th *booking.ThrottledError
	l := langOf(c)
	again := func(status int, retry time.Duration, msg string) error {
		c.Status(status)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(retry.Seconds())))
		return h.render(c, "login", l.T("Log in"), loginData{Email: email, Error: msg})
	}
	switch {
	case errors.As(err, &th):
		// The form again, saying for how long (the right password too is
		// refused until then).
		wait := th.RetryAfter.Round(time.Second) + time.Second
		return again(fiber.StatusTooManyRequests, wait, l.T("Too many failed logins. Try again in %d min.", int((wait+time.Minute-1)/time.Minute)))
	case errors.Is(err, booking.ErrForbidden):
		// The form again, with the error and no session (200: a 401 would
		// owe an HTTP authentication scheme this form is not).
		return h.render(c, "login", l.T("Log in"), loginData{Email: email, Error: l.T("Wrong email or password.")})
	case errors.Is(err, booking.ErrUnavailable):
		// Too many logins being checked at once, or the database away.
		return again(fiber.StatusServiceUnavailable, RetryAfter*time.Second, l.T("Signing in is busy. Try again in a moment."))
	case err != nil:
		return err
	}
	h.setCookie(c, id, booking.SessionMax)
	return c.Redirect("/panel/", fiber.StatusSeeOther)
}

func (h *Handler) setCookie(c *fiber.Ctx, value string, maxAge time.Duration) {
	ck := &fiber.Cookie{
		Name: CookieName, Value: value, Path: "/panel", HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: h.cfg.Secure, MaxAge: int(maxAge.Seconds()),
	}
	if maxAge <= 0 {
		ck.MaxAge = -1
		ck.Expires = time.Unix(0, 0)
	}
	c.Cookie(ck)
}

// logout ends the session on the server and clears the cookie.
func (h *Handler) logout(c *fiber.Ctx) error {
	if err := h.svc.Logout(c.UserContext(), c.Locals(sessionKey).(string)); err != nil {
		return err
	}
	h.setCookie(c, "", 0)
	return c.Redirect("/panel/login", fiber.StatusSeeOther)
}

// setLang switches the user's panel language.
func (h *Handler) setLang(c *fiber.Ctx) error {
	if err := h.svc.SetUserLang(c.UserContext(), c.FormValue("lang")); err != nil {
		return err
	}
	// Back to the page the switch was on: the one it names (its GET
	// address), else the one the browser came from.
	back, ok := panelPath(c.FormValue("back"))
	if !ok {
		ref := c.Get(fiber.HeaderReferer)
		if i := strings.Index(ref, "/panel/"); i >= 0 {
			back, ok = panelPath(ref[i:])
		}
		if !ok {
			back = "/panel/"
		}
	}
	return c.Redirect(back, fiber.StatusSeeOther)
}

// panelPath is s as an address in the panel to redirect to (its path and
// query, escaped), or false when it is not one: another site, another
// scheme, control characters.
func panelPath(s string) (string, bool) {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) >= 0 {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/panel") || strings.HasPrefix(u.Path, "//") {
		return "", false
	}
	out := u.EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.Query().Encode()
	}
	return out, true
}
