package panel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// The waiting list: each day's entries, who was offered what, adding a
// caller, offering a time by hand, and the fill rate.

type waitRow struct {
	ID       int64
	Joined   string
	Client   string
	Phone    string
	What     string // the services, with their masters
	Days     string
	Hours    string
	Status   string
	Waiting  bool
	MasterID int64            // the first service's master (0: any)
	Masters  []booking.Master // who can be offered: those who do the first service
	Offers   []waitOfferRow
}

type waitOfferRow struct {
	When, Master, Status string
	BookingID            int64
}

type waitlistData struct {
	Date     string
	Rows     []waitRow
	Masters  []booking.Master
	Services []booking.SalonService
	Fill     *booking.WaitlistFill
	Rate     string
	Form     waitForm
	Error    string
	Fields   map[string]string
}

type waitForm struct {
	ServiceID, MasterID          int64
	From, To, Phone, Name, Email string
	OfferEntry                   int64 // the entry whose offer failed
	OfferMaster                  int64
	OfferTime                    string
}

// waitlist shows the day's waiting list (?date, else today).
func (h *Handler) waitlist(c *fiber.Ctx) error {
	s := salonOf(c)
	day := s.Today(h.svc.Now())
	if q := c.Query("date"); q != "" {
		d, err := booking.ParseDate(q)
		if err != nil {
			return errNoPage
		}
		day = d
	}
	return h.showWaitlist(c, day, &waitlistData{Form: waitForm{From: day.String(), To: day.AddDays(6).String()}})
}

func (h *Handler) showWaitlist(c *fiber.Ctx, day booking.Date, d *waitlistData) error {
	ctx, s, l := c.UserContext(), salonOf(c), langOf(c)
	rows, err := h.svc.WaitlistOn(ctx, s.ID, day)
	if err != nil {
		return err
	}
	if d.Masters, err = h.svc.Masters(ctx, s.ID, 0); err != nil {
		return err
	}
	if d.Services, err = h.svc.Services(ctx, s.ID); err != nil {
		return err
	}
	if d.Fill, err = h.svc.WaitlistFillOf(ctx, s.ID); err != nil {
		return err
	}
	d.Rate = fmt.Sprintf("%.0f%%", d.Fill.Rate()*100)
	names, _ := h.masterNames(c)
	services := map[int64]string{}
	for _, sv := range d.Services {
		services[sv.ID] = sv.Name
	}
	loc, now := s.Location(), h.svc.Now()
	d.Date = day.String()
	for _, r := range rows {
		var what []string
		for _, it := range r.Items {
			master := l.T("any master")
			if it.MasterID != 0 {
				master = names[it.MasterID]
			}
			what = append(what, services[it.ServiceID]+" ("+master+")")
		}
		var hours []string
		for _, w := range r.Times {
			from, to := w.From.String(), w.To.String()
			switch {
			case from == "00:00" && (to == "24:00" || to == "23:59"):
			case from == "00:00":
				hours = append(hours, l.T("until %s", to)) // (the widget's "morning")
			case to == "24:00" || to == "23:59":
				hours = append(hours, l.T("after %s", from))
			default:
				hours = append(hours, from+"–"+to)
			}
		}
		days := l.Day(r.From)
		if r.To != r.From {
			days += "–" + l.Day(r.To)
		}
		row := waitRow{ID: r.ID, Joined: l.When(r.CreatedAt.In(loc), now), Client: r.ClientName, Phone: booking.DisplayPhone(r.Phone),
			What: strings.Join(what, " + "), Days: days, Hours: strings.Join(hours, ", "),
			Status: l.T(r.Status), Waiting: r.Status == booking.WaitWaiting, MasterID: r.MasterID}
		for _, m := range d.Masters {
			if len(r.Items) == 0 || slices.Contains(m.ServiceIDs, r.Items[0].ServiceID) {
				row.Masters = append(row.Masters, m)
			}
		}
		if row.Hours == "" {
			row.Hours = l.T("any time")
		}
		for _, o := range r.Offers {
			st := l.T(o.Status)
			if o.Status == booking.OfferHeld {
				st += " " + l.T("until %s", i18n.Clock(o.ExpiresAt.In(loc)))
			}
			row.Offers = append(row.Offers, waitOfferRow{When: l.When(o.Start.In(loc), now), Master: names[o.MasterID], Status: st,
				BookingID: o.BookingID})
		}
		d.Rows = append(d.Rows, row)
	}
	return h.render(c, "waitlist", l.T("Waiting list"), d)
}

