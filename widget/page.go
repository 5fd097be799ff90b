package widget

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/compress"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"salon/booking"
	"salon/web"
)

var pages = template.Must(web.Templates())

// pageService is a service as the widget page lists it.
type pageService struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	DurationMin int    `json:"duration_min"`
	Duration    string `json:"-"` // the client's stay: 60, or 45–60 when masters differ
	Price       string `json:"-"` // 2 500 ₽, or "from 2 000 ₽" when masters differ
	Deposit     string `json:"-"`
	PriceValue  any    `json:"price"`
	DepositVal  any    `json:"deposit"`
}

// pageConfig is what the page's script starts from.
type pageConfig struct {
	Slug     string `json:"slug"`
	Lang     string `json:"lang"`
	Currency string `json:"currency"`
	// Sign and SignBefore: how an amount is written (booking.CurrencySign).
	Sign       string `json:"sign"`
	SignBefore bool   `json:"signBefore"`
	Timezone   string `json:"timezone"` // IANA: the widget shows times on the salon's clock
	// PhoneExample is a phone of the salon's country, for the phone's
	// hints and errors.
	PhoneExample string `json:"phoneExample"`
	// DaysPerRequest: how many of Days one slots request covers.
	DaysPerRequest int           `json:"daysPerRequest"`
	Today          string        `json:"today"`
	Days           []string      `json:"days"`
	Services       []pageService `json:"services"`
	BookingID      int64         `json:"bookingId,omitempty"`
	EntryID        int64         `json:"entryId,omitempty"` // the waitlist entry of the waitlist page
	ReturnRef      string        `json:"returnRef,omitempty"`
	// OnlinePay says deposits are paid online right after booking, the
	// time held for HoldMin minutes meanwhile.
	OnlinePay bool `json:"onlinePay"`
	// Telegram: the salon has a bot, so the done page offers its updates
	// there.
	Telegram bool              `json:"telegram"`
	HoldMin  int               `json:"holdMin"`
	I18n     map[string]string `json:"i18n"`
}

type pageData struct {
	Salon      *booking.Salon
	SalonPhone string // the salon's phone as people write it
	Lang       string
	OtherLang  string
	T          map[string]string
	Services   []pageService
	// Mode: book, manage (a booking, by its manage token), back (from
	// paying, by the payment's return reference) or waitlist (a place on
	// the waitlist, by its manage token).
	Mode   string
	Config pageConfig
	// Gifts: the salon sells certificates or packages online.
	Gifts bool
}

func (h *Handler) registerPages(app *fiber.App) {
	app.Get("/w/:slug", h.deadline, h.widgetPage)
	app.Get("/w/:slug/manage/:id", h.deadline, h.managePage)
	app.Get("/w/:slug/back/:ref", h.deadline, h.backPage)
	app.Get("/w/:slug/waitlist/:id", h.deadline, h.waitlistPage)
	app.Get("/w/:slug/gift", h.deadline, h.giftPage)
	app.Get("/w/:slug/bought/:ref", h.deadline, h.boughtPage)
	app.Get("/widget.js", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		c.Set("Access-Control-Allow-Origin", "*")
		return c.Send(embedJS)
	})
	// Static files: compressed (at the default level: a phone on a slow
	// network waits for bytes, not for the few hundred microseconds more),
	// and kept by browsers for a year when asked for by their content's
	// version (web.Asset), else 5 minutes.
	app.Use("/static", func(c *fiber.Ctx) error {
		name := strings.TrimPrefix(c.Path(), "/static/")
		if v := c.Query("v"); v != "" && v == web.Version(name) {
			c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
		} else {
			c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		}
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		return c.Next()
	}, compress.New(compress.Config{Level: compress.LevelDefault}), filesystem.New(filesystem.Config{Root: http.FS(web.Static)}))
	app.Get("/favicon.ico", func(c *fiber.Ctx) error { return c.Redirect(web.Asset("favicon.svg"), fiber.StatusMovedPermanently) })
}

// embedJS is the embed script, served as /widget.js.
var embedJS = func() []byte {
	b, err := fs.ReadFile(web.Static, "embed.js")
	if err != nil {
		panic(err) // embedded at build time: cannot be missing
	}
	return b
}()

func (h *Handler) widgetPage(c *fiber.Ctx) error { return h.page(c, "book") }

func (h *Handler) managePage(c *fiber.Ctx) error { return h.page(c, "manage") }

func (h *Handler) backPage(c *fiber.Ctx) error { return h.page(c, "back") }

func (h *Handler) waitlistPage(c *fiber.Ctx) error { return h.page(c, "waitlist") }

