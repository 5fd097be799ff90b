package panel

import (
	"errors"
	"fmt"
	"slices"
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
	Price                      string // what the desk sold it for ("": not said)
	// Paid is what the client paid for it, at the desk or online ("": not
	// said).
	Paid string
}

type balanceForm struct {
	Kind, Amount, Visits, Phone, Name, ValidUntil string
	Price                                         string // what the client paid (optional)
	// ServiceIDs: a package's services, each visit of any one of them.
	ServiceIDs []int64
	Key        string // one-time: the form sent twice sells once
}

// formIDs reads the ids a form's checkboxes named name sent (at most max;
// what is not an id is left out).
func formIDs(c *fiber.Ctx, name string, max int) []int64 {
	var ids []int64
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > 0 && len(ids) < max {
			ids = append(ids, n)
		}
	}
	return ids
}

type balancesData struct {
	Rows     []balanceRow
	Services []booking.SalonService
	Form     balanceForm
	// Online: the salon takes payments online, and sells these offers.
	Online bool
	Offers []saleOfferRow
	Offer  saleOfferForm
	Sales  []saleRow
	Code   string // the code of the balance just sold: shown this once
	// Just is the balance just sold (what, for whom), shown with its code.
	Just *balanceRow
	// Sold: the balance the form sold when it was sent first, with other
	// values (Error says so, and links it).
	Sold   int64
	Error  string
	Fields map[string]string
}

type balanceData struct {
	Row     balanceRow
	Entries []balanceEntryRow
	Left    bool // something is left: it may be refunded
	// Quote says what refunding it would pay back, and where; Held what
	// live bookings hold of it (not refunded now).
	Quote, Held string
	Error       string
	// Reason and Fields: the refund form as it was sent, refused.
	Reason string
	Fields map[string]string
	// Sale: the online sale that made it (nil: sold in the salon).
	Sale *saleRow
	// Code: its new code, just made (shown this once).
	Code string
	// Key is the one-time key of its form for a new code.
	Key string
	// Locked says its code is locked, and till when (empty: it is not).
	Locked string
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
	return visits(l, n)
}

// total is a balance's first amount after "of" ("3 visits left of 5"):
// a package's a bare count (the noun said once, in the number its first
// count wants), a certificate's money.
func total(l *lang, s *booking.Salon, kind booking.BalanceKind, n int64) string {
	if kind == booking.BalanceCertificate {
		return units(l, s, kind, n)
	}
	return strconv.FormatInt(n, 10)
}

// visits is a count of visits with its noun in the number the language
// wants: 1 visit, 2 visits; 1 визит, 3 визита, 5 визитов, 21 визит.
func visits(l *lang, n int64) string { return i18n.Visits(l.Code, n) }

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
			Services: strings.Join(svs, ", "), Remaining: units(l, s, b.Kind, b.Remaining), Total: total(l, s, b.Kind, b.Total),
			Expires: "—", Created: l.Date(booking.DateOf(b.CreatedAt.In(s.Location())))}
		if !b.ExpiresOn.IsZero() {
			r.Expires = l.Date(b.ExpiresOn)
		}
		switch {
		case b.DeskPrice > 0:
			r.Price = b.DeskPrice.Format(s.Currency, l.Code)
			r.Paid = r.Price
		case b.SalePrice > 0:
			r.Paid = l.T("%s online", b.SalePrice.Format(s.Currency, l.Code))
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
	if d.Form.Key == "" {
		d.Form.Key = newKey()
	}
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
	if err := h.onlineSales(c, d); err != nil {
		return err
	}
	if d.Offer.Kind == "" {
		d.Offer = saleOfferForm{Kind: string(booking.BalanceCertificate), Visits: "5"}
	}
	if d.Offer.Key == "" {
		d.Offer.Key = newKey()
	}
	return h.render(c, "balances", langOf(c).T("Packages and certificates"), d)
}

