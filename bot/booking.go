package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"salon/booking"
	"salon/i18n"
)

// The booking dialog: service, master (or any), day, time, contact,
// confirm; a lost race offers the nearest free times.

func (t *turn) services(prefix string) error {
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	list := t.menu()
	k := t.keyboard()
	ranges := booking.TermRanges(t.staff())
	if len(t.staff()) > 0 { // (masters not read: every service, as before)
		list = slices.DeleteFunc(slices.Clone(list), func(sv booking.SalonService) bool {
			_, ok := ranges[sv.ID]
			return !ok // no master does it: nothing a client could book
		})
	}
	if len(list) == 0 {
		t.show(prefix+t.tr("no_services"), nil)
		return nil
	}
	for _, sv := range list {
		// What a client pays is their master's price: a service whose
		// masters differ says where its prices start.
		// (How long the client stays: a processing time's wait and
		// finish count.)
		dur, price := strconv.Itoa(sv.StayMin(sv.DurationMin)), sv.Price.Format(s.Currency, t.c.Lang)
		if r, ok := ranges[sv.ID]; ok {
			dur, price = r.Stays(&sv), r.MinPrice.Format(s.Currency, t.c.Lang)
			if r.MinPrice != r.MaxPrice {
				price = t.tr("price_from", price)
			}
		}
		label := fmt.Sprintf("%s · %s %s · %s", sv.Name, dur, t.tr("min"), price)
		k.row(k.btn(label, action{Verb: doService, ID: sv.ID}))
	}
	t.c.D.Step, t.c.D.Moving = stepService, 0
	t.show(prefix+t.tr("choose_service"), k)
	return nil
}

// menu returns the salon's services, read once a turn.
func (t *turn) menu() []booking.SalonService {
	if t.svcs == nil {
		if s, err := t.salon(); err == nil {
			t.svcs, _ = t.b.svc.Services(t.ctx, s.ID)
		}
	}
	return t.svcs
}

// staff returns the salon's masters, read once a turn.
func (t *turn) staff() []booking.Master {
	if t.masterL == nil {
		if s, err := t.salon(); err == nil {
			t.masterL, _ = t.b.svc.Masters(t.ctx, s.ID, 0)
		}
	}
	return t.masterL
}

// service is the chosen service (zero when gone).
func (t *turn) service() booking.SalonService {
	for _, sv := range t.menu() {
		if sv.ID == t.c.D.Service {
			return sv
		}
	}
	return booking.SalonService{}
}

func (t *turn) serviceName() string { return t.service().Name }

// priceWith is what the chosen service costs with the master: their own
// price, else the service's.
func (t *turn) priceWith(masterID int64) booking.Money {
	for _, m := range t.staff() {
		if o, ok := m.TermsOf(t.c.D.Service); ok && m.ID == masterID {
			return o.Price
		}
	}
	return t.service().Price
}

func (t *turn) masterName(id int64) string {
	for _, m := range t.staff() {
		if m.ID == id {
			return m.Name
		}
	}
	return ""
}

func (t *turn) masters() error {
	var list []booking.Master
	for _, m := range t.staff() {
		if slices.Contains(m.ServiceIDs, t.c.D.Service) {
			list = append(list, m)
		}
	}
	k := t.keyboard()
	if len(list) == 0 {
		k.back(stepService)
		t.show(t.tr("no_masters"), k)
		return nil
	}
	k.row(k.btn(t.tr("any_master"), action{Verb: doMaster}))
	var bs []button
	r := booking.TermRanges(list)[t.c.D.Service]
	s, _ := t.salon()
	sv := t.service()
	for _, m := range list {
		label := m.Name
		if o, ok := m.TermsOf(t.c.D.Service); ok && s != nil && (r.MinPrice != r.MaxPrice || r.MinDuration != r.MaxDuration) {
			// Masters who differ say their own terms.
			label += fmt.Sprintf(" · %s · %d %s", o.Price.Format(s.Currency, t.c.Lang), sv.StayMin(o.DurationMin), t.tr("min"))
		}
		bs = append(bs, k.btn(label, action{Verb: doMaster, ID: m.ID}))
	}
	k.grid(2, bs)
	k.back(stepService)
	t.c.D.Step = stepMaster
	t.show(t.tr("choose_master", t.serviceName()), k)
	return nil
}

