package panel

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

type mastersData struct {
	Masters  []booking.Master
	Services map[int64]string
	Error    string
	Fields   map[string]string
	Name     string
	Phone    string
	Today    string
}

func (h *Handler) masters(c *fiber.Ctx) error { return h.showMasters(c, &mastersData{}) }

func (h *Handler) showMasters(c *fiber.Ctx, d *mastersData) error {
	u := user(c)
	var err error
	if d.Masters, err = h.svc.AllMasters(c.UserContext(), u.SalonID); err != nil {
		return err
	}
	svcs, err := h.svc.AllServices(c.UserContext(), u.SalonID)
	if err != nil {
		return err
	}
	d.Today = salonOf(c).Today(h.svc.Now()).String()
	d.Services = map[int64]string{}
	for _, s := range svcs {
		d.Services[s.ID] = s.Name
	}
	return h.render(c, "masters", langOf(c).T("Masters"), d)
}

func (h *Handler) createMaster(c *fiber.Ctx) error {
	u := user(c)
	d := &mastersData{Name: strings.Clone(c.FormValue("name")), Phone: strings.Clone(c.FormValue("phone"))}
	// A new master does every service the salon offers; the owner unticks
	// what they do not.
	services, err := h.svc.Services(c.UserContext(), u.SalonID)
	if err != nil {
		return err
	}
	var offers []booking.Offer
	for _, sv := range services {
		if sv.Active {
			offers = append(offers, booking.Offer{ServiceID: sv.ID})
		}
	}
	m, err := h.svc.CreateMaster(c.UserContext(), u.SalonID, booking.Master{Name: d.Name, Phone: d.Phone}, offers...)
	if err != nil {
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showMasters(c, d)
	}
	return done(c, fmt.Sprintf("/panel/masters/%d", m.ID), "saved")
}

type offerRow struct {
	Service  booking.SalonService
	Does     bool
	Duration string
	Price    string
}

type masterData struct {
	Calendar    bool   // the master has a calendar feed
	CalendarURL string // shown once, when made
	M           *booking.MasterDetail
	Offers      []offerRow
	Days        []shiftDay
	Code        string
	CodeUntil   string
	Today       string
	Week        []weekdayRow
	From, To    string
	Day         dayForm // the "edit a day" form, as typed (its date: today when empty)
	Error       string
	Fields      map[string]string
	Lost        []lostRow
}

type shiftDay struct {
	Date   string
	Label  string
	Shifts string
}

// dayForm is the form that sets one day's shift.
type dayForm struct {
	Date, Start, End, BS, BE string
	Next                     bool // the shift ends the next day
}

type weekdayRow struct {
	Day                int // time.Weekday
	Start, End, BS, BE string
	Next               bool // the shift ends the next day
}

type lostRow struct {
	ID              int64
	When            string
	Service, Client string
}

func (h *Handler) masterPage(c *fiber.Ctx) error { return h.showMaster(c, &masterData{}) }

func (h *Handler) showMaster(c *fiber.Ctx, d *masterData) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if d.M, err = h.svc.MasterByID(ctx, u.SalonID, id); err != nil {
		return err
	}
	if d.Calendar, err = h.svc.HasCalendar(ctx, u.SalonID, id); err != nil {
		return err
	}
	svcs, err := h.svc.AllServices(ctx, u.SalonID)
	if err != nil {
		return err
	}
	terms := map[int64]booking.Offer{}
	for _, o := range d.M.Offers {
		terms[o.ServiceID] = o
	}
	for _, s := range svcs {
		o, does := terms[s.ID]
		r := offerRow{Service: s, Does: does}
		if o.DurationMin > 0 {
			r.Duration = strconv.Itoa(o.DurationMin)
		}
		if o.Price > 0 {
			r.Price = o.Price.String()
		}
		d.Offers = append(d.Offers, r)
	}
	s := salonOf(c)
	today := s.Today(h.svc.Now())
	d.Today = today.String()
	shifts, err := h.svc.Shifts(ctx, u.SalonID, id, today, 14)
	if err != nil {
		return err
	}
	l := langOf(c)
	for k := range 14 {
		day := today.AddDays(k)
		var of []booking.Shift
		for _, sh := range shifts {
			if sh.Date == day {
				of = append(of, sh)
			}
		}
		d.Days = append(d.Days, shiftDay{Date: day.String(), Label: longDate(day, l), Shifts: shiftText(of, s.Location(), l)})
	}
	if d.Week == nil {
		// The template as the coming week has it (a template applied
		// reads back as it was, not as an empty form).
		loc := s.Location()
		for _, wd := range []int{1, 2, 3, 4, 5, 6, 0} {
			r := weekdayRow{Day: wd}
			for _, sh := range shifts {
				if int(sh.Date.Start(time.UTC).Weekday()) != wd || !sh.Date.Before(today.AddDays(7)) || sh.Date.Before(today) {
					continue
				}
				r.Start, r.End, r.Next = sh.Start.In(loc).Format("15:04"), sh.End.In(loc).Format("15:04"), sh.EndClock(loc) > 24*60
				if !sh.BreakStart.IsZero() {
					r.BS, r.BE = sh.BreakStart.In(loc).Format("15:04"), sh.BreakEnd.In(loc).Format("15:04")
				}
				break
			}
			d.Week = append(d.Week, r)
		}
	}
	if d.From == "" {
		d.From, d.To = today.String(), today.AddDays(27).String()
	}
	return h.render(c, "master", d.M.Name, d)
}

