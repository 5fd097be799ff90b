package panel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// Prepaid balances at the desk: packages and gift certificates sold in the
// salon, the salon's latest balances, each one's ledger.

type balanceRow struct {
	ID                         int64
	Kind, Hint, Client, Phone  string
	Services, Remaining, Total string
	Expires, Created           string
}

type balanceForm struct {
	Kind, Amount, Visits, Phone, Name, ValidUntil string
	ServiceID                                     int64
}

type balancesData struct {
	Rows     []balanceRow
	Services []booking.SalonService
	Form     balanceForm
	Code     string // the code of the balance just sold: shown this once
	Error    string
	Fields   map[string]string
}

type balanceData struct {
	Row     balanceRow
	Entries []balanceEntryRow
	Left    bool // something is left: it may be refunded
	Error   string
}

type balanceEntryRow struct {
	When, Type, Delta, After, Booking, Actor string
	BookingID                                int64
}

// units writes a balance's units: visits, or money.
func units(l *lang, s *booking.Salon, kind booking.BalanceKind, n int64) string {
	if kind == booking.BalanceCertificate {
		return booking.Money(n).Format(s.Currency, l.Code)
	}
	return l.T("%d visits", n)
}

func (h *Handler) balanceRows(c *fiber.Ctx, list []booking.BalanceRow) ([]balanceRow, error) {
	s, l := salonOf(c), langOf(c)
	services, err := h.svc.Services(c.UserContext(), s.ID)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, sv := range services {
		names[sv.ID] = sv.Name
	}
	out := make([]balanceRow, 0, len(list))
	for _, b := range list {
		var svs []string
		for _, id := range b.ServiceIDs {
			svs = append(svs, names[id])
		}
		r := balanceRow{ID: b.ID, Kind: l.T(string(b.Kind)), Hint: "…" + b.Hint, Client: b.ClientName, Phone: booking.DisplayPhone(b.Phone),
			Services: strings.Join(svs, ", "), Remaining: units(l, s, b.Kind, b.Remaining), Total: units(l, s, b.Kind, b.Total),
			Expires: "—", Created: b.CreatedAt.In(s.Location()).Format("02.01.2006")}
		if !b.ExpiresOn.IsZero() {
			r.Expires = fmt.Sprintf("%02d.%02d.%d", b.ExpiresOn.Day, b.ExpiresOn.Month, b.ExpiresOn.Year)
		}
		out = append(out, r)
	}
	return out, nil
}

// balances lists the salon's balances, with the form that sells one.
func (h *Handler) balances(c *fiber.Ctx) error {
	return h.showBalances(c, &balancesData{Form: balanceForm{Kind: string(booking.BalanceCertificate), Visits: "5"}})
}

func (h *Handler) showBalances(c *fiber.Ctx, d *balancesData) error {
	s := salonOf(c)
	list, err := h.svc.Balances(c.UserContext(), s.ID)
	if err != nil {
		return err
	}
	if d.Rows, err = h.balanceRows(c, list); err != nil {
		return err
	}
	if d.Services, err = h.svc.Services(c.UserContext(), s.ID); err != nil {
		return err
	}
	return h.render(c, "balances", langOf(c).T("Packages and certificates"), d)
}

// sellBalance sells a package or a certificate, paid in the salon, and
// shows its code this once.
func (h *Handler) sellBalance(c *fiber.Ctx) error {
	s, l := salonOf(c), langOf(c)
	f := balanceForm{Kind: strings.Clone(c.FormValue("kind")), Amount: strings.Clone(c.FormValue("amount")),
		Visits: strings.Clone(c.FormValue("visits")), Phone: strings.Clone(c.FormValue("phone")), Name: strings.Clone(c.FormValue("name")),
		ValidUntil: strings.Clone(strings.TrimSpace(c.FormValue("valid_until")))}
	f.ServiceID, _ = strconv.ParseInt(c.FormValue("service"), 10, 64)
	d := &balancesData{Form: f}
	in := booking.BalanceIssue{SalonID: s.ID, Kind: booking.BalanceKind(f.Kind), Client: booking.ClientInput{Name: f.Name, Phone: f.Phone}}
	fields := map[string]i18n.Text{}
	switch in.Kind {
	case booking.BalanceCertificate:
		m, err := booking.ParseMoney(f.Amount)
		if err != nil {
			fields["amount"] = i18n.Of(err)
		}
		in.Amount = m
	case booking.BalancePackage:
		n, err := strconv.Atoi(strings.TrimSpace(f.Visits))
		if err != nil {
			fields["visits"] = i18n.New("must be an integer")
		}
		in.Visits, in.ServiceIDs = n, []int64{f.ServiceID}
	}
	if f.ValidUntil != "" {
		day, err := booking.ParseDate(f.ValidUntil)
		if err != nil {
			fields["valid_until"] = i18n.Of(err)
		}
		in.ValidUntil = day
	}
	if len(fields) > 0 {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = l.T("Some fields are invalid."), l.Fields(fields)
		return h.showBalances(c, d)
	}
	b, err := h.svc.IssueBalance(c.UserContext(), in)
	if err != nil {
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showBalances(c, d)
	}
	d.Code = b.Code
	d.Form = balanceForm{Kind: f.Kind, Visits: "5"}
	// No redirect: the code is on this page only, never in a URL.
	c.Set(fiber.HeaderCacheControl, "no-store")
	return h.showBalances(c, d)
}

