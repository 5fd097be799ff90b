package bot

import (
	"crypto/rand"
	"encoding/hex"
	"salon/booking"
	"strconv"
	"strings"
	"time"
)

// verb is what a button does.
type verb string

// Verbs of buttons.
const (
	doSalon     verb = "salon"    // choose salon ID
	doService   verb = "service"  // choose service ID
	doMaster    verb = "master"   // choose master ID (0: any)
	doDays      verb = "days"     // show page Page of the day list
	doDay       verb = "day"      // choose Day
	doTime      verb = "time"     // choose the slot Master at At
	doBack      verb = "back"     // back to step To
	doConfirm   verb = "confirm"  // book (with package ID, when not 0)
	doLang      verb = "lang"     // speak Lang
	doMy        verb = "my"       // list my bookings
	doCancelAsk verb = "cancel?"  // ask to cancel booking ID of Salon
	doCancel    verb = "cancel"   // cancel booking ID of Salon
	doMove      verb = "move"     // start moving booking ID of Salon
	doMoveHere  verb = "movehere" // move the booking to the chosen slot
	doPay       verb = "pay"      // the payment page of booking ID of Salon
	doMore      verb = "more"     // add another service to the visit
	doWait      verb = "wait"     // join the waitlist for the chosen service and master
	doLeaveWait verb = "unwait"   // leave waitlist entry ID
	doPhone     verb = "phone"    // give another phone for the booking confirmed
)

// action is what one button of the keyboard on screen does. It stays on
// the server, in the dialog; the button carries only the nonce and index.
type action struct {
	Verb   verb   `json:"v"`
	ID     int64  `json:"id,omitempty"`
	Salon  int64  `json:"salon,omitempty"`
	Master int64  `json:"m,omitempty"`
	At     int64  `json:"at,omitempty"` // unix seconds
	Day    string `json:"day,omitempty"`
	Page   int    `json:"page,omitempty"`
	To     step   `json:"to,omitempty"`
	Lang   string `json:"lang,omitempty"`
	// Masters are a visit's masters at At, in visit order (doTime).
	Masters []int64 `json:"ms,omitempty"`
	// Keeps is what the question said cancelling would keep of the
	// package or certificate paying the booking (doCancel).
	Keeps int64 `json:"keeps,omitempty"`
	// Prepaid is the deposit paid online the question spoke of, and
	// KeepsPaid whether it said cancelling would keep it (doCancel).
	Prepaid   booking.Money `json:"pp,omitempty"`
	KeepsPaid bool          `json:"kp,omitempty"`
}

// button is an inline keyboard button.
type button struct {
	Text string `json:"text"`
	Data string `json:"data,omitempty"`
	URL  string `json:"url,omitempty"` // a link button (the deposit's payment page)
}

// keyboard is an inline keyboard being built; each button's action is
// remembered in the dialog under the keyboard's nonce.
type keyboard struct {
	t    *turn
	rows [][]button
}

func (t *turn) keyboard() *keyboard {
	var n [4]byte
	_, _ = rand.Read(n[:])
	t.c.D.Nonce, t.c.D.Actions = hex.EncodeToString(n[:]), nil
	return &keyboard{t: t}
}

// btn makes a button that performs a.
func (k *keyboard) btn(label string, a action) button {
	k.t.c.D.Actions = append(k.t.c.D.Actions, a)
	return button{Text: label, Data: k.t.c.D.Nonce + ":" + strconv.Itoa(len(k.t.c.D.Actions)-1)}
}

func (k *keyboard) row(b ...button) { k.rows = append(k.rows, b) }

// grid lays buttons out n to a row.
func (k *keyboard) grid(n int, bs []button) {
	for i := 0; i < len(bs); i += n {
		k.row(bs[i:min(i+n, len(bs))]...)
	}
}

// back is the "« Back" button to step.
func (k *keyboard) back(to step) { k.row(k.btn(k.t.tr("back"), action{Verb: doBack, To: to})) }

