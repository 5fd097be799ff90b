package widget

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// bookingJSON is a booking as the API shows it. ManageToken is only in the
// answer to its creation (and to replays of that request).
type bookingJSON struct {
	ID             int64         `json:"id"`
	Salon          string        `json:"salon"`
	Status         string        `json:"status"`
	StartsAt       string        `json:"starts_at"`
	EndsAt         string        `json:"ends_at"`
	MasterID       int64         `json:"master_id"`
	ServiceID      int64         `json:"service_id"`
	Price          booking.Money `json:"price"`
	Deposit        booking.Money `json:"deposit"`
	ChangeableTill string        `json:"changeable_until"`
	Changeable     bool          `json:"changeable"`
	HoldExpiresAt  string        `json:"hold_expires_at,omitempty"`
	// DepositDue is what a confirmed booking moved to a larger deposit
	// still owes of it online (POST .../payment pays it).
	DepositDue booking.Money `json:"deposit_due,omitempty"`
	// CancelledBySalon: the salon cancelled it of its own accord.
	CancelledBySalon bool         `json:"cancelled_by_salon,omitempty"`
	ManageToken      string       `json:"manage_token,omitempty"`
	Payment          *paymentJSON `json:"payment,omitempty"`
	// Items are the visit's services (one for a single-service booking).
	Items []itemJSON `json:"items"`
	// PaidWith is what the booking reserved of a package or a certificate.
	PaidWith *paidWithJSON `json:"paid_with,omitempty"`
}

// paidWithJSON is what a booking reserved of a balance: a package's visits
// or a certificate's amount, and what the balance has left now; once the
// booking was cancelled, what that kept of it and gave back; while it is
// active, what the client cancelling now would leave of it (the salon's
// refund policy).
type paidWithJSON struct {
	Kind        booking.BalanceKind `json:"kind"`
	Hint        string              `json:"hint,omitempty"` // the code's last characters, as e-mails name it
	Visits      int                 `json:"visits,omitempty"`
	Amount      booking.Money       `json:"amount,omitempty"`
	Remaining   any                 `json:"remaining"`
	Kept        any                 `json:"kept,omitempty"`
	Returned    any                 `json:"returned,omitempty"`
	CancelKeeps any                 `json:"cancel_keeps,omitempty"`
	// Pays is what a certificate pays of the visit: less than Amount when
	// the booking moved to a cheaper master (BackAfterVisit, the rest,
	// goes back to it when the visit is settled); once made, what it
	// spent.
	Pays           *booking.Money `json:"pays,omitempty"`
	BackAfterVisit booking.Money  `json:"back_after_visit,omitempty"`
	// AtSalon is what is left to pay at the salon (the visit's price less
	// what the balance and the deposit paid online pay), while the
	// booking is on (absent otherwise).
	AtSalon *booking.Money `json:"at_salon,omitempty"`
	// ExpiresAt is the end of the balance's last day, while the booking
	// holds it (a move goes no later: the manage page offers no later
	// day); absent for a balance with no end.
	ExpiresAt string `json:"expires_at,omitempty"`
}

func toPaidWith(p *booking.PaidWith, status booking.Status, cancelKeeps int64, atSalon booking.Money, due bool, loc *time.Location) *paidWithJSON {
	if p == nil {
		return nil
	}
	units := func(n int64) any { // (in the balance's units; nil: none)
		switch {
		case n <= 0:
			return nil
		case p.Kind == booking.BalancePackage:
			return n
		}
		return booking.Money(n)
	}
	out := &paidWithJSON{Kind: p.Kind, Hint: p.Hint, Visits: p.Visits, Amount: p.Amount, Remaining: units(p.Remaining), CancelKeeps: units(cancelKeeps)}
	if out.Remaining == nil {
		out.Remaining = 0
	}
	if status == booking.StatusCancelled {
		out.Kept, out.Returned = units(p.Kept), units(p.Returned)
	}
	if p.Kind == booking.BalanceCertificate {
		pays, back := p.Pays(status)
		out.Pays, out.BackAfterVisit = &pays, back
	}
	if !p.ValidUntil.IsZero() && !p.Settled {
		out.ExpiresAt = stamp(p.ValidUntil.AddDays(1).Start(loc), loc)
	}
	if due && status.Active() { // (the visit made, the client paid at the desk: nothing to say)
		out.AtSalon = &atSalon
	}
	return out
}

