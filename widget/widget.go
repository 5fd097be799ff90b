// Package widget is the public face of a salon on the web: the JSON API of
// /api/v1 (CONTRACT section 4), the booking widget page /w/{slug} with its
// manage page, and the embed script /widget.js that puts the widget on a
// salon's own site in an iframe.
//
// Every request becomes a call on booking.Service; domain errors become HTTP
// statuses and JSON error bodies in one place (errors.go). The API keeps no
// session and sets no cookie: a booking is managed with the unguessable
// manage token Book returned, sent in the X-Manage-Token header.
package widget

import (
	"log/slog"
	"net/netip"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"

	"salon/booking"
)

// Config configures the handler.
type Config struct {
	// RateLimit is how many bookings one client IP may create per minute;
	// 0 turns the limit off.
	RateLimit int
	// TrustedProxies are the proxies whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// Log receives internal errors, with the request id.
	Log *slog.Logger
}

// DefaultRateLimit is SALON_BOOKING_RATE_LIMIT's default.
const DefaultRateLimit = 30

// Handler serves the API and the widget pages.
type Handler struct {
	svc     *booking.Service
	cfg     Config
	log     *slog.Logger
	limiter *limiter
}

// New returns a Handler over svc.
func New(svc *booking.Service, cfg Config) *Handler {
	h := &Handler{svc: svc, cfg: cfg, log: cfg.Log}
	if h.log == nil {
		h.log = slog.Default()
	}
	if cfg.RateLimit > 0 {
		h.limiter = newLimiter(cfg.RateLimit)
	}
	return h
}

// Register mounts the API, the pages and the static files on app.
func (h *Handler) Register(app *fiber.App) {
	api := app.Group("/api/v1", cors.New(cors.Config{
		AllowOrigins: "*",
		AllowHeaders: "Content-Type, Idempotency-Key, X-Manage-Token",
		AllowMethods: "GET, POST, OPTIONS",
	}), noStore)
	api.Get("/openapi.json", serveOpenAPI)
	api.Get("/salons/:slug", h.getSalon)
	api.Get("/salons/:slug/services", h.listServices)
	api.Get("/salons/:slug/masters", h.listMasters)
	api.Get("/salons/:slug/slots", h.listSlots)
	api.Post("/salons/:slug/bookings", h.rateLimited, h.createBooking)
	api.Get("/bookings/:id", h.getBooking)
	api.Post("/bookings/:id/cancel", h.cancelBooking)
	api.Post("/bookings/:id/reschedule", h.rescheduleBooking)
	api.Use(func(c *fiber.Ctx) error { return fail(c, h.log, errNoRoute) })

	h.registerPages(app)
}

func noStore(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}
