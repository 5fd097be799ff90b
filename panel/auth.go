package panel

import (
	"errors"
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
	switch {
	case errors.As(err, &th):
		return err
	case errors.Is(err, booking.ErrForbidden):
		// The form again, with the error and no session (200: a 401 would
		// owe an HTTP authentication scheme this form is not).
		return h.render(c, "login", langOf(c).T("Log in"), loginData{Email: email, Error: langOf(c).T("Wrong email or password.")})
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
	back := c.FormValue("back")
	if !strings.HasPrefix(back, "/panel") || strings.ContainsAny(back, "\\#") || strings.Contains(back, "//") {
		back = c.Get(fiber.HeaderReferer)
		if i := strings.Index(back, "/panel/"); i >= 0 {
			back = back[i:]
		} else {
			back = "/panel/"
		}
	}
	return c.Redirect(strings.Clone(back), fiber.StatusSeeOther)
}