// paymentJSON is the deposit paid online; absent while deposits are paid
// in the salon. The URL (where the client pays) is there only while the
// payment waits for the client.
type paymentJSON struct {
	Status string        `json:"status"`
	Amount booking.Money `json:"amount"`
	URL    string        `json:"url,omitempty"`
	// Paid and Refunded are the booking's totals over all its payments
	// (a top-up, refunds in parts), when any money came.
	Paid     booking.Money `json:"paid,omitempty"`
	Refunded booking.Money `json:"refunded,omitempty"`
	// CancelRefunds and CancelKeeps are, while the caller may cancel the
	// booking, what of the money paid online cancelling now would give
	// back, or leave to the salon by its refund policy.
	CancelRefunds booking.Money `json:"cancel_refunds,omitempty"`
	CancelKeeps   booking.Money `json:"cancel_keeps,omitempty"`
}

// onCancel says in p what cancelling v now would do to what was paid
// online for it.
func (p *paymentJSON) onCancel(v *booking.View) {
	p.CancelRefunds, p.CancelKeeps = 0, 0
	switch {
	case !v.Changeable || v.Prepaid <= 0:
	case v.CancelKeepsPrepaid:
		p.CancelKeeps = v.Prepaid
	default:
		p.CancelRefunds = v.Prepaid
	}
}

func toPayment(p *booking.PaymentSession) *paymentJSON {
	if p == nil {
		return nil
	}
	return &paymentJSON{Status: string(p.Status), Amount: p.Amount, URL: p.URL}
}

func toJSON(b *booking.Booking, s *booking.Salon, now time.Time) bookingJSON {
	loc := s.Location()
	out := bookingJSON{
		ID: b.ID, Salon: s.Slug, Status: string(b.Status), StartsAt: stamp(b.StartsAt, loc), EndsAt: stamp(booking.VisitEnd(b), loc),
		MasterID: b.MasterID, ServiceID: b.ServiceID, Price: booking.VisitPrice(b), Deposit: b.Deposit,
		ChangeableTill: stamp(s.ChangeableUntil(b), loc), Changeable: s.ClientMayChange(b, now),
		ManageToken: b.ManageToken, Items: itemsJSON(booking.SegmentsOf(b), loc),
	}
	due, ok := booking.DueAtSalon(b) // (just made: nothing held yet; a replay: what is held now)
	out.PaidWith = toPaidWith(b.PaidWith, b.Status, 0, due, ok, loc)
	if !b.HoldExpiresAt.IsZero() {
		out.HoldExpiresAt = stamp(b.HoldExpiresAt, loc)
	}
	return out
}

// viewJSON is a booking as its manage token's holder reads it.
func viewJSON(v *booking.View) bookingJSON {
	loc := v.Salon.Location()
	out := toJSON(&v.Booking, &v.Salon, time.Time{})
	out.ChangeableTill, out.Changeable = stamp(v.ChangeableUntil, loc), v.Changeable
	out.DepositDue, out.CancelledBySalon = v.DepositDue, v.CancelledBySalon
	due, ok := v.AtSalon()
	out.PaidWith = toPaidWith(v.PaidWith, v.Status, v.CancelKeeps, due, ok, loc)
	return out
}

type createBody struct {
	ServiceID *int64       `json:"service_id"`
	MasterID  *int64       `json:"master_id"`
	Items     []itemBody   `json:"items"`
	StartsAt  *string      `json:"starts_at"`
	Client    *clientBody  `json:"client"`
	PayWith   *payWithBody `json:"pay_with"`
}

// payWithBody names the balance a booking is paid with, by its code.
type payWithBody struct {
	Certificate *string `json:"certificate"`
	Package     *string `json:"package"`
}

// readPayWith reads the request's pay_with (nil for none).
func readPayWith(fields map[string]i18n.Text, b *payWithBody) *booking.PayWith {
	switch {
	case b == nil:
		return nil
	case b.Certificate != nil && b.Package == nil:
		return &booking.PayWith{Kind: booking.BalanceCertificate, Code: *b.Certificate}
	case b.Package != nil && b.Certificate == nil:
		return &booking.PayWith{Kind: booking.BalancePackage, Code: *b.Package}
	}
	fields["pay_with"] = i18n.New("give a certificate or a package")
	return nil
}

// clientBody is who a request is for: a booking's client, a waitlist's.
type clientBody struct {
	Name  *string `json:"name"`
	Phone *string `json:"phone"`
	Email *string `json:"email"`
	Lang  *string `json:"lang"`
}

