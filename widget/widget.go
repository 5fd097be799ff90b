// Package widget is the public face of a salon on the web: the JSON API of
// /api/v1 (CONTRACT section 4), the booking widget page /w/{slug} with its
// manage page, and the embed script /widget.js that puts the widget on a
// salon's own site in an iframe.
//
// Every request becomes a call on booking.Service, with a deadline; the
// API's handlers return errors, which one error handler (errors.go) turns
// into HTTP statuses and JSON bodies, and the pages have their own. The API
// keeps no session and sets no cookie: a visitor who booked holds the
// booking's manage token, sent in the X-Manage-Token header, and the core
// decides what it opens.
package widget

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"

	"salon/booking"
	"salon/internal/bodylimit"
)

// Config configures the handler.
type Config struct {
	// RateLimit is how many bookings one client IP may create per minute,
	// and how many it may cancel or move; 0 turns the limits off.
	RateLimit int
	// TrustedProxies are the proxies whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// RequestTimeout is every request's deadline (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Log receives internal errors, with the request id.
	Log *slog.Logger
	// PublicURL is the server's public base URL (payment return links).
	PublicURL string
	// BotUsername tells the salon bot's username once the bot knows it
	// ("" or nil: no Telegram link on the done page).
	BotUsername func() string
}

// DefaultRateLimit is SALON_BOOKING_RATE_LIMIT's default.
const DefaultRateLimit = 30

// DefaultRequestTimeout bounds each request: a request that runs out of
// time writes nothing and answers 503 with Retry-After.
const DefaultRequestTimeout = 10 * time.Second

// botUsername is the bot's username, "" for none (yet).
func (c Config) botUsername() string {
	if c.BotUsername == nil {
		return ""
	}
	return c.BotUsername()
}

// Handler serves the API and the widget pages.
type Handler struct {
	svc *booking.Service
	cfg Config
	log *slog.Logger
	// bookings and changes (cancels, reschedules) are limited per client
	// IP, each to RateLimit a minute: a loop of book-and-cancel is too.
	bookings, changes *limiter
}

// New returns a Handler over svc.
func New(svc *booking.Service, cfg Config) *Handler {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	h := &Handler{svc: svc, cfg: cfg, log: cfg.Log}
	if h.log == nil {
		h.log = slog.Default()
	}
	if cfg.RateLimit > 0 {
		h.bookings, h.changes = newLimiter(cfg.RateLimit), newLimiter(cfg.RateLimit)
	}
	return h
}

// Register mounts the API, the pages and the static files on app.
func (h *Handler) Register(app *fiber.App) {
	api := app.Group("/api/v1", bodyLimit, h.apiErrors, h.deadline, cors.New(cors.Config{
		AllowOrigins: "*",
		AllowHeaders: "Content-Type, Idempotency-Key, X-Manage-Token",
		AllowMethods: "GET, POST, DELETE, OPTIONS",
	}), noStore)
	api.Get("/openapi.json", serveOpenAPI)
	api.Get("/salons/:slug", h.getSalon)
	api.Get("/salons/:slug/services", h.listServices)
	api.Get("/salons/:slug/masters", h.listMasters)
	api.Get("/salons/:slug/slots", h.listSlots)
	api.Post("/salons/:slug/bookings", h.rateLimited(h.bookings), h.createBooking)
	api.Get("/bookings/:id", h.getBooking)
	api.Get("/bookings/:id/calendar", h.bookingCalendar)
	api.Post("/bookings/:id/cancel", h.rateLimited(h.changes), h.cancelBooking)
	api.Post("/bookings/:id/payment", h.rateLimited(h.changes), h.payBooking)
	api.Post("/bookings/:id/reschedule", h.rateLimited(h.changes), h.rescheduleBooking)
	api.Post("/bookings/:id/telegram", h.rateLimited(h.changes), h.telegramLink)
	api.Get("/returns/:ref", h.paymentReturn)
	api.Post("/returns/:ref/payment", h.rateLimited(h.changes), h.payAgain)
	api.Post("/salons/:slug/waitlist", h.rateLimited(h.bookings), h.joinWaitlist)
	// (A code is a credential: reading one is limited like a change.)
	api.Post("/salons/:slug/balances/lookup", h.rateLimited(h.changes), h.lookupBalance)
	api.Get("/salons/:slug/balances/:code", h.rateLimited(h.changes), h.getBalance)
	api.Get("/salons/:slug/offers", h.listOffers)
	api.Post("/salons/:slug/purchases", h.rateLimited(h.bookings), h.createPurchase)
	api.Post("/purchases/:ref", h.rateLimited(h.changes), h.viewPurchase)
	api.Get("/waitlist/:id", h.getWaitlist)
	api.Delete("/waitlist/:id", h.rateLimited(h.changes), h.leaveWaitlist)
	api.Post("/waitlist/:id/offers/:offer/accept", h.rateLimited(h.changes), h.acceptOffer)
	api.Use(func(c *fiber.Ctx) error { return errNoRoute })

	h.registerPages(app)
	h.registerPayments(app)
	h.registerActions(app)
	h.registerOffers(app)
}

// apiErrors is the API's error handler: whatever a handler under it
// returns is answered by fail.
func (h *Handler) apiErrors(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return fail(c, h.log, err)
	}
	return nil
}

// deadline gives the request its deadline and its caller: every call on
// the core made with c.UserContext() ends by then, and asks as an
// anonymous visitor (a manage token, where one is sent, asks instead:
// bookingParams).
func (h *Handler) deadline(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(booking.As(c.UserContext(), booking.Visitor()), h.cfg.RequestTimeout)
	defer cancel()
	c.SetUserContext(ctx)
	return c.Next()
}

// MaxBody is the largest request body the API and the webhooks take.
const MaxBody = 64 << 10

// NewApp is the HTTP server of salon serve (and of the tests that stand in
// for it), before any route: its configuration (serverConfig) and its
// first middleware, which leaves no unread body on a connection
// (bodylimit.Guard).
func NewApp(log *slog.Logger) *fiber.App {
	app := fiber.New(serverConfig(log))
	app.Use(bodylimit.Guard)
	return app
}

// serverConfig is the HTTP server's configuration. Bodies are streamed: a
// handler runs after a few KiB at most, and each route reads its body to
// its own limit or refuses it from its headers (internal/bodylimit); the
// panel streams its uploads. A multipart body is never parsed before a
// handler asks for it (fasthttp would, and answer a malformed one with its
// own words).
func serverConfig(log *slog.Logger) fiber.Config {
	return fiber.Config{
		DisableStartupMessage:        true,
		StreamRequestBody:            true,
		BodyLimit:                    MaxBody,
		ReadTimeout:                  30 * time.Second,
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  120 * time.Second,
		ErrorHandler:                 ErrorHandler(log),
		DisablePreParseMultipartForm: true,
	}
}

// bodyLimit answers 413 to an API request whose body is over MaxBody (415
// to a compressed one), reading no more of it than that.
func bodyLimit(c *fiber.Ctx) error {
	switch err := bodylimit.Read(c, MaxBody); {
	case errors.Is(err, bodylimit.ErrTooLarge):
		return reply(c, fiber.StatusRequestEntityTooLarge, errorBody{Error: "invalid", Message: "the request body is too large"})
	case errors.Is(err, bodylimit.ErrEncoded):
		return reply(c, fiber.StatusUnsupportedMediaType, errorBody{Error: "invalid", Message: "send the body uncompressed"})
	case err != nil:
		return reply(c, fiber.StatusBadRequest, errorBody{Error: "invalid", Message: "the request body could not be read"})
	}
	return c.Next()
}

func noStore(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}
