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

// itemJSON is one service of a visit: when the client has it, and when its
// master is free meanwhile (processing).
type itemJSON struct {
	ServiceID  int64     `json:"service_id"`
	MasterID   int64     `json:"master_id"`
	StartsAt   string    `json:"starts_at"`
	EndsAt     string    `json:"ends_at"`
	Processing *spanJSON `json:"processing,omitempty"`
}

type spanJSON struct {
	StartsAt string `json:"starts_at"`
	EndsAt   string `json:"ends_at"`
}

func itemsJSON(segs []booking.Segment, loc *time.Location) []itemJSON {
	out := make([]itemJSON, len(segs))
	for i, sg := range segs {
		out[i] = itemJSON{ServiceID: sg.ServiceID, MasterID: sg.MasterID, StartsAt: stamp(sg.Start, loc), EndsAt: stamp(sg.End, loc)}
		if !sg.ProcessingStart.IsZero() {
			out[i].Processing = &spanJSON{StartsAt: stamp(sg.ProcessingStart, loc), EndsAt: stamp(sg.ProcessingEnd, loc)}
		}
	}
	return out
}

// visitSlotJSON is a free start of a whole visit.
type visitSlotJSON struct {
	StartsAt string     `json:"starts_at"`
	EndsAt   string     `json:"ends_at"`
	Items    []itemJSON `json:"items"`
}

func visitSlotsJSON(slots []booking.VisitSlot, loc *time.Location) []visitSlotJSON {
	out := make([]visitSlotJSON, len(slots))
	for i, v := range slots {
		out[i] = visitSlotJSON{StartsAt: stamp(v.Start, loc), EndsAt: stamp(v.End, loc), Items: itemsJSON(v.Segments, loc)}
	}
	return out
}

const badItems = "service ids, each optionally :master_id, separated by commas"

// parseItems reads a visit's items from the slots query: service ids in
// visit order, each optionally ":master_id" (none: any master).
func parseItems(s string) ([]booking.VisitItem, error) {
	parts := strings.Split(s, ",")
	if len(parts) > booking.MaxVisitItems {
		return nil, i18n.New("from 1 to %d services", booking.MaxVisitItems)
	}
	out := make([]booking.VisitItem, len(parts))
	for i, p := range parts {
		svc, master, hasMaster := strings.Cut(strings.TrimSpace(p), ":")
		var err error
		if out[i].ServiceID, err = strconv.ParseInt(svc, 10, 64); err != nil || out[i].ServiceID <= 0 {
			return nil, i18n.New(badItems)
		}
		if hasMaster {
			if out[i].MasterID, err = strconv.ParseInt(master, 10, 64); err != nil || out[i].MasterID <= 0 {
				return nil, i18n.New(badItems)
			}
		}
	}
	return out, nil
}

// stamp formats t in RFC 3339 with the salon's offset.
func stamp(t time.Time, loc *time.Location) string { return t.In(loc).Format(stampLayout) }

// stampLayout is RFC 3339 with the offset always written as numbers:
// +00:00 in London's winter, never Z (the contract's times carry the
// salon's offset).
const stampLayout = "2006-01-02T15:04:05-07:00"

func (h *Handler) listSlots(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	fields := map[string]i18n.Text{}
	moving, err := movingParam(c, fields)
	if err != nil {
		return err
	}
	if items := c.Query("items"); items != "" {
		return h.listVisitSlots(c, s, items, moving, fields)
	}
	q := booking.SlotQuery{SalonID: s.ID, Moving: moving}
	if q.ServiceID, err = queryID(c, "service_id"); err != nil {
		fields["service_id"] = i18n.New("must be a positive integer")
	} else if q.ServiceID == 0 {
		fields["service_id"] = i18n.New("required")
	}
	if q.MasterID, err = queryID(c, "master_id"); err != nil {
		fields["master_id"] = i18n.New("must be a positive integer")
	}
	q.From, q.Days = h.slotDays(c, s, fields)
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	slots, err := h.svc.Slots(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(slotsJSON(slots, s.Location()))
}

// movingParam reads the slots query's moving: the id of the booking the
// client is moving, whose own time then counts as free (a malformed one
// is said in fields, with the query's other faults). Its manage token
// (the X-Manage-Token header) becomes the caller, which the core judges:
// without it, or with another booking's, the booking is not found.
func movingParam(c *fiber.Ctx, fields map[string]i18n.Text) (int64, error) {
	id, err := queryID(c, "moving")
	if err != nil {
		fields["moving"] = i18n.New("must be a positive integer")
		return 0, nil
	}
	if id == 0 {
		return 0, nil
	}
	return id, asTokenHolder(c)
}

// slotDays reads the slots query's date and days.
func (h *Handler) slotDays(c *fiber.Ctx, s *booking.Salon, fields map[string]i18n.Text) (booking.Date, int) {
	var from booking.Date
	var days int
	var err error
	if d := strings.TrimSpace(c.Query("date")); d == "" {
		from = s.Today(h.svc.Now())
	} else if from, err = booking.ParseDate(d); err != nil {
		fields["date"] = i18n.New("use YYYY-MM-DD")
	}
	if d := strings.TrimSpace(c.Query("days")); d != "" {
		if days, err = strconv.Atoi(d); err != nil || days < 1 || days > booking.MaxSlotDays {
			fields["days"] = i18n.New("must be an integer from 1 to 31")
		}
	}
	return from, days
}

// listVisitSlots answers the slots of a whole visit (?items=S1:M1,S2).
func (h *Handler) listVisitSlots(c *fiber.Ctx, s *booking.Salon, items string, moving int64, fields map[string]i18n.Text) error {
	q := booking.VisitSlotQuery{SalonID: s.ID, Moving: moving}
	var err error
	if q.Items, err = parseItems(items); err != nil {
		fields["items"] = i18n.Of(err)
	}
	q.From, q.Days = h.slotDays(c, s, fields)
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	slots, err := h.svc.VisitSlots(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(visitSlotsJSON(slots, s.Location()))
}
