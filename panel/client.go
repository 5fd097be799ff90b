package panel

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

type clientsData struct {
	Q       string
	Clients []clientRow
}

// clientRow is a client of the list, with their last visit and next
// booking as the salon's clock reads them.
type clientRow struct {
	booking.ClientSummary
	Last, Next string
}

// clients searches the salon's clients by name or phone.
func (h *Handler) clients(c *fiber.Ctx) error {
	q := strings.Clone(c.Query("q"))
	list, err := h.svc.SearchClients(c.UserContext(), user(c).SalonID, q)
	if err != nil {
		return err
	}
	l, loc := langOf(c), salonOf(c).Location()
	d := clientsData{Q: q, Clients: make([]clientRow, len(list))}
	for i, x := range list {
		d.Clients[i].ClientSummary = x
		if !x.LastAt.IsZero() {
			d.Clients[i].Last = l.Date(booking.DateOf(x.LastAt.In(loc)))
		}
		if !x.NextAt.IsZero() {
			d.Clients[i].Next = l.DateTime(x.NextAt.In(loc))
		}
	}
	return h.render(c, "clients", l.T("Clients"), d)
}

type clientData struct {
	Client   *booking.Client
	Channels *booking.ClientChannels
	Bookings []booking.View
	Packages []balanceRow
	NoShows  int
	Error    string
	Fields   map[string]string
}

func (h *Handler) clientPage(c *fiber.Ctx) error { return h.showClient(c, &clientData{}) }

func (h *Handler) showClient(c *fiber.Ctx, d *clientData) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	cl, err := h.svc.Client(c.UserContext(), u.SalonID, id)
	if err != nil {
		return err
	}
	if d.Client == nil {
		d.Client = cl
	}
	if d.Bookings, err = h.svc.ClientBookings(c.UserContext(), u.SalonID, id); err != nil {
		return err
	}
	if d.Channels, err = h.svc.ChannelsOf(c.UserContext(), u.SalonID, id); err != nil {
		return err
	}
	packages, err := h.svc.ClientPackages(c.UserContext(), u.SalonID, id)
	if err != nil {
		return err
	}
	if d.Packages, err = h.balanceRows(c, packages); err != nil {
		return err
	}
	for _, b := range d.Bookings {
		if b.Status == booking.StatusNoShow {
			d.NoShows++
		}
	}
	name := cl.Name
	if name == "" {
		name = cl.Phone
	}
	return h.render(c, "client", name, d)
}

// updateClient saves a client's name and notes.
func (h *Handler) updateClient(c *fiber.Ctx) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	name, notes := strings.Clone(c.FormValue("name")), strings.Clone(c.FormValue("notes"))
	if _, err := h.svc.UpdateClient(c.UserContext(), u.SalonID, id, name, notes); err != nil {
		d := &clientData{}
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		cl, gerr := h.svc.Client(c.UserContext(), u.SalonID, id)
		if gerr != nil {
			return gerr
		}
		cl.Name, cl.Notes = name, notes
		d.Client = cl
		return h.showClient(c, d)
	}
	return done(c, fmt.Sprintf("/panel/clients/%d", id), "saved")
}

// fieldError turns invalid fields and conflicts into what a form shows,
// setting the status; false for errors that are pages of their own.
func (h *Handler) fieldError(c *fiber.Ctx, err error, msg *string, fields *map[string]string) bool {
	var taken bool
	var alts []altChoice
	return h.formError(c, err, msg, fields, &taken, &alts)
}

// exportClient downloads everything stored about the client (owners).
func (h *Handler) exportClient(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	rec, err := h.svc.ExportClient(c.UserContext(), user(c).SalonID, "", id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="client-%d.json"`, id))
	return c.JSON(rec)
}

// eraseClient erases the client's personal data (owners).
func (h *Handler) eraseClient(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.EraseClient(c.UserContext(), user(c).SalonID, "", id); err != nil {
		return err
	}
	return done(c, fmt.Sprintf("/panel/clients/%d", id), "erased")
}

// setChannels stops or restarts SMS and e-mail to the client, as they
// asked the salon.
func (h *Handler) setChannels(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetClientChannels(c.UserContext(), user(c).SalonID, id, c.FormValue("no_sms") != "", c.FormValue("no_email") != ""); err != nil {
		return err
	}
	return done(c, fmt.Sprintf("/panel/clients/%d", id), "saved")
}
