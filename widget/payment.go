package widget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/booking/psp"
	"salon/internal/ical"
)

// The payment side of the public face: providers' notifications, the
// sandbox provider's payment page; and calendars (a master's feed, a
// client's booking as an .ics file).

// WebhookPath is where payment providers notify: /webhooks/payments/{provider}.
const WebhookPath = "/webhooks/payments/:provider"

func (h *Handler) registerPayments(app *fiber.App) {
	app.Post(WebhookPath, bodyLimit, h.deadline, h.paymentWebhook)
	app.Get(psp.SandboxPath+":id", h.deadline, h.sandboxPage)
	app.Post(psp.SandboxPath+":id", bodyLimit, h.deadline, h.sandboxDecide)
	app.Get("/calendar/b/:file", h.deadline, h.bookingCalendarLink)
	app.Get("/calendar/:file", h.deadline, h.masterCalendar)
}

// paymentWebhook takes a provider's notification ({type: notification,
// event, object: {id}}). It is believed only as far as the provider's own
// answer: the core asks the provider before it changes anything. A
// notification about a payment we do not know is acknowledged and
// ignored; a temporary failure asks the provider to send it again (503).
func (h *Handler) paymentWebhook(c *fiber.Ctx) error {
	provider := strings.Clone(c.Params("provider"))
	p := h.svc.Provider()
	if p == nil || p.Name() != provider {
		return c.SendStatus(fiber.StatusNotFound)
	}
	var n struct {
		Type   string `json:"type"`
		Event  string `json:"event"`
		Object struct {
			ID string `json:"id"`
		} `json:"object"`
	}
	if err := json.Unmarshal(c.Body(), &n); err != nil || n.Object.ID == "" || len(n.Object.ID) > 100 {
		return c.SendStatus(fiber.StatusBadRequest)
	}
	_, err := h.svc.PaymentNotified(c.UserContext(), provider, n.Object.ID)
	switch {
	case err == nil, errors.Is(err, booking.ErrNotFound):
		return c.SendStatus(fiber.StatusOK)
	case errors.Is(err, booking.ErrUnavailable):
		return c.SendStatus(fiber.StatusServiceUnavailable)
	}
	h.log.Error("payment webhook", "provider", provider, "payment", n.Object.ID, "err", err, "request_id", c.Locals("requestid"))
	return c.SendStatus(fiber.StatusInternalServerError)
}

