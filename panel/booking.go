package panel

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// bookingForm is the new-booking form, as shown and as posted.
type bookingForm struct {
	MasterID  int64
	ServiceID int64
	Date      string // YYYY-MM-DD
	Time      string // HH:MM
	Phone     string
	Name      string
	Email     string
	Notes     string
	Key       string // idempotency key: a double submit books once
	// Again: the time is the second the clock shows it (the hour
	// repeated when DST ends), as a free cell of that hour asks.
	Again bool
	// Online: the client is asked to pay the service's deposit online (a
	// link by their channels); else it is paid in the salon. OnlinePay:
	// deposits are taken online at all.
	Online    bool
	OnlinePay bool
	Masters   []booking.Master
	Services  []booking.SalonService
	// More are the visit's services after the first (two rows, empty
	// ones ignored), from AllServices, with a master or any (0).
	More        []visitPick
	AllServices []booking.SalonService
	Error       string
	Fields      map[string]string
	Taken       bool
	Alts        []altChoice
	Durations   map[int64]string // by service: the chosen master's minutes, else 60 or 45–90 when masters differ
	Prices      map[int64]string // by service: the chosen master's price, else the least to the most ("" when free)
	Terms       map[int64]string // by service: each master's minutes and price, "masterID=min=price|...", for the script
	Known       *booking.Client  // the client of the phone typed, when the salon knows them
	Swap        bool             // an htmx answer that also fills in the known client's name
	// PayBalance is the known client's package the booking is paid with
	// (0: none), one of Packages, theirs for the services on the date;
	// PayCode, a package's or a certificate's code typed instead.
	PayBalance int64
	PayCode    string
	Packages   []packageChoice
	Fragment   bool // an htmx answer: the packages are swapped in out of band
	// SameDay are the known client's bookings on the form's date, as
	// lines ("10:30–11:30 Colour, Anna"): a second one at the same time
	// is the desk's to notice (services done at once are a visit's).
	SameDay []string
	// NameAuto is the name the form filled in from a known client's
	// phone (not typed): a phone changed after it fills in its own, or
	// none.
	NameAuto string
}

// payWith is what the form pays the booking with (nil: nothing, paid in
// the salon as usual). Both a package and a code: the code's field says
// to choose one.
func (f *bookingForm) payWith() (*booking.PayWith, error) {
	switch {
	case f.PayCode != "" && f.PayBalance != 0:
		return nil, booking.Invalid("pay_with", "choose the client's package or type a code, not both")
	case f.PayCode != "":
		return &booking.PayWith{Code: f.PayCode}, nil // (the code says its kind)
	case f.PayBalance != 0:
		return &booking.PayWith{Kind: booking.BalancePackage, BalanceID: f.PayBalance}, nil
	}
	return nil, nil
}

// services are the services the form books, the first and the visit's
// further ones.
func (f *bookingForm) services() []int64 {
	out := []int64{f.ServiceID}
	for _, p := range f.More {
		out = append(out, p.Service)
	}
	return out
}

// packages fills in the known client's packages for the form's services
// on its date (today's when it has none yet), and their bookings that day.
func (h *Handler) packages(c *fiber.Ctx, f *bookingForm) error {
	if f.Known == nil {
		return nil
	}
	s := salonOf(c)
	day, err := booking.ParseDate(strings.TrimSpace(f.Date))
	if err != nil {
		day = s.Today(h.svc.Now())
	}
	if f.Packages, err = h.packageChoices(c, f.Known.ID, day, f.services()); err != nil {
		return err
	}
	loc := s.Location()
	list, err := h.svc.ClientBookingsOn(c.UserContext(), s.ID, f.Known.ID, day.Start(loc), day.AddDays(1).Start(loc))
	if err != nil {
		return err
	}
	// (A visit's services and masters by id, read for the first visit.)
	var services, masters map[int64]string
	for i := len(list) - 1; i >= 0; i-- { // (latest first: the day's in order)
		v := &list[i]
		if !v.Status.Active() {
			continue
		}
		what := v.ServiceName + ", " + v.MasterName
		if len(v.Segments) > 1 {
			if services == nil {
				if services, err = h.allServiceNames(c); err != nil {
					return err
				}
				if masters, err = h.masterNames(c); err != nil {
					return err
				}
			}
			parts := make([]string, len(v.Segments))
			for j, sg := range v.Segments {
				parts[j] = services[sg.ServiceID] + " (" + masters[sg.MasterID] + ")"
			}
			what = strings.Join(parts, " + ")
		}
		f.SameDay = append(f.SameDay, fmt.Sprintf("%s–%s %s", wallClock(v.StartsAt, loc), wallClock(booking.VisitEnd(&v.Booking), loc), what))
	}
	return nil
}

// allServiceNames are the names of the salon's services, archived ones
// too, by id.
func (h *Handler) allServiceNames(c *fiber.Ctx) (map[int64]string, error) {
	list, err := h.svc.AllServices(c.UserContext(), user(c).SalonID)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(list))
	for _, sv := range list {
		out[sv.ID] = sv.Name
	}
	return out, nil
}

// altChoice is a free time offered instead of a taken one, as a one-click
// form.
type altChoice struct {
	MasterID int64
	Master   string
	Date     string
	Time     string
	Label    string
	Action   string  // where the choice posts
	Fields   []field // what it posts (the CSRF token besides)
	items    []field // a visit's services with their masters
}