// afterSlot goes on from a chosen time: to the phone question, unless the
// user's phone is known (typed in this chat before, or proven to the
// salon by a shared contact).
func (t *turn) afterSlot() error {
	if t.c.D.Phone == "" {
		c, err := t.b.svc.IdentityClient(t.ctx, t.c.SalonID)
		if err != nil && !errors.Is(err, booking.ErrNotFound) {
			return t.explain(err)
		}
		if c != nil && c.Phone != "" {
			t.c.D.Phone, t.c.D.PhoneProven = c.Phone, true
		}
	}
	if t.c.D.Phone != "" {
		return t.confirm()
	}
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	// The time list becomes the chosen time; the question comes below.
	t.show("✓ "+when(t.c.Lang, t.c.D.SlotAt, s.Location()), nil)
	t.msgID = 0
	t.askContact(t.tr("ask_phone", booking.ExamplePhone(s.Country)))
	return nil
}

// setPhone makes phone the booking's (proven: the user's own contact). A
// phone other than the one the attempt had is a new attempt (its key);
// the same one typed keeps what proved it.
func (t *turn) setPhone(phone string, proven bool) {
	switch {
	case phone != t.c.D.Phone:
		t.c.D.Phone, t.c.D.PhoneProven, t.c.D.Key = phone, proven, ""
	case proven && !t.c.D.PhoneProven:
		t.c.D.PhoneProven, t.c.D.Key = true, ""
	}
}

// otherPhone asks, from the confirmation, for another phone than the one
// the chat gave before (a typo kept in the chat stays no longer).
func (t *turn) otherPhone() error {
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	t.c.D.Phone, t.c.D.PhoneProven, t.c.D.Key = "", false, ""
	t.show("✓ "+when(t.c.Lang, t.c.D.SlotAt, s.Location()), nil)
	t.msgID = 0
	t.askContact(t.tr("ask_phone", booking.ExamplePhone(s.Country)))
	return nil
}

// askContact asks for the phone: shared with the button, or typed.
func (t *turn) askContact(text string) {
	t.c.D.Step = stepContact
	t.c.D.Nonce, t.c.D.Actions = "", nil
	t.out = append(t.out, outMsg{Op: opSend, ChatID: t.c.ID, Text: text, Contact: t.tr("share_phone")})
}

// askTyped asks for the phone typed: sharing the contact again would give
// the same number, so the button goes.
func (t *turn) askTyped(text string) {
	t.c.D.Step = stepContact
	t.c.D.Nonce, t.c.D.Actions = "", nil
	t.out = append(t.out, outMsg{Op: opSend, ChatID: t.c.ID, Text: text})
}

// examplePhone is a number of the country of phone (else the salon's) as
// it is typed, for a hint.
func (t *turn) examplePhone(phone string) string {
	country := booking.PhoneCountry(phone)
	if country == "" {
		if s, err := t.salon(); err == nil {
			country = s.Country
		}
	}
	return booking.ExamplePhone(country)
}

// onContact takes a shared contact. The user's own contact (Telegram sets
// its user_id to the sender's) proves the phone is theirs, and Telegram
// has seen it: a possible number will do (booking.VouchedPhone); a contact
// card without a user id is only a number, like a typed one; someone
// else's card is refused. Telegram sends the number international,
// perhaps without its +. A shared number that cannot be read is asked for
// typed (sharing it again would give the same).
//
// On the confirmation it is another phone for the booking: a refusal is
// said above the confirmation again, which keeps the phone it had.
func (t *turn) onContact(c *models.Contact) error {
	confirming := t.c.D.Step == stepConfirm && t.c.D.Moving == 0
	if t.c.D.Step != stepContact && !confirming {
		t.say(t.tr("dont_understand"))
		return nil
	}
	own := c.UserID == t.from.ID
	if c.UserID != 0 && !own {
		if confirming {
			t.lead = t.tr("not_your_contact_here")
			return t.confirm()
		}
		t.askContact(t.tr("not_your_contact"))
		return nil
	}
	read := booking.InternationalPhone
	if own {
		read = booking.VouchedPhone
	}
	raw := sanitize(c.PhoneNumber)
	phone, err := read(raw)
	if err != nil {
		if confirming {
			t.lead = t.tr("bad_contact", raw, t.examplePhone(raw))
			return t.confirm()
		}
		t.askTyped(t.tr("bad_contact", raw, t.examplePhone(raw)))
		return nil
	}
	t.setPhone(phone, own)
	if t.c.D.Waiting {
		return t.waitFor()
	}
	return t.confirm()
}