// onTap performs the action of a tapped button, if it is a button of the
// keyboard on screen.
func (t *turn) onTap(data string) error {
	if rest, ok := strings.CutPrefix(data, "r:"); ok {
		return t.onNoticeTap(rest)
	}
	nonce, idx, ok := strings.Cut(data, ":")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || nonce == "" || nonce != t.c.D.Nonce || i < 0 || i >= len(t.c.D.Actions) {
		t.notice = t.tr("stale") // a button of an old keyboard, or not ours
		return nil
	}
	a := t.c.D.Actions[i]
	switch a.Verb {
	case doSalon:
		t.c.SalonID, t.salonC, t.c.D = a.ID, nil, t.c.D.keep()
		s, err := t.salon()
		if err != nil {
			return err
		}
		return t.services(t.tr("welcome", s.Name) + "\n")
	case doService:
		t.c.D.Service = a.ID
		return t.masters()
	case doMaster:
		t.c.D.Master, t.c.D.Page = a.ID, 0
		return t.days()
	case doDays:
		t.c.D.Page = a.Page
		return t.days()
	case doDay:
		t.c.D.Day = a.Day
		return t.times()
	case doTime:
		t.c.D.SlotMaster, t.c.D.SlotAt, t.c.D.Key, t.c.D.SlotMasters = a.Master, time.Unix(a.At, 0), "", a.Masters
		if t.c.D.Moving != 0 {
			return t.moveConfirm()
		}
		return t.afterSlot()
	case doBack:
		return t.back(a.To)
	case doConfirm:
		if a.ID != 0 {
			return t.book(&booking.PayWith{Kind: booking.BalancePackage, BalanceID: a.ID})
		}
		return t.book(nil)
	case doLang:
		t.c.Lang, t.c.LangSet = a.Lang, true
		t.show(t.tr("lang_set"), nil)
	case doMy:
		return t.my()
	case doCancelAsk:
		return t.cancelQuestion(a.Salon, a.ID)
	case doCancel:
		return t.cancel(a.Salon, a.ID, a)
	case doMove:
		return t.moveStart(a.Salon, a.ID)
	case doMoveHere:
		return t.move()
	case doPay:
		return t.pay(a.Salon, a.ID)
	case doPhone:
		return t.otherPhone()
	case doWait:
		return t.waitFor()
	case doLeaveWait:
		return t.leaveWait(a.ID)
	case doMore:
		if len(t.c.D.Items)+1 >= booking.MaxVisitItems || t.c.D.Service == 0 {
			t.notice = t.tr("visit_full")
			return nil
		}
		t.c.D.Items = append(t.c.D.Items, visitPick{Service: t.c.D.Service, Master: t.c.D.Master})
		t.c.D.Service, t.c.D.Master = 0, 0
		return t.services(t.visitSoFar() + "\n")
	}
	return nil
}

func (t *turn) back(to step) error {
	switch to {
	case stepService:
		return t.services("")
	case stepMaster:
		return t.masters()
	case stepDay:
		return t.days()
	case stepTime:
		return t.times()
	case stepMy:
		return t.my()
	}
	return t.startBooking("")
}

// onNoticeTap answers a button of a notice (a reminder's Confirm, Move,
// Cancel): "c:salon:booking" and the like. The chat's identity is the
// credential; a booking that is not its own is not found.
func (t *turn) onNoticeTap(data string) error {
	t.fromNotice = true
	parts := strings.Split(data, ":")
	if len(parts) != 3 {
		t.notice = t.tr("stale")
		return nil
	}
	salonID, err1 := strconv.ParseInt(parts[1], 10, 64)
	bookingID, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		t.notice = t.tr("stale")
		return nil
	}
	switch parts[0] {
	case "w": // a waitlist offer: "w:entry:offer"
		return t.takeOffer(salonID, bookingID)
	case "c":
		_, first, err := t.b.svc.ConfirmAttendance(t.ctx, salonID, bookingID)
		if err != nil {
			return t.explain(err)
		}
		t.notice = t.tr("n_confirmed")
		if !first {
			t.notice = t.tr("n_confirmed_was")
		}
		t.out = append(t.out, outMsg{Op: opSend, ChatID: t.c.ID, Text: t.notice})
		return nil
	case "m":
		t.msgID = 0 // (a screen of its own, below: the notice stays as it is)
		return t.moveStart(salonID, bookingID)
	case "x":
		t.msgID = 0
		return t.cancelQuestion(salonID, bookingID)
	case "p":
		v, err := t.b.svc.BookingView(t.ctx, salonID, bookingID)
		if err != nil {
			return t.explain(err)
		}
		t.payLink(&v.Salon, bookingID, v.Status == booking.StatusConfirmed)
		return nil
	}
	t.notice = t.tr("stale")
	return nil
}