type field struct{ Name, Value string }

// visitPick is a service of a visit on the new-booking form.
type visitPick struct{ Service, Master int64 }

// moreRows is how many further services the new-booking form offers.
const moreRows = 2

// picksOf reads the form's further services of the visit.
func picksOf(c *fiber.Ctx) []visitPick {
	args := c.Request().PostArgs()
	svcs, masters := args.PeekMulti("more_service"), args.PeekMulti("more_master")
	var out []visitPick
	for i := range svcs {
		var p visitPick
		p.Service, _ = strconv.ParseInt(string(svcs[i]), 10, 64)
		if i < len(masters) {
			p.Master, _ = strconv.ParseInt(string(masters[i]), 10, 64)
		}
		if p.Service > 0 {
			out = append(out, p)
		}
	}
	return out
}

// offer makes each choice post to action with the fields, and its own
// master, date and time.
func offer(alts []altChoice, action string, fields ...field) {
	for i := range alts {
		a := &alts[i]
		a.Action = action
		a.Fields = append(append([]field(nil), fields...), field{"master", strconv.FormatInt(a.MasterID, 10)},
			field{"date", a.Date}, field{"time", a.Time})
		a.Fields = append(a.Fields, a.items...)
	}
}

func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newBooking shows the form for a free time picked on the grid
// (?master=&at=YYYY-MM-DDTHH:MM), or for a client (?client=).
func (h *Handler) newBooking(c *fiber.Ctx) error {
	u := user(c)
	f := &bookingForm{Key: newKey()}
	f.MasterID, _ = strconv.ParseInt(c.Query("master"), 10, 64)
	f.ServiceID, _ = strconv.ParseInt(c.Query("service"), 10, 64)
	if at := c.Query("at"); at != "" {
		d, t, _ := strings.Cut(at, "T")
		f.Date, f.Time, f.Again = strings.Clone(d), strings.Clone(t), c.Query("again") == "1"
	} else {
		f.Date = salonOf(c).Today(h.svc.Now()).String()
	}
	if id, _ := strconv.ParseInt(c.Query("client"), 10, 64); id > 0 {
		cl, err := h.svc.Client(c.UserContext(), u.SalonID, id)
		if err != nil {
			return err
		}
		f.Phone, f.Name, f.NameAuto = cl.Phone, cl.Name, cl.Name
	}
	return h.showBookingForm(c, f)
}

// knownClient answers the new booking form as a phone is typed: who the
// salon knows by it (their name, filled in when none is typed yet, and
// their notes: an allergy), or the hint that a new client is made.
func (h *Handler) knownClient(c *fiber.Ctx) error {
	f := &bookingForm{Name: strings.Clone(c.Query("name")), Date: strings.Clone(c.Query("date")), Fragment: true}
	f.ServiceID, _ = strconv.ParseInt(c.Query("service"), 10, 64)
	f.PayBalance, _ = strconv.ParseInt(c.Query("pay_balance"), 10, 64)
	for _, v := range c.Context().QueryArgs().PeekMulti("more_service") {
		if id, _ := strconv.ParseInt(string(v), 10, 64); id > 0 {
			f.More = append(f.More, visitPick{Service: id})
		}
	}
	// The name filled in from another phone's client, not edited since,
	// is not one typed: this phone's client's replaces it, or none.
	filled := f.Name != "" && f.Name == c.Query("name_auto")
	cl, err := h.svc.ClientByPhone(c.UserContext(), user(c).SalonID, c.Query("phone"))
	switch {
	case errors.Is(err, booking.ErrNotFound):
		if filled {
			f.Name, f.Swap = "", true
		}
	case err != nil:
		return err
	default:
		f.Known = cl
		if strings.TrimSpace(f.Name) == "" || filled {
			f.Name, f.Swap, f.NameAuto = cl.Name, true, cl.Name
		}
	}
	if err := h.packages(c, f); err != nil {
		return err
	}
	return h.fragment(c, "booking_new", "knownclient", f)
}