func (h *Handler) updateMaster(c *fiber.Ctx) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	_, err = h.svc.UpdateMaster(c.UserContext(), u.SalonID, booking.Master{ID: id, Name: c.FormValue("name"),
		Phone: c.FormValue("phone"), Active: c.FormValue("active") != ""})
	return h.afterMasterChange(c, id, err)
}

func (h *Handler) afterMasterChange(c *fiber.Ctx, id int64, err error) error {
	return h.afterMasterForm(c, id, &masterData{}, err)
}

// afterMasterForm answers a change on the master's page: back to the page
// when it worked; else the page again with the form's data d and the
// error (the bookings a schedule change would leave outside working hours,
// or the invalid fields).
func (h *Handler) afterMasterForm(c *fiber.Ctx, id int64, d *masterData, err error) error {
	if err == nil {
		return done(c, fmt.Sprintf("/panel/masters/%d", id), "saved")
	}
	var lb *booking.LostBookingsError
	if errors.As(err, &lb) {
		loc, l := salonOf(c).Location(), langOf(c)
		for _, b := range lb.Bookings {
			d.Lost = append(d.Lost, lostRow{ID: b.ID, When: l.DateTime(b.StartsAt.In(loc)), Service: b.Service, Client: b.Client})
		}
		c.Status(fiber.StatusConflict)
		return h.showMaster(c, d)
	}
	if !h.fieldError(c, err, &d.Error, &d.Fields) {
		return err
	}
	return h.showMaster(c, d)
}

// setOffers saves which services the master does, with their own terms.
func (h *Handler) setOffers(c *fiber.Ctx) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	var offers []booking.Offer
	fe := map[string]i18n.Text{}
	// The services' names label what is refused: read only then.
	var names map[int64]string
	name := func(sid int64) string {
		if names == nil {
			names = map[int64]string{}
			if list, err := h.svc.Services(c.UserContext(), u.SalonID); err == nil {
				for _, sv := range list {
					names[sv.ID] = sv.Name
				}
			}
		}
		return names[sid]
	}
	c.Request().PostArgs().VisitAll(func(k, v []byte) {
		key := string(k)
		if !strings.HasPrefix(key, "does_") {
			return
		}
		sid, perr := strconv.ParseInt(strings.TrimPrefix(key, "does_"), 10, 64)
		if perr != nil {
			return
		}
		o := booking.Offer{ServiceID: sid}
		if s := strings.TrimSpace(c.FormValue(fmt.Sprintf("dur_%d", sid))); s != "" {
			if o.DurationMin, perr = strconv.Atoi(s); perr != nil {
				fe[name(sid)+" duration_min"] = i18n.New("not a whole number of minutes")
			}
		}
		if s := strings.TrimSpace(c.FormValue(fmt.Sprintf("price_%d", sid))); s != "" {
			if o.Price, perr = booking.ParseMoneyIn(s, salonOf(c).Currency); perr != nil {
				fe[name(sid)+" price"] = i18n.Of(perr)
			}
		}
		offers = append(offers, o)
	})
	if len(fe) > 0 {
		c.Status(fiber.StatusUnprocessableEntity)
		l := langOf(c)
		return h.showMaster(c, &masterData{Error: l.T("Some fields are invalid."), Fields: l.Fields(fe)})
	}
	err = h.svc.SetOffers(c.UserContext(), u.SalonID, id, offers)
	return h.afterMasterChange(c, id, err)
}

// linkCode makes a one-time code the master sends to the bot.
func (h *Handler) linkCode(c *fiber.Ctx) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	code, until, err := h.svc.NewLinkCode(c.UserContext(), u.SalonID, id)
	if err != nil {
		return err
	}
	return h.showMaster(c, &masterData{Code: code, CodeUntil: until.In(salonOf(c).Location()).Format("2006-01-02 15:04")})
}