// page renders the widget (book), its manage page (manage), the page a
// client comes back to from paying (back) or a waitlist entry's page
// (waitlist), for the salon of :slug.
func (h *Handler) page(c *fiber.Ctx, mode string) error {
	ctx := c.UserContext()
	s, err := h.svc.SalonBySlug(ctx, c.Params("slug"))
	if err != nil {
		return h.pageError(c, err)
	}
	var bookingID, entryID int64
	var ref string
	switch mode {
	case "manage":
		if bookingID, err = strconv.ParseInt(c.Params("id"), 10, 64); err != nil || bookingID <= 0 {
			return h.pageError(c, booking.ErrNotFound)
		}
	case "waitlist":
		if entryID, err = strconv.ParseInt(c.Params("id"), 10, 64); err != nil || entryID <= 0 {
			return h.pageError(c, booking.ErrNotFound)
		}
	case "back":
		ref = strings.Clone(c.Params("ref"))
		if err := h.svc.ReturnAt(ctx, s.ID, ref); err != nil {
			return h.pageError(c, err)
		}
	}
	list, err := h.svc.Services(ctx, s.ID)
	if err != nil {
		return h.pageError(c, err)
	}
	lang, other := salonPageLang(c, s)
	// The days offered are the salon's window (its horizon); the page asks
	// for their free times as many days at a time as one slots request
	// covers (MaxSlotDays), the later ones when the client asks.
	first, days := s.Window(h.svc.Now())
	d := pageData{Salon: s, Lang: lang, OtherLang: other, T: messages[lang], Mode: mode, SalonPhone: booking.DisplayPhone(s.Phone)}
	masters, err := h.svc.Masters(ctx, s.ID, 0)
	if err != nil {
		return h.pageError(c, err)
	}
	if mode == "book" && h.svc.Provider() != nil {
		if offers, err := h.svc.BalanceOffers(ctx, s.ID, false); err == nil {
			d.Gifts = len(offers) > 0
		}
	}
	ranges := booking.TermRanges(masters)
	for _, sv := range list {
		if _, ok := ranges[sv.ID]; !ok && mode == "book" {
			continue // no master does it: nothing a client could book (a booking's page still names it)
		}
		// (How long the client stays: a processing time's wait and
		// finish count, as the times offered do.)
		p := pageService{ID: sv.ID, Name: sv.Name, DurationMin: sv.DurationMin, Duration: strconv.Itoa(sv.StayMin(sv.DurationMin)),
			Price: sv.Price.Format(s.Currency, lang), PriceValue: sv.Price,
			Deposit: formatDeposit(sv.Deposit, s.Currency, lang), DepositVal: sv.Deposit}
		// What a client pays is their master's price: a service whose
		// masters ask different prices says where they start.
		if r, ok := ranges[sv.ID]; ok {
			p.Price = r.MinPrice.Format(s.Currency, lang)
			if r.MinPrice != r.MaxPrice {
				p.Price = fmt.Sprintf(messages[lang]["price_from"], p.Price)
			}
			p.Duration = r.Stays(&sv)
		}
		d.Services = append(d.Services, p)
	}
	sign, before := booking.CurrencySign(s.Currency)
	d.Config = pageConfig{Slug: s.Slug, Lang: lang, Currency: s.Currency, Sign: sign, SignBefore: before, Timezone: s.Timezone, Today: first.String(), PhoneExample: s.ExamplePhone(),
		Services: d.Services, BookingID: bookingID, EntryID: entryID, ReturnRef: ref, OnlinePay: h.svc.Provider() != nil, HoldMin: s.HoldMin,
		Telegram: h.cfg.botUsername() != "",
		I18n:     messages[lang]}
	if d.Config.Services == nil {
		d.Config.Services = []pageService{}
	}
	for i := range days {
		d.Config.Days = append(d.Config.Days, first.AddDays(i).String())
	}
	d.Config.DaysPerRequest = booking.MaxSlotDays
	var out bytes.Buffer
	if err := pages.ExecuteTemplate(&out, "widget.html", d); err != nil {
		return h.pageError(c, err)
	}
	setPageHeaders(c)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(out.Bytes())
}

// setPageHeaders allows the widget in any site's iframe (that is its job)
// and nothing else: scripts, styles and requests only from this origin.
func setPageHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors *")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderCacheControl, "no-store")
}

// pageError answers a page that cannot be shown, in the language the
// client asks for (?lang, else their browser's; the salon, and so its
// language, may be what could not be read).
func (h *Handler) pageError(c *fiber.Ctx, err error) error {
	lang := pageLang(c, "ru")
	t := messages[lang]
	status, title, msg := fiber.StatusNotFound, t["not_found_title"], t["not_found_page"]
	switch {
	case errors.Is(err, booking.ErrNotFound):
	case errors.Is(err, booking.ErrUnavailable):
		// The database is away or busy: a moment, not a failure.
		h.log.Warn("page: unavailable", "request_id", c.Locals("requestid"), "path", LoggedPath(c), "err", err)
		status, title, msg = fiber.StatusServiceUnavailable, t["title"], t["busy_page"]
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(RetryAfter))
	default:
		h.log.Error("page", "request_id", c.Locals("requestid"), "path", LoggedPath(c), "err", err)
		status, title, msg = fiber.StatusInternalServerError, t["title"], t["error_page"]
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).SendString(`<!doctype html><html lang="` + lang + `"><meta charset=utf-8>` +
		`<meta name=viewport content="width=device-width, initial-scale=1"><title>` + title + `</title>` +
		`<link rel="stylesheet" href="/static/widget.css"><main id="app"><h1>` + title + `</h1><p>` + msg + `</p></main></html>`)
}

// pageLang is the language a page is in when no salon says it: ?lang,
// else the first of the browser's Accept-Language the widget speaks, else
// fallback.
func pageLang(c *fiber.Ctx, fallback string) string {
	if q := c.Query("lang"); q == "ru" || q == "en" {
		return q
	}
	if l, ok := acceptedLang(c); ok {
		return l
	}
	return fallback
}

func formatDeposit(m booking.Money, currency, lang string) string {
	if m == 0 {
		return ""
	}
	return m.Format(currency, lang)
}

// salonPageLang is a salon's page's language (?lang=, else the salon's)
// and the other one, which the page offers.
func salonPageLang(c *fiber.Ctx, s *booking.Salon) (lang, other string) {
	lang = s.Locale
	if q := c.Query("lang"); q == "ru" || q == "en" {
		lang = q
	}
	if lang == "en" {
		return lang, "ru"
	}
	return lang, "en"
}
