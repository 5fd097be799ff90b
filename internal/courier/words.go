package courier

import (
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"

	"salon/booking"
	"salon/i18n"
)

// Words are a message written out: a subject and the lines of its body,
// each line a sentence or a labelled detail, and its links.
type Words struct {
	Subject  string
	Greeting string
	Lead     string   // what happened, in one sentence
	Details  []detail // when, what, with whom, where
	Actions  []action // one-tap links
	Footer   []string
}

type detail struct{ Label, Value string }

type action struct {
	Label, URL string
	Primary    bool
}

// headline is a message's subject (of what and when) and its lead
// sentence, by kind.
func headline(t func(string, ...any) string, kind booking.MessageKind, what, when string) (string, string) {
	switch kind {
	case booking.KindConfirmation:
		return t("You are booked: %s, %s", what, when), t("Your booking is confirmed.")
	case booking.KindPaid:
		return t("Deposit received: %s, %s", what, when), t("We received your deposit: your booking is confirmed.")
	case booking.KindPaymentDue:
		return t("Pay the deposit to keep %s, %s", what, when), t("Your time is held until the deposit is paid.")
	case booking.KindChanged:
		return t("Your booking moved: %s, %s", what, when), t("Your booking has a new time.")
	case booking.KindCancelled:
		return t("Booking cancelled: %s, %s", what, when), t("Your booking is cancelled.")
	case booking.KindHoldExpired:
		return t("Not booked: %s, %s", what, when), t("The deposit did not arrive in time, so the time was released.")
	case booking.KindRefunded:
		return t("Your deposit is on its way back: %s, %s", what, when), t("Your deposit is being returned to your card.")
	case booking.KindReminder:
		return t("Reminder: %s, %s", what, when), t("We are looking forward to seeing you.")
	case booking.KindWaitlistOffer:
		return t("A time is free: %s, %s", what, when), t("A time you are waiting for is free. The first to book it gets it.")
	}
	return what + ", " + when, ""
}