// readClient reads the request's client (required); its language, when
// not given, is the request's Accept-Language.
func readClient(c *fiber.Ctx, fields map[string]i18n.Text, b *clientBody) booking.ClientInput {
	var in booking.ClientInput
	if b == nil {
		fields["client"] = i18n.New("required")
		return in
	}
	if b.Name != nil {
		in.Name = *b.Name
	}
	if b.Phone != nil {
		in.Phone = *b.Phone
	}
	if b.Email != nil {
		in.Email = *b.Email
	}
	if b.Lang != nil {
		in.Lang = *b.Lang
	} else if l, ok := acceptedLang(c); ok {
		in.Lang = l
	}
	return in
}

func (h *Handler) createBooking(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	var body createBody
	if err := decode(c, &body, false); err != nil {
		return err
	}
	fields := map[string]i18n.Text{}
	r := booking.BookRequest{SalonID: s.ID}
	if key, ok := header(c, "Idempotency-Key"); ok {
		if key == "" {
			fields["idempotency_key"] = i18n.New("must not be empty (omit the header for none)")
		}
		r.IdempotencyKey = key
	}
	r.ServiceID, r.MasterID, r.Items = readWhat(fields, body.ServiceID, body.MasterID, body.Items, true)
	r.StartsAt = requiredTime(fields, "starts_at", body.StartsAt)
	r.Client = readClient(c, fields, body.Client)
	r.PayWith = readPayWith(fields, body.PayWith)
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	b, err := h.svc.Book(c.UserContext(), r)
	if err != nil {
		return err
	}
	out := toJSON(b, s, h.svc.Now())
	switch {
	case b.Status != booking.StatusPending && b.Deposit > 0 && h.svc.Provider() != nil && b.ManageToken != "":
		// A replay (the same Idempotency-Key) of a booking whose deposit
		// was paid since: its payment as it is now.
		if p, err := h.svc.PaymentOf(booking.As(c.UserContext(), booking.ByToken(b.ManageToken)), 0, b.ID, false); err == nil && p != nil {
			out.Payment = toPayment(p)
			out.Payment.Paid, out.Payment.Refunded = p.TotalHeld, p.TotalRefunded
		} else if err != nil {
			h.log.Warn("payment not read", "booking", b.ID, "err", err, "request_id", c.Locals("requestid"))
		}
	case b.Status == booking.StatusPending && b.Deposit > 0 && h.svc.Provider() != nil:
		// The deposit's payment: where the client pays. When the provider
		// does not answer now, the booking still holds its slot and the
		// payment is found again when the booking is read.
		out.Payment = &paymentJSON{Status: string(booking.PayUnknown), Amount: b.Deposit}
		if p, err := h.svc.StartPayment(booking.As(c.UserContext(), booking.ByToken(b.ManageToken)), b.ID, h.returnURL(c, s)); err == nil {
			out.Payment = toPayment(p)
		} else {
			h.log.Warn("payment not started", "booking", b.ID, "err", err, "request_id", c.Locals("requestid"))
		}
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// returnURL is where the payment page sends the client back: the manage
// page of the booking, with its token in the fragment (never sent to a
// server).
func (h *Handler) returnURL(c *fiber.Ctx, s *booking.Salon) booking.ReturnLink {
	return BackLink(h.publicBase(c), s.Slug)
}

// publicBase is the server's public base URL: SALON_PUBLIC_URL, else this
// request's.
func (h *Handler) publicBase(c *fiber.Ctx) string {
	if h.cfg.PublicURL != "" {
		return h.cfg.PublicURL
	}
	return c.BaseURL()
}

// BackLink is where a client of the salon comes back after paying: the
// widget's page for a payment's return reference (no manage token: the
// provider keeps this URL).
func BackLink(base, slug string) booking.ReturnLink {
	base = strings.TrimRight(base, "/") + "/w/" + slug + "/back/"
	return func(ref string) string { return base + ref }
}

// paymentReturn is what the client back from paying sees: their booking
// and its payment, found by the payment's return reference, and nothing
// they may change with it.
func (h *Handler) paymentReturn(c *fiber.Ctx) error {
	v, p, err := h.svc.PaymentReturn(c.UserContext(), strings.Clone(c.Params("ref")))
	if err != nil {
		return err
	}
	c.Locals(salonKey, &v.Salon)
	out := viewJSON(v)
	out.Payment = toPayment(p)
	return c.JSON(out)
}

// payAgain is the client back from a payment that did not go through
// trying again: a new payment of the same booking, by the earlier one's
// return reference (which allows nothing else).
func (h *Handler) payAgain(c *fiber.Ctx) error {
	if err := decode(c, &struct{}{}, true); err != nil {
		return err
	}
	ref := strings.Clone(c.Params("ref"))
	v, _, err := h.svc.PaymentReturn(c.UserContext(), ref)
	if err != nil {
		return err
	}
	c.Locals(salonKey, &v.Salon)
	v, p, err := h.svc.PayAgain(c.UserContext(), ref, h.returnURL(c, &v.Salon))
	if err != nil {
		return err
	}
	out := viewJSON(v)
	out.Payment = toPayment(p)
	return c.JSON(out)
}

// header returns a request header's value (copied out of fiber's buffer)
// and whether the request has it at all.
func header(c *fiber.Ctx, name string) (string, bool) {
	v := c.Request().Header.Peek(name)
	if v == nil {
		return "", false
	}
	return string(v), true
}

// bookingParams reads the :id path parameter and the manage token: the
// credential the core judges, which asks for the rest of the request.
func bookingParams(c *fiber.Ctx) (int64, error) { return tokenParams(c) }

// tokenParams reads the id of the path and the X-Manage-Token header, which
// becomes the caller: of a booking, or of a waitlist entry.
func tokenParams(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, booking.ErrNotFound
	}
	if err := asTokenHolder(c); err != nil {
		return 0, err
	}
	return id, nil
}

// asTokenHolder makes the request's X-Manage-Token header its caller;
// without one, what it names is not found.
func asTokenHolder(c *fiber.Ctx) error {
	token, _ := header(c, "X-Manage-Token")
	if token == "" {
		return booking.ErrNotFound
	}
	c.SetUserContext(booking.As(c.UserContext(), booking.ByToken(token)))
	return nil
}

// answer reads the booking again as the caller sees it (with its salon and
// what may still be done) and sends it.
func (h *Handler) answer(c *fiber.Ctx, id int64) error {
	v, err := h.svc.BookingView(c.UserContext(), 0, id)
	if err != nil {
		return err
	}
	c.Locals(salonKey, &v.Salon)
	out := viewJSON(v)
	if v.Deposit > 0 && h.svc.Provider() != nil {
		// The client may be back from the payment page: the payment is
		// brought up to date with the provider first.
		p, err := h.svc.PaymentOf(c.UserContext(), 0, id, v.Owed() > 0)
		if err != nil {
			return err
		}
		if p != nil {
			out.Payment = toPayment(p)
			out.Payment.Paid, out.Payment.Refunded = p.TotalHeld, p.TotalRefunded
			if v.Owed() > 0 && p.Status != booking.PayRegistered {
				// Paid (or given up) meanwhile: read it again.
				if v, err = h.svc.BookingView(c.UserContext(), 0, id); err == nil {
					payment := out.Payment
					out = viewJSON(v)
					out.Payment = payment
				}
			}
			out.Payment.onCancel(v)
		}
	}
	return c.JSON(out)
}

func (h *Handler) getBooking(c *fiber.Ctx) error {
	id, err := bookingParams(c)
	if err != nil {
		return err
	}
	return h.answer(c, id)
}

func (h *Handler) cancelBooking(c *fiber.Ctx) error {
	id, err := bookingParams(c)
	if err != nil {
		return err
	}
	var body struct {
		Reason *string `json:"reason"`
	}
	if err := decode(c, &body, true); err != nil {
		return err
	}
	r := booking.CancelRequest{BookingID: id}
	if body.Reason != nil {
		r.Reason = *body.Reason
	}
	if _, err := h.svc.Cancel(c.UserContext(), r); err != nil {
		return err
	}
	return h.answer(c, id)
}

// telegramLink makes the booking's deep link into the salon's bot: opening
// it in Telegram has that chat hear of the booking (404 without a bot).
func (h *Handler) telegramLink(c *fiber.Ctx) error {
	id, err := bookingParams(c)
	if err != nil {
		return err
	}
	if h.cfg.botUsername() == "" {
		return booking.ErrNotFound
	}
	token, err := h.svc.TelegramLink(c.UserContext(), 0, id)
	if err != nil {
		return err
	}
	return c.JSON(map[string]string{"url": "https://t.me/" + h.cfg.botUsername() + "?start=" + DeepLinkPrefix + token})
}

// DeepLinkPrefix starts a booking's /start payload (the bot's
// bot.DeepLinkPrefix: the front ends do not import each other).
const DeepLinkPrefix = "b_"

// payBooking starts the deposit's payment of a pending booking again, as
// the client asks after a payment was declined (a new payment while the
// hold lasts), or the payment of what a moved booking still owes of its
// deposit; while one is under way, it is that one. 409 when nothing is
// owed (paid, or the hold ended).
func (h *Handler) payBooking(c *fiber.Ctx) error {
	id, err := bookingParams(c)
	if err != nil {
		return err
	}
	if err := decode(c, &struct{}{}, true); err != nil {
		return err
	}
	v, err := h.svc.BookingView(c.UserContext(), 0, id)
	if err != nil {
		return err
	}
	if v.Owed() <= 0 || h.svc.Provider() == nil {
		c.Locals(salonKey, &v.Salon)
		return fmt.Errorf("booking %d is %s and owes no deposit online: %w", id, v.Status, booking.ErrConflict)
	}
	if _, err := h.svc.StartPayment(c.UserContext(), id, h.returnURL(c, &v.Salon)); err != nil {
		return err
	}
	return h.answer(c, id)
}

func (h *Handler) rescheduleBooking(c *fiber.Ctx) error {
	id, err := bookingParams(c)
	if err != nil {
		return err
	}
	var body struct {
		StartsAt *string    `json:"starts_at"`
		MasterID *int64     `json:"master_id"`
		Items    []itemBody `json:"items"`
	}
	if err := decode(c, &body, false); err != nil {
		return err
	}
	fields := map[string]i18n.Text{}
	r := booking.RescheduleRequest{BookingID: id}
	r.StartsAt = requiredTime(fields, "starts_at", body.StartsAt)
	if body.MasterID != nil {
		r.MasterID = requiredID(fields, "master_id", body.MasterID)
	}
	if body.Items != nil {
		r.Items = readItems(fields, body.Items)
	}
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	if _, err := h.svc.Reschedule(c.UserContext(), r); err != nil {
		if st := (*booking.SlotTakenError)(nil); errors.As(err, &st) {
			h.setSalon(c, id)
		}
		return err
	}
	return h.answer(c, id)
}

// readWhat reads what a request asks for: a service with its master
// (required when master is, else optional: any master), or a visit's
// items, not both.
func readWhat(fields map[string]i18n.Text, serviceID, masterID *int64, items []itemBody, master bool) (int64, int64, []booking.VisitItem) {
	if items != nil {
		if serviceID != nil || masterID != nil {
			fields["items"] = i18n.New("give either service_id and master_id or items")
		}
		return 0, 0, readItems(fields, items)
	}
	var s, m int64
	s = requiredID(fields, "service_id", serviceID)
	if master || masterID != nil {
		m = requiredID(fields, "master_id", masterID)
	}
	return s, m, nil
}

// itemBody is one service of a visit asked for.
type itemBody struct {
	ServiceID *int64 `json:"service_id"`
	MasterID  *int64 `json:"master_id"`
}

// readItems reads a visit's items (1 to booking.MaxVisitItems; a missing
// master_id is any master).
func readItems(fields map[string]i18n.Text, body []itemBody) []booking.VisitItem {
	if len(body) == 0 || len(body) > booking.MaxVisitItems {
		fields["items"] = i18n.New("from 1 to %d services", booking.MaxVisitItems)
		return nil
	}
	out := make([]booking.VisitItem, len(body))
	for i, it := range body {
		out[i].ServiceID = requiredID(fields, fmt.Sprintf("items[%d].service_id", i), it.ServiceID)
		if it.MasterID != nil {
			out[i].MasterID = requiredID(fields, fmt.Sprintf("items[%d].master_id", i), it.MasterID)
		}
	}
	return out
}

// setSalon remembers the salon of the booking for the error answer (its
// alternatives are written in the salon's offset).
func (h *Handler) setSalon(c *fiber.Ctx, id int64) {
	if v, err := h.svc.BookingView(c.UserContext(), 0, id); err == nil {
		c.Locals(salonKey, &v.Salon)
	}
}

func requiredID(fields map[string]i18n.Text, name string, v *int64) int64 {
	switch {
	case v == nil:
		fields[name] = i18n.New("required")
	case *v <= 0:
		fields[name] = i18n.New("must be a positive integer")
	default:
		return *v
	}
	return 0
}

func requiredTime(fields map[string]i18n.Text, name string, v *string) time.Time {
	if v == nil || strings.TrimSpace(*v) == "" {
		fields[name] = i18n.New("required")
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(*v))
	if err != nil {
		fields[name] = i18n.New("use RFC 3339 with an offset, like 2026-03-08T13:00:00+03:00")
		return time.Time{}
	}
	return t
}
