package bot

import (
	"errors"

	"salon/booking"
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
	pages := (total + dayPage - 1) / dayPage
	page := min(max(t.c.D.Page, 0), pages-1)
	from := first.AddDays(page * dayPage)
	n := min(dayPage, total-page*dayPage)
	slots, err := t.b.svc.Slots(t.ctx, booking.SlotQuery{SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.Master,
		From: from, Days: n})
	if err != nil && !errors.Is(err, booking.ErrInvalid) {
		return t.explain(err)
	}
	k := t.keyboard()
	var bs []button
	seen := map[booking.Date]bool{}
	for _, sl := range slots {
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
	if len(bs) == 0 {
		title = t.tr("no_days")
	}
	t.show(title, k)
	return nil
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
	slots, err := t.b.svc.Slots(t.ctx, booking.SlotQuery{SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.Master, From: day})
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
		bs = append(bs, k.btn(sl.Start.In(s.Location()).Format("15:04"), action{Verb: doTime, Master: sl.MasterID, At: sl.Start.Unix()}))
	}
	k.grid(4, bs)
	k.back(stepDay)
	t.c.D.Step = stepTime
	t.show(t.tr("choose_time", dayLabel(t.c.Lang, day)), k)
	return nil
}