// newCalendar makes (or replaces) the master's calendar link and shows it
// once.
func (h *Handler) newCalendar(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	token, err := h.svc.NewCalendarToken(c.UserContext(), user(c).SalonID, id)
	if err != nil {
		return err
	}
	base := h.cfg.PublicURL
	if base == "" {
		base = c.BaseURL()
	}
	return h.showMaster(c, &masterData{CalendarURL: strings.TrimRight(base, "/") + "/calendar/" + token + ".ics"})
}

// revokeCalendar ends the master's calendar link.
func (h *Handler) revokeCalendar(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.RevokeCalendar(c.UserContext(), user(c).SalonID, id); err != nil {
		return err
	}
	return done(c, fmt.Sprintf("/panel/masters/%d", id), "saved")
}

// setShifts replaces the master's shifts on one day (no start: a day off).
// A refusal shows the form again as it was typed, naming the field.
func (h *Handler) setShifts(c *fiber.Ctx) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	f := dayForm{Date: strings.Clone(c.FormValue("date")), Start: strings.Clone(c.FormValue("start")), End: strings.Clone(c.FormValue("end")),
		BS: strings.Clone(c.FormValue("break_start")), BE: strings.Clone(c.FormValue("break_end")), Next: c.FormValue("next_day") != ""}
	d := &masterData{Day: f}
	day, derr := booking.ParseDate(strings.TrimSpace(f.Date))
	in, field, ferr := shiftInput(f.Start, f.End, f.BS, f.BE, f.Next)
	if derr != nil || ferr != nil {
		if _, err := h.svc.MasterByID(c.UserContext(), u.SalonID, id); err != nil {
			return err
		}
		fe := map[string]i18n.Text{}
		if derr != nil {
			fe["date"] = i18n.Of(derr)
		}
		if ferr != nil {
			fe[field] = i18n.Of(ferr)
		}
		c.Status(fiber.StatusUnprocessableEntity)
		l := langOf(c)
		d.Error, d.Fields = l.T("Some fields are invalid."), l.Fields(fe)
		return h.showMaster(c, d)
	}
	return h.afterMasterForm(c, id, d, h.svc.SetShifts(c.UserContext(), u.SalonID, id, day, in))
}

// shiftInput reads one shift; an empty start and end is no shift (a day
// off). A shift past midnight is asked for explicitly: next (the "ends the
// next day" box) or an end written +02:00 or 26:00; else an end before the
// start is refused, pointing at the box. An error names its field (start,
// end, break_start, break_end).
func shiftInput(start, end, bs, be string, next bool) ([]booking.ShiftInput, string, error) {
	if strings.TrimSpace(start) == "" && strings.TrimSpace(end) == "" {
		if strings.TrimSpace(bs) != "" || strings.TrimSpace(be) != "" {
			return nil, "start", i18n.New("required")
		}
		return nil, "", nil
	}
	var in booking.ShiftInput
	read := func(s string, parse func(string) (booking.Clock, error), to *booking.Clock) error {
		if strings.TrimSpace(s) == "" {
			return i18n.New("required")
		}
		c, err := parse(s)
		*to = c
		return err
	}
	if err := read(start, booking.ParseClock, &in.Start); err != nil {
		return nil, "start", err
	}
	if err := read(end, booking.ParseShiftEnd, &in.End); err != nil {
		return nil, "end", err
	}
	switch {
	case next && in.End <= 24*60:
		in.End += 24 * 60
	case in.End < in.Start:
		// (The core's words name the CSV's +02:00; the form has a box.)
		return nil, "end", i18n.New("shift %s-%s ends before it starts: for a night shift, tick “Ends the next day”", in.Start, in.End)
	}
	if strings.TrimSpace(bs) != "" || strings.TrimSpace(be) != "" {
		if err := read(bs, booking.ParseShiftEnd, &in.BreakStart); err != nil {
			return nil, "break_start", err
		}
		if err := read(be, booking.ParseShiftEnd, &in.BreakEnd); err != nil {
			return nil, "break_end", err
		}
	}
	return []booking.ShiftInput{in}, "", nil
}

