package bot

import (
	"fmt"
	"strings"

	"salon/booking"
	"salon/i18n"
)

// /my and what it offers: cancel and move. Which bookings a user sees and
// may change is the core's decision, from the user's Telegram identity.

// my lists the user's upcoming bookings in every salon, with buttons.
func (t *turn) my() error {
	views, err := t.b.svc.UpcomingBookings(t.ctx, t.b.svc.Now())
	if err != nil {
		return t.explain(err)
	}
	t.c.D = t.c.D.keep()
	t.c.D.Step = stepMy
	lead := ""
	if t.lead != "" {
		lead, t.lead = t.lead+"\n\n", ""
	}
	if len(views) == 0 {
		t.show(lead+t.tr("my_none"), nil)
		return nil
	}
	var b strings.Builder
	b.WriteString(lead + t.tr("my_title"))
	k := t.keyboard()
	for i, v := range views[:min(len(views), 10)] {
		// (A visit's names are all of its services and masters.)
		fmt.Fprintf(&b, "\n%d. %s — %s, %s (%s)", i+1, when(t.c.Lang, v.StartsAt, v.Salon.Location()), v.ServiceName, v.MasterName, v.Salon.Name)
		k.row(k.btn(t.tr("cancel_n", i+1), action{Verb: doCancelAsk, Salon: v.SalonID, ID: v.ID}),
			k.btn(t.tr("move_n", i+1), action{Verb: doMove, Salon: v.SalonID, ID: v.ID}))
		if v.Status == booking.StatusPending && v.Deposit > 0 && t.b.svc.Provider() != nil {
			k.row(k.btn(t.tr("pay_n", i+1), action{Verb: doPay, Salon: v.SalonID, ID: v.ID}))
		}
	}
	t.show(b.String(), k)
	return nil
}

// own reads a booking of this user that may still be changed online; when
// it may not, it says why and returns nil.
func (t *turn) own(salonID, bookingID int64) (*booking.View, error) {
	v, err := t.b.svc.BookingView(t.ctx, salonID, bookingID)
	if err != nil {
		return nil, t.explain(err)
	}
	if !v.Changeable {
		if v.Status.Active() {
			return nil, t.ended(t.tr("too_late", v.Salon.CutoffHours))
		}
		return nil, t.ended(t.tr("not_active"))
	}
	t.c.SalonID, t.salonC = v.SalonID, &v.Salon
	return v, nil
}

func (t *turn) cancelQuestion(salonID, bookingID int64) error {
	v, err := t.own(salonID, bookingID)
	if v == nil {
		return err
	}
	t.askCancel(v, "")
	return nil
}

// askCancel asks whether to cancel v, saying what cancelling would keep
// of what pays it (after prefix).
func (t *turn) askCancel(v *booking.View, prefix string) {
	k := t.keyboard()
	k.row(k.btn(t.tr("cancel_yes"), action{Verb: doCancel, Salon: v.SalonID, ID: v.ID, Keeps: v.CancelKeeps, Prepaid: v.Prepaid, KeepsPaid: v.CancelKeepsPrepaid}), k.btn(t.tr("keep"), action{Verb: doMy}))
	t.show(prefix+t.tr("cancel_q")+"\n"+t.viewSummary(v)+t.cancelKeeps(v)+t.cancelDeposit(v), k)
}

// cancelDeposit says, before a booking with a deposit paid online is
// cancelled, whether cancelling now refunds it or the salon's policy
// keeps it ("" when nothing was paid online).
func (t *turn) cancelDeposit(v *booking.View) string {
	switch {
	case v.Prepaid <= 0:
		return ""
	case v.CancelKeepsPrepaid:
		return "\n" + t.tr("cancel_keeps_deposit", t.money(&v.Salon, v.Prepaid))
	}
	return "\n" + t.tr("cancel_refunds_deposit", t.money(&v.Salon, v.Prepaid))
}

