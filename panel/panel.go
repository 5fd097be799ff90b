// Package panel is the salon's admin panel at /panel/ (CONTRACT section 7):
// server-rendered pages (html/template from web/, htmx for the live day
// view) where owners and admins run the day: the calendar, bookings,
// clients, the catalogue, shifts, settings, users and the audit log.
//
// Every change is a call on booking.Service with the signed-in user as the
// caller (booking.ByStaff, carried by the request's context), so the core
// decides what a user may see and change, holds them to their salon and
// role, and audits the change. The panel adds what a browser needs:
// server-side sessions in PostgreSQL (a fresh id at login; idle and
// absolute expiry; logout ends them on the server), a CSRF token on every
// POST, login throttling, security headers, and its own error pages
// (errors.go is the one place error kinds become statuses).
package panel

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"salon/booking"
	"salon/internal/bodylimit"
)

// Config configures the panel.
type Config struct {
	// Secure marks cookies Secure (SALON_PUBLIC_URL is https).
	Secure bool
	// PublicURL is the server's public base URL (SALON_PUBLIC_URL): a login
	// form posted from its origin is same-site even when a proxy rewrote
	// the Host header.
	PublicURL string
	// RequestTimeout is every request's deadline (default 10 s).
	RequestTimeout time.Duration
	// ClientIP returns the client's address (behind trusted proxies, the
	// forwarded one); default: the connection's.
	ClientIP func(c *fiber.Ctx) netip.Addr
	// PollInterval is how often an open day view checks for changes
	// (default 3 s).
	PollInterval time.Duration
	// Log receives internal errors, with the request id.
	Log *slog.Logger
	// BotUsername is the Telegram bot's username, for its t.me link on the
	// online booking page ("" or nil: no bot runs).
	BotUsername func() string
}

// Handler serves the panel.
type Handler struct {
	svc *booking.Service
	cfg Config
	log *slog.Logger
	// gets are the panel's GET routes, split at their slashes (read from
	// the app once: its routes are fixed once it serves).
	gets     [][]string
	getsOnce sync.Once
}

// New returns a panel over svc.
func New(svc *booking.Service, cfg Config) *Handler {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 3 * time.Second
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = func(c *fiber.Ctx) netip.Addr {
			a, _ := netip.ParseAddr(c.IP())
			return a
		}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{svc: svc, cfg: cfg, log: cfg.Log}
}

// CookieName is the session cookie.
const CookieName = "salon_session"