// applyTemplate sets a weekly template on a date range, all or nothing.
func (h *Handler) applyTemplate(c *fiber.Ctx) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	d := &masterData{From: strings.Clone(c.FormValue("from")), To: strings.Clone(c.FormValue("to"))}
	var week [7][]booking.ShiftInput
	fe := map[string]i18n.Text{}
	l := langOf(c)
	for _, wd := range []int{1, 2, 3, 4, 5, 6, 0} {
		r := weekdayRow{Day: wd, Start: strings.Clone(c.FormValue(fmt.Sprintf("start_%d", wd))),
			End: strings.Clone(c.FormValue(fmt.Sprintf("end_%d", wd))), BS: strings.Clone(c.FormValue(fmt.Sprintf("bs_%d", wd))),
			BE: strings.Clone(c.FormValue(fmt.Sprintf("be_%d", wd))), Next: c.FormValue(fmt.Sprintf("next_%d", wd)) != ""}
		d.Week = append(d.Week, r)
		in, field, err := shiftInput(r.Start, r.End, r.BS, r.BE, r.Next)
		if err != nil {
			fe[l.Weekday(wd)+" "+field] = i18n.Of(err)
		}
		week[wd] = in
	}
	from, err1 := booking.ParseDate(strings.TrimSpace(d.From))
	to, err2 := booking.ParseDate(strings.TrimSpace(d.To))
	if err1 != nil {
		fe["from"] = i18n.Of(err1)
	}
	if err2 != nil {
		fe["to"] = i18n.Of(err2)
	}
	if len(fe) > 0 {
		if _, err := h.svc.MasterByID(c.UserContext(), u.SalonID, id); err != nil {
			return err
		}
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = l.T("Some fields are invalid."), l.Fields(fe)
		return h.showMaster(c, d)
	}
	if c.FormValue("all_masters") != "" {
		// The salon's hours, copied to every active master at once.
		err := h.svc.ApplyWeekToAll(c.UserContext(), u.SalonID, from, to, week)
		if err == nil {
			return done(c, "/panel/masters", "saved")
		}
		return h.afterMasterForm(c, id, d, err)
	}
	return h.afterMasterForm(c, id, d, h.svc.ApplyWeek(c.UserContext(), u.SalonID, id, from, to, week))
}

type servicesData struct {
	Services []booking.SalonService
	Form     serviceForm
	Error    string
	Fields   map[string]string
	Currency string
	// Unserved: the active services no active master does (clients are
	// not offered them).
	Unserved map[int64]bool
}

type serviceForm struct {
	ID                                     int64
	Name, Duration, Buffer, Price, Deposit string
	Processing, Finish                     string
	Active                                 bool
}

func (h *Handler) services(c *fiber.Ctx) error {
	return h.showServices(c, &servicesData{Form: serviceForm{Duration: "60", Buffer: "0", Price: "0", Deposit: "0", Processing: "0",
		Finish: "0", Active: true}})
}

func (h *Handler) showServices(c *fiber.Ctx, d *servicesData) error {
	var err error
	if d.Services, err = h.svc.AllServices(c.UserContext(), user(c).SalonID); err != nil {
		return err
	}
	d.Currency = salonOf(c).Currency
	masters, err := h.svc.Masters(c.UserContext(), user(c).SalonID, 0)
	if err != nil {
		return err
	}
	ranges := booking.TermRanges(masters)
	d.Unserved = map[int64]bool{}
	for _, sv := range d.Services {
		if _, ok := ranges[sv.ID]; !ok && sv.Active {
			d.Unserved[sv.ID] = true
		}
	}
	return h.render(c, "services", langOf(c).T("Services"), d)
}

// serviceFromForm reads the service form.
func serviceFromForm(c *fiber.Ctx) (serviceForm, booking.SalonService, map[string]i18n.Text) {
	f := serviceForm{Name: strings.Clone(c.FormValue("name")), Duration: strings.Clone(c.FormValue("duration")),
		Buffer: strings.Clone(c.FormValue("buffer")), Price: strings.Clone(c.FormValue("price")),
		Deposit: strings.Clone(c.FormValue("deposit")), Active: c.FormValue("active") != "",
		Processing: strings.Clone(c.FormValue("processing")), Finish: strings.Clone(c.FormValue("finish"))}
	fe := map[string]i18n.Text{}
	sv := booking.SalonService{Name: f.Name, Active: f.Active}
	var err error
	if sv.DurationMin, err = strconv.Atoi(strings.TrimSpace(f.Duration)); err != nil {
		fe["duration_min"] = i18n.New("not a whole number of minutes")
	}
	for _, m := range []struct {
		in    string
		field string
		out   *int
	}{{f.Buffer, "buffer_min", &sv.BufferMin}, {f.Processing, "processing_min", &sv.ProcessingMin}, {f.Finish, "finish_min", &sv.FinishMin}} {
		if strings.TrimSpace(m.in) != "" {
			if *m.out, err = strconv.Atoi(strings.TrimSpace(m.in)); err != nil {
				fe[m.field] = i18n.New("not a whole number of minutes")
			}
		}
	}
	money := func(field, s string) booking.Money {
		if strings.TrimSpace(s) == "" {
			return 0
		}
		m, err := booking.ParseMoneyIn(s, salonOf(c).Currency)
		if err != nil {
			fe[field] = i18n.Of(err)
		}
		return m
	}
	sv.Price, sv.Deposit = money("price", f.Price), money("deposit", f.Deposit)
	if len(fe) > 0 {
		// Every field at fault at once: the core's reasons for the
		// others too (but of what hangs on a field not read: a deposit
		// over a price, a finish after a processing time).
		after := map[string]string{"deposit": "price", "finish_min": "processing_min"}
		var ve *booking.ValidationError
		if errors.As(sv.Check(), &ve) {
			for k, why := range ve.Fields {
				_, read := fe[k]
				_, unread := fe[after[k]]
				if !read && !unread {
					fe[k] = why
				}
			}
		}
	}
	return f, sv, fe
}