// joinWaitlist adds a caller to the waiting list.
func (h *Handler) joinWaitlist(c *fiber.Ctx) error {
	s := salonOf(c)
	f := waitForm{From: strings.Clone(c.FormValue("from")), To: strings.Clone(c.FormValue("to")),
		Phone: strings.Clone(c.FormValue("phone")), Name: strings.Clone(c.FormValue("name")),
		Email: strings.Clone(strings.TrimSpace(c.FormValue("email")))}
	f.ServiceID, _ = strconv.ParseInt(c.FormValue("service"), 10, 64)
	f.MasterID, _ = strconv.ParseInt(c.FormValue("master"), 10, 64)
	d := &waitlistData{Form: f}
	fields := map[string]i18n.Text{}
	from, err := booking.ParseDate(strings.TrimSpace(f.From))
	if err != nil {
		fields["from_date"] = i18n.Of(err)
	}
	to, err := booking.ParseDate(strings.TrimSpace(f.To))
	if err != nil {
		fields["to_date"] = i18n.Of(err)
	}
	day := s.Today(h.svc.Now())
	if !from.IsZero() {
		day = from
	}
	if len(fields) == 0 {
		_, err = h.svc.JoinWaitlist(c.UserContext(), booking.WaitRequest{SalonID: s.ID, ServiceID: f.ServiceID, MasterID: f.MasterID,
			From: from, To: to, Client: booking.ClientInput{Name: f.Name, Phone: f.Phone, Email: f.Email}})
		return h.waitlistDone(c, day, d, err, "waitlisted")
	}
	return h.waitlistInvalid(c, day, d, fields)
}

// waitlistDone answers a change of the waiting list: back to the day's
// list with a notice, or the list with why it was refused.
func (h *Handler) waitlistDone(c *fiber.Ctx, day booking.Date, d *waitlistData, err error, notice string) error {
	if err == nil {
		return done(c, "/panel/waitlist?date="+day.String(), notice)
	}
	var taken bool
	var alts []altChoice
	if !h.formError(c, err, &d.Error, &d.Fields, &taken, &alts) {
		return err
	}
	return h.showWaitlist(c, day, d)
}

// waitlistInvalid shows the list with the fields a form got wrong.
func (h *Handler) waitlistInvalid(c *fiber.Ctx, day booking.Date, d *waitlistData, fields map[string]i18n.Text) error {
	c.Status(fiber.StatusUnprocessableEntity)
	d.Error, d.Fields = langOf(c).T("Some fields are invalid."), langOf(c).Fields(fields)
	return h.showWaitlist(c, day, d)
}

// offerWaitlist offers a time of a master to one entry, by hand.
func (h *Handler) offerWaitlist(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	s := salonOf(c)
	date, clock := strings.Clone(c.FormValue("date")), strings.Clone(c.FormValue("time"))
	master, _ := strconv.ParseInt(c.FormValue("master"), 10, 64)
	day, _ := booking.ParseDate(date)
	if day.IsZero() {
		day = s.Today(h.svc.Now())
	}
	d := &waitlistData{Form: waitForm{From: day.String(), To: day.AddDays(6).String(), OfferEntry: id, OfferMaster: master, OfferTime: clock}}
	at, ferr := localTime(s, date, clock, false)
	if ferr != nil {
		return h.waitlistInvalid(c, day, d, map[string]i18n.Text{"time": i18n.Of(ferr)})
	}
	_, err = h.svc.OfferTime(c.UserContext(), id, master, at)
	return h.waitlistDone(c, day, d, err, "offered")
}

// leaveWaitlist takes an entry off the list (the client called to say so).
func (h *Handler) leaveWaitlist(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.LeaveWaitlist(c.UserContext(), id); err != nil {
		return err
	}
	day := strings.Clone(c.FormValue("date"))
	if _, err := booking.ParseDate(day); err != nil {
		day = salonOf(c).Today(h.svc.Now()).String()
	}
	return done(c, "/panel/waitlist?date="+day, "removed")
}
