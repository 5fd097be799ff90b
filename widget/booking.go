package widget

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
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
	ManageToken    string        `json:"manage_token,omitempty"`
	Payment        *paymentJSON  `json:"payment,omitempty"`
}

// paymentJSON is the deposit to pay online; absent while deposits are paid
// in the salon.
type paymentJSON struct {
	URL    string        `json:"url"`
	Amount booking.Money `json:"amount"`
}

func toJSON(b *booking.Booking, s *booking.Salon, now time.Time) bookingJSON {
	loc := s.Location()
	until := b.StartsAt.Add(-time.Duration(s.CutoffHours) * time.Hour)
	out := bookingJSON{
		ID: b.ID, Salon: s.Slug, Status: string(b.Status), StartsAt: stamp(b.StartsAt, loc), EndsAt: stamp(b.EndsAt(), loc),
		MasterID: b.MasterID, ServiceID: b.ServiceID, Price: b.Price, Deposit: b.Deposit,
		ChangeableTill: stamp(until, loc), Changeable: b.Status.Active() && now.Before(until),
		ManageToken: b.ManageToken,
	}
	if !b.HoldExpiresAt.IsZero() {
		out.HoldExpiresAt = stamp(b.HoldExpiresAt, loc)
	}
	return out
}

type createBody struct {
	ServiceID *int64  `json:"service_id"`
	MasterID  *int64  `json:"master_id"`
	StartsAt  *string `json:"starts_at"`
	Client    *struct {
		Name  *string `json:"name"`
		Phone *string `json:"phone"`
	} `json:"client"`
}

func (h *Handler) createBooking(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return fail(c, h.log, err)
	}
	var body createBody
	if err := decode(c, &body); err != nil {
		return fail(c, h.log, err)
	}
	fields := map[string]string{}
	r := booking.BookRequest{SalonID: s.ID, Source: booking.SourceWidget,
		IdempotencyKey: strings.Clone(c.Get("Idempotency-Key"))}
	r.ServiceID = requiredID(fields, "service_id", body.ServiceID)
	r.MasterID = requiredID(fields, "master_id", body.MasterID)
	r.StartsAt = requiredTime(fields, "starts_at", body.StartsAt)
	if body.Client == nil {
		fields["client"] = "required"
	} else {
		if body.Client.Name != nil {
			r.Client.Name = *body.Client.Name
		}
		if body.Client.Phone != nil {
			r.Client.Phone = *body.Client.Phone
		}
	}
	if len(fields) > 0 {
		return fail(c, h.log, &booking.ValidationError{Fields: fields})
	}
	b, err := h.svc.Book(c.UserContext(), r)
	if err != nil {
		return fail(c, h.log, err)
	}
	return c.Status(fiber.StatusCreated).JSON(toJSON(b, s, h.svc.Now()))
}

// managed loads the booking of the :id path parameter if the request carries
// its manage token, and its salon.
func (h *Handler) managed(c *fiber.Ctx) (*booking.Booking, *booking.Salon, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, nil, booking.ErrNotFound
	}
	token := c.Get("X-Manage-Token")
	if token == "" {
		return nil, nil, booking.ErrNotFound
	}
	ctx := c.UserContext()
	b, err := h.svc.BookingByToken(ctx, id, token)
	if err != nil {
		return nil, nil, err
	}
	s, err := h.svc.Salon(ctx, b.SalonID)
	if err != nil {
		return nil, nil, err
	}
	c.Locals(salonKey, s)
	return b, s, nil
}

func (h *Handler) getBooking(c *fiber.Ctx) error {
	b, s, err := h.managed(c)
	if err != nil {
		return fail(c, h.log, err)
	}
	return c.JSON(toJSON(b, s, h.svc.Now()))
}

func (h *Handler) cancelBooking(c *fiber.Ctx) error {
	b, s, err := h.managed(c)
	if err != nil {
		return fail(c, h.log, err)
	}
	var body struct {
		Reason *string `json:"reason"`
	}
	if len(c.Body()) > 0 {
		if err := decode(c, &body); err != nil {
			return fail(c, h.log, err)
		}
	}
	r := booking.CancelRequest{SalonID: s.ID, BookingID: b.ID, Actor: booking.ClientActor(b.ClientID)}
	if body.Reason != nil {
		r.Reason = *body.Reason
	}
	out, err := h.svc.Cancel(c.UserContext(), r)
	if err != nil {
		return fail(c, h.log, err)
	}
	return c.JSON(toJSON(out, s, h.svc.Now()))
}

func (h *Handler) rescheduleBooking(c *fiber.Ctx) error {
	b, s, err := h.managed(c)
	if err != nil {
		return fail(c, h.log, err)
	}
	var body struct {
		StartsAt *string `json:"starts_at"`
		MasterID *int64  `json:"master_id"`
	}
	if err := decode(c, &body); err != nil {
		return fail(c, h.log, err)
	}
	fields := map[string]string{}
	r := booking.RescheduleRequest{SalonID: s.ID, BookingID: b.ID, Actor: booking.ClientActor(b.ClientID)}
	r.StartsAt = requiredTime(fields, "starts_at", body.StartsAt)
	if body.MasterID != nil {
		r.MasterID = requiredID(fields, "master_id", body.MasterID)
	}
	if len(fields) > 0 {
		return fail(c, h.log, &booking.ValidationError{Fields: fields})
	}
	out, err := h.svc.Reschedule(c.UserContext(), r)
	if err != nil {
		return fail(c, h.log, err)
	}
	return c.JSON(toJSON(out, s, h.svc.Now()))
}

func requiredID(fields map[string]string, name string, v *int64) int64 {
	switch {
	case v == nil:
		fields[name] = "required"
	case *v <= 0:
		fields[name] = "must be a positive integer"
	default:
		return *v
	}
	return 0
}

func requiredTime(fields map[string]string, name string, v *string) time.Time {
	if v == nil || strings.TrimSpace(*v) == "" {
		fields[name] = "required"
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(*v))
	if err != nil {
		fields[name] = "use RFC 3339 with an offset, like 2026-03-08T13:00:00+03:00"
		return time.Time{}
	}
	return t
}
