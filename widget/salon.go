package widget

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

// salonKey is where a handler leaves the salon of the request, for fail
// (an error's times are written in its offset). It is a type of its own:
// the access log's "salon" (the slug) is another local.
type salonLocal struct{}

var salonKey salonLocal

// salon resolves the :slug of the request and remembers it for fail.
func (h *Handler) salon(c *fiber.Ctx) (*booking.Salon, error) {
	s, err := h.svc.SalonBySlug(c.UserContext(), c.Params("slug"))
	if err != nil {
		return nil, err
	}
	c.Locals(salonKey, s)
	c.Locals("salon", s.Slug) // for the access log
	return s, nil
}

type salonJSON struct {
	Slug     string `json:"slug"`
	Name     string `json:"name"`
	Timezone string `json:"timezone"`
	Currency string `json:"currency"`
	Locale   string `json:"locale"`
}

func (h *Handler) getSalon(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	return c.JSON(salonJSON{Slug: s.Slug, Name: s.Name, Timezone: s.Timezone, Currency: s.Currency, Locale: s.Locale})
}

type serviceJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	DurationMin int    `json:"duration_min"`
	// StayMin is how long a client stays: the work, and a processing
	// time's wait and finish after it.
	StayMin int           `json:"stay_min"`
	Price   booking.Money `json:"price"`
	Deposit booking.Money `json:"deposit"`
}

func (h *Handler) listServices(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	list, err := h.svc.Services(c.UserContext(), s.ID)
	if err != nil {
		return err
	}
	out := make([]serviceJSON, len(list))
	for i, sv := range list {
		out[i] = serviceJSON{ID: sv.ID, Name: sv.Name, DurationMin: sv.DurationMin, StayMin: sv.StayMin(sv.DurationMin),
			Price: sv.Price, Deposit: sv.Deposit}
	}
	return c.JSON(out)
}

type masterJSON struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	ServiceIDs []int64 `json:"service_ids"`
	// With service_id: what this master's client gets for it (the
	// master's own price and duration, else the service's).
	Price       *booking.Money `json:"price,omitempty"`
	DurationMin int            `json:"duration_min,omitempty"`
	StayMin     int            `json:"stay_min,omitempty"` // with service_id: the client's whole stay (as the service's)
	// The deposit a booking of it with this master asks (the service's).
	Deposit *booking.Money `json:"deposit,omitempty"`
}

func (h *Handler) listMasters(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	serviceID, err := queryID(c, "service_id")
	if err != nil {
		return err
	}
	list, err := h.svc.Masters(c.UserContext(), s.ID, serviceID)
	if err != nil {
		return err
	}
	var svc booking.SalonService
	if serviceID != 0 {
		services, err := h.svc.Services(c.UserContext(), s.ID)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(services, func(sv booking.SalonService) bool { return sv.ID == serviceID }); i >= 0 {
			svc = services[i]
		}
	}
	out := make([]masterJSON, len(list))
	for i, m := range list {
		out[i] = masterJSON{ID: m.ID, Name: m.Name, ServiceIDs: m.ServiceIDs}
		if o, ok := m.TermsOf(serviceID); ok {
			out[i].Price, out[i].DurationMin, out[i].StayMin, out[i].Deposit = &o.Price, o.DurationMin, svc.StayMin(o.DurationMin), &svc.Deposit
		}
		if out[i].ServiceIDs == nil {
			out[i].ServiceIDs = []int64{}
		}
	}
	return c.JSON(out)
}

// queryID reads an optional positive integer query parameter (0 when absent).
func queryID(c *fiber.Ctx, name string) (int64, error) {
	v := strings.TrimSpace(c.Query(name))
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, booking.Invalid(name, "must be a positive integer")
	}
	return id, nil
}
