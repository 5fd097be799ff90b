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

// One-tap links of messages: GET /a/{token} shows what the link does and
// changes nothing (mail scanners and link previews open links); POST acts.
// The token is the credential: the page keeps it out of referrers and
// caches.

func (h *Handler) registerActions(app *fiber.App) {
	app.Get("/a/:token", h.deadline, h.actionPage)
	app.Post("/a/:token", h.rateLimited(h.changes), h.deadline, h.actionPost)
}

type actionPage struct {
	Salon      *booking.Salon
	SalonPhone string
	Lang       string
	OtherLang  string
	T          map[string]string
	Booking    *booking.View
	// Price and Deposit: what a waitlist offer's visit costs and asks
	// first ("" on other pages).
	Price, Deposit string
	When           string
	Status         string
	Title          string
	Question       string
	Button         string
	Action         string
	Result         string
	Problem        string
}

func (h *Handler) actionPage(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	l, err := h.svc.OpenLink(c.UserContext(), token)
	if err != nil {
		return h.actionError(c, err)
	}
	p := h.actionData(c, l)
	p.Title = p.T["a_"+string(l.Action)+"_title"]
	switch l.State {
	case booking.LinkExpired:
		p.Problem = p.T["a_expired"]
	case booking.LinkUsed:
		p.Problem = p.T["a_used"]
		if done(l) {
			p.Title = p.T["a_done_"+string(l.Action)]
		}
	default:
		h.ask(p, l)
	}
	return h.renderAction(c, fiber.StatusOK, p)
}

// ask fills in the question and the button of a live link.
func (h *Handler) ask(p *actionPage, l *booking.Link) {
	a := string(l.Action)
	p.Title, p.Question, p.Button = p.T["a_"+a+"_title"], p.T["a_"+a+"_question"], p.T["a_"+a+"_button"]
	switch {
	case l.Action == booking.LinkUnsubscribe:
		p.Question = fmt.Sprintf(p.Question, l.Booking.Salon.Name, l.Address)
	case l.Action == booking.LinkConfirm && l.Confirmed:
		p.Title, p.Question, p.Result = p.T["a_done_confirm"], "", p.T["a_confirm_already"]
	case l.Action == booking.LinkPay:
		v := l.Booking
		until := v.StartsAt // (a top-up's: until the visit)
		if v.Status == booking.StatusPending {
			until = v.HoldExpiresAt
		}
		if owed := v.Owed(); owed > 0 {
			p.Question = fmt.Sprintf(p.Question, owed.Format(v.Salon.Currency, p.Lang), i18n.When(p.Lang, until, v.Salon.Location()))
		} else {
			p.Question, p.Problem = "", p.T["a_pay_nothing"]
		}
	case l.Booking.Status == booking.StatusCancelled:
		// Cancelled since the message (by the salon, say): said so, with
		// what went back to what paid it.
		p.Title, p.Question, p.Problem = p.T["a_done_cancel"], "", p.T["a_inactive"]
		if l.Booking.CancelledBySalon {
			p.Problem = p.T["salon_cancelled_note"]
		}
		p.Problem += cancelled(p, l.Booking)
	case !l.Booking.Status.Active():
		p.Question, p.Problem = "", p.T["a_inactive"]
	case l.Action != booking.LinkConfirm && !l.Booking.Changeable:
		p.Question, p.Problem = "", p.T["a_too_late"]
	case l.Action == booking.LinkCancel && l.Booking.PaidWith != nil && !l.Booking.PaidWith.Settled:
		// Said before the tap, as the manage page says it: what
		// cancelling keeps of the package or certificate, or that what
		// it paid goes back to it.
		v, w := l.Booking, l.Booking.PaidWith
		took := int64(w.Amount)
		if w.Kind == booking.BalancePackage {
			took = int64(w.Visits)
		}
		switch {
		case v.CancelKeeps > 0:
			p.Question += " " + fmt.Sprintf(p.T["cancel_keeps"], w.UnitsIn(v.CancelKeeps, v.Salon.Currency, p.Lang), balanceName(p, w, "_of"))
			if rest := took - v.CancelKeeps; rest > 0 {
				p.Question += " " + fmt.Sprintf(p.T["cancel_keeps_back"], w.UnitsIn(rest, v.Salon.Currency, p.Lang))
			}
		case took > 0:
			p.Question += " " + fmt.Sprintf(p.T["cancel_returns"], balanceName(p, w, ""), w.UnitsIn(took, v.Salon.Currency, p.Lang))
		}
	}
	if v := l.Booking; l.Action == booking.LinkCancel && p.Problem == "" && v.Changeable && v.Prepaid > 0 {
		// And what it does to the deposit paid online.
		key := "cancel_refunds_deposit"
		if v.CancelKeepsPrepaid {
			key = "cancel_keeps_deposit"
		}
		p.Question += " " + fmt.Sprintf(p.T[key], v.Prepaid.Format(v.Salon.Currency, p.Lang))
	}
}