// onPhone takes a typed phone, read in the salon's country.
func (t *turn) onPhone(raw string) error {
	if t.c.D.Step != stepContact {
		t.say(t.tr("dont_understand"))
		return nil
	}
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	phone, err := booking.NormalizePhone(raw, s.Country)
	if err != nil {
		t.askContact(t.tr("bad_phone", strings.TrimSpace(raw), booking.ExamplePhone(s.Country)))
		return nil
	}
	t.c.D.Phone, t.c.D.PhoneProven = phone, false
	if t.c.D.Waiting {
		return t.waitFor()
	}
	return t.confirm()
}

// summary is the lines that describe a booking.
func (t *turn) summary(service, master string, at time.Time, price booking.Money) string {
	s, _ := t.salon()
	loc, cur := time.UTC, "RUB"
	if s != nil {
		loc, cur = s.Location(), s.Currency
	}
	return fmt.Sprintf("%s: %s\n%s: %s\n%s: %s\n%s: %s", t.tr("service"), service, t.tr("master"), master,
		t.tr("when"), when(t.c.Lang, at, loc), t.tr("price"), price.Format(cur, t.c.Lang))
}

// confirm shows what will be booked, with one key for this attempt.
func (t *turn) confirm() error {
	if t.c.D.Key == "" {
		var k [12]byte
		_, _ = rand.Read(k[:])
		t.c.D.Key = hex.EncodeToString(k[:])
	}
	k := t.keyboard()
	k.row(k.btn(t.tr("confirm"), action{Verb: doConfirm}))
	// The client's packages that cover it: one tap books with one (the
	// chat's proven identity is the credential). A certificate's code is
	// sent as a message: it books with it, and is kept nowhere.
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	if t.c.D.Moving == 0 {
		// (Those of the phone the chat proved too: a package sold at the
		// desk, before the chat ever booked.)
		proven := ""
		if t.c.D.PhoneProven {
			proven = t.c.D.Phone
		}
		own, err := t.b.svc.OwnBalances(t.ctx, s.ID, proven)
		if err != nil && !errors.Is(err, booking.ErrForbidden) {
			return err
		}
		day := s.Today(t.c.D.SlotAt)
		for _, b := range own {
			// (Not one whose last day is before the visit's.)
			if t.covers(b) && (b.ExpiresOn.IsZero() || !b.ExpiresOn.Before(day)) {
				k.row(k.btn(t.tr("pay_package", b.Hint, i18n.Visits(t.c.Lang, b.Remaining)), action{Verb: doConfirm, ID: b.ID}))
			}
		}
	}
	if t.c.D.Moving == 0 {
		k.row(k.btn(t.tr("other_phone"), action{Verb: doPhone}))
	}
	k.back(stepTime)
	t.c.D.Step = stepConfirm
	text := fmt.Sprintf("%s\n%s\n%s: %s", t.tr("confirm_title"),
		t.summary(t.serviceName(), t.masterName(t.c.D.SlotMaster), t.c.D.SlotAt, t.priceWith(t.c.D.SlotMaster)), t.tr("phone"), t.c.D.Phone)
	d := t.service().Deposit
	if len(t.c.D.Items) > 0 {
		text, d = t.visitConfirm()
	}
	if d > 0 {
		// What is due, and how: online right after booking (the time held
		// meanwhile), or in the salon.
		if s, _ := t.salon(); s != nil {
			key, args := "deposit_note", []any{d.Format(s.Currency, t.c.Lang)}
			if t.b.svc.Provider() != nil {
				key, args = "confirm_deposit", append(args, s.HoldMin)
			}
			if t.c.D.Moving == 0 {
				key += "_unless" // (a package or a certificate's code may pay it instead)
			}
			text += "\n" + t.tr(key, args...)
		}
	}
	if t.c.D.Moving == 0 {
		text += "\n\n" + t.tr("code_hint")
	}
	if t.lead != "" {
		text, t.lead = t.lead+"\n\n"+text, ""
	}
	t.show(text, k)
	return nil
}