var sandboxPage = template.Must(template.New("sandbox").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.T.sb_title}}</title><link rel="stylesheet" href="/static/widget.css"></head>
<body><main id="app">
<h1>{{.T.sb_title}}</h1>
<p>{{.T.sb_text}}</p>
<dl class="summary"><dt>{{.T.sb_amount}}</dt><dd id="amount">{{.Amount}}</dd><dt>{{.T.sb_for}}</dt><dd>{{.Description}}</dd><dt>{{.T.sb_status}}</dt><dd id="status" data-status="{{.Status}}">{{.StatusText}}</dd></dl>
{{if eq .Status "pending"}}
<form method="post"><input type="hidden" name="do" value="pay"><button type="submit" id="pay">{{.T.sb_pay}}</button></form>
<form method="post"><input type="hidden" name="do" value="decline"><button type="submit" id="decline" class="secondary">{{.T.sb_decline}}</button></form>
{{else if .ReturnURL}}<p><a href="{{.ReturnURL}}" id="back">{{.T.sb_back}}</a></p>{{end}}
</main></body></html>`))

func (h *Handler) sandbox() (*psp.Sandbox, bool) {
	p := h.svc.Provider()
	for {
		u, ok := p.(interface{ Unwrap() psp.Provider })
		if !ok {
			break
		}
		p = u.Unwrap()
	}
	sb, ok := p.(*psp.Sandbox)
	return sb, ok
}

func (h *Handler) sandboxPage(c *fiber.Ctx) error {
	sb, ok := h.sandbox()
	if !ok {
		return c.SendStatus(fiber.StatusNotFound)
	}
	p, err := sb.Page(c.UserContext(), c.Params("id"))
	if err != nil {
		return c.SendStatus(fiber.StatusNotFound)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Type("html", "utf-8")
	lang := pageLang(c, "ru")
	if l := p.Locale; c.Query("lang") == "" && (l == "ru" || l == "en") {
		lang = l // (the language the payment was asked in: the page the payer left)
	}
	status := messages[lang]["sb_"+string(p.Status)]
	switch {
	case p.Refunded >= p.Amount && p.Refunded > 0:
		status = messages[lang]["sb_refunded"]
	case p.Refunded > 0:
		status = fmt.Sprintf(messages[lang]["sb_refunded_part"], booking.Money(p.Refunded).Format(p.Currency, lang))
	case status == "":
		status = string(p.Status)
	}
	return sandboxPage.Execute(c.Response().BodyWriter(), map[string]any{"Lang": lang, "T": messages[lang],
		"Amount": booking.Money(p.Amount).Format(p.Currency, lang), "Description": p.Description,
		"Status": string(p.Status), "StatusText": status, "ReturnURL": p.ReturnURL})
}

// sandboxDecide is the client's Pay or Decline; the client goes back to
// the salon (the provider has notified by then).
func (h *Handler) sandboxDecide(c *fiber.Ctx) error {
	sb, ok := h.sandbox()
	if !ok {
		return c.SendStatus(fiber.StatusNotFound)
	}
	id := strings.Clone(c.Params("id"))
	var err error
	if c.FormValue("do") == "pay" {
		err = sb.Pay(c.UserContext(), id)
	} else {
		err = sb.Decline(c.UserContext(), id)
	}
	if err != nil && !psp.IsRejected(err) {
		return err
	}
	p, err := sb.Page(c.UserContext(), id)
	if err != nil {
		return c.SendStatus(fiber.StatusNotFound)
	}
	if p.ReturnURL != "" {
		return c.Redirect(p.ReturnURL, fiber.StatusSeeOther)
	}
	return c.Redirect(psp.SandboxPath+id, fiber.StatusSeeOther)
}

// SandboxNotifier is the sandbox's notification to this server: as a
// provider's webhook would, it makes the core check the payment.
func SandboxNotifier(svc *booking.Service) func(ctx context.Context, id string) {
	return func(ctx context.Context, id string) {
		_, _ = svc.PaymentNotified(context.WithoutCancel(ctx), "sandbox", id)
	}
}

// masterCalendar serves a master's calendar feed at its secret URL; an
// unknown or revoked token is 404.
func (h *Handler) masterCalendar(c *fiber.Ctx) error {
	token, ok := strings.CutSuffix(c.Params("file"), ".ics")
	if !ok {
		return c.SendStatus(fiber.StatusNotFound)
	}
	f, err := h.svc.MasterFeed(c.UserContext(), strings.Clone(token))
	if err != nil {
		if errors.Is(err, booking.ErrNotFound) {
			return c.SendStatus(fiber.StatusNotFound)
		}
		return err
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "private, max-age=300")
	return c.SendString(ical.MasterFeed(f, h.svc.Now()))
}

// bookingCalendar is one booking as an .ics file, for its token's holder.
func (h *Handler) bookingCalendar(c *fiber.Ctx) error {
	id, err := bookingParams(c)
	if err != nil {
		return err
	}
	v, err := h.svc.BookingView(c.UserContext(), 0, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="booking-%d.ics"`, id))
	return c.SendString(ical.Booking(v, h.publicBase(c), h.svc.Now()))
}

// bookingCalendarLink is one booking's .ics file at the link the bot gives.
func (h *Handler) bookingCalendarLink(c *fiber.Ctx) error {
	token, ok := strings.CutSuffix(c.Params("file"), ".ics")
	if !ok {
		return c.SendStatus(fiber.StatusNotFound)
	}
	v, err := h.svc.BookingByCalendarToken(c.UserContext(), strings.Clone(token))
	if err != nil {
		if errors.Is(err, booking.ErrNotFound) {
			return c.SendStatus(fiber.StatusNotFound)
		}
		return err
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="booking-%d.ics"`, v.ID))
	return c.SendString(ical.Booking(v, h.publicBase(c), h.svc.Now()))
}
