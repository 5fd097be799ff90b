package bot

import (
	"errors"
	"strings"
	"time"

	"salon/booking"
	"salon/i18n"
)

// dayPage is how many days one screen of the day list covers.
const dayPage = 14

// days offers the days with a free time, a page of the salon's booking
// window at a time (the window is the core's: its horizon).
func (t *turn) days() error {
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	first, total := s.Window(t.b.svc.Now())
	until, limited := t.moveUntil()
	if limited {
		// No day past the balance's last is offered.
		n := 0
		for d := first; n < total && !until.Before(d); d = d.AddDays(1) {
			n++
		}
		total = n
	}
	pages := max((total+dayPage-1)/dayPage, 1)
	page := min(max(t.c.D.Page, 0), pages-1)
	from := first.AddDays(page * dayPage)
	n := min(dayPage, total-page*dayPage)
	var starts []start
	if n > 0 {
		starts, err = t.starts(s, from, n)
		if err != nil && !errors.Is(err, booking.ErrInvalid) {
			return t.explain(err)
		}
	}
	k := t.keyboard()
	var bs []button
	seen := map[booking.Date]bool{}
	for _, sl := range starts {
		d := booking.DateOf(sl.Start.In(s.Location()))
		if !seen[d] {
			seen[d] = true
			bs = append(bs, k.btn(dayLabel(t.c.Lang, d), action{Verb: doDay, Day: d.String()}))
		}
	}
	k.grid(3, bs)
	var nav []button
	if page > 0 {
		nav = append(nav, k.btn(t.tr("earlier"), action{Verb: doDays, Page: page - 1}))
	}
	if page < pages-1 {
		nav = append(nav, k.btn(t.tr("later"), action{Verb: doDays, Page: page + 1}))
	}
	if len(nav) > 0 {
		k.row(nav...)
	}
	if t.c.D.Moving == 0 && len(t.c.D.Items)+1 < booking.MaxVisitItems {
		k.row(k.btn(t.tr("add_service"), action{Verb: doMore}))
	}
	if t.c.D.Moving == 0 {
		// Nothing that suits on these days: wait for a time to free.
		k.row(k.btn(t.tr("wait_button"), action{Verb: doWait}))
	}
	if t.c.D.Moving != 0 {
		k.back(stepMy)
	} else {
		k.back(stepMaster)
	}
	t.c.D.Step, t.c.D.Page = stepDay, page
	title := t.tr("choose_day", t.serviceName())
	if t.c.D.Moving != 0 {
		title = t.tr("move_day", t.serviceName())
	}
	if len(t.c.D.Items) > 0 {
		title = t.visitSoFar() + "\n" + t.tr("choose_day_visit")
	}
	if len(bs) == 0 {
		title = t.tr("no_days")
	}
	if limited {
		title += "\n" + t.tr("move_until", t.c.D.UntilHint, until.In(t.c.Lang))
	}
	t.show(title, k)
	return nil
}

// moveUntil is the last day the booking being moved may go to (false: no
// such day).
func (t *turn) moveUntil() (booking.Date, bool) {
	if t.c.D.Moving == 0 || t.c.D.Until == "" {
		return booking.Date{}, false
	}
	d, err := booking.ParseDate(t.c.D.Until)
	return d, err == nil
}

// pastUntil says whether at (salon s's time) is past the day the booking
// being moved may go to.
func (t *turn) pastUntil(s *booking.Salon, at time.Time) bool {
	until, ok := t.moveUntil()
	return ok && until.Before(booking.DateOf(at.In(s.Location())))
}

// times offers the free times of the chosen day (for "any master", the
// master the core chooses at each time).
func (t *turn) times() error {
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	day, err := booking.ParseDate(t.c.D.Day)
	if err != nil {
		return t.days()
	}
	if until, ok := t.moveUntil(); ok && until.Before(day) {
		return t.days() // (an older screen's day: the list says the last one)
	}
	slots, err := t.starts(s, day, 1)
	if err != nil && !errors.Is(err, booking.ErrInvalid) {
		return t.explain(err)
	}
	if len(slots) == 0 {
		if err := t.days(); err != nil {
			return err
		}
		t.notice = t.tr("no_times")
		return nil
	}
	k := t.keyboard()
	var bs []button
	for _, sl := range slots {
		bs = append(bs, k.btn(i18n.Clock(sl.Start.In(s.Location())), action{Verb: doTime, Master: sl.MasterID, At: sl.Start.Unix(),
			Masters: sl.masters}))
	}
	k.grid(4, bs)
	k.back(stepDay)
	t.c.D.Step = stepTime
	t.show(t.tr("choose_time", dayLabel(t.c.Lang, day)), k)
	return nil
}

// start is a free start: of one service with a master, or of a whole
// visit with its masters.
type start struct {
	booking.Slot
	masters []int64 // a visit's, in visit order
}

// starts are the free starts of the dialog's choice over days days from
// from: of its service, or, with earlier items, of the whole visit.
func (t *turn) starts(s *booking.Salon, from booking.Date, days int) ([]start, error) {
	if len(t.c.D.Items) == 0 {
		slots, err := t.b.svc.Slots(t.ctx, booking.SlotQuery{SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.Master,
			From: from, Days: days, Moving: t.c.D.Moving})
		out := make([]start, len(slots))
		for i, sl := range slots {
			out[i] = start{Slot: sl}
		}
		return out, err
	}
	visits, err := t.b.svc.VisitSlots(t.ctx, booking.VisitSlotQuery{SalonID: s.ID, Items: t.visitItems(), From: from, Days: days,
		Moving: t.c.D.Moving})
	out := make([]start, len(visits))
	for i, v := range visits {
		out[i] = start{Slot: booking.Slot{MasterID: v.Segments[0].MasterID, Start: v.Start, End: v.End}, masters: v.Masters()}
	}
	return out, err
}

// visitItems are the visit's services as chosen, the current one last.
func (t *turn) visitItems() []booking.VisitItem {
	out := make([]booking.VisitItem, 0, len(t.c.D.Items)+1)
	for _, it := range t.c.D.Items {
		out = append(out, booking.VisitItem{ServiceID: it.Service, MasterID: it.Master})
	}
	if t.c.D.Service != 0 {
		out = append(out, booking.VisitItem{ServiceID: t.c.D.Service, MasterID: t.c.D.Master})
	}
	return out
}

// visitSoFar says the visit's services chosen so far, each with its master.
func (t *turn) visitSoFar() string {
	var parts []string
	for _, it := range t.visitItems() {
		who := t.tr("any_master")
		if it.MasterID != 0 {
			who = t.masterName(it.MasterID)
		}
		parts = append(parts, t.nameOf(it.ServiceID)+" ("+who+")")
	}
	return t.tr("visit_so_far", strings.Join(parts, ", "))
}

// nameOf is the name of a service of the menu.
func (t *turn) nameOf(id int64) string {
	for _, sv := range t.menu() {
		if sv.ID == id {
			return sv.Name
		}
	}
	return ""
}
