package panel

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

// messageLine is a message as the panel lists it.
type messageLine struct {
	booking.Message
	When    string // sent, or planned for
	Kind    string
	Channel string
	State   string
}

// messageLines puts messages in the reader's words, on the salon's clock.
func messageLines(list []booking.Message, s *booking.Salon, l *lang) []messageLine {
	loc := s.Location()
	out := make([]messageLine, 0, len(list))
	for _, m := range list {
		at := m.NotBefore
		if !m.SentAt.IsZero() {
			at = m.SentAt
		}
		kind := l.T(kindNames[m.Kind])
		switch {
		case m.Kind == booking.KindReminder && m.Lead > 0:
			kind = l.T("reminder %s before", leadWords(m.Lead, l))
		case m.Kind == booking.KindChanged && m.Change.Event == booking.EventPaidWithBalance:
			kind = l.T("paid with a package or certificate") // (sent as a change is)
		}
		if m.ToMaster {
			kind += " · " + l.T("to the master")
		}
		m.Error = reason(l, m.Error)
		out = append(out, messageLine{Message: m, When: l.DateTime(at.In(loc)), Kind: kind,
			Channel: l.T(channelNames[string(m.Channel)]), State: l.T(stateNames[m.State])})
	}
	return out
}

var kindNames = map[booking.MessageKind]string{
	booking.KindConfirmation: "confirmation", booking.KindChanged: "change", booking.KindCancelled: "cancellation",
	booking.KindHoldExpired: "deposit not paid in time", booking.KindPaymentDue: "deposit due", booking.KindPaid: "deposit received",
	booking.KindRefunded: "refund", booking.KindReminder: "reminder", booking.KindWaitlistOffer: "waitlist offer",
	booking.KindNew: "new booking",
}

var stateNames = map[booking.MessageState]string{
	booking.MessageQueued: "queued", booking.MessageSent: "sent", booking.MessageDelivered: "delivered",
	booking.MessageFailed: "failed", booking.MessageDropped: "not sent: no longer applied",
}

// leadWords is a reminder's lead: "24 h", "30 min".
func leadWords(d interface{ Minutes() float64 }, l *lang) string {
	m := int(d.Minutes())
	if m%60 == 0 {
		return l.T("%d h", m/60)
	}
	return l.T("%d min", m)
}

// retryMessage queues a failed message again; the admin returns to the
// booking (or to the attention page, with back=attention).
func (h *Handler) retryMessage(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	back := "/panel/attention"
	if b, err := strconv.ParseInt(c.FormValue("booking"), 10, 64); err == nil && b > 0 {
		back = "/panel/bookings/" + strconv.FormatInt(b, 10)
	}
	if err := h.svc.RetryMessage(c.UserContext(), user(c).SalonID, id); err != nil {
		if errors.Is(err, booking.ErrConflict) {
			return done(c, back, "nothing")
		}
		return err
	}
	return done(c, back, "resent")
}

// effectMonth is one month of the reminders' effect, its groups in order.
type effectMonth struct {
	Label  string
	Groups []effectLine
}

type effectLine struct {
	Label       string
	Bookings    int
	NoShow      string // a percentage
	LateCancels string
}

// reminders shows, month by month, how the clients who confirmed by a tap,
// those reminded who did not, and the hold-out (reminded plainly) came.
func (h *Handler) reminders(c *fiber.Ctx) error {
	l := langOf(c)
	rows, err := h.svc.ReminderEffect(c.UserContext(), user(c).SalonID, 6)
	if err != nil {
		return err
	}
	set, err := h.svc.MessageSettingsOf(c.UserContext(), user(c).SalonID)
	if err != nil {
		return err
	}
	var months []effectMonth
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }
	for _, r := range rows {
		label := l.MonthYear(r.Month)
		if len(months) == 0 || months[len(months)-1].Label != label {
			months = append(months, effectMonth{Label: label})
		}
		m := &months[len(months)-1]
		m.Groups = append(m.Groups, effectLine{Label: l.T(effectNames[r.Group]), Bookings: r.Bookings,
			NoShow: pct(r.NoShowRate()), LateCancels: pct(r.LateCancelRate())})
	}
	return h.render(c, "reminders", l.T("Reminders"), map[string]any{"Months": months, "Holdout": set.HoldoutPct})
}

var effectNames = map[booking.EffectGroup]string{
	booking.EffectConfirmed:   "confirmed by a tap",
	booking.EffectUnconfirmed: "reminded, not confirmed",
	booking.EffectHoldout:     "hold-out: plain reminders",
}
