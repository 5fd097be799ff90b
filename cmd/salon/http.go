package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gofiber/fiber/v2/middleware/requestid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"salon/booking"
	"salon/booking/psp"
	"salon/bot"
	"salon/importer"
	"salon/internal/bodylimit"
	"salon/migrations"
	"salon/panel"
	"salon/widget"
)

// server is the HTTP side of the binary: health, metrics and, mounted by
// the front-end packages, the API, the widget, the panel and the webhooks.
type server struct {
	app *fiber.App
	// metricsAddr, when set, serves /metrics on a listener of its own
	// (SALON_METRICS_ADDR), not on the public one.
	metricsAddr string
	pool        *pgxpool.Pool
	svc         *booking.Service
	log         *slog.Logger
	reg         *prometheus.Registry
	// outbox gives a message of the development outbox whole (salon dev).
	outbox func(id int64) (string, bool)
	// outboxExtra are the e-mails of the development outbox with no row
	// of their own (sales' refunds).
	outboxExtra func() []booking.Message
}

func newServer(pool *pgxpool.Pool, svc *booking.Service, log *slog.Logger, metricsAddr string) *server {
	s := &server{pool: pool, svc: svc, log: log, reg: prometheus.NewRegistry(), metricsAddr: metricsAddr}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	requests := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "salon_http_request_duration_seconds",
		Help:    "HTTP requests by route and status.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"method", "route", "status"})
	s.reg.MustRegister(requests, newPaymentCollector(pool), newJobCollector(pool))
	s.reg.MustRegister(psp.Collectors()...)
	s.reg.MustRegister(importer.Collectors()...)

	s.app = widget.NewApp(log)
	s.app.Use(recover.New())
	s.app.Use(requestid.New()) // X-Request-ID in, or a new one; logged with internal errors
	s.app.Use(func(c *fiber.Ctx) error {
		start := time.Now()
		// An error is answered here, by the error handler, so that the log
		// and the metrics record the status that was answered (a 503, not
		// a guessed 500).
		if err := c.Next(); err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				s.log.Error("http: answering an error", "err", herr, "request_id", c.Locals("requestid"))
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		status := c.Response().StatusCode()
		took := time.Since(start)
		// fiber's strings point into buffers it reuses for the next
		// request: a label (kept by the registry) must be a copy.
		method, route := strings.Clone(c.Method()), strings.Clone(c.Route().Path)
		requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(took.Seconds())
		switch route {
		case "/healthz", "/readyz", "/metrics":
		default:
			// The path only: queries carry no secrets here, and the manage
			// token travels in a header or the URL fragment, never logged.
			attrs := []any{"method", method, "path", widget.LoggedPath(c), "status", status,
				"ms", took.Milliseconds(), "request_id", c.Locals("requestid"), "ip", c.IP()}
			if salon, ok := c.Locals(salonLogKey).(string); ok {
				attrs = append(attrs, "salon", salon)
			}
			s.log.Info("http", attrs...)
		}
		return nil
	})
	s.app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.app.Get("/readyz", s.ready)
	if metricsAddr == "" {
		s.app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})))
	}
	return s
}

// salonLogKey is where front ends leave the salon a request was for (its
// slug), for the access log.
const salonLogKey = "salon"

// mount adds the front ends (the widget and API, the panel, the bot's
// webhook), configured from the environment.
func (s *server) mount(getenv env, b *bot.Bot) error {
	cfg := widget.Config{RateLimit: widget.DefaultRateLimit, RequestTimeout: requestTimeout, Log: s.log,
		PublicURL: getenv("SALON_PUBLIC_URL")}
	if v := getenv("SALON_BOOKING_RATE_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return usagef("SALON_BOOKING_RATE_LIMIT must be a whole number of bookings per minute (0 turns the limit off), not %q", v)
		}
		cfg.RateLimit = n
	}
	proxies, err := widget.ParseProxies(getenv("SALON_TRUSTED_PROXIES"))
	if err != nil {
		return usagef("SALON_TRUSTED_PROXIES: %v", err)
	}
	cfg.TrustedProxies = proxies
	if b != nil {
		cfg.BotUsername = b.Username
	}
	wh := widget.New(s.svc, cfg)
	wh.Register(s.app)
	if getenv("SALON_DEV_OUTBOX") == "on" && s.outbox != nil {
		wh.RegisterOutbox(s.app, s.outbox, s.outboxExtra)
	}
	pcfg := panel.Config{
		Secure:         strings.HasPrefix(strings.ToLower(getenv("SALON_PUBLIC_URL")), "https://"),
		PublicURL:      publicOrigin(getenv("SALON_PUBLIC_URL")),
		RequestTimeout: requestTimeout,
		ClientIP:       widget.ClientIP(proxies),
		Log:            s.log,
	}
	if b != nil {
		pcfg.BotUsername = b.Username
	}
	panel.New(s.svc, pcfg).Register(s.app)
	if b != nil {
		s.reg.MustRegister(bot.Collectors()...)
		// The secret, then the size, before fiber's adaptor reads the body.
		s.app.Post(bot.WebhookPath, func(c *fiber.Ctx) error {
			if !b.WebhookAuthentic(c.Get(bot.SecretHeader)) {
				c.Set(fiber.HeaderConnection, "close") // its body is not read at all
				return c.SendStatus(fiber.StatusUnauthorized)
			}
			if err := bodylimit.Read(c, bot.MaxUpdate); err != nil {
				return c.SendStatus(fiber.StatusRequestEntityTooLarge)
			}
			return c.Next()
		}, adaptor.HTTPHandler(b.Webhook()))
	}
	return nil
}

// publicOrigin is the scheme and host of a public URL ("" when none).
func publicOrigin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// ready answers 200 when the database answers and its schema is current.
func (s *server) ready(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		s.log.Warn("readyz: database", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "reason": "database unreachable"})
	}
	pending, err := migrations.Pending(ctx, s.pool)
	if err != nil || pending {
		s.log.Warn("readyz: migrations", "pending", pending, "err", err)
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "reason": "migrations not current"})
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// requestTimeout is every request's deadline; drainTime how long a stopping
// server waits for the requests in flight (a little more than one request).
const (
	requestTimeout = 10 * time.Second
	drainTime      = requestTimeout + 2*time.Second
)

// serve runs the HTTP server on ln until ctx is done, then shuts it down.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 2)
	if s.metricsAddr != "" {
		mln, err := net.Listen("tcp", s.metricsAddr)
		if err != nil {
			return fmt.Errorf("metrics: listen on %s: %w", s.metricsAddr, err)
		}
		ms := &http.Server{Handler: promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := ms.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics: %w", err)
			}
		}()
		defer ms.Close()
		s.log.Info("metrics", "addr", mln.Addr().String())
	}
	go func() { errc <- s.app.Listener(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	if err := s.app.ShutdownWithTimeout(drainTime); err != nil {
		// Requests still running after drainTime are cut; their
		// transactions roll back, so nothing is half-written.
		s.log.Warn("http: requests still running at shutdown were cut", "err", err)
	}
	return nil
}