// balancePage is one balance's ledger.
func (h *Handler) balancePage(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	return h.showBalance(c, id, "")
}

func (h *Handler) showBalance(c *fiber.Ctx, id int64, problem string) error {
	s, l := salonOf(c), langOf(c)
	b, err := h.svc.BalanceOf(c.UserContext(), s.ID, id)
	if err != nil {
		return err
	}
	entries, err := h.svc.BalanceLedger(c.UserContext(), s.ID, id)
	if err != nil {
		return err
	}
	found := []booking.BalanceRow{*b}
	rows, err := h.balanceRows(c, found)
	if err != nil {
		return err
	}
	d := balanceData{Row: rows[0], Left: found[0].Remaining > 0, Error: problem}
	for _, e := range entries {
		r := balanceEntryRow{When: e.CreatedAt.In(s.Location()).Format("02.01.2006 15:04"), Type: entryLabel(l, e.Type),
			Delta: units(l, s, found[0].Kind, e.Delta), After: units(l, s, found[0].Kind, e.After), Actor: e.Actor, BookingID: e.BookingID}
		if e.Delta > 0 {
			r.Delta = "+" + r.Delta
		}
		d.Entries = append(d.Entries, r)
	}
	return h.render(c, "balance", l.T("Balance"), d)
}

// entryLabel names a ledger entry's type.
func entryLabel(l *lang, t string) string {
	switch t {
	case booking.EntryCredit:
		return l.T("entry credit")
	case booking.EntryReserve:
		return l.T("entry reserve")
	case booking.EntrySpend:
		return l.T("entry spend")
	case booking.EntryRelease:
		return l.T("entry release")
	case booking.EntryRefund:
		return l.T("entry refund")
	}
	return t
}

// paidWith fills in the booking page's balance: what the booking reserved,
// or, while it is active and reserved nothing, the client's packages.
func (h *Handler) paidWith(c *fiber.Ctx, p *bookingPage, v *booking.View) error {
	s, l := salonOf(c), langOf(c)
	if pw := v.PaidWith; pw != nil {
		n := int64(pw.Visits)
		if pw.Kind == booking.BalanceCertificate {
			n = int64(pw.Amount)
		}
		p.PaidWith = l.T("%s …%s: %s, %s left", l.T(string(pw.Kind)), pw.Hint, units(l, s, pw.Kind, n), units(l, s, pw.Kind, pw.Remaining))
		return nil
	}
	if !v.Status.Active() {
		return nil
	}
	list, err := h.svc.ClientBalances(c.UserContext(), s.ID, v.ClientID)
	if err != nil {
		return err
	}
	for _, b := range list {
		label := l.T("%s …%s: %s left", l.T(string(b.Kind)), b.Hint, units(l, s, b.Kind, b.Remaining))
		if !b.ExpiresOn.IsZero() {
			label += " · " + l.T("valid until") + " " + fmt.Sprintf("%02d.%02d.%d", b.ExpiresOn.Day, b.ExpiresOn.Month, b.ExpiresOn.Year)
		}
		p.Packages = append(p.Packages, packageChoice{ID: b.ID, Label: label})
	}
	return nil
}

// payWithBalance pays a booking at the desk with one of its client's
// packages, or with a package's or a certificate's code.
func (h *Handler) payWithBalance(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	s := salonOf(c)
	pay := booking.PayWith{Kind: booking.BalancePackage}
	if code := strings.TrimSpace(c.FormValue("code")); code != "" {
		pay.Code = strings.Clone(code)
		pay.Kind = booking.BalanceKind(strings.Clone(c.FormValue("kind")))
	} else {
		pay.BalanceID, _ = strconv.ParseInt(c.FormValue("balance"), 10, 64)
	}
	if _, err := h.svc.ApplyBalance(c.UserContext(), s.ID, id, pay); err != nil {
		p := &bookingPage{}
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		return h.showBooking(c, p)
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", id), "paid_with")
}

// refundBalance pays back what is left of a balance.
func (h *Handler) refundBalance(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	s := salonOf(c)
	if _, err := h.svc.RefundBalance(c.UserContext(), s.ID, id, strings.Clone(c.FormValue("reason"))); err != nil {
		var msg string
		var fields map[string]string
		if !h.fieldError(c, err, &msg, &fields) {
			return err
		}
		return h.showBalance(c, id, msg)
	}
	return done(c, fmt.Sprintf("/panel/balances/%d", id), "balance_refunded")
}