// covers reports whether package b pays for the chosen service (or one of
// the visit's).
func (t *turn) covers(b booking.Balance) bool {
	services := []int64{t.c.D.Service}
	for _, it := range t.c.D.Items {
		services = append(services, it.Service)
	}
	return slices.ContainsFunc(services, func(id int64) bool { return slices.Contains(b.ServiceIDs, id) })
}

// onCode books the confirmed time paid with the certificate or package
// whose code was sent: what is left is read first (an unknown code is
// said so, and nothing is booked). A phone sent instead is the booking's
// phone from then on. The update is redacted from the inbox.
func (t *turn) onCode(raw string) error {
	t.redact = true
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	// Each answer is said with the confirmation again, below the text:
	// the screen above it loses its buttons, so what is live is the last
	// message.
	code, ok := booking.FindCode(raw)
	if !ok {
		if phone, err := booking.NormalizePhone(raw, s.Country); err == nil {
			// Another phone for the booking (the one given before was
			// a typo, say): it books with this one.
			t.setPhone(phone, false)
			return t.confirm()
		}
		// Not a code (a word, a question, a code too short): said so,
		// not looked up.
		t.lead = t.tr("not_a_code")
		return t.confirm()
	}
	d := &t.c.D
	if now := t.b.svc.Now(); d.CodeMissesSince.IsZero() || now.Sub(d.CodeMissesSince) >= codeMissesWindow {
		d.CodeMisses, d.CodeMissesSince = 0, now
	}
	if d.CodeMisses >= codeMissesAnHour {
		// Codes are not to be guessed in a chat either.
		t.lead = t.tr("code_tries_spent", max(int(d.CodeMissesSince.Add(codeMissesWindow).Sub(t.b.svc.Now()).Minutes()), 1))
		return t.confirm()
	}
	b, err := t.b.svc.BalanceByCode(t.ctx, s.ID, code)
	if errors.Is(err, booking.ErrNotFound) {
		d.CodeMisses++
		t.lead = t.tr("no_such_code")
		return t.confirm()
	}
	if err != nil {
		return t.explain(err)
	}
	return t.book(&booking.PayWith{Kind: b.Kind, Code: code})
}

// codeMissesAnHour is how many codes that find nothing a chat may send in
// codeMissesWindow; past them, codes are not looked up until it ends.
const (
	codeMissesAnHour = 10
	codeMissesWindow = time.Hour
)

