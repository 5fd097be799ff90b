package widget

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// The waitlist API (contract section 4, "Waitlist").

type waitBody struct {
	ServiceID *int64     `json:"service_id"`
	MasterID  *int64     `json:"master_id"`
	Items     []itemBody `json:"items"`
	FromDate  *string    `json:"from_date"`
	ToDate    *string    `json:"to_date"`
	Times     []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"times"`
	Client *clientBody `json:"client"`
}

// waitJSON is a waitlist entry as its manage token's holder reads it.
type waitJSON struct {
	ID          int64       `json:"id"`
	Status      string      `json:"status"`
	ServiceID   int64       `json:"service_id"`
	MasterID    *int64      `json:"master_id,omitempty"`
	FromDate    string      `json:"from_date"`
	ToDate      string      `json:"to_date"`
	Items       []waitItem  `json:"items"`
	ManageToken string      `json:"manage_token,omitempty"`
	Offers      []offerJSON `json:"offers"`
}

type offerJSON struct {
	ID        int64      `json:"id"`
	StartsAt  string     `json:"starts_at"`
	EndsAt    string     `json:"ends_at"`
	MasterID  int64      `json:"master_id"`
	Items     []itemJSON `json:"items"`
	Status    string     `json:"status"`
	ExpiresAt string     `json:"expires_at,omitempty"`
}

// waitItem is a service an entry waits for, with its master (none: any).
type waitItem struct {
	ServiceID int64  `json:"service_id"`
	MasterID  *int64 `json:"master_id,omitempty"`
}

func entryJSON(e *booking.WaitEntry, loc *time.Location) waitJSON {
	out := waitJSON{ID: e.ID, Status: e.Status, ServiceID: e.ServiceID, FromDate: e.From.String(), ToDate: e.To.String(),
		ManageToken: e.ManageToken, Offers: []offerJSON{}}
	if e.MasterID != 0 {
		out.MasterID = &e.MasterID
	}
	for _, it := range e.Items {
		w := waitItem{ServiceID: it.ServiceID}
		if it.MasterID != 0 {
			w.MasterID = &it.MasterID
		}
		out.Items = append(out.Items, w)
	}
	for _, o := range e.Offers {
		// The offer's time is the visit's: its first service with the
		// master whose time freed, the rest as the booking places them.
		segs := make([]booking.Segment, len(e.Items))
		for i, it := range e.Items {
			segs[i] = booking.Segment{ServiceID: it.ServiceID, MasterID: it.MasterID, Start: o.Start, End: o.End}
		}
		segs[0].MasterID = o.MasterID
		j := offerJSON{ID: o.ID, StartsAt: stamp(o.Start, loc), EndsAt: stamp(o.End, loc), MasterID: o.MasterID, Status: o.Status,
			Items: itemsJSON(segs, loc)}
		if !o.ExpiresAt.IsZero() {
			j.ExpiresAt = stamp(o.ExpiresAt, loc)
		}
		out.Offers = append(out.Offers, j)
	}
	return out
}

func (h *Handler) joinWaitlist(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	var body waitBody
	if err := decode(c, &body, false); err != nil {
		return err
	}
	fields := map[string]i18n.Text{}
	r := booking.WaitRequest{SalonID: s.ID}
	r.ServiceID, r.MasterID, r.Items = readWhat(fields, body.ServiceID, body.MasterID, body.Items, false)
	date := func(name string, v *string) booking.Date {
		if v == nil {
			fields[name] = i18n.New("required")
			return booking.Date{}
		}
		d, err := booking.ParseDate(strings.TrimSpace(*v))
		if err != nil {
			fields[name] = i18n.New("use YYYY-MM-DD")
		}
		return d
	}
	r.From, r.To = date("from_date", body.FromDate), date("to_date", body.ToDate)
	for i, t := range body.Times {
		from, err1 := booking.ParseClock(t.From)
		to, err2 := booking.ParseClock(t.To)
		if err1 != nil || err2 != nil {
			fields[fmt.Sprintf("times[%d]", i)] = i18n.New("use HH:MM")
			continue
		}
		r.Times = append(r.Times, booking.TimeWindow{From: from, To: to})
	}
	r.Client = readClient(c, fields, body.Client)
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	e, err := h.svc.JoinWaitlist(c.UserContext(), r)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(entryJSON(e, s.Location()))
}

// answerEntry sends the entry as it is now.
func (h *Handler) answerEntry(c *fiber.Ctx, e *booking.WaitEntry) error {
	s, err := h.svc.Salon(booking.As(c.UserContext(), booking.Visitor()), e.SalonID)
	if err != nil {
		return err
	}
	c.Locals(salonKey, s)
	return c.JSON(entryJSON(e, s.Location()))
}

func (h *Handler) getWaitlist(c *fiber.Ctx) error {
	id, err := tokenParams(c)
	if err != nil {
		return err
	}
	e, err := h.svc.WaitlistEntry(c.UserContext(), id)
	if err != nil {
		return err
	}
	return h.answerEntry(c, e)
}

func (h *Handler) leaveWaitlist(c *fiber.Ctx) error {
	id, err := tokenParams(c)
	if err != nil {
		return err
	}
	e, err := h.svc.LeaveWaitlist(c.UserContext(), id)
	if err != nil {
		return err
	}
	return h.answerEntry(c, e)
}

func (h *Handler) acceptOffer(c *fiber.Ctx) error {
	id, err := tokenParams(c)
	if err != nil {
		return err
	}
	offer, err := strconv.ParseInt(c.Params("offer"), 10, 64)
	if err != nil || offer <= 0 {
		return booking.ErrNotFound
	}
	e, err := h.svc.WaitlistEntry(c.UserContext(), id)
	if err != nil {
		return err
	}
	s, err := h.svc.Salon(booking.As(c.UserContext(), booking.Visitor()), e.SalonID)
	if err != nil {
		return err
	}
	c.Locals(salonKey, s) // (a taken time's alternatives are in the salon's offset)
	b, err := h.svc.AcceptOffer(c.UserContext(), id, offer)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toJSON(b, s, h.svc.Now()))
}
