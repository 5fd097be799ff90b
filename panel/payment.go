package panel

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

type paymentsData struct {
	Date, Prev, Next string
	Day              booking.Date // (the heading's: Date is the links')
	Sessions         []booking.PaymentSession
	Ledger           []booking.LedgerEntry
	Received         booking.Money
	Refunded         booking.Money
	// Balances are the day's money of packages and certificates: sold
	// (Sold) and paid back (PaidBack), at the desk and online.
	Balances       []balanceMoneyLine
	Sold, PaidBack booking.Money
	Net            booking.Money
	Currency       string
}

// balanceMoneyLine is a line of the day's money of packages and
// certificates, in words.
type balanceMoneyLine struct {
	booking.BalanceMoney
	When, What, Where string
}

// payments shows a day's payment sessions and ledger, with its totals.
func (h *Handler) payments(c *fiber.Ctx) error {
	u := user(c)
	s := salonOf(c)
	d := s.Today(h.svc.Now())
	if q := c.Query("date"); q != "" {
		var err error
		if d, err = booking.ParseDate(q); err != nil {
			return errNoPage
		}
	}
	data := paymentsData{Date: d.String(), Day: d, Prev: d.AddDays(-1).String(), Next: d.AddDays(1).String(), Currency: s.Currency}
	var err error
	if data.Sessions, err = h.svc.Payments(c.UserContext(), u.SalonID, d, 1); err != nil {
		return err
	}
	if data.Ledger, err = h.svc.Ledger(c.UserContext(), u.SalonID, d, 1); err != nil {
		return err
	}
	loc := s.Location()
	for i, e := range data.Ledger {
		data.Ledger[i].At = e.At.In(loc)
		if e.Type == booking.DepositReceived {
			data.Received += e.Amount
		} else {
			data.Refunded += e.Amount
		}
	}
	money, err := h.svc.BalanceMoneyOf(c.UserContext(), u.SalonID, d)
	if err != nil {
		return err
	}
	l := langOf(c)
	for _, m := range money {
		line := balanceMoneyLine{BalanceMoney: m, When: l.DateTime(m.At.In(loc)), What: l.T("sale"), Where: l.T("in the salon")}
		if m.Refund {
			line.What = l.T("money paid back")
			data.PaidBack += m.Amount
		} else {
			data.Sold += m.Amount
		}
		if m.Online {
			line.Where = l.T("online")
		}
		data.Balances = append(data.Balances, line)
	}
	data.Net = data.Received - data.Refunded + data.Sold - data.PaidBack
	return h.render(c, "payments", l.T("Payments"), data)
}

type attentionData struct {
	Error    string // why the last action was refused
	Items    []booking.AttentionItem
	Failed   []messageLine // messages that did not go
	Sales    []saleRow     // packages and certificates sold online, stuck
	Currency string
	Now      time.Time
}

// attention lists the payments the saga cannot finish alone, with what
// staff may do about each.
func (h *Handler) attention(c *fiber.Ctx) error { return h.showAttention(c, "") }

// showAttention is the attention page, saying why an action was refused
// (refused: "" for none).
func (h *Handler) showAttention(c *fiber.Ctx, refused string) error {
	u := user(c)
	s := salonOf(c)
	items, err := h.svc.Attention(c.UserContext(), u.SalonID)
	if err != nil {
		return err
	}
	loc := s.Location()
	for i := range items {
		items[i].StartsAt, items[i].Since = items[i].StartsAt.In(loc), items[i].Since.In(loc)
		items[i].Session.LastError = reason(langOf(c), items[i].Session.LastError)
	}
	failed, err := h.svc.FailedMessages(c.UserContext(), u.SalonID, 100)
	if err != nil {
		return err
	}
	sales, err := h.svc.SalesNeedingAttention(c.UserContext(), u.SalonID)
	if err != nil {
		return err
	}
	l := langOf(c)
	var saleRows []saleRow
	for i := range sales {
		saleRows = append(saleRows, saleLine(l, s, &sales[i]))
	}
	return h.render(c, "attention", l.T("Needs attention"), attentionData{Error: refused, Items: items, Currency: s.Currency, Now: h.svc.Now(),
		Failed: messageLines(failed, s, l), Sales: saleRows})
}

// retryPayment has a payment checked now; a refund left to staff is
// asked again, and a refusal (the payment service shows it refunded
// already, or did not answer) is shown with its reason.
func (h *Handler) retryPayment(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.RetryPayment(c.UserContext(), user(c).SalonID, id); err != nil {
		return h.attentionRefused(c, err)
	}
	return done(c, "/panel/attention", "checked")
}

// depositRefundMade records a deposit's refund the checks left to staff
// as made at the payment service; a refusal is shown with its reason.
func (h *Handler) depositRefundMade(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.MarkDepositRefunded(c.UserContext(), user(c).SalonID, id); err != nil {
		return h.attentionRefused(c, err)
	}
	return done(c, "/panel/attention", "refund_recorded")
}

// attentionRefused shows the attention page with why a payment's action
// was refused: the payment service not answering (503), or the reason in
// the user's language; any other error is the caller's.
func (h *Handler) attentionRefused(c *fiber.Ctx, err error) error {
	if errors.Is(err, booking.ErrUnavailable) {
		c.Status(fiber.StatusServiceUnavailable)
		return h.showAttention(c, langOf(c).T("The payment service did not answer, so the refund could not be checked: try again in a minute."))
	}
	var msg string
	var fields map[string]string
	if !h.fieldError(c, err, &msg, &fields) {
		return err
	}
	return h.showAttention(c, msg)
}

func (h *Handler) releasePayment(c *fiber.Ctx) error {
	return h.paymentAction(c, h.svc.ReleasePayment, "released")
}

func (h *Handler) paymentAction(c *fiber.Ctx, act func(ctx context.Context, salonID, sessionID int64) (*booking.PaymentSession, error), what string) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := act(c.UserContext(), user(c).SalonID, id); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		if errors.Is(err, booking.ErrConflict) {
			return done(c, "/panel/attention", "nothing")
		}
		return err
	}
	return done(c, "/panel/attention", what)
}