// book books the confirmed time (paid with pay, when not nil). The
// attempt's idempotency key makes a redelivered or repeated confirm
// return the same booking.
func (t *turn) book(pay *booking.PayWith) error {
	s, err := t.salon()
	if err != nil {
		return t.explain(err)
	}
	r := booking.BookRequest{
		SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.SlotMaster, StartsAt: t.c.D.SlotAt,
		Client:         booking.ClientInput{Name: t.name(), Phone: t.c.D.Phone, Verified: t.c.D.PhoneProven, Lang: t.c.Lang},
		IdempotencyKey: "tg:" + t.c.D.Key,
		PayWith:        pay,
	}
	if len(t.c.D.Items) > 0 {
		// A visit, with the masters its time was offered with.
		r.ServiceID, r.MasterID, r.Items = 0, 0, t.slotItems()
	}
	b, err := t.b.svc.Book(t.ctx, r)
	var ve *booking.ValidationError
	refused := ""
	switch {
	case errors.Is(err, booking.ErrExhausted):
		// Why: nothing left, or its last day is before the visit's.
		refused = t.tr("exhausted", i18n.Of(err).In(t.c.Lang))
	case errors.As(err, &ve) && ve.Fields["pay_with"].String() != "":
		refused = t.tr("pay_refused", ve.Fields["pay_with"].In(t.c.Lang))
	}
	if refused != "" {
		if t.msgID == 0 {
			// A code sent: why, with the confirmation again below it.
			t.lead = refused
			return t.confirm()
		}
		// A package's button was tapped: its screen says why, and the
		// confirmation comes again below it, with what is left now.
		t.show(refused, nil)
		t.msgID = 0
		return t.confirm()
	}
	if err != nil {
		return t.explain(err)
	}
	head := "booked"
	if b.Status == booking.StatusPending {
		head = "held" // not booked until the deposit comes
	}
	text := t.tr(head) + "\n" + t.summary(t.serviceName(), t.masterName(b.MasterID), b.StartsAt, b.Price)
	if len(b.Segments) > 1 {
		text = t.tr(head) + "\n" + t.visitSummary(b)
	}
	due, _ := booking.DueAtSalon(b)
	text += paidLines(t.c.Lang, s, b.PaidWith, due, b.Status)
	switch {
	case b.Status == booking.StatusPending:
		text += "\n" + t.tr("pending_note", when(t.c.Lang, b.HoldExpiresAt, s.Location()), b.Deposit.Format(s.Currency, t.c.Lang))
	case b.Deposit > 0:
		text += "\n" + t.tr("deposit_note", b.Deposit.Format(s.Currency, t.c.Lang))
	}
	t.c.D = t.c.D.keep()
	t.c.D.Step = stepDone
	k := t.keyboard()
	if b.Status == booking.StatusPending && t.b.svc.Provider() != nil {
		// The deposit's payment page comes next, in a message of its own:
		// the provider is asked after this turn (never inside its
		// transaction); the chat is told when the payment comes (or the
		// hold ends).
		text += "\n" + t.tr("pay_follows")
		t.payLink(s, b.ID, false)
	}
	if b.Status == booking.StatusConfirmed {
		t.oneTaps(k, s.ID, b.ID)
	}
	// The booking for the client's calendar, as a link to an .ics file.
	if t.b.cfg.PublicURL != "" {
		if token, err := t.b.svc.BookingCalendarToken(t.ctx, b.ID); err == nil {
			k.row(button{Text: t.tr("calendar_button"), URL: strings.TrimRight(t.b.cfg.PublicURL, "/") + "/calendar/b/" + token + ".ics"})
		}
	}
	if len(k.rows) == 0 {
		k = nil
	}
	t.show(text, k)
	return nil
}

// oneTaps adds to k a confirmation's one taps (Confirm, Move, Cancel), as
// a confirmation from the salon carries them (notify): buttons of the
// booking, not of the dialog, the chat's identity their credential.
func (t *turn) oneTaps(k *keyboard, salonID, bookingID int64) {
	ref := fmt.Sprintf("%d:%d", salonID, bookingID)
	k.row(button{Text: t.tr("b_will_come"), Data: tapConfirm + ref})
	k.row(button{Text: t.tr("b_move"), Data: tapMove + ref}, button{Text: t.tr("b_cancel"), Data: tapCancel + ref})
}