// cancelKeeps says, before a booking paid with a package or a certificate
// is cancelled, what of it cancelling now would keep by the salon's
// policy, and what goes back ("" when it is paid with neither).
func (t *turn) cancelKeeps(v *booking.View) string {
	p := v.PaidWith
	if p == nil || p.Settled {
		return ""
	}
	if p.Kind == booking.BalancePackage {
		visits := func(n int64) string { return i18n.Visits(t.c.Lang, n) }
		switch back := int64(p.Visits) - v.CancelKeeps; {
		case v.CancelKeeps > 0 && back > 0:
			return "\n" + t.tr("cancel_keeps_pkg_part", p.Hint, visits(v.CancelKeeps), visits(back))
		case v.CancelKeeps > 0:
			return "\n" + t.tr("cancel_keeps_package", p.Hint, visits(v.CancelKeeps))
		}
		return "\n" + t.tr("cancel_back_package", p.Hint, visits(int64(p.Visits)))
	}
	keeps := booking.Money(v.CancelKeeps)
	switch back := p.Amount - keeps; {
	case keeps > 0 && back > 0:
		return "\n" + t.tr("cancel_keeps_certificate", t.money(&v.Salon, keeps), p.Hint, t.money(&v.Salon, back))
	case keeps > 0:
		return "\n" + t.tr("cancel_keeps_all", t.money(&v.Salon, keeps), p.Hint)
	}
	return "\n" + t.tr("cancel_back_certificate", t.money(&v.Salon, p.Amount), p.Hint)
}

// cancelled says, once a booking paid with a package or a certificate was
// cancelled, what of it was kept and what went back ("" when it was paid
// with neither).
func (t *turn) cancelled(v *booking.View) string { return cancelledLines(t.c.Lang, v) }

// cancelledLines are cancelled's lines in lang.
func cancelledLines(lang string, v *booking.View) string {
	p := v.PaidWith
	if p == nil || !p.Settled {
		return ""
	}
	if p.Kind == booking.BalancePackage {
		text := ""
		if p.Kept > 0 {
			text += "\n" + tr(lang, "kept_package", p.Hint, i18n.Visits(lang, p.Kept))
		}
		if p.Returned > 0 {
			text += "\n" + tr(lang, "returned_package", p.Hint, i18n.Visits(lang, p.Returned))
		}
		return text + "\n" + tr(lang, "left_package", i18n.Visits(lang, p.Remaining))
	}
	money := func(n int64) string { return booking.Money(n).Format(v.Salon.Currency, lang) }
	text := ""
	if p.Kept > 0 {
		text += "\n" + tr(lang, "kept_certificate", money(p.Kept), p.Hint)
	}
	if p.Returned > 0 {
		text += "\n" + tr(lang, "returned_certificate", money(p.Returned), p.Hint, money(p.Remaining))
	}
	return text
}

// cancel cancels booking bookingID, whose question (asked) said what
// cancelling would keep of what pays it and of the deposit paid online:
// when that changed meanwhile (the salon's policy, the cutoff passed, a
// payment made), it asks again instead.
func (t *turn) cancel(salonID, bookingID int64, asked action) error {
	v, err := t.own(salonID, bookingID)
	if v == nil {
		return err
	}
	if v.PaidWith != nil && v.CancelKeeps != asked.Keeps || v.Prepaid != asked.Prepaid || v.Prepaid > 0 && v.CancelKeepsPrepaid != asked.KeepsPaid {
		t.askCancel(v, t.tr("cancel_changed")+"\n")
		return nil
	}
	// A refund is made by the core's follow-up job, not inside this turn.
	if _, err := t.b.svc.Cancel(booking.WithoutProviderCalls(t.ctx), booking.CancelRequest{SalonID: salonID, BookingID: bookingID}); err != nil {
		return t.explain(err)
	}
	t.c.D = t.c.D.keep()
	text := t.tr("cancelled") + "\n" + t.viewSummary(v)
	if v.Prepaid > 0 { // (as the question said: it was asked again had it changed)
		key := "deposit_refunding"
		if v.CancelKeepsPrepaid {
			key = "deposit_kept"
		}
		text += "\n" + t.tr(key, t.money(&v.Salon, v.Prepaid))
	}
	if v.PaidWith != nil {
		// What the cancellation kept of the package or certificate, and
		// gave back to it (unread, the cancellation is said alone: it is
		// done, and a turn run again would find it no longer changeable).
		if after, err := t.b.svc.BookingView(t.ctx, salonID, bookingID); err == nil {
			text += t.cancelled(after)
		} else {
			t.b.log.Warn("bot: what a cancellation kept, unread", "booking", bookingID, "err", err)
		}
	}
	t.show(text, nil)
	return nil
}