// Compose writes message o in its language, its links under base (the
// public URL of this server).
func Compose(o *booking.Outgoing, base string) Words {
	lang := o.Lang
	t := func(key string, args ...any) string { return i18n.New(key, args...).In(lang) }
	v := o.Booking
	loc := v.Salon.Location()
	at := i18n.When(lang, v.StartsAt, loc)
	subject, lead := headline(t, o.Kind, v.ServiceName, at)
	if o.Change.Event == booking.EventPaidWithBalance {
		subject, lead = t("Paid with your package or certificate: %s, %s", v.ServiceName, at), t("The salon paid your booking with your package or certificate.")
	}
	topUp := o.Kind == booking.KindPaymentDue && v.TopUp()
	if topUp {
		subject = t("Pay the rest of the deposit: %s, %s", v.ServiceName, at)
		lead = t("Your booking changed, and its deposit grew: %s more is due.", v.DepositDue.Format(v.Salon.Currency, lang))
	}
	w := Words{Subject: subject + " · " + v.Salon.Name, Lead: lead}
	if o.Kind == booking.KindReminder {
		w.Lead = t("Your visit is in %s.", span(lang, o.Lead))
	}
	if o.Kind == booking.KindCancelled && o.Change.BySalon {
		w.Lead = salonCancelled(t, v)
	}
	if o.Kind == booking.KindWaitlistOffer && v.Status == booking.StatusPending {
		w.Lead = t("We are holding this time for you until %s.", i18n.Clock(v.HoldExpiresAt.In(loc)))
	}
	if name := v.ContactName; name != "" {
		w.Greeting = t("Hello, %s!", name)
	}
	// (Until when: the client's whole stay, a processing time's or a
	// visit's too, as the widget says it.)
	until := at + "–" + i18n.Clock(booking.VisitEnd(&v.Booking).In(loc))
	w.Details = append(w.Details, detail{t("When"), until}, detail{t("Service"), v.ServiceName}, detail{t("Master"), v.MasterName},
		detail{t("Salon"), v.Salon.Name})
	if v.Salon.Address != "" {
		w.Details = append(w.Details, detail{t("Address"), v.Salon.Address})
	}
	if v.Salon.Phone != "" {
		w.Details = append(w.Details, detail{t("Salon's phone"), booking.DisplayPhone(v.Salon.Phone)})
	}
	if o.Kind == booking.KindChanged && !o.Change.FromStartsAt.IsZero() {
		part := v.PartMoved(o.Change, lang)
		switch {
		case part != "":
			w.Lead = part // (one service of a visit)
		case o.Change.FromStartsAt.Equal(v.StartsAt):
			w.Lead = t("Your booking is with another master.") // (the time is the same)
		case movedMaster(o, v):
			w.Lead = t("Your booking has a new time and another master.")
			w.Details = append(w.Details, detail{t("Was"), i18n.When(lang, o.Change.FromStartsAt, loc)})
		default:
			w.Details = append(w.Details, detail{t("Was"), i18n.When(lang, o.Change.FromStartsAt, loc)})
		}
		if o.Change.BySalon {
			w.Lead = t("The salon had to change your booking. We are sorry.") + " " + w.Lead
		}
	}
	if o.Kind == booking.KindWaitlistOffer {
		// What taking it costs, and asks first, as its page says.
		if v.Price > 0 {
			w.Details = append(w.Details, detail{t("Price"), v.Price.Format(v.Salon.Currency, lang)})
		}
		if v.Deposit > 0 {
			w.Details = append(w.Details, detail{t("Deposit"), v.Deposit.Format(v.Salon.Currency, lang)})
		}
	}
	// What the visit costs, as the widget said when it was booked, and,
	// its deposit paid online, what is left to pay at the salon (below).
	var price booking.Money
	if p := booking.VisitPrice(&v.Booking); v.PaidWith == nil && tellsPrice[o.Kind] && v.Status != booking.StatusCancelled {
		price = p
	}
	if price > 0 {
		w.Details = append(w.Details, detail{t("Price"), price.Format(v.Salon.Currency, lang)})
	}
	switch {
	case o.Kind == booking.KindRefunded && o.Change.Amount > 0:
		w.Details = append(w.Details, detail{t("Refunded"), o.Change.Amount.Format(v.Salon.Currency, lang)})
	case v.Deposit > 0 && (o.Kind == booking.KindPaid || o.Kind == booking.KindRefunded || o.Kind == booking.KindPaymentDue):
		w.Details = append(w.Details, detail{t("Deposit"), v.Deposit.Format(v.Salon.Currency, lang)})
	}
	if kept := keptDeposit(o.Kind, v); kept > 0 {
		w.Details = append(w.Details, detail{t("Deposit"), t("%s, not refunded by the cancellation rules", kept.Format(v.Salon.Currency, lang))})
	}
	w.Details = append(w.Details, paidWith(t, lang, o.Kind, v)...)
	if price > 0 && v.Prepaid > 0 && o.Kind != booking.KindPaymentDue {
		w.Details = append(w.Details, detail{t("To pay at the salon"), max(price-v.Prepaid-v.DepositDue, 0).Format(v.Salon.Currency, lang)}) // (a top-up due is paid online)
	}
	switch {
	case topUp:
		w.Details = append(w.Details, detail{t("Due now"), v.DepositDue.Format(v.Salon.Currency, lang)})
	case o.Kind == booking.KindPaymentDue && !v.HoldExpiresAt.IsZero():
		w.Details = append(w.Details, detail{t("Pay by"), i18n.When(lang, v.HoldExpiresAt, loc)}) // (a hold of the salon's may end on another day)
	}
	l := o.Links
	if l.Offer != "" {
		w.Actions = append(w.Actions, action{t("Book this time"), base + "/o/" + l.Offer, true})
		w.Footer = append(w.Footer, t("You are on the waiting list at %s.", v.Salon.Name))
	}
	if l.Pay != "" {
		w.Actions = append(w.Actions, action{t("Pay the deposit"), base + "/a/" + l.Pay, true})
	}
	if l.Confirm != "" && v.ConfirmedAt.IsZero() {
		w.Actions = append(w.Actions, action{t("I'll be there"), base + "/a/" + l.Confirm, true})
	}
	if l.Move != "" {
		w.Actions = append(w.Actions, action{t("Move"), base + "/a/" + l.Move, false})
	}
	if l.Cancel != "" {
		w.Actions = append(w.Actions, action{t("Cancel"), base + "/a/" + l.Cancel, false})
	}
	if l.Manage != "" {
		w.Actions = append(w.Actions, action{t("Open the booking"), ManageURL(base, v, lang, l.Manage), false})
	}
	if o.Kind == booking.KindCancelled && o.Change.BySalon || o.Kind == booking.KindHoldExpired {
		// (The salon cancelled, or the deposit did not come: the way
		// back to another time.)
		w.Actions = append(w.Actions, action{t("Book another time"), base + "/w/" + url.PathEscape(v.Salon.Slug) + "?lang=" + lang, true})
	}
	if v.Salon.CutoffHours > 0 && (l.Move != "" || l.Cancel != "") {
		w.Footer = append(w.Footer, t("Changes close %d hours before the start.", v.Salon.CutoffHours))
	}
	if l.Unsubscribe != "" && l.Offer == "" { // (an offer's says the waiting list)
		w.Footer = append(w.Footer, t("You get this e-mail because you booked at %s.", v.Salon.Name))
	}
	return w
}