// Register mounts the panel on app under /panel.
func (h *Handler) Register(app *fiber.App) {
	// An upload's file streams in for as long as its deadline: the
	// connection's read deadline (the server's, 30 s, for every other
	// request) is the upload's, for a request of a live session only (the
	// server reads a body before the panel sees the request: anyone else's
	// keeps the 30 s).
	srv := app.Server()
	prev := srv.HeaderReceived
	srv.HeaderReceived = func(hdr *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if path, _, _ := bytes.Cut(hdr.RequestURI(), []byte("?")); string(hdr.Method()) == fiber.MethodPost && string(path) == UploadPath &&
			h.liveSession(string(hdr.Cookie(CookieName))) {
			return fasthttp.RequestConfig{ReadTimeout: UploadTimeout}
		}
		if prev != nil {
			return prev(hdr)
		}
		return fasthttp.RequestConfig{}
	}
	p := app.Group("/panel", h.headers, h.deadline, h.errors, h.bodies)
	p.Get("/login", h.loginPage)
	p.Post("/login", h.login)
	p.Get("/invite/:code", h.invitePage)
	p.Post("/invite/:code", h.acceptInvite)

	a := p.Group("", h.session, h.csrf)
	a.Post("/logout", h.logout)
	a.Post("/lang", h.setLang)
	a.Get("/", h.today)
	a.Get("/day/:date", h.day)
	a.Get("/day/:date/grid", h.dayGrid)
	a.Get("/masters/:id/week/:date", h.week)
	a.Get("/masters/:id/week/:date/grid", h.weekGrid)

	a.Get("/bookings/new", h.newBooking)
	a.Post("/bookings", h.createBooking)
	a.Get("/bookings/:id", h.bookingPage)
	a.Post("/bookings/:id/cancel", h.cancelBooking)
	a.Post("/bookings/:id/reschedule", h.rescheduleBooking)
	a.Post("/bookings/:id/complete", h.completeBooking)
	a.Post("/bookings/:id/no-show", h.noShowBooking)
	a.Post("/bookings/:id/refund", h.refundBooking)
	a.Post("/bookings/:id/paid-in-salon", h.paidInSalon)
	a.Post("/bookings/:id/pay-link", h.payLink)
	a.Post("/bookings/:id/pay-with", h.payWithBalance)
	a.Get("/online", h.online)
	a.Get("/online/qr.:format", h.onlineQR)
	a.Get("/payments", h.payments)
	a.Get("/attention", h.attention)
	a.Post("/attention/:id/retry", h.retryPayment)
	a.Post("/attention/:id/release", h.releasePayment)
	a.Post("/attention/:id/refund-made", h.depositRefundMade)
	a.Post("/messages/:id/retry", h.retryMessage)
	a.Get("/reminders", h.reminders)
	a.Get("/balances", h.balances)
	a.Post("/balances", h.sellBalance)
	a.Get("/balances/:id", h.balancePage)
	a.Post("/balances/:id/refund", h.refundBalance)
	a.Post("/balances/:id/resend", h.resendCode)
	a.Post("/balances/:id/code", h.renewCode)
	a.Post("/balances/:id/retry-refund", h.retryRefund)
	a.Post("/balances/:id/refund-made", h.saleRefundMade)
	a.Post("/balance-offers", h.addOffer)
	a.Post("/balance-offers/:id/active", h.setOfferActive)
	a.Get("/waitlist", h.waitlist)
	a.Post("/waitlist", h.joinWaitlist)
	a.Post("/waitlist/:id/offer", h.offerWaitlist)
	a.Post("/waitlist/:id/leave", h.leaveWaitlist)

	a.Get("/clients", h.clients)
	a.Get("/clients/by-phone", h.knownClient)
	a.Get("/clients/:id", h.clientPage)
	a.Post("/clients/:id", h.updateClient)
	a.Get("/clients/:id/export", h.exportClient)
	a.Post("/clients/:id/erase", h.eraseClient)
	a.Post("/clients/:id/channels", h.setChannels)

	a.Get("/masters", h.masters)
	a.Post("/masters", h.createMaster)
	a.Get("/masters/:id", h.masterPage)
	a.Post("/masters/:id", h.updateMaster)
	a.Post("/masters/:id/offers", h.setOffers)
	a.Post("/masters/:id/link-code", h.linkCode)
	a.Post("/masters/:id/calendar", h.newCalendar)
	a.Post("/masters/:id/calendar/revoke", h.revokeCalendar)
	a.Post("/masters/:id/shifts", h.setShifts)
	a.Post("/masters/:id/template", h.applyTemplate)

	a.Get("/services", h.services)
	a.Post("/services", h.createService)
	a.Get("/services/:id", h.servicePage)
	a.Post("/services/:id", h.updateService)
	a.Post("/services/:id/together", h.setTogether)

	a.Get("/settings", h.settings)
	a.Post("/settings", h.updateSettings)
	a.Post("/settings/receipts", h.updateReceipts)
	a.Post("/settings/messages", h.updateMessages)
	a.Get("/users", h.users)
	a.Post("/users", h.createUser)
	a.Post("/users/:id/delete", h.deleteUser)
	a.Post("/invitations/:id/revoke", h.revokeInvitation)
	a.Get("/audit", h.audit)
	a.Get("/import", h.importForm)
	a.Get("/import/template/:kind", h.importTemplate)
	a.Get("/export/:kind", h.export)
	a.Post("/import", h.upload)
	a.Get("/import/:job", h.importStatus)
	a.Post("/import/:job/apply", h.applyImport)

	a.Use(func(c *fiber.Ctx) error { return errNoPage })
}