func (t *turn) moveStart(salonID, bookingID int64) error {
	v, err := t.own(salonID, bookingID)
	if v == nil {
		return err
	}
	t.c.D = t.c.D.keep()
	t.c.D.Moving, t.c.D.Service, t.c.D.Master = v.ID, v.ServiceID, v.MasterID
	if p := v.PaidWith; p != nil && !p.Settled && !p.ValidUntil.IsZero() {
		t.c.D.Until, t.c.D.UntilHint = p.ValidUntil.String(), p.Hint
	}
	if n := len(v.Segments); n > 1 {
		// A visit moves whole, with its masters: the times offered are
		// the whole visit's.
		for _, sg := range v.Segments[:n-1] {
			t.c.D.Items = append(t.c.D.Items, visitPick{Service: sg.ServiceID, Master: sg.MasterID})
		}
		t.c.D.Service, t.c.D.Master = v.Segments[n-1].ServiceID, v.Segments[n-1].MasterID
	}
	return t.days()
}

func (t *turn) moveConfirm() error {
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	k := t.keyboard()
	k.row(k.btn(t.tr("move_here"), action{Verb: doMoveHere}))
	k.back(stepTime)
	t.c.D.Step = stepMoveConfirm
	text := t.serviceName() + "\n" + when(t.c.Lang, t.c.D.SlotAt, s.Location()) + " · " + t.masterName(t.c.D.SlotMaster)
	if len(t.c.D.Items) > 0 {
		text = t.visitSoFar() + "\n" + when(t.c.Lang, t.c.D.SlotAt, s.Location())
	}
	t.show(text, k)
	return nil
}

func (t *turn) move() error {
	r := booking.RescheduleRequest{SalonID: t.c.SalonID, BookingID: t.c.D.Moving, StartsAt: t.c.D.SlotAt, MasterID: t.c.D.SlotMaster}
	if len(t.c.D.Items) > 0 {
		r.MasterID = 0 // a visit keeps its masters
	}
	b, err := t.b.svc.Reschedule(t.ctx, r)
	if err != nil {
		return t.explain(err)
	}
	service := t.serviceName() // (of the dialog, reset below)
	t.c.D = t.c.D.keep()
	text := t.tr("moved") + "\n" + t.summary(service, t.masterName(b.MasterID), b.StartsAt, b.Price)
	if len(b.Segments) > 1 {
		text = t.tr("moved") + "\n" + t.visitSummary(b)
	}
	t.show(text, nil)
	return nil
}

// pay sends, after the turn, the payment page of a pending booking's
// deposit (a new payment after a declined one, while the hold lasts).
func (t *turn) pay(salonID, bookingID int64) error {
	v, err := t.b.svc.BookingView(t.ctx, salonID, bookingID)
	if err != nil {
		return t.explain(err)
	}
	t.c.D = t.c.D.keep()
	if v.Owed() <= 0 {
		t.show(t.tr("not_due"), nil)
		return nil
	}
	t.show(t.tr("pay_follows"), nil)
	t.payLink(&v.Salon, v.ID, v.Status == booking.StatusConfirmed)
	return nil
}
