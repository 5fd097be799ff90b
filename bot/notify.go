package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/booking"
	"salon/i18n"
)

// Notifier delivers the core's notices on Telegram: it writes each as a
// message in the outbox, in the transaction that completes the job that
// made it, keyed so a retried job queues nothing twice; the sender then
// delivers it within Telegram's limits. It needs nothing but that
// transaction, so it is made before the booking service it serves:
//
//	svc := booking.New(pool, booking.WithNotifier(booking.ChannelTelegram, bot.Notifier{}))
type Notifier struct{}

var _ booking.Notifier = Notifier{}

// Notify implements booking.Notifier.
func (Notifier) Notify(ctx context.Context, tx pgx.Tx, n booking.Notice) error {
	chat, err := strconv.ParseInt(n.To.ExternalID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: not a user id: %q", n.To.ExternalID)
	}
	v := n.Booking
	lang := v.Salon.Locale
	if err := tx.QueryRow(ctx, `SELECT lang FROM tg_chats WHERE chat_id = $1`, chat).Scan(&lang); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if lang != "ru" && lang != "en" {
		lang = "ru"
	}
	key := noticeKey(n)
	if key == "" {
		return nil
	}
	title := tr(lang, key)
	if key == "n_reminder_in" {
		left := n.Booking.StartsAt.Sub(n.At).Round(time.Minute)
		if left >= time.Hour {
			title = tr(lang, key, i18n.New("%d h", int(left.Round(time.Hour).Hours())).In(lang))
		} else {
			title = tr(lang, key, i18n.New("%d min", int(left.Minutes())).In(lang))
		}
	}
	msg := outMsg{Op: opSend, ChatID: chat, Text: describe(lang, title, n), Key: n.Key}
	if n.Event == booking.EventRefunded && n.Change.Amount > 0 && !n.To.Master {
		msg.Text += "\n" + tr(lang, "n_refund_amount", n.Change.Amount.Format(v.Salon.Currency, lang))
	}
	if n.Event == booking.EventCancelled && !n.To.Master && v.Status == booking.StatusCancelled && v.Prepaid > 0 {
		// What the salon's policy kept of the deposit (a refund starts
		// with the cancellation, and is told when it is made).
		msg.Text += "\n" + tr(lang, "deposit_kept", v.Prepaid.Format(v.Salon.Currency, lang))
	}
	if due, ok := owed(n); ok && !n.To.Master {
		// A deposit to pay (a booking the salon made, or moved to a larger
		// deposit): the amount, and a button that opens its payment.
		msg.Text += "\n" + tr(lang, "n_due_amount", due.Format(v.Salon.Currency, lang))
		msg.Inline = [][]button{{{Text: tr(lang, "pay_button"), Data: tapPay + fmt.Sprintf("%d:%d", v.SalonID, v.ID)}}}
	}
	if o := n.Offer; o != nil && !n.To.Master {
		// A waitlist offer: one tap books it (the chat's identity, or the
		// client it was proven to be, is the credential).
		if v.Status == booking.StatusPending {
			msg.Text += "\n" + tr(lang, "n_offer_held_until", i18n.Clock(v.HoldExpiresAt.In(v.Salon.Location())))
		}
		msg.Inline = [][]button{{{Text: tr(lang, "b_take_offer"), Data: tapOffer + fmt.Sprintf("%d:%d", o.EntryID, o.ID)}}}
		return queue(ctx, tx, []outMsg{msg})
	}
	answers := n.Event == booking.EventReminder || n.Event == booking.EventPaid || n.Event == booking.EventCreated && v.Status == booking.StatusConfirmed
	if answers && !n.To.Master && !n.Plain && v.ConfirmedAt.IsZero() && v.Status.Active() {
		// One tap, on reminders and confirmations: confirm, move or
		// cancel, with the chat's identity as the credential (the core
		// decides), whatever dialog the chat is in.
		ref := fmt.Sprintf("%d:%d", v.SalonID, v.ID)
		msg.Inline = [][]button{{{Text: tr(lang, "b_will_come"), Data: tapConfirm + ref}},
			{{Text: tr(lang, "b_move"), Data: tapMove + ref}, {Text: tr(lang, "b_cancel"), Data: tapCancel + ref}}}
	}
	return queue(ctx, tx, []outMsg{msg})
}

// The callback data of a notice's buttons: a prefix and "salon:booking".
const (
	tapConfirm = "r:c:"
	tapMove    = "r:m:"
	tapCancel  = "r:x:"
	tapPay     = "r:p:"
	tapOffer   = "r:w:" // "entry:offer" of a waitlist offer
)