// sellBalance sells a package or a certificate, paid in the salon, and
// shows its code this once.
func (h *Handler) sellBalance(c *fiber.Ctx) error {
	s, l := salonOf(c), langOf(c)
	f := balanceForm{Kind: strings.Clone(c.FormValue("kind")), Amount: strings.Clone(c.FormValue("amount")),
		Visits: strings.Clone(c.FormValue("visits")), Phone: strings.Clone(c.FormValue("phone")), Name: strings.Clone(c.FormValue("name")),
		ValidUntil: strings.Clone(strings.TrimSpace(c.FormValue("valid_until"))), Key: strings.Clone(c.FormValue("key")),
		Price: strings.Clone(strings.TrimSpace(c.FormValue("price")))}
	if len(f.Key) > 64 {
		f.Key = "" // (not a key this form made)
	}
	f.ServiceIDs = formIDs(c, "service", maxFormServices)
	d := &balancesData{Form: f}
	in := booking.BalanceIssue{SalonID: s.ID, Kind: booking.BalanceKind(f.Kind), Client: booking.ClientInput{Name: f.Name, Phone: f.Phone},
		RequestKey: f.Key}
	fields := map[string]i18n.Text{}
	switch in.Kind {
	case booking.BalanceCertificate:
		m, err := booking.ParseMoneyIn(f.Amount, s.Currency)
		if err != nil {
			fields["amount"] = i18n.Of(err)
		}
		in.Amount = m
	case booking.BalancePackage:
		n, err := strconv.Atoi(strings.TrimSpace(f.Visits))
		if err != nil {
			fields["visits"] = i18n.New("must be an integer")
		}
		in.Visits, in.ServiceIDs = n, f.ServiceIDs
	}
	if f.Price != "" {
		m, err := booking.ParseMoneyIn(f.Price, s.Currency)
		if err != nil {
			fields["price"] = i18n.Of(err)
		}
		in.Price = m
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
	var sold *booking.SoldAlready
	switch {
	case errors.As(err, &sold) && sold.Differs:
		// The form sent again with other values (back from its code, a
		// field changed): another sale meant, or the first one mistyped.
		// Nothing more is sold; the values stay, under a new key, for
		// staff to send again if they mean it.
		c.Status(fiber.StatusConflict)
		d.Error = l.T("This form sold one already, with other values. Nothing more was sold: check the values and send the form again to sell another.")
		d.Form.Key, d.Sold = newKey(), sold.BalanceID
		return h.showBalances(c, d)
	case errors.As(err, &sold):
		// The same form again (a refresh, a second click): the first sale
		// stands, and its code was shown then.
		return done(c, fmt.Sprintf("/panel/balances/%d", sold.BalanceID), "sold_already")
	}
	if err != nil {
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showBalances(c, d)
	}
	d.Code = b.Code
	if row, err := h.svc.BalanceOf(c.UserContext(), s.ID, b.ID); err == nil {
		if rows, err := h.balanceRows(c, []booking.BalanceRow{*row}); err == nil {
			d.Just = &rows[0]
		}
	}
	d.Form = balanceForm{Kind: f.Kind, Visits: "5", Key: newKey()}
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
	return h.showBalanceWith(c, id, problem, "")
}

// showBalanceWith is showBalance with a code just made for it (shown
// this once).
func (h *Handler) showBalanceWith(c *fiber.Ctx, id int64, problem, code string) error {
	return h.showBalanceRefund(c, id, problem, code, "", nil)
}

// showBalanceRefund is showBalanceWith with the refund form as it was
// sent: its reason kept, its fields' errors by them.
func (h *Handler) showBalanceRefund(c *fiber.Ctx, id int64, problem, code, reason string, fields map[string]string) error {
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
	d := balanceData{Row: rows[0], Left: found[0].Remaining > 0, Error: problem, Code: code, Key: newKey(), Reason: reason, Fields: fields}
	if until := b.CodeLockedUntil; !until.IsZero() && code == "" {
		d.Locked = l.T("Its code is locked until %s: it was tried with more than %d phones not its client's within a day, so whoever types it, online or in the bot, is refused, its client too. The desk still spends it; a new code ends the lock.",
			l.When(until.In(s.Location()), h.svc.Now()), booking.PhoneMissesADay)
	}
	if d.Left {
		q, err := h.svc.BalanceRefundQuote(c.UserContext(), s.ID, id)
		if err != nil {
			return err
		}
		left := units(l, s, found[0].Kind, q.Left)
		switch {
		case q.Waiting:
			d.Quote = l.T("A refund of it is on its way at the payment service: what is left can be refunded once it is made.")
		case q.Online && q.Money == 0:
			d.Quote = l.T("What is left, %s, is refunded: nothing more goes back to the buyer's card (the refunds before paid it).", left)
		case q.Online:
			d.Quote = l.T("What is left, %s, is refunded: %s goes back to the buyer's card through the payment service.", left, q.Money.Format(s.Currency, l.Code))
		case q.Money > 0:
			d.Quote = l.T("What is left, %s, is refunded: pay the client back %s in the salon.", left, q.Money.Format(s.Currency, l.Code))
		default:
			d.Quote = l.T("What is left, %s, is refunded: pay it back in the salon.", left)
		}
		if q.Held > 0 {
			ids := make([]string, len(q.HeldBy))
			for i, b := range q.HeldBy {
				ids[i] = fmt.Sprintf("#%d", b)
			}
			held := units(l, s, found[0].Kind, q.Held)
			d.Held = l.T("Booking %s holds %s: it comes back when it is cancelled, and can be refunded then.", ids[0], held)
			if len(ids) > 1 {
				d.Held = l.T("Bookings %s hold %s: it comes back when they are cancelled, and can be refunded then.", strings.Join(ids, ", "), held)
			}
		}
	}
	if x, err := h.svc.SaleOfBalance(c.UserContext(), s.ID, id); err == nil {
		r := saleLine(l, s, x)
		if !x.MailedAt.IsZero() {
			r.When += " · " + l.T("code e-mailed %s", l.DateTime(x.MailedAt.In(s.Location())))
		}
		d.Sale = &r
	} else if !errors.Is(err, booking.ErrNotFound) {
		return err
	}
	for _, e := range entries {
		r := balanceEntryRow{When: l.DateTime(e.CreatedAt.In(s.Location())), Type: entryLabel(l, e.Type),
			Delta: units(l, s, found[0].Kind, e.Delta), After: units(l, s, found[0].Kind, e.After), Actor: entryActor(l, e.Actor), BookingID: e.BookingID}
		if e.Delta > 0 {
			r.Delta = "+" + r.Delta
		}
		if e.Type == booking.EntrySpend {
			// What it consumed of the reservation, and why: the visit, a
			// no-show, or a cancellation the policy kept it of. The balance
			// does not move (the reservation took it): no sign that reads
			// as a credit.
			r.Type += " (" + l.Status(e.BookingStatus) + "): " + l.T("%s of the reservation", units(l, s, found[0].Kind, e.Spent))
		}
		if e.PaidBack > 0 {
			r.Type += ": " + l.T("%s paid back to the client in the salon", e.PaidBack.Format(s.Currency, l.Code))
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
		pays, back := pw.Pays(v.Status)
		if pw.Kind == booking.BalanceCertificate {
			n = int64(pays)
		}
		p.PaidWith = l.T("%s …%s: %s, %s left", l.T(string(pw.Kind)), pw.Hint, units(l, s, pw.Kind, n), units(l, s, pw.Kind, pw.Remaining))
		if back > 0 {
			// (Moved to a cheaper master: the visit spends less than it held.)
			p.PaidWith += "; " + l.T("%s goes back to it after the visit", back.Format(s.Currency, l.Code))
		}
		if v.Status == booking.StatusCancelled {
			// What the cancellation kept of it (the refund policy), and
			// gave back.
			if pw.Kept > 0 {
				p.PaidWith += "; " + l.T("kept by the cancellation rules: %s", units(l, s, pw.Kind, pw.Kept))
			}
			if pw.Returned > 0 {
				p.PaidWith += "; " + l.T("given back to it: %s", units(l, s, pw.Kind, pw.Returned))
			}
		}
		return nil
	}
	if !v.Status.Active() || p.Held > 0 {
		// (A deposit paid online: a package's visit would pay it twice;
		// a certificate's code is still taken.)
		return nil
	}
	var services []int64
	for _, sg := range booking.SegmentsOf(&v.Booking) {
		services = append(services, sg.ServiceID)
	}
	var err error
	p.Packages, err = h.packageChoices(c, v.ClientID, s.Today(v.StartsAt), services)
	return err
}

// packageChoices are the packages of client clientID that may pay a visit
// of the services on day, as the desk picks one: each names the services
// of the visit it pays (a visit of it each, while it has them).
func (h *Handler) packageChoices(c *fiber.Ctx, clientID int64, day booking.Date, services []int64) ([]packageChoice, error) {
	s, l := salonOf(c), langOf(c)
	list, err := h.svc.ClientBalances(c.UserContext(), s.ID, clientID, day, services)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	names, err := h.allServiceNames(c)
	if err != nil {
		return nil, err
	}
	var out []packageChoice
	for _, b := range list {
		var pays []string
		for _, id := range services {
			if slices.Contains(b.ServiceIDs, id) && int64(len(pays)) < b.Remaining {
				pays = append(pays, names[id])
			}
		}
		label := l.T("%s …%s (%s): %s left", l.T(string(b.Kind)), b.Hint, strings.Join(pays, ", "), units(l, s, b.Kind, b.Remaining))
		if !b.ExpiresOn.IsZero() {
			label += " · " + l.T("valid until") + " " + l.Date(b.ExpiresOn)
		}
		out = append(out, packageChoice{ID: b.ID, Label: label})
	}
	return out, nil
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
		// The code says its kind: the desk does not choose it.
		pay.Code, pay.Kind = strings.Clone(code), ""
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
	reason := strings.Clone(c.FormValue("reason"))
	if c.FormValue("sure") == "" {
		// Not ticked (the page asks it; a form made elsewhere may not):
		// nothing is refunded, the form is shown again saying why.
		if _, err := h.svc.BalanceOf(c.UserContext(), s.ID, id); err != nil {
			return err
		}
		c.Status(fiber.StatusUnprocessableEntity)
		return h.showBalanceRefund(c, id, langOf(c).T("Tick that you mean it: a refund cannot be undone."), "", reason, nil)
	}
	if _, err := h.svc.RefundBalance(c.UserContext(), s.ID, id, reason); err != nil {
		var msg string
		var fields map[string]string
		if !h.fieldError(c, err, &msg, &fields) {
			return err
		}
		return h.showBalanceRefund(c, id, msg, "", reason, fields)
	}
	if _, err := h.svc.SaleOfBalance(c.UserContext(), s.ID, id); err == nil {
		return done(c, fmt.Sprintf("/panel/balances/%d", id), "sale_refunded")
	}
	return done(c, fmt.Sprintf("/panel/balances/%d", id), "balance_refunded")
}

// Offers sold online, the online sales, and what the desk does for a
// buyer whose code's e-mail did not go.

type saleOfferRow struct {
	ID                       int64
	Title, Kind, What, Price string
	Valid                    string
	Active                   bool
}

type saleOfferForm struct {
	Kind, Title, Amount, Visits, Price, ValidDays string
	ServiceIDs                                    []int64 // a package's
	Key                                           string  // one-time: the form sent twice adds one offer
}

// maxFormServices bounds the services a form's checkboxes are read for
// (the core refuses more than it takes, naming the field).
const maxFormServices = 100

type saleRow struct {
	ID, BalanceID                     int64
	When, Title, Price, Status, Email string
	MailError                         string
	Problem                           string // the provider's last refusal
	RefundCancelled                   bool   // the provider cancelled the refund: it may be asked again
	RefundToCheck                     bool   // whether the refund was made is for staff to check at the provider: it may be asked again
}

// onlineSales fills in the balances page's offers and latest sales.
func (h *Handler) onlineSales(c *fiber.Ctx, d *balancesData) error {
	s, l := salonOf(c), langOf(c)
	d.Online = h.svc.Provider() != nil
	offers, err := h.svc.BalanceOffers(c.UserContext(), s.ID, true)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for _, sv := range d.Services {
		names[sv.ID] = sv.Name
	}
	for _, o := range offers {
		r := saleOfferRow{ID: o.ID, Title: o.Title, Kind: l.T(string(o.Kind)), Price: o.Price.Format(s.Currency, l.Code), Valid: "—", Active: o.Active}
		if o.Kind == booking.BalanceCertificate {
			r.What = o.Amount.Format(s.Currency, l.Code)
		} else {
			var svs []string
			for _, id := range o.ServiceIDs {
				svs = append(svs, names[id])
			}
			r.What = visits(l, int64(o.Visits)) + ": " + strings.Join(svs, ", ")
		}
		if o.ValidDays > 0 {
			r.Valid = l.T("%d days", o.ValidDays)
		}
		d.Offers = append(d.Offers, r)
	}
	sales, err := h.svc.BalanceSales(c.UserContext(), s.ID)
	if err != nil {
		return err
	}
	for i := range sales {
		d.Sales = append(d.Sales, saleLine(l, s, &sales[i]))
	}
	return nil
}

// saleLine is an online sale as the panel lists it: what, for how much,
// to whom, where it is, and what went wrong (the code's e-mail, the
// provider's last refusal).
func saleLine(l *lang, s *booking.Salon, x *booking.BalanceSale) saleRow {
	r := saleRow{ID: x.ID, BalanceID: x.BalanceID, When: l.DateTime(x.CreatedAt.In(s.Location())), Title: x.Title,
		Price: x.Price.Format(s.Currency, l.Code), Status: saleStatus(l, x.Status), Email: x.Email, MailError: mailError(l, x.MailError),
		Problem: reason(l, x.LastError), RefundCancelled: x.RefundCancelled, RefundToCheck: x.RefundToCheck}
	if x.RefundCancelled {
		r.Problem = l.T("it cancelled the refund: the money is still owed to the buyer")
	}
	if back := x.Refunded + x.Refunding; back > 0 && back < x.Price {
		// (Refunded in part: what was left then, and maybe what a booking
		// held then, given back later.)
		r.Status = l.T("%s: %s of %s", r.Status, back.Format(s.Currency, l.Code), r.Price)
	}
	if x.Paid() && x.MailedAt.IsZero() && r.MailError == "" {
		r.MailError = l.T("not recorded as sent")
	}
	if x.Status == booking.PayRefunded {
		r.MailError = "" // (the code is refunded: whether its e-mail went no longer matters)
	}
	return r
}

// addOffer puts an offer on sale online (owners).
func (h *Handler) addOffer(c *fiber.Ctx) error {
	s, l := salonOf(c), langOf(c)
	f := saleOfferForm{Kind: strings.Clone(c.FormValue("kind")), Title: strings.Clone(c.FormValue("title")), Amount: strings.Clone(c.FormValue("amount")),
		Visits: strings.Clone(c.FormValue("visits")), Price: strings.Clone(c.FormValue("price")), ValidDays: strings.Clone(strings.TrimSpace(c.FormValue("valid_days"))),
		Key: strings.Clone(c.FormValue("key"))}
	if len(f.Key) > 64 {
		f.Key = "" // (not a key this form made)
	}
	f.ServiceIDs = formIDs(c, "service", maxFormServices)
	d := &balancesData{Form: balanceForm{Kind: string(booking.BalanceCertificate), Visits: "5"}, Offer: f}
	o := booking.BalanceOffer{SalonID: s.ID, Kind: booking.BalanceKind(f.Kind), Title: f.Title, RequestKey: f.Key}
	fields := map[string]i18n.Text{}
	price, err := booking.ParseMoneyIn(f.Price, s.Currency)
	if err != nil {
		fields["price"] = i18n.Of(err)
	}
	o.Price = price
	switch o.Kind {
	case booking.BalanceCertificate:
		m, err := booking.ParseMoneyIn(f.Amount, s.Currency)
		if err != nil {
			fields["amount"] = i18n.Of(err)
		}
		o.Amount = m
	case booking.BalancePackage:
		n, err := strconv.Atoi(strings.TrimSpace(f.Visits))
		if err != nil {
			fields["visits"] = i18n.New("must be an integer")
		}
		o.Visits, o.ServiceIDs = n, f.ServiceIDs
	}
	if f.ValidDays != "" {
		n, err := strconv.Atoi(f.ValidDays)
		switch {
		case err != nil:
			fields["valid_days"] = i18n.New("must be an integer")
		case n <= 0:
			// (0 typed is not "no end": that is the field left empty.)
			fields["valid_days"] = i18n.New("from 1 to %d, or empty", booking.MaxOfferDays)
		}
		o.ValidDays = n
	}
	if len(fields) > 0 {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = l.T("Some fields are invalid."), l.Fields(fields)
		return h.showBalances(c, d)
	}
	if _, err := h.svc.AddBalanceOffer(c.UserContext(), o); err != nil {
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		if errors.Is(err, booking.ErrConflict) {
			d.Offer.Key = "" // (its values kept, under a new key, for a deliberate second send)
		}
		return h.showBalances(c, d)
	}
	return done(c, "/panel/balances", "offer_added")
}

// setOfferActive takes an offer off sale, or puts it back (owners).
func (h *Handler) setOfferActive(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetBalanceOfferActive(c.UserContext(), salonOf(c).ID, id, c.FormValue("active") == "on"); err != nil {
		d := &balancesData{Form: balanceForm{Kind: string(booking.BalanceCertificate), Visits: "5"}}
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showBalances(c, d)
	}
	return done(c, "/panel/balances", "offer_changed")
}

// balanceRefused shows the balance's page with why its action was
// refused (an error the user reads), or returns err.
func (h *Handler) balanceRefused(c *fiber.Ctx, id int64, err error) error {
	var msg string
	var fields map[string]string
	if !h.fieldError(c, err, &msg, &fields) {
		return err
	}
	return h.showBalance(c, id, msg)
}

// renewCode gives a balance sold in the salon a new code and shows it
// this once, on the balance's page (no redirect: the code is in no URL).
func (h *Handler) renewCode(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	b, err := h.svc.RenewBalanceCode(c.UserContext(), salonOf(c).ID, id, strings.Clone(c.FormValue("key")))
	if errors.Is(err, booking.ErrRenewedAlready) {
		// The same form again (a refresh, Back and the button): the code
		// it made stands, and is not shown again.
		c.Status(fiber.StatusConflict)
		return h.showBalance(c, id, langOf(c).T("This form made a new code already, shown then once. If that one is lost too, make another."))
	}
	if err != nil {
		return h.balanceRefused(c, id, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return h.showBalanceWith(c, id, "", b.Code)
}

// resendCode gives a balance sold online a new code and e-mails it.
func (h *Handler) resendCode(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	x, err := h.svc.ResendBalanceCode(c.UserContext(), salonOf(c).ID, id)
	if err != nil {
		return h.balanceRefused(c, id, err)
	}
	if x.MailError != "" {
		return h.showBalance(c, id, langOf(c).T("The e-mail did not go: %s", mailError(langOf(c), x.MailError)))
	}
	return done(c, fmt.Sprintf("/panel/balances/%d", id), "code_sent")
}

// retryRefund asks the payment service again for the refund it cancelled.
func (h *Handler) retryRefund(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	x, err := h.svc.RetrySaleRefund(c.UserContext(), salonOf(c).ID, id)
	if err != nil {
		return h.balanceRefused(c, id, err)
	}
	if x.Status != booking.PayRefunded {
		return done(c, fmt.Sprintf("/panel/balances/%d", id), "refund_asked")
	}
	return done(c, fmt.Sprintf("/panel/balances/%d", id), "sale_back")
}

// saleRefundMade records a sale's refund the checks left to staff as made
// at the payment service.
func (h *Handler) saleRefundMade(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.MarkSaleRefunded(c.UserContext(), salonOf(c).ID, id); err != nil {
		if errors.Is(err, booking.ErrUnavailable) {
			c.Status(fiber.StatusServiceUnavailable)
			return h.showBalance(c, id, langOf(c).T("The payment service did not answer, so the refund could not be checked: try again in a minute."))
		}
		return h.balanceRefused(c, id, err)
	}
	return done(c, fmt.Sprintf("/panel/balances/%d", id), "refund_recorded")
}

// mailError is why a code's e-mail did not go, in the page's language
// when it is ours (a provider's own words stay as they are).
func mailError(l *lang, why string) string {
	if why == booking.NoMailer {
		return l.T("this server sends no e-mail")
	}
	return why
}

// saleStatus names an online sale's state.
func saleStatus(l *lang, st booking.PaymentStatus) string {
	switch st {
	case booking.PayRegistering:
		return l.T("sale registering")
	case booking.PayRegistered:
		return l.T("sale registered")
	case booking.PayUnknown:
		return l.T("sale unknown")
	case booking.PayAuthorized:
		return l.T("sale authorized")
	case booking.PayCompleted:
		return l.T("sale completed")
	case booking.PayCanceled:
		return l.T("sale canceled")
	case booking.PayFailed:
		return l.T("sale failed")
	case booking.PayRefunding:
		return l.T("sale refunding")
	case booking.PayRefunded:
		return l.T("sale refunded")
	}
	return string(st)
}

// entryActor is who made a ledger entry, as the page says it: a staff
// member's e-mail or an import's file as written; an online purchase's
// payment, and an entry of the client's or of the platform's (no name),
// in the reader's words.
func entryActor(l *lang, actor string) string {
	if id, ok := strings.CutPrefix(actor, booking.OnlinePaymentActor); ok {
		return l.T("online payment %s", id)
	}
	if cmd, ok := strings.CutPrefix(actor, booking.CommandActor); ok {
		return l.T("the command %s", cmd)
	}
	switch actor {
	case "":
		return l.T("the client or the platform")
	case "given back to a sale paid back in full":
		return l.T("given back to a sale paid back in full")
	}
	return actor
}