// paidLines are the lines saying what a package or a certificate paid of
// a booking in status st ("" for none), or, while the booking awaits its
// deposit, holds for it: what is left on it and until when, and what is
// left to pay at the salon (due; none when nothing is).
func paidLines(lang string, s *booking.Salon, p *booking.PaidWith, due booking.Money, st booking.Status) string {
	if p == nil {
		return ""
	}
	until := ""
	if !p.ValidUntil.IsZero() {
		until = tr(lang, "valid_until", p.ValidUntil.In(lang))
	}
	pkg, cert := "paid_package", "paid_certificate"
	if st == booking.StatusPending {
		pkg, cert = "held_package", "held_certificate"
	}
	text := "\n" + tr(lang, pkg, p.Hint, i18n.Visits(lang, int64(p.Visits)), i18n.Visits(lang, p.Remaining)) + until
	if p.Kind == booking.BalanceCertificate {
		pays, back := p.Pays(st)
		text = "\n" + tr(lang, cert, pays.Format(s.Currency, lang), booking.Money(p.Remaining).Format(s.Currency, lang)) + until
		if back > 0 {
			text += "\n" + tr(lang, "back_after_visit", back.Format(s.Currency, lang))
		}
	}
	if due > 0 {
		text += "\n" + tr(lang, "to_pay", due.Format(s.Currency, lang))
	}
	return text
}

// money is m in salon s's currency, as the chat's language writes it.
func (t *turn) money(s *booking.Salon, m booking.Money) string { return m.Format(s.Currency, t.c.Lang) }

// alternatives offers the nearest free times after a lost race (of a
// visit: whole-visit times, with their masters).
func (t *turn) alternatives(alts []booking.Slot, visits []booking.VisitSlot) error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	k := t.keyboard()
	alts = slices.DeleteFunc(slices.Clone(alts), func(a booking.Slot) bool { return t.pastUntil(s, a.Start) })
	visits = slices.DeleteFunc(slices.Clone(visits), func(v booking.VisitSlot) bool { return t.pastUntil(s, v.Start) })
	for _, a := range alts {
		label := when(t.c.Lang, a.Start, s.Location()) + " · " + t.masterName(a.MasterID)
		k.row(k.btn(label, action{Verb: doTime, Master: a.MasterID, At: a.Start.Unix()}))
	}
	for _, v := range visits {
		var names []string
		for _, m := range v.Masters() {
			names = append(names, t.masterName(m))
		}
		label := when(t.c.Lang, v.Start, s.Location()) + " · " + strings.Join(slices.Compact(names), ", ")
		k.row(k.btn(label, action{Verb: doTime, Master: v.Segments[0].MasterID, At: v.Start.Unix(), Masters: v.Masters()}))
	}
	if t.c.D.Moving == 0 && t.c.D.Service != 0 {
		k.row(k.btn(t.tr("wait_button"), action{Verb: doWait}))
	}
	k.back(stepDay)
	t.c.D.Step, t.c.D.Key = stepTaken, ""
	text := t.tr("taken")
	if len(alts)+len(visits) == 0 {
		text = t.tr("taken_none")
	}
	t.show(text, k)
	return nil
}

// payLink asks, after the turn, for the payment page of the deposit of
// booking id (of salon s) and sends it to the chat as a link button; when
// the provider does not answer, the chat hears to try /my again shortly.
func (t *turn) payLink(s *booking.Salon, id int64, rest bool) {
	chat, lang, who := t.c.ID, t.c.Lang, t.identity()
	back := strings.TrimRight(t.b.cfg.PublicURL, "/") + "/w/" + s.Slug + "/back/" // the widget's page for the return
	loc, currency := s.Location(), s.Currency
	t.after = append(t.after, func(ctx context.Context) {
		ctx = booking.As(ctx, booking.ByIdentity(who))
		msg := outMsg{Op: opSend, ChatID: chat, Text: tr(lang, "pay_later")}
		p, err := t.b.svc.StartPayment(ctx, id, func(ref string) string { return back + ref })
		switch {
		case err == nil && p.URL != "":
			msg.Text = tr(lang, "pay_due", p.Amount.Format(currency, lang), when(lang, p.HoldUntil, loc))
			if rest {
				msg.Text = tr(lang, "pay_rest", p.Amount.Format(currency, lang), when(lang, p.HoldUntil, loc))
			}
			msg.Inline = [][]button{{{Text: tr(lang, "pay_button"), URL: p.URL}}}
		case err == nil && p.Status.Terminal():
			return // paid meanwhile, or the hold is over: the chat hears of that
		case err != nil && !errors.Is(err, booking.ErrUnavailable):
			t.b.log.Warn("bot: payment page", "booking", id, "err", err)
		}
		if err := t.b.queueNow(ctx, []outMsg{msg}); err != nil {
			t.b.log.Warn("bot: payment page", "booking", id, "err", err)
		}
	})
}

