package widget

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

type slotJSON struct {
	MasterID int64  `json:"master_id"`
	StartsAt string `json:"starts_at"`
	EndsAt   string `json:"ends_at"`
}

func slotsJSON(slots []booking.Slot, loc *time.Location) []slotJSON {
	out := make([]slotJSON, len(slots))
	for i, s := range slots {
		out[i] = slotJSON{MasterID: s.MasterID, StartsAt: stamp(s.Start, loc), EndsAt: stamp(s.End, loc)}
	}
	return out
}

// stamp formats t in RFC 3339 with the salon's offset.
func stamp(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.RFC3339) }

func (h *Handler) listSlots(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	q := booking.SlotQuery{SalonID: s.ID}
	fields := map[string]i18n.Text{}
	if q.ServiceID, err = queryID(c, "service_id"); err != nil {
		fields["service_id"] = i18n.New("must be a positive integer")
	} else if q.ServiceID == 0 {
		fields["service_id"] = i18n.New("required")
	}
	if q.MasterID, err = queryID(c, "master_id"); err != nil {
		fields["master_id"] = i18n.New("must be a positive integer")
	}
	if d := strings.TrimSpace(c.Query("date")); d == "" {
		q.From = s.Today(h.svc.Now())
	} else if q.From, err = booking.ParseDate(d); err != nil {
		fields["date"] = i18n.New("use YYYY-MM-DD")
	}
	if d := strings.TrimSpace(c.Query("days")); d != "" {
		if q.Days, err = strconv.Atoi(d); err != nil || q.Days < 1 || q.Days > booking.MaxSlotDays {
			fields["days"] = i18n.New("must be an integer from 1 to 31")
		}
	}
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	slots, err := h.svc.Slots(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(slotsJSON(slots, s.Location()))
}