// tellsPrice are the messages of a booking that say what it costs (a
// package or certificate's say it with what it paid: paidWith).
var tellsPrice = map[booking.MessageKind]bool{booking.KindConfirmation: true, booking.KindChanged: true, booking.KindReminder: true,
	booking.KindPaid: true, booking.KindPaymentDue: true}

// paidWith is what a package or a certificate paid of booking v (none:
// nothing), what it has left now, and what is left to pay at the salon;
// the booking cancelled, what the cancellation kept of it and gave back.
// A booking awaiting its deposit, or whose deposit did not come
// (KindHoldExpired), only held it.
func paidWith(t func(string, ...any) string, lang string, kind booking.MessageKind, v *booking.View) []detail {
	p := v.PaidWith
	if p == nil {
		return nil
	}
	cur := v.Salon.Currency
	units := func(n int64) string { return p.UnitsIn(n, cur, lang) }
	pays, back := p.Pays(v.Status)
	label, paid := t("Paid with"), t("the certificate …%s: %s", p.Hint, pays.Format(cur, lang))
	if p.Kind == booking.BalancePackage {
		paid = t("the package …%s: %s", p.Hint, i18n.Visits(lang, int64(p.Visits)))
	}
	// Awaiting its deposit, it holds them; once cancelled, it held them
	// (what was kept and what went back follows).
	if held := v.Status == booking.StatusPending || v.Status == booking.StatusCancelled || kind == booking.KindHoldExpired; held {
		label, paid = t("Held for the booking"), t("certificate …%s: %s", p.Hint, pays.Format(cur, lang))
		if p.Kind == booking.BalancePackage {
			paid = t("package …%s: %s", p.Hint, i18n.Visits(lang, int64(p.Visits)))
		}
		if v.Status != booking.StatusPending {
			label = t("Was held for the booking")
		}
	}
	out := []detail{{label, paid}, {t("Left on it"), units(p.Remaining)}}
	if back > 0 {
		// (Moved to a cheaper master: the visit spends less than it held.)
		out = append(out, detail{t("Back on it after the visit"), back.Format(cur, lang)})
	}
	if due, ok := v.AtSalon(); ok && kind != booking.KindHoldExpired {
		at := due.Format(cur, lang)
		switch {
		case due == 0 && v.Status == booking.StatusPending:
			at = t("nothing more")
		case due == 0:
			at = t("nothing: it is paid")
		}
		out = append([]detail{{t("Price"), booking.VisitPrice(&v.Booking).Format(cur, lang)}}, append(out, detail{t("To pay at the salon"), at})...)
	}
	if p.Settled && v.Status == booking.StatusCancelled {
		if p.Kept > 0 {
			out = append(out, detail{t("Kept by the cancellation rules"), units(p.Kept)})
		}
		if p.Returned > 0 {
			out = append(out, detail{t("Back on it"), units(p.Returned)})
		}
	}
	return out
}

// ManageURL is the widget's page of a booking, with a manage token in the
// fragment (which browsers never send to a server).
func ManageURL(base string, v *booking.View, lang, token string) string {
	return base + "/w/" + url.PathEscape(v.Salon.Slug) + "/manage/" + strconv.FormatInt(v.ID, 10) + "?lang=" + lang + "#t=" + token
}

// span is a reminder's lead in words: "24 hours", "2 hours", "30 minutes".
func span(lang string, d interface{ Minutes() float64 }) string {
	m := int(d.Minutes())
	if m%60 == 0 {
		return i18n.New("%d h", m/60).In(lang)
	}
	return i18n.New("%d min", m).In(lang)
}

// Text is the plain-text body.
func (w Words) Text() string {
	var b strings.Builder
	if w.Greeting != "" {
		b.WriteString(w.Greeting + "\n\n")
	}
	if w.Lead != "" {
		b.WriteString(w.Lead + "\n\n")
	}
	for _, d := range w.Details {
		fmt.Fprintf(&b, "%s: %s\n", d.Label, d.Value)
	}
	if len(w.Actions) > 0 {
		b.WriteString("\n")
		for _, a := range w.Actions {
			fmt.Fprintf(&b, "%s: %s\n", a.Label, a.URL)
		}
	}
	if len(w.Footer) > 0 {
		b.WriteString("\n" + strings.Join(w.Footer, "\n") + "\n")
	}
	return b.String()
}