func (h *Handler) createService(c *fiber.Ctx) error {
	f, sv, fe := serviceFromForm(c)
	d := &servicesData{Form: f}
	if len(fe) > 0 {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = langOf(c).T("Some fields are invalid."), titled(langOf(c).Fields(fe), langOf(c))
		return h.showServices(c, d)
	}
	if _, err := h.svc.CreateService(c.UserContext(), user(c).SalonID, sv); err != nil {
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		titled(d.Fields, langOf(c))
		return h.showServices(c, d)
	}
	return done(c, "/panel/services", "saved")
}

type serviceData struct {
	Form   serviceForm
	Error  string
	Fields map[string]string
	// Others are the salon's other active services; Together marks those
	// done at once with this one (by two masters, one client).
	Others   []booking.SalonService
	Together map[int64]bool
}

func (h *Handler) servicePage(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	sv, err := h.svc.ServiceByID(c.UserContext(), user(c).SalonID, id)
	if err != nil {
		return err
	}
	f := serviceForm{ID: sv.ID, Name: sv.Name, Duration: strconv.Itoa(sv.DurationMin), Buffer: strconv.Itoa(sv.BufferMin),
		Price: sv.Price.String(), Deposit: sv.Deposit.String(), Active: sv.Active, Processing: strconv.Itoa(sv.ProcessingMin),
		Finish: strconv.Itoa(sv.FinishMin)}
	d := serviceData{Form: f}
	if err := h.togetherOf(c, &d); err != nil {
		return err
	}
	return h.render(c, "service", sv.Name, d)
}

// togetherOf fills in the services done at once with d's.
func (h *Handler) togetherOf(c *fiber.Ctx, d *serviceData) error {
	ctx, salonID := c.UserContext(), user(c).SalonID
	all, err := h.svc.Services(ctx, salonID)
	if err != nil {
		return err
	}
	for _, sv := range all {
		if sv.ID != d.Form.ID {
			d.Others = append(d.Others, sv)
		}
	}
	ids, err := h.svc.TogetherWith(ctx, salonID, d.Form.ID)
	if err != nil {
		return err
	}
	d.Together = map[int64]bool{}
	for _, id := range ids {
		d.Together[id] = true
	}
	return nil
}

// setTogether saves which services are done at once with this one: each
// other service checked is, each unchecked is not.
func (h *Handler) setTogether(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetTogether(c.UserContext(), user(c).SalonID, id, formIDs(c, "with", maxFormServices)); err != nil {
		return err
	}
	return done(c, fmt.Sprintf("/panel/services/%d", id), "saved")
}

func (h *Handler) updateService(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.ServiceByID(c.UserContext(), user(c).SalonID, id); err != nil {
		return err
	}
	f, sv, fe := serviceFromForm(c)
	f.ID, sv.ID = id, id
	d := serviceData{Form: f}
	if len(fe) == 0 {
		_, err = h.svc.UpdateService(c.UserContext(), user(c).SalonID, sv)
		if err == nil {
			return done(c, "/panel/services", "saved")
		}
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
	} else {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = langOf(c).T("Some fields are invalid."), langOf(c).Fields(fe)
	}
	titled(d.Fields, langOf(c))
	if err := h.togetherOf(c, &d); err != nil {
		return err
	}
	return h.render(c, "service", f.Name, d)
}

// titled names a service's name in its refused fields by the form's
// label, "Title" ("Название": a service has no "Имя"), as the core calls
// it name. It returns fields.
func titled(fields map[string]string, l *lang) map[string]string {
	if why, ok := fields[l.Field("name")]; ok {
		delete(fields, l.Field("name"))
		fields[l.T("Title")] = why
	}
	return fields
}