// slotItems are the visit's services with the masters of the chosen time.
func (t *turn) slotItems() []booking.VisitItem {
	items := t.visitItems()
	for i := range items {
		if i < len(t.c.D.SlotMasters) {
			items[i].MasterID = t.c.D.SlotMasters[i]
		}
	}
	return items
}

// visitConfirm is the confirmation's text for a visit, and its deposit:
// each service with its master, the visit's time and price.
func (t *turn) visitConfirm() (string, booking.Money) {
	s, _ := t.salon()
	loc, cur := time.UTC, "RUB"
	if s != nil {
		loc, cur = s.Location(), s.Currency
	}
	var lines []string
	var price, deposit booking.Money
	for _, it := range t.slotItems() {
		lines = append(lines, "• "+t.nameOf(it.ServiceID)+" · "+t.masterName(it.MasterID))
		price += t.priceOf(it.ServiceID, it.MasterID)
		for _, sv := range t.menu() {
			if sv.ID == it.ServiceID {
				deposit += sv.Deposit
			}
		}
	}
	text := fmt.Sprintf("%s\n%s\n%s: %s\n%s: %s\n%s: %s", t.tr("confirm_title"), strings.Join(lines, "\n"),
		t.tr("when"), when(t.c.Lang, t.c.D.SlotAt, loc), t.tr("price"), price.Format(cur, t.c.Lang), t.tr("phone"), t.c.D.Phone)
	return text, deposit
}

// visitSummary is the lines that describe a booked visit: each service
// with its master and time, then the price.
func (t *turn) visitSummary(b *booking.Booking) string {
	s, _ := t.salon()
	loc, cur := time.UTC, "RUB"
	if s != nil {
		loc, cur = s.Location(), s.Currency
	}
	return t.segmentLines(b, loc, cur, func(i int, sg booking.Segment) (string, string) {
		return t.nameOf(sg.ServiceID), t.masterName(sg.MasterID)
	})
}

// segmentLines are a visit's services, one a line with its master and
// times, then when it starts and its whole price.
func (t *turn) segmentLines(b *booking.Booking, loc *time.Location, cur string, names func(int, booking.Segment) (service, master string)) string {
	var lines []string
	for i, sg := range booking.SegmentsOf(b) {
		service, master := names(i, sg)
		lines = append(lines, fmt.Sprintf("• %s · %s · %s–%s", service, master, i18n.Clock(sg.Start.In(loc)), i18n.Clock(sg.End.In(loc))))
	}
	return fmt.Sprintf("%s\n%s: %s\n%s: %s", strings.Join(lines, "\n"), t.tr("when"), when(t.c.Lang, b.StartsAt, loc),
		t.tr("price"), booking.VisitPrice(b).Format(cur, t.c.Lang))
}

// viewSummary is summary of a booking read with its names (its salon's,
// whichever salon the chat is at): a visit's each service, with its
// master and times, and the whole visit's price.
func (t *turn) viewSummary(v *booking.View) string {
	if len(v.Segments) < 2 || len(v.Parts) != len(v.Segments) {
		return t.summary(v.ServiceName, v.MasterName, v.StartsAt, v.Price)
	}
	return t.segmentLines(&v.Booking, v.Salon.Location(), v.Salon.Currency, func(i int, _ booking.Segment) (string, string) {
		return v.Parts[i].ServiceName, v.Parts[i].MasterName
	})
}

// priceOf is what a service costs with a master: their own price, else
// the service's.
func (t *turn) priceOf(serviceID, masterID int64) booking.Money {
	for _, m := range t.staff() {
		if o, ok := m.TermsOf(serviceID); ok && m.ID == masterID {
			return o.Price
		}
	}
	for _, sv := range t.menu() {
		if sv.ID == serviceID {
			return sv.Price
		}
	}
	return 0
}
