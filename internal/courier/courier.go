// Package courier writes the core's messages in words, in the client's
// language, and hands them to a provider: e-mail (a plain-text and an HTML
// part of the same words, the booking's .ics with a confirmation, the
// unsubscribe headers), SMS (short, its links one tap each), or, in
// development, the outbox page. Each is the booking.Courier of its channel;
// it says what a provider's failure means (refused, not sent, unknown),
// and the core decides what to do.
package courier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"salon/booking"
	"salon/booking/mail"
	"salon/booking/sms"
	"salon/i18n"
	"salon/internal/ical"
)

// Mailer sends e-mail (a *mail.Sender).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) (string, error)
}

// Email is the e-mail courier.
type Email struct {
	Mail Mailer
	Base string // the server's public URL, where links point
	Now  func() time.Time
}

var _ booking.Courier = (*Email)(nil)

// Deliver implements booking.Courier.
func (e *Email) Deliver(ctx context.Context, o *booking.Outgoing) (booking.Sent, error) {
	m, err := e.Message(o)
	if err != nil {
		return booking.Sent{}, fmt.Errorf("%w: %v", booking.ErrDeliveryRefused, err)
	}
	sent := booking.Sent{Subject: m.Subject, Body: m.Text}
	sent.ProviderID, err = e.send(ctx, m)
	return sent, err
}

// send sends m, its mail server's refusal or silence said as the
// couriers' (ErrDeliveryRefused, ErrDeliveryUnknown).
func (e *Email) send(ctx context.Context, m mail.Message) (string, error) {
	id, err := e.Mail.Send(ctx, m)
	switch {
	case errors.Is(err, mail.ErrRefused):
		return "", fmt.Errorf("%w: %w", booking.ErrDeliveryRefused, err)
	case errors.Is(err, mail.ErrUnknown):
		return "", fmt.Errorf("%w: %w", booking.ErrDeliveryUnknown, err)
	}
	return id, err
}

// sendWords sends words to whom the salon writes, with no unsubscribe
// link (a purchase's code, an invitation); what it reports keeps no words
// (they hold a code).
func (e *Email) sendWords(ctx context.Context, w Words, lang, to string, salon *booking.Salon) (booking.Sent, error) {
	html, err := w.HTML(lang, "")
	if err != nil {
		return booking.Sent{}, fmt.Errorf("%w: %v", booking.ErrDeliveryRefused, err)
	}
	id, err := e.send(ctx, mail.Message{FromName: salon.Name, To: to, Subject: w.Subject, Text: w.Text(), HTML: html})
	if err != nil {
		return booking.Sent{}, err
	}
	return booking.Sent{ProviderID: id, Subject: w.Subject}, nil
}

// Message is the e-mail of o.
func (e *Email) Message(o *booking.Outgoing) (mail.Message, error) {
	w := Compose(o, e.Base)
	var unsub string
	if o.Links.Unsubscribe != "" {
		unsub = e.Base + "/a/" + o.Links.Unsubscribe
	}
	html, err := w.HTML(o.Lang, unsub)
	if err != nil {
		return mail.Message{}, err
	}
	text := w.Text()
	if unsub != "" {
		text += "\n" + i18n.New("Unsubscribe from these e-mails").In(o.Lang) + ": " + unsub + "\n"
	}
	m := mail.Message{ID: "message-" + strconv.FormatInt(o.ID, 10), FromName: o.Booking.Salon.Name, To: o.Recipient, Subject: w.Subject,
		Text: text, HTML: html, Unsubscribe: unsub}
	switch o.Kind {
	case booking.KindConfirmation, booking.KindPaid, booking.KindChanged:
		now := time.Now
		if e.Now != nil {
			now = e.Now
		}
		m.Attachments = append(m.Attachments, mail.Attachment{Name: fmt.Sprintf("booking-%d.ics", o.BookingID),
			Type: "text/calendar", Data: []byte(ical.Booking(o.Booking, e.Base, now()))})
	}
	return m, nil
}

var _ booking.SaleCourier = (*Email)(nil)

// DeliverSale implements booking.SaleCourier: the e-mail of a balance
// bought online, with its code. What it reports keeps no words (they hold
// the code).
func (e *Email) DeliverSale(ctx context.Context, m *booking.SaleMail) (booking.Sent, error) {
	return e.sendWords(ctx, ComposeSale(m, e.Base), m.Lang, m.To, &m.Salon)
}

var _ booking.InviteCourier = (*Email)(nil)

// DeliverInvite implements booking.InviteCourier: an invitation to the
// salon's panel. What it reports keeps no words (they hold the link).
func (e *Email) DeliverInvite(ctx context.Context, m *booking.InviteMail) (booking.Sent, error) {
	return e.sendWords(ctx, ComposeInvite(m, e.Base), m.Lang, m.To, &m.Salon)
}

// SMS is the SMS courier.
type SMS struct {
	Provider sms.Provider
	Base     string
}

var (
	_ booking.Courier = (*SMS)(nil)
	_ booking.Tracker = (*SMS)(nil)
)