// owed is what a notice asks the client to pay online, if it asks.
func owed(n booking.Notice) (booking.Money, bool) {
	v := n.Booking
	switch {
	case n.Event == booking.EventDepositDue && v.TopUp():
		return v.DepositDue, true
	case n.Event == booking.EventCreated && v.Status == booking.StatusPending && v.Deposit > 0:
		return v.Deposit, true
	}
	return 0, false
}

// noticeKey is the text that heads a notice, or "" for none.
func noticeKey(n booking.Notice) string {
	if n.Event == booking.EventReminder {
		// Said as it is when it goes: "tomorrow" only on the day before,
		// "in two hours" only two hours before (a reminder held back by
		// the night says how long is left).
		loc := n.Booking.Salon.Location()
		left := n.Booking.StartsAt.Sub(n.At)
		switch {
		case n.Lead >= 20*time.Hour && n.Lead <= 28*time.Hour && booking.DateOf(n.At.In(loc)).AddDays(1) == booking.DateOf(n.Booking.StartsAt.In(loc)):
			return "n_reminder_24h"
		case n.Lead >= 90*time.Minute && n.Lead <= 150*time.Minute && left >= 90*time.Minute && left <= 150*time.Minute:
			return "n_reminder_2h"
		}
		return "n_reminder_in"
	}
	if n.To.Master {
		return map[string]string{booking.EventCreated: "n_new_booking", booking.EventCancelled: "n_cancelled",
			booking.EventRescheduled: "n_moved", booking.EventHoldExpired: "n_cancelled", booking.EventPaid: "n_new_booking"}[n.Event]
	}
	if n.Event == booking.EventCreated && n.Booking.Status == booking.StatusPending {
		return "n_client_held"
	}
	if n.Event == booking.EventCancelled && n.Change.BySalon {
		return "n_salon_cancel"
	}
	if n.Event == booking.EventRescheduled && n.Change.BySalon {
		return "n_salon_moved"
	}
	if n.Event == booking.EventWaitlistOffer {
		if n.Booking.Status == booking.StatusPending {
			return "n_offer_held"
		}
		return "n_offer"
	}
	return map[string]string{booking.EventCreated: "n_client_booked", booking.EventCancelled: "n_client_cancel", booking.EventDepositDue: "n_deposit_due",
		booking.EventRescheduled: "n_client_moved", booking.EventHoldExpired: "n_hold_expired", booking.EventPaid: "n_paid",
		booking.EventRefunded: "n_refunded", booking.EventPaidWithBalance: "n_paid_with"}[n.Event]
}

// describe is the text of a notice.
func describe(lang, title string, n booking.Notice) string {
	v := n.Booking
	loc := v.Salon.Location()
	text := fmt.Sprintf("%s\n%s: %s\n%s: %s\n%s: %s", title, tr(lang, "when"), when(lang, v.StartsAt, loc),
		tr(lang, "service"), v.ServiceName, tr(lang, "master"), v.MasterName)
	if n.To.Master {
		name := v.ContactName // who is coming, as they gave their name
		if name == "" {
			name = v.ClientName
		}
		text += fmt.Sprintf("\n%s: %s", tr(lang, "client"), name)
	} else {
		text += fmt.Sprintf("\n%s: %s", tr(lang, "salon"), v.Salon.Name)
		if v.Salon.Address != "" {
			text += fmt.Sprintf("\n%s: %s", tr(lang, "address"), v.Salon.Address)
		}
		if v.Salon.Phone != "" {
			text += fmt.Sprintf("\n%s: %s", tr(lang, "salon_phone"), booking.DisplayPhone(v.Salon.Phone))
		}
	}
	if part := v.PartMoved(n.Change, lang); n.Event == booking.EventRescheduled && part != "" {
		text += "\n" + part // (one service of a visit)
	} else if n.Event == booking.EventRescheduled && !n.Change.FromStartsAt.IsZero() && !n.Change.FromStartsAt.Equal(v.StartsAt) {
		text += fmt.Sprintf("\n(%s: %s)", tr(lang, "n_was"), when(lang, n.Change.FromStartsAt, loc))
	}
	if !n.To.Master {
		// The package or certificate it is paid with: what it paid and has
		// left, and what is left to pay at the salon; once cancelled,
		// what went back to it and what was kept.
		if due, ok := v.AtSalon(); ok {
			text += paidLines(lang, &v.Salon, v.PaidWith, due, v.Status)
		} else {
			text += cancelledLines(lang, v)
		}
	}
	return text
}