func (h *Handler) showBookingForm(c *fiber.Ctx, f *bookingForm) error {
	u := user(c)
	var err error
	if f.Masters, err = h.svc.Masters(c.UserContext(), u.SalonID, 0); err != nil {
		return err
	}
	if f.Services, err = h.svc.Services(c.UserContext(), u.SalonID); err != nil {
		return err
	}
	f.AllServices = slices.Clone(f.Services)
	for len(f.More) < moreRows {
		f.More = append(f.More, visitPick{})
	}
	for _, sv := range f.Services {
		if sv.Deposit > 0 && h.svc.Provider() != nil {
			f.OnlinePay = true // a choice: paid in the salon, or a link to pay online
		}
	}
	ranges := booking.TermRanges(f.Masters)
	f.Durations, f.Prices, f.Terms = map[int64]string{}, map[int64]string{}, map[int64]string{}
	cur, code := salonOf(c).Currency, langOf(c).Code
	price := func(m booking.Money) string {
		if m <= 0 {
			return ""
		}
		return m.Format(cur, code)
	}
	for _, sv := range f.Services {
		f.Durations[sv.ID], f.Prices[sv.ID] = strconv.Itoa(sv.DurationMin), price(sv.Price)
		if r, ok := ranges[sv.ID]; ok {
			f.Durations[sv.ID], f.Prices[sv.ID] = r.Durations(), price(r.MaxPrice)
			if r.MinPrice != r.MaxPrice {
				f.Prices[sv.ID] = r.MinPrice.Format(cur, code) + "–" + f.Prices[sv.ID]
			}
		}
		var terms []string
		for _, m := range f.Masters {
			if o, ok := m.TermsOf(sv.ID); ok {
				terms = append(terms, fmt.Sprintf("%d=%d=%s", m.ID, o.DurationMin, price(o.Price)))
				if m.ID == f.MasterID {
					f.Durations[sv.ID], f.Prices[sv.ID] = strconv.Itoa(o.DurationMin), price(o.Price) // the chosen master's own
				}
			}
		}
		f.Terms[sv.ID] = strings.Join(terms, "|")
	}
	if f.Phone != "" && f.Known == nil {
		f.Known, _ = h.svc.ClientByPhone(c.UserContext(), u.SalonID, f.Phone) // a hint: none is fine
	}
	if f.MasterID != 0 {
		// Only the services the chosen master does, and the one chosen
		// (a form sent back for it stays as the admin left it, its error
		// beside it: never another service chosen in its place).
		for _, m := range f.Masters {
			if m.ID == f.MasterID {
				f.Services = slices.DeleteFunc(f.Services, func(s booking.SalonService) bool {
					return s.ID != f.ServiceID && !slices.Contains(m.ServiceIDs, s.ID)
				})
			}
		}
	}
	if !slices.ContainsFunc(f.Services, func(s booking.SalonService) bool { return s.ID == f.ServiceID }) && len(f.Services) > 0 {
		f.ServiceID = f.Services[0].ID // (what the form's select shows chosen)
	}
	if err := h.packages(c, f); err != nil {
		return err
	}
	return h.render(c, "booking_new", langOf(c).T("New booking"), f)
}