// done reports whether what used link l did shows on its booking (a
// cancel link's booking is cancelled; a confirm link's, confirmed): its
// page's heading then says it is done, not asks.
func done(l *booking.Link) bool {
	switch l.Action {
	case booking.LinkCancel:
		return l.Booking.Status == booking.StatusCancelled
	case booking.LinkConfirm:
		return l.Confirmed
	}
	return false
}

// cancelled is what a cancellation did to the package or certificate
// that paid the booking, named (the page shows no other word of it: "the
// package …7QK2"): kept of it by the salon's rules, given back.
func cancelled(p *actionPage, v *booking.View) string {
	w := v.PaidWith
	if w == nil || !w.Settled {
		return ""
	}
	var out string
	if w.Kept > 0 {
		out += " " + fmt.Sprintf(p.T["pw_kept"], balanceName(p, w, "_of"), w.UnitsIn(w.Kept, v.Salon.Currency, p.Lang)) + "."
	}
	if w.Returned > 0 {
		out += " " + fmt.Sprintf(p.T["pw_returned"], balanceName(p, w, ""), w.UnitsIn(w.Returned, v.Salon.Currency, p.Lang)) + "."
	}
	return out
}

// balanceName names the package or certificate w in the page's words
// ("the package …7QK2"; form "_of": as "of" it), the code's end kept on
// one line with its word.
func balanceName(p *actionPage, w *booking.PaidWith, form string) string {
	hint := ""
	if w.Hint != "" {
		hint = "\u00a0…\u2060" + w.Hint
	}
	return fmt.Sprintf(p.T["pw_name_"+string(w.Kind)+form], hint)
}

func (h *Handler) actionPost(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	l, err := h.svc.OpenLink(c.UserContext(), token)
	if err != nil {
		return h.actionError(c, err)
	}
	if l.Action == booking.LinkPay {
		return h.payByLink(c, token, l)
	}
	r, err := h.svc.UseLink(c.UserContext(), token)
	if err == nil && r.Action == booking.LinkMove {
		lang := c.Query("lang")
		if lang != "ru" && lang != "en" {
			lang = r.Booking.Salon.Locale
			if r.Booking.Lang != "" {
				lang = r.Booking.Lang
			}
		}
		return c.Redirect(courier.ManageURL("", r.Booking, lang, r.ManageToken)+"&move=1", fiber.StatusSeeOther)
	}
	if err != nil {
		l, lerr := h.svc.OpenLink(c.UserContext(), token)
		if lerr != nil {
			return h.actionError(c, lerr)
		}
		p := h.actionData(c, l)
		p.Title = p.T["a_"+string(l.Action)+"_title"]
		switch {
		case errors.Is(err, booking.ErrLinkExpired):
			p.Problem = p.T["a_expired"]
		case errors.Is(err, booking.ErrLinkUsed):
			p.Problem = p.T["a_used"]
		case errors.Is(err, booking.ErrTooLate):
			p.Problem = p.T["a_too_late"]
		case errors.Is(err, booking.ErrConflict):
			p.Problem = p.T["a_inactive"]
		default:
			return h.actionError(c, err)
		}
		return h.renderAction(c, fiber.StatusConflict, p)
	}
	p := h.actionData(c, &r.Link)
	// Done: the heading says so ("Запись отменена"), no longer asks.
	if p.Title = p.T["a_done_"+string(r.Action)]; p.Title == "" {
		p.Title = p.T["a_"+string(r.Action)+"_title"]
	}
	switch r.Action {
	case booking.LinkConfirm:
		p.Result = p.T["a_confirm_done"]
		if r.Already {
			p.Result = p.T["a_confirm_already"]
		}
	case booking.LinkCancel:
		p.Result = p.T["a_cancel_done"] + cancelled(p, r.Booking)
		if was := l.Booking.Prepaid; was > 0 {
			// The deposit paid online: what the salon keeps of it, or
			// that it is on its way back.
			if kept := r.Booking.Prepaid; kept > 0 {
				p.Result += " " + fmt.Sprintf(p.T["kept_note"], kept.Format(r.Booking.Salon.Currency, p.Lang))
			} else {
				p.Result += " " + fmt.Sprintf(p.T["refunding_note"], was.Format(r.Booking.Salon.Currency, p.Lang))
			}
		}
	case booking.LinkUnsubscribe:
		p.Result = fmt.Sprintf(p.T["a_unsubscribe_done"], r.Booking.Salon.Name, r.Address)
	}
	return h.renderAction(c, fiber.StatusOK, p)
}

