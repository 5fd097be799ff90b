package panel

import (
	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

type paymentsData struct {
	Date, Prev, Next string
	Sessions         []booking.PaymentSession
	Ledger           []booking.LedgerEntry
	Received         booking.Money
	Refunded         booking.Money
	Net              booking.Money
	Currency         string
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
	data := paymentsData{Date: d.String(), Prev: d.AddDays(-1).String(), Next: d.AddDays(1).String(), Currency: s.Currency}
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
	data.Net = data.Received - data.Refunded
	return h.render(c, "payments", langOf(c).T("Payments"), data)
}
