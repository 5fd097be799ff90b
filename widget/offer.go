package widget

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
	"salon/internal/courier"
)

// The link of a waitlist offer's e-mail or SMS: GET /o/{token} shows the
// time offered and changes nothing (mail scanners and link previews open
// links); POST books it, as a visitor of the widget, and goes on to the
// booking's page. The token is the credential, kept out of referrers and
// caches like the one-tap links'.

func (h *Handler) registerOffers(app *fiber.App) {
	app.Get("/o/:token", h.deadline, h.offerPage)
	app.Post("/o/:token", h.rateLimited(h.bookings), h.deadline, h.offerPost)
}

func (h *Handler) offerPage(c *fiber.Ctx) error {
	l, err := h.svc.OpenOfferLink(c.UserContext(), strings.Clone(c.Params("token")))
	if err != nil {
		return h.actionError(c, err)
	}
	p := h.offerData(c, l)
	switch {
	case l.Expired:
		p.Problem = p.T["a_expired"]
	case l.Offer.Status == booking.OfferTaken:
		p.Result = p.T["o_taken"]
	case l.Entry.Status != booking.WaitWaiting || (l.Offer.Status != booking.OfferOpen && l.Offer.Status != booking.OfferHeld):
		p.Problem = p.T["o_gone"]
	default:
		p.Question, p.Button = p.T["o_question_open"], p.T["o_button"]
		if l.Offer.Status == booking.OfferHeld {
			p.Question = fmt.Sprintf(p.T["o_question_held"], i18n.Clock(l.Offer.ExpiresAt.In(l.View.Salon.Location())))
		}
	}
	return h.renderAction(c, fiber.StatusOK, p)
}

func (h *Handler) offerPost(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	l, err := h.svc.OpenOfferLink(c.UserContext(), token)
	if err != nil {
		return h.actionError(c, err)
	}
	b, err := h.svc.AcceptOfferLink(c.UserContext(), token)
	if err == nil {
		v := &booking.View{Booking: *b, Salon: l.View.Salon}
		return c.Redirect(courier.ManageURL("", v, h.offerLang(c, l), b.ManageToken), fiber.StatusSeeOther)
	}
	p := h.offerData(c, l)
	var taken *booking.SlotTakenError
	switch {
	case errors.As(err, &taken):
		p.Problem = p.T["o_lost"]
	case errors.Is(err, booking.ErrLinkExpired):
		p.Problem = p.T["a_expired"]
	case errors.Is(err, booking.ErrConflict), errors.Is(err, booking.ErrInvalid), errors.Is(err, booking.ErrTooLate):
		// No longer offered, or no longer bookable online (too soon now).
		p.Problem = p.T["o_gone"]
	case errors.Is(err, booking.ErrUnavailable), errors.Is(err, booking.ErrInProgress):
		c.Set(fiber.HeaderRetryAfter, "5")
		p.Problem = p.T["busy"]
		return h.renderAction(c, fiber.StatusServiceUnavailable, p)
	default:
		return h.actionError(c, err)
	}
	return h.renderAction(c, fiber.StatusConflict, p)
}

// offerLang is the language of an offer's page: ?lang, else the entry's,
// else the salon's.
func (h *Handler) offerLang(c *fiber.Ctx, l *booking.OfferLink) string {
	if q := c.Query("lang"); q == "ru" || q == "en" {
		return q
	}
	if lang := l.View.Lang; lang == "ru" || lang == "en" {
		return lang
	}
	return l.View.Salon.Locale
}

// offerData is what an offer's page shows: the salon, the time offered,
// the services and the master.
func (h *Handler) offerData(c *fiber.Ctx, l *booking.OfferLink) *actionPage {
	lang := h.offerLang(c, l)
	other := "en"
	if lang == "en" {
		other = "ru"
	}
	t := messages[lang]
	v := l.View
	p := &actionPage{Salon: &v.Salon, SalonPhone: booking.DisplayPhone(v.Salon.Phone), Lang: lang, OtherLang: other, T: t,
		Booking: v, When: i18n.When(lang, v.StartsAt, v.Salon.Location()), Status: t["o_status_"+l.Offer.Status],
		Title: t["o_title"], Action: "/o/" + c.Params("token") + "?lang=" + lang}
	if v.Price > 0 {
		p.Price = v.Price.Format(v.Salon.Currency, lang)
	}
	if v.Deposit > 0 {
		key := "deposit_in_salon"
		if h.svc.Provider() != nil {
			key = "deposit_now" // (paid online once taken)
		}
		p.Deposit = fmt.Sprintf(t[key], v.Deposit.Format(v.Salon.Currency, lang))
	}
	return p
}