// payByLink sends the client of a pay link to the payment's page (a new
// payment after a declined one); a link with nothing to pay, or a provider
// that does not answer, is a page that says so.
func (h *Handler) payByLink(c *fiber.Ctx, token string, l *booking.Link) error {
	sess, err := h.svc.PayByLink(c.UserContext(), token, h.returnURL(c, &l.Booking.Salon))
	if err == nil {
		return c.Redirect(sess.URL, fiber.StatusSeeOther)
	}
	p := h.actionData(c, l)
	p.Title = p.T["a_pay_title"]
	status := fiber.StatusConflict
	switch {
	case errors.Is(err, booking.ErrLinkExpired):
		p.Problem = p.T["a_expired"]
	case errors.Is(err, booking.ErrUnavailable):
		p.Problem, status = p.T["a_pay_down"], fiber.StatusServiceUnavailable
		c.Set(fiber.HeaderRetryAfter, "60")
	case errors.Is(err, booking.ErrConflict):
		p.Problem = p.T["a_pay_nothing"]
	default:
		return h.actionError(c, err)
	}
	return h.renderAction(c, status, p)
}

// actionData is what every one-tap page shows: the salon and the booking,
// in the booking's language (or ?lang).
func (h *Handler) actionData(c *fiber.Ctx, l *booking.Link) *actionPage {
	v := l.Booking
	lang := v.Salon.Locale
	if v.Lang != "" {
		lang = v.Lang
	}
	if q := c.Query("lang"); q == "ru" || q == "en" {
		lang = q
	}
	other := "en"
	if lang == "en" {
		other = "ru"
	}
	t := messages[lang]
	status := t["status_"+string(v.Status)]
	if !v.ConfirmedAt.IsZero() && v.Status == booking.StatusConfirmed {
		status = i18n.New("confirmed by you").In(lang)
	}
	p := &actionPage{Salon: &v.Salon, SalonPhone: booking.DisplayPhone(v.Salon.Phone), Lang: lang, OtherLang: other, T: t,
		Booking: v, When: i18n.When(lang, v.StartsAt, v.Salon.Location()), Status: status,
		Action: "/a/" + c.Params("token") + "?lang=" + lang}
	if v.ID == 0 {
		p.Booking = nil // a link of no booking (a waitlist offer's unsubscribe)
	}
	return p
}

func (h *Handler) renderAction(c *fiber.Ctx, status int, p *actionPage) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set("X-Robots-Tag", "noindex")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, "action.html", p); err != nil {
		return h.pageError(c, err)
	}
	return c.Status(status).SendString(b.String())
}

// actionError is the page of a link that is not there (or a failure).
func (h *Handler) actionError(c *fiber.Ctx, err error) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer")
	if errors.Is(err, booking.ErrNotFound) {
		lang := pageLang(c, "ru")
		t := messages[lang]
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.Status(fiber.StatusNotFound).SendString(`<!doctype html><html lang="` + lang + `"><meta charset=utf-8>` +
			`<meta name=viewport content="width=device-width, initial-scale=1"><title>` + t["a_not_found_title"] + `</title>` +
			`<link rel="stylesheet" href="/static/widget.css"><main id="app"><h1>` + t["a_not_found_title"] + `</h1><p>` +
			t["a_not_found"] + `</p></main></html>`)
	}
	return h.pageError(c, err)
}