// Deliver implements booking.Courier.
func (s *SMS) Deliver(ctx context.Context, o *booking.Outgoing) (booking.Sent, error) {
	text := Short(o, s.Base)
	parts, _ := sms.Segments(text)
	sent := booking.Sent{Body: text, Segments: parts}
	id, err := s.Provider.Send(ctx, o.Recipient, text)
	switch {
	case sms.IsRejected(err):
		return sent, fmt.Errorf("%w: %w", booking.ErrDeliveryRefused, err)
	case errors.Is(err, sms.ErrUnknown):
		return sent, fmt.Errorf("%w: %w", booking.ErrDeliveryUnknown, err)
	case err != nil:
		return sent, err
	}
	sent.ProviderID = id
	return sent, nil
}

// Track implements booking.Tracker.
func (s *SMS) Track(ctx context.Context, id string) (bool, string, error) {
	d, err := s.Provider.Status(ctx, id)
	switch {
	case sms.IsRejected(err):
		return false, err.Error(), nil
	case err != nil:
		return false, "", err
	case d == sms.Undelivered:
		return false, "the operator did not deliver it", nil
	}
	return d == sms.Delivered, "", nil
}

// Outbox is the development courier: it writes the message in words and
// sends it nowhere. The message's row keeps the words without their links'
// tokens; the outbox keeps the last messages whole, in this process's
// memory only, so the development outbox page can offer their links to
// tap.
type Outbox struct {
	Base    string
	Channel booking.Channel

	mu    sync.Mutex
	whole map[int64]string
	order []int64
	// extra are the e-mails with no row of their own, newest last: of
	// sales' refunds (the outbox's row of a sale is its code's), and of
	// invitations to a salon's panel.
	extra []booking.Message
	sent  int64 // extra e-mails taken so far (their ids count down from extraIDs)
}

// outboxKeeps is how many whole messages an Outbox remembers.
const outboxKeeps = 200

// Deliver implements booking.Courier.
func (x *Outbox) Deliver(_ context.Context, o *booking.Outgoing) (booking.Sent, error) {
	sent := booking.Sent{ProviderID: "outbox"}
	if x.Channel == booking.ChannelSMS {
		sent.Body = Short(o, x.Base)
		sent.Segments, _ = sms.Segments(sent.Body)
	} else {
		w := Compose(o, x.Base)
		sent.Subject, sent.Body = w.Subject, w.Text()
	}
	x.keep(o.ID, sent.Body)
	return sent, nil
}

var _ booking.SaleCourier = (*Outbox)(nil)

// DeliverSale implements booking.SaleCourier: the e-mail of a sale, kept
// in memory for the outbox page: its code's by the sale (negative ids: a
// sale's, not a message's), each refund's as a message of its own
// (Extra).
func (x *Outbox) DeliverSale(_ context.Context, m *booking.SaleMail) (booking.Sent, error) {
	w := ComposeSale(m, x.Base)
	text := w.Subject + "\n\n" + w.Text()
	if m.Refund == 0 {
		x.keep(-m.SaleID, text)
		return booking.Sent{ProviderID: "outbox", Subject: w.Subject}, nil
	}
	x.add(booking.Message{SalonID: m.Salon.ID, Kind: booking.KindBalanceRefunded, Recipient: m.To, Subject: w.Subject, Body: text})
	return booking.Sent{ProviderID: "outbox", Subject: w.Subject}, nil
}

var _ booking.InviteCourier = (*Outbox)(nil)

// DeliverInvite implements booking.InviteCourier: the invitation's
// e-mail, kept in memory for the outbox page with the sales' refunds
// (it has no row of its own either).
func (x *Outbox) DeliverInvite(_ context.Context, m *booking.InviteMail) (booking.Sent, error) {
	w := ComposeInvite(m, x.Base)
	x.add(booking.Message{SalonID: m.Salon.ID, Kind: booking.KindInvitation, Recipient: m.To, Subject: w.Subject,
		Body: w.Subject + "\n\n" + w.Text()})
	return booking.Sent{ProviderID: "outbox", Subject: w.Subject}, nil
}

// add keeps an e-mail with no row of its own, sent now.
func (x *Outbox) add(m booking.Message) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sent++
	m.ID, m.Channel, m.State, m.CreatedAt, m.SentAt = extraIDs-x.sent, booking.ChannelEmail, booking.MessageSent, time.Now(), time.Now()
	x.extra = append(x.extra, m)
	if len(x.extra) > outboxKeeps {
		x.extra = slices.Delete(x.extra, 0, 1)
	}
}

// extraIDs is the first id of the e-mails with no row, counting down:
// far below the sales' (their ids negated).
const extraIDs = -1 << 40

// Extra are the e-mails with no row of their own this outbox took, whole:
// sales' refunds, invitations.
func (x *Outbox) Extra() []booking.Message {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.extra)
}

func (x *Outbox) keep(id int64, text string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.whole == nil {
		x.whole = map[int64]string{}
	}
	x.whole[id] = text
	x.order = append(x.order, id)
	if len(x.order) > outboxKeeps {
		delete(x.whole, x.order[0])
		x.order = x.order[1:]
	}
}

// Text is a message this outbox took, whole (its links live).
func (x *Outbox) Text(id int64) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t, ok := x.whole[id]
	return t, ok
}