// createBooking books through the core as the signed-in user. A taken time
// shows the form again with the core's alternatives as one-click choices.
func (h *Handler) createBooking(c *fiber.Ctx) error {
	u := user(c)
	s := salonOf(c)
	f := &bookingForm{
		Date: strings.Clone(c.FormValue("date")), Time: strings.Clone(c.FormValue("time")),
		Phone: strings.Clone(c.FormValue("phone")), Name: strings.Clone(c.FormValue("name")),
		Notes: strings.Clone(c.FormValue("notes")), Key: strings.Clone(c.FormValue("key")),
		Email: strings.Clone(strings.TrimSpace(c.FormValue("email"))), Online: c.FormValue("deposit") == "online",
		Again: c.FormValue("again") != "", PayCode: strings.Clone(strings.TrimSpace(c.FormValue("pay_code"))),
	}
	f.MasterID, _ = strconv.ParseInt(c.FormValue("master"), 10, 64)
	f.ServiceID, _ = strconv.ParseInt(c.FormValue("service"), 10, 64)
	f.PayBalance, _ = strconv.ParseInt(c.FormValue("pay_balance"), 10, 64)
	if auto := c.FormValue("name_auto"); auto != "" && auto == f.Name {
		f.NameAuto = f.Name // (still the one filled in: drawn again, it follows the phone)
	}
	f.More = picksOf(c)
	at, ferr := localTime(s, f.Date, f.Time, f.Again)
	if ferr != nil {
		f.Fields = langOf(c).Fields(map[string]i18n.Text{"time": i18n.Of(ferr)})
		c.Status(fiber.StatusUnprocessableEntity)
		return h.showBookingForm(c, f)
	}
	r := booking.BookRequest{
		SalonID: u.SalonID, ServiceID: f.ServiceID, MasterID: f.MasterID, StartsAt: at,
		Client: booking.ClientInput{Name: f.Name, Phone: f.Phone, Email: f.Email}, Notes: f.Notes,
		IdempotencyKey: f.Key, AskDeposit: f.Online,
	}
	var err error
	if r.PayWith, err = f.payWith(); err != nil {
		h.formError(c, err, &f.Error, &f.Fields, &f.Taken, &f.Alts)
		return h.showBookingForm(c, f)
	}
	if len(f.More) > 0 {
		// A visit: the first service with its master, then the others.
		r.Items = []booking.VisitItem{{ServiceID: f.ServiceID, MasterID: f.MasterID}}
		for _, p := range f.More {
			r.Items = append(r.Items, booking.VisitItem{ServiceID: p.Service, MasterID: p.Master})
		}
		r.ServiceID, r.MasterID = 0, 0
	}
	b, err := h.svc.Book(c.UserContext(), r)
	if err != nil {
		if !h.formError(c, err, &f.Error, &f.Fields, &f.Taken, &f.Alts) {
			return err
		}
		f.Key = newKey()
		deposit := "salon"
		if f.Online {
			deposit = "online"
		}
		fields := []field{{"key", f.Key}, {"service", strconv.FormatInt(f.ServiceID, 10)},
			{"phone", f.Phone}, {"name", f.Name}, {"email", f.Email}, {"notes", f.Notes}, {"deposit", deposit},
			{"pay_balance", strconv.FormatInt(f.PayBalance, 10)}, {"pay_code", f.PayCode}}
		for i := range f.Alts {
			// A whole visit's choice: its further services with their masters.
			a := &f.Alts[i]
			var more []field
			for j := 2; j+1 < len(a.items); j += 2 {
				more = append(more, field{"more_service", a.items[j].Value}, field{"more_master", a.items[j+1].Value})
			}
			a.items = more
		}
		offer(f.Alts, "/panel/bookings", fields...)
		return h.showBookingForm(c, f)
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", b.ID), "created")
}

// formError turns the errors a form shows (invalid fields, a taken time
// with alternatives, a conflict) into what the form renders, setting the
// status; it reports false for errors that are pages of their own.
func (h *Handler) formError(c *fiber.Ctx, err error, msg *string, fields *map[string]string, taken *bool, alts *[]altChoice) bool {
	var (
		ve *booking.ValidationError
		st *booking.SlotTakenError
	)
	l := langOf(c)
	switch {
	case errors.As(err, &st):
		c.Status(fiber.StatusConflict)
		*taken = true
		*alts = h.choices(c, st.Alternatives)
		if st.Visits != nil {
			*alts = h.visitChoices(c, st.Visits)
		}
		return true
	case errors.As(err, &ve) && !errors.Is(err, booking.ErrNotFound):
		c.Status(fiber.StatusUnprocessableEntity)
		*msg = l.T("Some fields are invalid.")
		*fields = l.Fields(ve.Fields)
		return true
	case errors.Is(err, booking.ErrExhausted):
		// (Said at its field, as the balance's other refusals are.)
		c.Status(fiber.StatusConflict)
		*msg = l.T("The package or certificate cannot pay for this.")
		if why := reasonOf(err, l, salonOf(c).Location()); why != "" {
			*fields = map[string]string{l.Field("pay_with"): why}
		}
		return true
	case errors.Is(err, booking.ErrConflict) && !errors.Is(err, booking.ErrUnavailable):
		status, m := h.classify(c, err)
		c.Status(status)
		*msg = l.T(m) + " " + detail(err, l, salonOf(c).Location())
		return true
	}
	return false
}

func (h *Handler) choices(c *fiber.Ctx, slots []booking.Slot) []altChoice {
	loc, l, now := salonOf(c).Location(), langOf(c), h.svc.Now()
	names, _ := h.masterNames(c) // a label: an alternative without one is still bookable
	out := make([]altChoice, 0, len(slots))
	for _, sl := range slots {
		t := sl.Start.In(loc)
		out = append(out, altChoice{MasterID: sl.MasterID, Master: names[sl.MasterID], Date: t.Format("2006-01-02"),
			Time: t.Format("15:04"), Label: l.When(t, now)})
	}
	return out
}

// visitChoices are a visit's whole-visit alternatives as one-click
// choices: each posts its services with their masters.
func (h *Handler) visitChoices(c *fiber.Ctx, visits []booking.VisitSlot) []altChoice {
	loc, l, now := salonOf(c).Location(), langOf(c), h.svc.Now()
	names, _ := h.masterNames(c)
	out := make([]altChoice, 0, len(visits))
	for _, v := range visits {
		t := v.Start.In(loc)
		var who []string
		var items []field
		for _, sg := range v.Segments {
			who = append(who, names[sg.MasterID])
			items = append(items, field{"item_service", strconv.FormatInt(sg.ServiceID, 10)},
				field{"item_master", strconv.FormatInt(sg.MasterID, 10)})
		}
		out = append(out, altChoice{MasterID: v.Segments[0].MasterID, Master: strings.Join(slices.Compact(who), ", "),
			Date: t.Format("2006-01-02"), Time: t.Format("15:04"), Label: l.When(t, now), items: items})
	}
	return out
}

// serviceNames names the services of visit v by id (none for a booking
// of one service).
func serviceNames(v *booking.View) map[int64]string {
	out := map[int64]string{}
	for i, sg := range v.Segments {
		if i < len(v.Parts) {
			out[sg.ServiceID] = v.Parts[i].ServiceName
		}
	}
	return out
}

// visitLines are the services of visit v for its page.
func (h *Handler) visitLines(c *fiber.Ctx, v *booking.View, names map[int64]string) ([]segmentLine, error) {
	ctx, salonID := c.UserContext(), user(c).SalonID
	loc := v.Salon.Location()
	hm := func(t time.Time) string { return t.In(loc).Format("15:04") }
	out := make([]segmentLine, len(v.Segments))
	for i := range v.Segments {
		sg := &v.Segments[i]
		_, part, _ := v.Segment(sg.ID)
		l := segmentLine{ID: sg.ID, ServiceID: sg.ServiceID, Service: part.ServiceName, MasterID: sg.MasterID, MoveTo: sg.MasterID,
			Master: names[sg.MasterID], Time: hm(sg.StartsAt) + "–" + hm(sg.EndsAt()), This: sg.ID == v.ID}
		if ps, pe := sg.Processing(); !ps.IsZero() {
			l.Processing = hm(ps) + "–" + hm(pe)
		}
		// A long wait since the services before it are done (one moved
		// alone, say) is shown, for the desk to see what the client faces
		// (the ones done together with it start with it).
		var from time.Time
		for _, x := range v.Segments[:i] {
			if !x.StartsAt.Equal(sg.StartsAt) && x.EndsAt().After(from) {
				from = x.EndsAt()
			}
		}
		if !from.IsZero() && sg.StartsAt.Sub(from) >= clientWaitShown {
			l.Wait = hm(from) + "–" + hm(sg.StartsAt)
		}
		ms, err := h.svc.Masters(ctx, salonID, sg.ServiceID)
		if err != nil {
			return nil, err
		}
		l.Masters = ms
		out[i] = l
	}
	return out, nil
}

// localTime reads a salon-local date and time: refused when the clocks
// skip it that day; when they show it twice, the first, or with again the
// second.
func localTime(s *booking.Salon, date, clock string, again bool) (time.Time, error) {
	d, err := booking.ParseDate(strings.TrimSpace(date))
	if err != nil {
		return time.Time{}, err
	}
	m, err := booking.ParseClock(clock)
	if err != nil {
		return time.Time{}, err
	}
	if again {
		if all := d.AtAll(s.Location(), int(m)); len(all) > 1 {
			return all[1], nil
		}
	}
	return d.AtClock(s.Location(), m)
}

// secondShowing reports whether t is the second time the clock in loc
// shows its wall time (the hour repeated when the clocks go back).
func secondShowing(t time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	all := booking.DateOf(lt).AtAll(loc, lt.Hour()*60+lt.Minute())
	return len(all) > 1 && all[1].Equal(t.Truncate(time.Minute))
}

// hasRepeatedHour reports whether the clock in loc shows an hour twice
// on date (YYYY-MM-DD): the day is longer than 24 hours.
func hasRepeatedHour(date string, loc *time.Location) bool {
	d, err := booking.ParseDate(date)
	return err == nil && d.AddDays(1).Start(loc).Sub(d.Start(loc)) > 24*time.Hour
}

// segmentLine is one service of a visit on its booking's page: its
// segment, and the masters who may do it (for a move).
type segmentLine struct {
	ID         int64
	ServiceID  int64
	Service    string
	MasterID   int64
	Master     string
	Time       string // HH:MM–HH:MM, the client's
	Processing string // HH:MM–HH:MM, the master free meanwhile ("" for none)
	This       bool   // the segment whose page this is
	Masters    []booking.Master
	MoveTo     int64 // the master the whole-visit move form names for it
	// Wait is HH:MM–HH:MM, the client's wait before it when it is long
	// (clientWaitShown or more; "" for none).
	Wait string
}

// clientWaitShown is the wait between a visit's services its page shows.
const clientWaitShown = 30 * time.Minute

type bookingPage struct {
	// Visit is the visit's services, when it has several; Price what the
	// whole visit costs.
	Visit []segmentLine
	Price booking.Money
	// SegDate and SegTime are this segment's own start, for moving it alone.
	SegDate, SegTime string
	// Again and SegAgain: the move forms' times are the second the clock
	// shows them; Repeats and SegRepeats: their days have an hour the
	// clock shows twice (the forms then ask which).
	Again, SegAgain, Repeats, SegRepeats bool
	Payment                              *booking.PaymentSession
	Payments                             []booking.PaymentEvent // the payment's history
	DepositDue                           bool                   // pending, or owing the difference: the client may pay it here, in the salon
	// Held is what the salon holds of the deposit paid online, Refundable
	// what of it may be refunded now; TopUp what a move asked more.
	Held, Refundable, TopUp booking.Money
	// OnlinePay: deposits are taken online; PayLink is a link that pays
	// what is owed, made for staff to send (until PayUntil).
	OnlinePay  bool
	PayLink    string
	PayUntil   string
	LinkSent   bool // a message carried the link to the client
	LinkQueued bool // one waits to be sent
	V          *booking.View
	History    []booking.Event
	Lines      []historyLine // the history in words
	Start      string
	End        string
	Date       string
	Time       string
	MoveTo     int64  // the master the move form names (0: the booking's own)
	MoveAsked  string // who the move form says asks ("client", "salon", "")
	// MoveItems are the masters the whole-visit move form names, by
	// service in visit order (nil: the visit's own).
	MoveItems []int64
	// SegTo and SegAsked are MoveTo and MoveAsked of the form that moves
	// this service of a visit alone.
	SegTo    int64
	SegAsked string

	Masters   []booking.Master
	Client    *booking.Client
	Until     string
	Error     string
	Fields    map[string]string
	Taken     bool
	Alts      []altChoice
	Active    bool
	Started   bool
	Confirmed bool
	Messages  []messageLine
	// Attend says whether the client said they will come (ConfirmedAt,
	// through AttendVia); Unconfirmed marks it not done with 2 hours to go.
	AttendAt    string
	AttendVia   string
	Unconfirmed bool
	// Head is the visit's first booking, on a later service's page (0
	// otherwise): the visit's deposit, payments and messages are on its.
	Head int64
	// Carries: the visit carries money paid or asked in advance (the
	// cancel form asks who cancels); Terms, what its cancel form says
	// (cancelTerms); Kept, what of a package or certificate cancelling
	// at the client's request keeps, in words; Reason, the cancel
	// reason typed, kept when the form is shown again.
	Carries             bool
	Terms, Kept, Reason string
	// PaidWith is what the booking reserved of a balance, in words;
	// Packages the client's packages the desk may pay it with.
	PaidWith string
	Packages []packageChoice
	// Due is what is left to pay at the salon of a visit paid with a
	// balance (View.AtSalon), shown (ShowDue) while the visit is on or
	// was made.
	Due     booking.Money
	ShowDue bool
}

// packageChoice is a client's package on the booking page.
type packageChoice struct {
	ID    int64
	Label string
}

func (h *Handler) bookingPage(c *fiber.Ctx) error { return h.showBooking(c, &bookingPage{}) }

func (h *Handler) showBooking(c *fiber.Ctx, p *bookingPage) error {
	u := user(c)
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	v, err := h.svc.BookingView(ctx, u.SalonID, id)
	if err != nil {
		return err
	}
	if p.History, err = h.svc.History(ctx, u.SalonID, id); err != nil {
		return err
	}
	if p.Masters, err = h.svc.Masters(ctx, u.SalonID, v.ServiceID); err != nil {
		return err
	}
	if p.Client, err = h.svc.Client(ctx, u.SalonID, v.ClientID); err != nil {
		return err
	}
	if p.Payment, err = h.svc.PaymentOf(ctx, u.SalonID, id, false); err != nil {
		return err
	}
	if p.Payments, err = h.svc.PaymentHistory(ctx, u.SalonID, id); err != nil {
		return err
	}
	if !v.Head() {
		p.Head = v.VisitID // (a later service of a visit: its money and messages are the visit's)
	}
	if p.Carries, err = h.carriesMoney(c, v); err != nil {
		return err
	}
	p.Terms = cancelTerms(v, p.Carries)
	if v.PaidWith != nil && v.CancelKeeps > 0 {
		p.Kept = v.PaidWith.UnitsIn(v.CancelKeeps, v.Salon.Currency, langOf(c).Code)
	}
	p.DepositDue = v.Owed() > 0
	p.TopUp, p.OnlinePay = v.DepositDue, h.svc.Provider() != nil
	if p.Held, p.Refundable, err = h.svc.DepositHeld(ctx, u.SalonID, id); err != nil {
		return err
	}
	loc := v.Salon.Location()
	msgs, err := h.svc.MessagesOf(ctx, u.SalonID, id)
	if err != nil {
		return err
	}
	p.Messages = messageLines(msgs, &v.Salon, langOf(c))
	if !v.ConfirmedAt.IsZero() {
		p.AttendAt, p.AttendVia = langOf(c).DateTime(v.ConfirmedAt.In(loc)), langOf(c).T(channelNames[string(v.ConfirmedVia)])
	} else if now := h.svc.Now(); v.Status == booking.StatusConfirmed && !now.Before(v.StartsAt.Add(-UnconfirmedMark)) && now.Before(v.StartsAt) {
		p.Unconfirmed = true
	}
	for i := range p.Payments {
		p.Payments[i].At = p.Payments[i].At.In(loc)
		p.Payments[i].Detail = reason(langOf(c), p.Payments[i].Detail)
	}
	for _, m := range msgs {
		switch {
		case m.Kind != booking.KindPaymentDue:
		case m.State == booking.MessageSent || m.State == booking.MessageDelivered:
			p.LinkSent = true
		case m.State == booking.MessageQueued:
			p.LinkQueued = true
		}
	}
	v.StartsAt, v.HoldExpiresAt = v.StartsAt.In(loc), v.HoldExpiresAt.In(loc)
	v.CancelReason = reason(langOf(c), v.CancelReason)
	names, err := h.masterNames(c) // the inactive too: the history names who it was
	if err != nil {
		return err
	}
	if len(v.Segments) > 1 {
		if p.Visit, err = h.visitLines(c, v, names); err != nil {
			return err
		}
	}
	// The booking's row says who made it; the events are what came after.
	l := langOf(c)
	p.Lines = append([]historyLine{{At: l.DateTime(v.CreatedAt.In(loc)), Text: l.T("Booked"),
		Who: l.Source(v.Source)}}, historyLines(p.History, names, serviceNames(v), salonOf(c), l)...)
	if err := h.paidWith(c, p, v); err != nil {
		return err
	}
	p.V = v
	start := v.StartsAt // the visit's: its first service's
	if len(v.Segments) > 1 {
		start = v.Segments[0].StartsAt
	}
	p.Start = l.DateTime(start.In(loc))
	p.End = i18n.Clock(booking.VisitEnd(&v.Booking).In(loc))
	p.Price = booking.VisitPrice(&v.Booking)
	p.Due, p.ShowDue = v.AtSalon()
	if p.SegDate == "" {
		p.SegDate, p.SegTime, p.SegAgain = v.StartsAt.In(loc).Format("2006-01-02"), v.StartsAt.In(loc).Format("15:04"), secondShowing(v.StartsAt, loc)
	}
	if p.Date == "" {
		p.Date, p.Time, p.Again = start.In(loc).Format("2006-01-02"), start.In(loc).Format("15:04"), secondShowing(start, loc)
	}
	p.MoveTo, p.SegTo = cmp.Or(p.MoveTo, v.MasterID), cmp.Or(p.SegTo, v.MasterID)
	if len(p.MoveItems) == len(p.Visit) {
		for i := range p.Visit {
			p.Visit[i].MoveTo = cmp.Or(p.MoveItems[i], p.Visit[i].MoveTo)
		}
	}
	p.Repeats, p.SegRepeats = hasRepeatedHour(p.Date, loc), hasRepeatedHour(p.SegDate, loc)
	p.Until = l.DateTime(v.ChangeableUntil.In(loc))
	p.Active = v.Status.Active()
	p.Confirmed = v.Status == booking.StatusConfirmed
	p.Started = !h.svc.Now().Before(v.StartsAt)
	return h.render(c, "booking", fmt.Sprintf("%s #%d", langOf(c).T("Booking"), v.ID), p)
}

func (h *Handler) cancelBooking(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	// At the client's request when the form says so; else the salon's
	// own cancellation, which gives back what was paid in advance. What
	// the form said cancelling would do is what it does, or the form is
	// shown again with the terms as they are now: a payment came, the
	// cutoff passed, a package paid it, since it was drawn (and it asked
	// nobody, or said other terms to "the client asked").
	asked := c.FormValue("asked")
	switch asked {
	case "", "client", "salon":
	default:
		c.Status(fiber.StatusBadRequest)
		return h.showBooking(c, &bookingPage{Reason: strings.Clone(c.FormValue("reason")), Error: langOf(c).T("Choose who cancels: the client or the salon.")})
	}
	wasActive := false // (the salon's own: told what became of its time when it was cancelled now)
	if asked == "salon" {
		v, err := h.svc.BookingView(c.UserContext(), user(c).SalonID, id)
		if err != nil {
			return err
		}
		wasActive = v.Status.Active()
	}
	if drawn := c.FormValue("terms"); drawn != "" && (asked == "client" || asked == "") {
		v, err := h.svc.BookingView(c.UserContext(), user(c).SalonID, id)
		if err != nil {
			return err
		}
		carries, err := h.carriesMoney(c, v)
		if err != nil {
			return err
		}
		if now := cancelTerms(v, carries); asked == "client" && drawn != now || asked == "" && carries && v.Status.Active() {
			c.Status(fiber.StatusConflict)
			return h.showBooking(c, &bookingPage{Reason: strings.Clone(c.FormValue("reason")),
				Error: langOf(c).T("The terms of cancelling changed since the page was shown (a payment came, or the cancellation deadline passed): check them and cancel again.")})
		}
	}
	_, err = h.svc.Cancel(c.UserContext(), booking.CancelRequest{SalonID: user(c).SalonID, BookingID: id, Reason: c.FormValue("reason"),
		ForClient: asked == "client", Stated: asked != ""})
	if err != nil {
		p := &bookingPage{}
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		return h.showBooking(c, p)
	}
	if wasActive {
		return done(c, fmt.Sprintf("/panel/bookings/%d", id), "salon_cancelled")
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", id), "cancelled")
}

// carriesMoney reports whether booking v's visit carries money paid, or
// asked, in advance: a deposit, a payment online, a package or a
// certificate (a later service of a visit reads its head's).
func (h *Handler) carriesMoney(c *fiber.Ctx, v *booking.View) (bool, error) {
	if v.Deposit > 0 || v.Prepaid > 0 || v.PaidWith != nil {
		return true, nil
	}
	if v.Head() {
		return false, nil
	}
	head, err := h.svc.BookingView(c.UserContext(), user(c).SalonID, v.VisitID)
	if err != nil {
		return false, err
	}
	return head.Deposit > 0 || head.PaidWith != nil, nil
}

// cancelTerms are what the cancel form of v says cancelling does, as a
// hidden field sends them back.
func cancelTerms(v *booking.View, carries bool) string {
	return fmt.Sprintf("%t:%s:%t:%d", carries, v.Prepaid, v.CancelKeepsPrepaid, v.CancelKeeps)
}

func (h *Handler) rescheduleBooking(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	date, clock, again := strings.Clone(c.FormValue("date")), strings.Clone(c.FormValue("time")), c.FormValue("again") != ""
	master, _ := strconv.ParseInt(c.FormValue("master"), 10, 64)
	// A visit moves whole: its services in order, each with its master.
	var items []booking.VisitItem
	args := c.Request().PostArgs()
	svcs, masters := args.PeekMulti("item_service"), args.PeekMulti("item_master")
	for i := range svcs {
		it := booking.VisitItem{}
		it.ServiceID, _ = strconv.ParseInt(string(svcs[i]), 10, 64)
		if i < len(masters) {
			it.MasterID, _ = strconv.ParseInt(string(masters[i]), 10, 64)
		}
		items = append(items, it)
	}
	only := c.FormValue("only") == "1" // this segment of its visit alone
	asked := c.FormValue("asked")      // who asks: "client", "salon" (its own move), "" (unknown)
	// The form shown again says what it said.
	p := &bookingPage{Date: date, Time: clock, Again: again, MoveTo: master, MoveAsked: asked}
	if only {
		p = &bookingPage{SegDate: date, SegTime: clock, SegAgain: again, SegTo: master, SegAsked: asked}
	}
	for _, it := range items {
		p.MoveItems = append(p.MoveItems, it.MasterID)
	}
	if asked != "" && asked != "client" && asked != "salon" {
		c.Status(fiber.StatusBadRequest)
		p.Error = langOf(c).T("Choose who asks to move: the client or the salon.")
		return h.showBooking(c, p)
	}
	switch {
	case only:
		items = nil
	case len(items) > 0:
		master = 0
	}
	// (An unknown booking is not found, whatever the form says; a known
	// one's places tell a move that changed nothing.)
	before, err := h.svc.BookingView(c.UserContext(), user(c).SalonID, id)
	if err != nil {
		return err
	}
	at, ferr := localTime(salonOf(c), date, clock, again)
	if ferr != nil {
		c.Status(fiber.StatusUnprocessableEntity)
		p.Fields = langOf(c).Fields(map[string]i18n.Text{"time": i18n.Of(ferr)})
		return h.showBooking(c, p)
	}
	moved, err := h.svc.Reschedule(c.UserContext(), booking.RescheduleRequest{SalonID: user(c).SalonID, BookingID: id,
		StartsAt: at, MasterID: master, Items: items, Segment: only, BySalon: asked == "salon", ForClient: asked == "client"})
	if err != nil {
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		// (Each choice moves as this form asked: who asks, one segment.)
		keep := []field{{"asked", asked}}
		if only {
			keep = append(keep, field{"only", "1"})
		}
		offer(p.Alts, fmt.Sprintf("/panel/bookings/%d/reschedule", id), keep...)
		return h.showBooking(c, p)
	}
	if samePlaces(&before.Booking, moved) {
		return done(c, fmt.Sprintf("/panel/bookings/%d", id), "unmoved")
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", id), "rescheduled")
}

// samePlaces reports whether booking b, as moved, is where it was, each
// service of a visit at its time with its master (a move that changed
// nothing).
func samePlaces(was, b *booking.Booking) bool {
	a, z := booking.SegmentsOf(was), booking.SegmentsOf(b)
	return slices.EqualFunc(a, z, func(x, y booking.Segment) bool { return x.MasterID == y.MasterID && x.Start.Equal(y.Start) })
}

// refundBooking refunds the booking's paid deposit in full.
func (h *Handler) refundBooking(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	var amount booking.Money
	if v := strings.TrimSpace(c.FormValue("amount")); v != "" {
		if amount, err = booking.ParseMoneyIn(v, salonOf(c).Currency); err != nil || amount <= 0 {
			p := &bookingPage{Fields: map[string]string{"amount": langOf(c).T("Enter an amount, like 500 or 500.50")}}
			c.Status(fiber.StatusUnprocessableEntity)
			return h.showBooking(c, p)
		}
	}
	if _, err := h.svc.RefundDepositPart(c.UserContext(), user(c).SalonID, id, amount); err != nil {
		p := &bookingPage{}
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		return h.showBooking(c, p)
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", id), "refunded")
}

// reason is a reason the system wrote (why a payment changed, why a message
// was not sent, why a booking was cancelled) in the panel's language; a
// provider's own words, or a person's, stay as they are.
func reason(l *lang, s string) string {
	if st, ok := strings.CutPrefix(s, "the booking is "); ok {
		return l.T("the booking is %s", l.Status(booking.Status(st)))
	}
	if paymentReasons[s] {
		return l.T(s)
	}
	return s
}

// paymentReasons are the system's words for why a payment changed, a
// message was dropped or a booking cancelled, which the panel says in its
// language.
var paymentReasons = map[string]bool{"created": true, "paid": true, "captured": true, "released": true, "never paid": true,
	"declined, or expired unpaid, at the provider": true, "the booking was cancelled": true, "paid after the hold, the time taken": true, "paid after the hold, the package or certificate it used given back": true,
	"captured before the cancellation was known": true, "refunded": true, "refunded by the salon": true, "refunded: the salon found the refund made at the provider": true, "paid in the salon": true,
	"released by the salon": true, "refunded in full: the booking was cancelled": true,
	"the difference refunded: the booking moved to a smaller deposit": true, "the booking was paid otherwise": true, "paid after the visit": true,
	"hold expired": true, "the booking moved": true, "too late to remind": true, "its time has passed": true,
	"the difference is paid": true, "the client unsubscribed": true, "the booking's e-mail is no longer this one": true,
	"the client's phone is no longer this one": true, "the provider cancelled the refund": true,
	"an SMS abroad to a client new online: send it again if the client is real": true, "too many SMS to this number in a day: send it again if the client is real": true,
	"too many SMS to new clients in an hour (a flood of bookings?): send it again if the client is real":                                                     true,
	"the provider lists no refunds: check at the provider whether this refund was made; if it was not, ask for it again here":                                true,
	"the provider's refunds of the payment are not what ours add up to: check them at the provider; if this refund is not among them, ask for it again here": true}

// payLink makes a link that pays what the booking owes online and shows
// it on the booking's page, for staff to send the client themselves.
func (h *Handler) payLink(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	p := &bookingPage{}
	token, until, err := h.svc.PayLink(c.UserContext(), user(c).SalonID, id)
	if err != nil {
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		return h.showBooking(c, p)
	}
	p.PayLink, p.PayUntil = h.base(c)+"/a/"+token, langOf(c).DateTime(until.In(salonOf(c).Location()))
	return h.showBooking(c, p)
}

// paidInSalon records the deposit of a pending booking paid in the salon.
func (h *Handler) paidInSalon(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.svc.MarkDepositPaid(c.UserContext(), user(c).SalonID, id); err != nil {
		p := &bookingPage{}
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		return h.showBooking(c, p)
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", id), "paid")
}

func (h *Handler) completeBooking(c *fiber.Ctx) error { return h.outcome(c, booking.StatusCompleted) }

func (h *Handler) noShowBooking(c *fiber.Ctx) error { return h.outcome(c, booking.StatusNoShow) }

func (h *Handler) outcome(c *fiber.Ctx, to booking.Status) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	mark := h.svc.MarkCompleted
	if to == booking.StatusNoShow {
		mark = h.svc.MarkNoShow
	}
	// The core finds the booking in any salon for the system; staff are
	// held to theirs (another salon's booking is not found).
	if _, err := mark(c.UserContext(), id); err != nil {
		p := &bookingPage{}
		if !h.formError(c, err, &p.Error, &p.Fields, &p.Taken, &p.Alts) {
			return err
		}
		return h.showBooking(c, p)
	}
	return done(c, fmt.Sprintf("/panel/bookings/%d", id), string(to))
}