var page = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.W.Subject}}</title></head>
<body style="margin:0;padding:0;background:#f4f1ee;font-family:-apple-system,Segoe UI,Roboto,Arial,sans-serif;color:#1f1a17">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:520px;background:#ffffff;border-radius:12px">
<tr><td style="padding:24px 24px 8px">
{{if .W.Greeting}}<p style="margin:0 0 12px;font-size:16px">{{.W.Greeting}}</p>{{end}}
{{if .W.Lead}}<p style="margin:0 0 16px;font-size:18px;font-weight:600">{{.W.Lead}}</p>{{end}}
<table role="presentation" cellpadding="0" cellspacing="0" style="font-size:15px;line-height:1.5">
{{range .W.Details}}<tr><td style="padding:2px 12px 2px 0;color:#6b625c;vertical-align:top">{{.Label}}</td><td style="padding:2px 0">{{.Value}}</td></tr>
{{end}}</table></td></tr>
{{if .W.Actions}}<tr><td style="padding:16px 24px">
{{range .W.Actions}}<a href="{{.URL}}" style="display:inline-block;margin:0 8px 8px 0;padding:12px 18px;border-radius:8px;font-size:15px;text-decoration:none;{{if .Primary}}background:#7a3e2f;color:#ffffff{{else}}background:#f4f1ee;color:#1f1a17{{end}}">{{.Label}}</a>
{{end}}</td></tr>{{end}}
{{if .W.Footer}}<tr><td style="padding:8px 24px 24px;font-size:13px;color:#6b625c">{{range .W.Footer}}<p style="margin:0 0 6px">{{.}}</p>{{end}}
{{if .Unsubscribe}}<p style="margin:0"><a href="{{.Unsubscribe}}" style="color:#6b625c">{{.UnsubscribeLabel}}</a></p>{{end}}</td></tr>{{end}}
</table></td></tr></table></body></html>`))

// HTML is the HTML body: the same words, laid out for mail clients (inline
// styles, one column, buttons for the links).
func (w Words) HTML(lang, unsubscribe string) (string, error) {
	var b strings.Builder
	err := page.Execute(&b, map[string]any{"W": w, "Lang": lang, "Unsubscribe": unsubscribe,
		"UnsubscribeLabel": i18n.New("Unsubscribe from these e-mails").In(lang)})
	return b.String(), err
}

// Short is an SMS: the subject's facts, the salon (with its address in a
// confirmation), and the confirm and cancel links, as few characters as
// reads well (Cyrillic SMS parts hold 70; each costs).
func Short(o *booking.Outgoing, base string) string {
	lang := o.Lang
	t := func(key string, args ...any) string { return i18n.New(key, args...).In(lang) }
	v := o.Booking
	subject, _ := headline(t, o.Kind, v.ServiceName, i18n.When(lang, v.StartsAt, v.Salon.Location()))
	if o.Change.Event == booking.EventPaidWithBalance {
		subject = t("Paid with your package or certificate: %s, %s", v.ServiceName, i18n.When(lang, v.StartsAt, v.Salon.Location()))
	}
	if o.Kind == booking.KindPaymentDue && v.TopUp() {
		subject = t("Pay the rest of the deposit: %s, %s", v.ServiceName, i18n.When(lang, v.StartsAt, v.Salon.Location())) +
			" — " + v.DepositDue.Format(v.Salon.Currency, lang)
	}
	parts := []string{subject + ". " + v.Salon.Name}
	if v.Salon.Address != "" && o.Kind == booking.KindConfirmation {
		parts[0] += ", " + v.Salon.Address
	}
	if part := v.PartMoved(o.Change, lang); o.Kind == booking.KindChanged && part != "" {
		parts = append(parts, part)
	} else if o.Kind == booking.KindChanged {
		if from := o.Change.FromStartsAt; !from.IsZero() && !from.Equal(v.StartsAt) {
			parts = append(parts, t("Was")+": "+i18n.When(lang, from, v.Salon.Location()))
		}
		if movedMaster(o, v) {
			parts = append(parts, t("Master")+": "+v.MasterName)
		}
	}
	switch {
	case o.Kind == booking.KindCancelled && o.Change.BySalon:
		parts = append(parts, salonCancelled(t, v))
	case o.Kind == booking.KindChanged && o.Change.BySalon:
		parts = append(parts, t("The salon had to change your booking. We are sorry."))
	}
	if line := shortPaid(t, lang, o.Kind, v); line != "" {
		parts = append(parts, line)
	}
	if kept := keptDeposit(o.Kind, v); kept > 0 {
		parts = append(parts, t("Deposit")+": "+t("%s, not refunded by the cancellation rules", kept.Format(v.Salon.Currency, lang)))
	}
	if o.Links.Offer != "" {
		parts = append(parts, t("Book")+": "+base+"/o/"+o.Links.Offer)
	}
	if o.Links.Pay != "" {
		parts = append(parts, t("Pay")+": "+base+"/a/"+o.Links.Pay)
	}
	if o.Links.Confirm != "" && v.ConfirmedAt.IsZero() {
		parts = append(parts, t("Confirm")+": "+base+"/a/"+o.Links.Confirm)
	}
	if o.Links.Cancel != "" {
		parts = append(parts, t("Cancel")+": "+base+"/a/"+o.Links.Cancel)
	}
	return strings.Join(parts, "\n")
}

// salonCancelled says the salon had to cancel booking v, with an apology,
// and that what was paid online goes back (what a package or certificate
// paid, the message's own line says went back to it).
func salonCancelled(t func(string, ...any) string, v *booking.View) string {
	line := t("The salon had to cancel your booking. We are sorry.")
	if v.PaidOnline {
		line += " " + t("What you paid online goes back to you.")
	}
	return line
}

// movedMaster reports whether the move o tells of took booking v to
// another master.
func movedMaster(o *booking.Outgoing, v *booking.View) bool {
	return o.Change.FromMasterID != 0 && o.Change.FromMasterID != v.MasterID
}

// keptDeposit is, in the message of a cancellation, what the salon kept
// of the deposit paid online by its refund policy (0: none, or not that
// message): what it still holds of a cancelled booking's payments, since
// a cancellation that refunds starts the refund in its own transaction.
func keptDeposit(kind booking.MessageKind, v *booking.View) booking.Money {
	if kind != booking.KindCancelled || v.Status != booking.StatusCancelled {
		return 0
	}
	return v.Prepaid
}

// shortPaid is an SMS's line of what a package or a certificate paid of
// booking v: in a confirmation, what it paid and has left; in a
// cancellation, what came back to it or the rules kept ("" otherwise).
func shortPaid(t func(string, ...any) string, lang string, kind booking.MessageKind, v *booking.View) string {
	p := v.PaidWith
	if p == nil {
		return ""
	}
	units := func(n int64) string { return p.UnitsIn(n, v.Salon.Currency, lang) }
	what := t("Certificate")
	pays, back := p.Pays(v.Status)
	paid := pays.Format(v.Salon.Currency, lang)
	if p.Kind == booking.BalancePackage {
		what, paid = t("Package"), i18n.Visits(lang, int64(p.Visits))
	}
	switch {
	case kind == booking.KindConfirmation || kind == booking.KindChanged && v.Status.Active():
		// (Moved: what it pays of the new price, which may differ.)
		line := what + ": " + t("paid %s, %s left", paid, units(p.Remaining))
		if back > 0 {
			// (Moved to a cheaper master: the visit spends less than it held.)
			line += "; " + t("%s back on it after the visit", back.Format(v.Salon.Currency, lang))
		}
		if due, ok := v.AtSalon(); ok && due > 0 {
			line += "; " + t("%s to pay at the salon", due.Format(v.Salon.Currency, lang))
		}
		return line
	case kind == booking.KindCancelled && p.Settled:
		var said []string
		if p.Returned > 0 {
			said = append(said, t("%s back on it", units(p.Returned)))
		}
		if p.Kept > 0 {
			said = append(said, t("%s kept by the cancellation rules", units(p.Kept)))
		}
		if len(said) > 0 {
			return what + ": " + strings.Join(said, ", ")
		}
	}
	return ""
}

// ComposeSale writes the e-mail of a package or certificate bought online:
// its code, what it holds, until when, and where to book with it.
func ComposeSale(m *booking.SaleMail, base string) Words {
	lang := m.Lang
	t := func(key string, args ...any) string { return i18n.New(key, args...).In(lang) }
	w := Words{}
	if m.Refund > 0 {
		// A refund of it: how much went back, and what it still holds.
		w.Subject = t("A refund from %s", m.Salon.Name)
		w.Lead = t("%s went back to the card you paid with.", m.Refund.Format(m.Salon.Currency, lang))
		left := booking.Money(m.Units).Format(m.Salon.Currency, lang)
		if m.Kind == booking.BalancePackage {
			left = strconv.FormatInt(m.Units, 10)
		}
		w.Details = append(w.Details, detail{t("Purchase"), m.Title})
		if m.Price > 0 {
			// (Refunded in parts: what came back in all, of its price.)
			w.Details = append(w.Details, detail{t("Refunded in all"),
				t("%s of %s", m.Refunded.Format(m.Salon.Currency, lang), m.Price.Format(m.Salon.Currency, lang))})
		}
		if m.Units > 0 {
			w.Details = append(w.Details, detail{t("Left on it"), left})
		}
		if m.Held > 0 {
			// What bookings still hold: theirs while they stand, back on
			// it (and refundable) if they are cancelled.
			held := booking.Money(m.Held).Format(m.Salon.Currency, lang)
			if m.Kind == booking.BalancePackage {
				held = strconv.FormatInt(m.Held, 10)
			}
			w.Details = append(w.Details, detail{t("Held by bookings"), held})
			w.Footer = append(w.Footer, t("What bookings hold pays for them; if one is cancelled, what it holds comes back to the purchase, and the salon can refund that too."))
		}
		w.Details = append(w.Details, detail{t("Salon"), m.Salon.Name})
		w.Footer = append(w.Footer, t("A refund takes the bank a few days to show."))
		return w
	}
	if m.Kind == booking.BalancePackage {
		w.Subject = t("Your package at %s", m.Salon.Name)
		w.Lead = t("Thank you for your purchase. Book with this code and a visit is paid from the package.")
		if m.Phone != "" {
			w.Lead += " " + t("The package is for the client with the phone below: book with that phone.")
		}
	} else {
		w.Subject = t("Your gift certificate at %s", m.Salon.Name)
		w.Lead = t("Thank you for your purchase. Whoever holds this code pays with it when booking.")
	}
	w.Details = append(w.Details, detail{t("Code"), m.Code})
	if m.Kind == booking.BalancePackage {
		w.Details = append(w.Details, detail{t("Visits"), strconv.FormatInt(m.Units, 10)},
			detail{t("Service"), strings.Join(m.Services, ", ")})
		if m.Phone != "" {
			// (A package is its client's: the visits it pays are booked
			// with this phone, by its owner.)
			w.Details = append(w.Details, detail{t("For the phone"), booking.DisplayPhone(m.Phone)})
		}
	} else {
		w.Details = append(w.Details, detail{t("Amount"), booking.Money(m.Units).Format(m.Salon.Currency, lang)})
	}
	if !m.ValidUntil.IsZero() {
		w.Details = append(w.Details, detail{t("Valid until"), m.ValidUntil.In(lang)})
	}
	w.Details = append(w.Details, detail{t("Salon"), m.Salon.Name})
	if m.Salon.Address != "" {
		w.Details = append(w.Details, detail{t("Address"), m.Salon.Address})
	}
	w.Actions = append(w.Actions, action{t("Book a visit"), base + "/w/" + url.PathEscape(m.Salon.Slug) + "?lang=" + lang, true})
	w.Footer = append(w.Footer, t("Keep this code: it is what pays. The salon never asks for it by phone."))
	return w
}

// ComposeInvite writes the e-mail of an invitation to a salon's panel:
// who invites, as what, the link that sets a password, and until when.
func ComposeInvite(m *booking.InviteMail, base string) Words {
	lang := m.Lang
	t := func(key string, args ...any) string { return i18n.New(key, args...).In(lang) }
	w := Words{Subject: t("You are invited to the panel of %s", m.Salon.Name)}
	w.Lead = t("The salon invites you to its panel, where its bookings, clients and day are kept. Set a password to start.")
	if m.InvitedBy != "" {
		w.Details = append(w.Details, detail{t("Invited by"), m.InvitedBy})
	}
	w.Details = append(w.Details, detail{t("Salon"), m.Salon.Name}, detail{t("Role"), t(string(m.Role))},
		detail{t("Your login"), m.To},
		detail{t("Link valid until"), i18n.When(lang, m.ExpiresAt, m.Salon.Location())})
	w.Actions = append(w.Actions, action{t("Set a password"), base + booking.InvitePath(m.Code, lang), true})
	w.Footer = append(w.Footer, t("Did not expect this? Ignore this e-mail: nothing happens without the link."))
	return w
}
