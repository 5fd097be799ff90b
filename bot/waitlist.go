package bot

import (
	"errors"
	"fmt"
	"slices"

	"salon/booking"
)

// The waitlist in the chat: where the day list has nothing that suits, or
// a time was taken, "Wait for a time" puts the chat on the salon's list
// for the chosen service (or visit) and master, for the days of the page
// on screen; a freed time comes as a notice with a button that books it
// (takeOffer).

// waitFor joins the waitlist, once the phone is known (else it asks for
// it first, and onContact or onPhone comes back here).
func (t *turn) waitFor() error {
	t.c.D.Waiting = true
	if t.c.D.Phone == "" {
		c, err := t.b.svc.IdentityClient(t.ctx, t.c.SalonID)
		if err != nil && !errors.Is(err, booking.ErrNotFound) {
			return t.explain(err)
		}
		if c != nil && c.Phone != "" {
			t.c.D.Phone, t.c.D.PhoneProven = c.Phone, true
		}
	}
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	if t.c.D.Phone == "" {
		t.show(t.tr("wait_phone_first"), nil)
		t.msgID = 0
		t.askContact(t.tr("ask_phone", booking.ExamplePhone(s.Country)))
		return nil
	}
	first, total := s.Window(t.b.svc.Now())
	from := first.AddDays(min(max(t.c.D.Page, 0)*dayPage, max(total-1, 0)))
	to := from.AddDays(min(dayPage, total) - 1)
	r := booking.WaitRequest{SalonID: s.ID, From: from, To: to,
		Client: booking.ClientInput{Name: t.name(), Phone: t.c.D.Phone, Lang: t.c.Lang}}
	if len(t.c.D.Items) > 0 {
		for _, it := range t.c.D.Items {
			r.Items = append(r.Items, booking.VisitItem{ServiceID: it.Service, MasterID: it.Master})
		}
		r.Items = append(r.Items, booking.VisitItem{ServiceID: t.c.D.Service, MasterID: t.c.D.Master})
	} else {
		r.ServiceID, r.MasterID = t.c.D.Service, t.c.D.Master
	}
	e, err := t.b.svc.JoinWaitlist(t.ctx, r)
	if err != nil {
		t.c.D.Waiting = false
		return t.explain(err)
	}
	what := t.serviceName()
	if len(t.c.D.Items) > 0 {
		what = t.visitSoFar()
	}
	master := t.tr("any_master")
	if t.c.D.Master != 0 {
		master = t.masterName(t.c.D.Master)
	}
	t.c.D = t.c.D.keep()
	t.c.D.Step = stepDone
	k := t.keyboard()
	k.row(k.btn(t.tr("wait_leave"), action{Verb: doLeaveWait, ID: e.ID}))
	key := "wait_joined"
	if s, err := t.salon(); err == nil && s.WaitlistMode == booking.WaitlistHold {
		key = "wait_joined_held" // (the first in line has the time held for them)
	}
	t.show(t.tr(key, what, master, dayLabel(t.c.Lang, from), dayLabel(t.c.Lang, to)), k)
	return nil
}

// leaveWait takes the chat's entry off the list.
func (t *turn) leaveWait(id int64) error {
	if _, err := t.b.svc.LeaveWaitlist(t.ctx, id); err != nil {
		return t.explain(err)
	}
	t.c.D = t.c.D.keep()
	t.show(t.tr("wait_left"), nil)
	return nil
}

// takeOffer books a waitlist offer's time (the notice's button). A time
// taken by someone faster is answered with the nearest free ones.
func (t *turn) takeOffer(entryID, offerID int64) error {
	e, err := t.b.svc.WaitlistEntry(t.ctx, entryID)
	if err != nil {
		return t.explain(err)
	}
	if slices.ContainsFunc(e.Offers, func(o booking.WaitOffer) bool { return o.ID == offerID && o.Status == booking.OfferTaken }) {
		// Tapped again (or twice at once: the chat's turns run in turn):
		// booked once, said once, by the turn that queued the strip of
		// this button. (A turn that failed after the booking was made,
		// run again, finds none, and says it: AcceptOffer returns it.)
		var said bool
		if err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM tg_outbox WHERE dedupe_key = $1)`,
			screenStripKey(t.c.ID, t.tapped)).Scan(&said); err != nil {
			return fmt.Errorf("offer taken: %w", err)
		}
		if said {
			t.notice = t.tr("offer_taken_again")
			return nil
		}
	}
	b, err := t.b.svc.AcceptOffer(t.ctx, entryID, offerID)
	var taken *booking.SlotTakenError
	var ve *booking.ValidationError
	if err == nil || errors.As(err, &taken) || errors.As(err, &ve) {
		// The dialog is the entry's: the alternatives of a taken time book
		// its service. (Refused otherwise, the offer gone: a booking under
		// way stays.)
		if t.c.SalonID != e.SalonID {
			t.c.SalonID, t.salonC = e.SalonID, nil
		}
		t.c.D = t.c.D.keep()
		t.c.D.Service, t.c.D.Master = e.ServiceID, e.MasterID
		if len(e.Items) > 1 {
			for _, it := range e.Items[:len(e.Items)-1] {
				t.c.D.Items = append(t.c.D.Items, visitPick{Service: it.ServiceID, Master: it.MasterID})
			}
			last := e.Items[len(e.Items)-1]
			t.c.D.Service, t.c.D.Master = last.ServiceID, last.MasterID
		}
	}
	if err != nil {
		return t.explain(err)
	}
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	v, err := t.b.svc.BookingView(t.ctx, s.ID, b.ID)
	if err != nil {
		return t.explain(err)
	}
	head := "booked"
	if v.Status == booking.StatusPending {
		head = "held"
	}
	text := fmt.Sprintf("%s\n%s", t.tr(head), t.viewSummary(v))
	if v.Status == booking.StatusPending && v.Deposit > 0 {
		text += "\n" + t.tr("pending_note", when(t.c.Lang, v.HoldExpiresAt, s.Location()), v.Deposit.Format(s.Currency, t.c.Lang))
		if t.b.svc.Provider() != nil {
			text += "\n" + t.tr("pay_follows")
			t.payLink(s, b.ID, false)
		}
	}
	t.c.D = t.c.D.keep()
	t.c.D.Step = stepDone
	t.msgID = 0 // a message of its own: the offer's notice stays as it was, but for its button
	t.stripTapped()
	var k *keyboard
	if v.Status == booking.StatusConfirmed {
		k = t.keyboard()
		t.oneTaps(k, v.SalonID, v.ID)
	}
	t.show(text, k)
	return nil
}

// stripTapped takes the buttons off the message whose button was tapped
// (a notice's, whose text stays).
func (t *turn) stripTapped() {
	if t.tapped != 0 {
		t.out = append(t.out, outMsg{Op: opMarkup, ChatID: t.c.ID, MessageID: t.tapped, Key: screenStripKey(t.c.ID, t.tapped)})
	}
}