// headers sets the panel's security headers: no framing, no inline script,
// no caching of pages with personal data.
func (h *Handler) headers(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// deadline gives the request its deadline, and its caller until a session
// names the user (session): an anonymous visitor of the login page.
func (h *Handler) deadline(c *fiber.Ctx) error {
	d := h.cfg.RequestTimeout
	if c.Method() == fiber.MethodPost && c.Path() == UploadPath {
		d = max(d, UploadTimeout) // the file streams in while the request runs
	}
	ctx, cancel := context.WithTimeout(booking.As(c.UserContext(), booking.Visitor()), d)
	defer cancel()
	c.SetUserContext(ctx)
	return c.Next()
}

// session finds the signed-in user from the session cookie; without one,
// pages redirect to the login (and htmx requests are told to go there).
func (h *Handler) session(c *fiber.Ctx) error {
	id := c.Cookies(CookieName)
	u, err := h.svc.SessionUser(c.UserContext(), id)
	if err != nil {
		if !isNotFound(err) {
			return err
		}
		if c.Get("HX-Request") != "" {
			c.Set("HX-Redirect", "/panel/login")
			return c.SendStatus(fiber.StatusNoContent)
		}
		return c.Redirect("/panel/login", fiber.StatusSeeOther)
	}
	// From here on the user asks.
	c.SetUserContext(booking.As(c.UserContext(), booking.ByStaff(*u)))
	salon, err := h.svc.Salon(c.UserContext(), u.SalonID)
	if err != nil {
		return err
	}
	c.Locals(userKey, u)
	c.Locals(salonKey, salon)
	c.Locals("salon", salon.Slug) // for the access log
	c.Locals(sessionKey, strings.Clone(id))
	return c.Next()
}

type localKey int

const (
	userKey localKey = iota
	sessionKey
	salonKey
)

func user(c *fiber.Ctx) *booking.User { return c.Locals(userKey).(*booking.User) }

// csrfToken is the session's CSRF token: derived from the session id (so
// nothing more is stored), and useless without it.
func csrfToken(sessionID string) string {
	m := hmac.New(sha256.New, []byte(sessionID))
	m.Write([]byte("panel-csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrf refuses a state-changing request without the session's token (a
// form field "csrf" or the X-CSRF-Token header): 403, nothing changed. The
// upload's streamed form is checked by the upload itself, before its file.
func (h *Handler) csrf(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	got := c.Get("X-CSRF-Token")
	if got == "" && c.Method() == fiber.MethodPost && c.Path() == UploadPath {
		return c.Next()
	}
	if got == "" {
		got = c.FormValue("csrf")
	}
	if !h.csrfValid(c, got) {
		return errCSRF
	}
	return c.Next()
}

// csrfValid reports whether token is the session's CSRF token.
func (h *Handler) csrfValid(c *fiber.Ctx, token string) bool {
	want := csrfToken(c.Locals(sessionKey).(string))
	return subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}

// liveSession reports whether id is a live session's (a user's).
func (h *Handler) liveSession(id string) bool {
	if id == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(booking.As(context.Background(), booking.Visitor()), 2*time.Second)
	defer cancel()
	_, err := h.svc.SessionUser(ctx, id)
	return err == nil
}

// UploadTimeout is the upload's deadline: its file arrives while it runs
// (the largest file at 50 KB/s, a poor mobile uplink).
const UploadTimeout = 10 * time.Minute

// MaxForm is the largest form the panel reads (the upload streams its own).
const MaxForm = 64 << 10

// bodies holds every request's body to MaxForm, from its headers or
// reading no more than that, before anything else reads it.
func (h *Handler) bodies(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodPost && c.Path() == UploadPath {
		return c.Next()
	}
	switch err := bodylimit.Read(c, MaxForm); {
	case errors.Is(err, bodylimit.ErrTooLarge):
		return fiber.NewError(fiber.StatusRequestEntityTooLarge, "the form is too large")
	case err != nil:
		return fiber.NewError(fiber.StatusBadRequest, "the form could not be read")
	}
	return c.Next()
}

// sameOrigin refuses a cross-site POST to the login form (login CSRF): a
// browser says where a form came from in Origin or Sec-Fetch-Site. (There
// is no session yet to bind a token to; clients that send neither header
// are not browsers, and cannot be made to post by another site.)
func (h *Handler) sameOrigin(c *fiber.Ctx) bool {
	if site := c.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := c.Get(fiber.HeaderOrigin)
	switch {
	case origin == "":
		return true
	case origin == "null":
		return false
	case h.cfg.PublicURL != "" && strings.EqualFold(origin, strings.TrimRight(h.cfg.PublicURL, "/")):
		return true
	}
	return strings.TrimPrefix(strings.TrimPrefix(origin, "https://"), "http://") == c.Hostname()
}
