package bot

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"salon/booking"
	"salon/i18n"
)

// explain tells the user what an error from the core means: the one place
// where the bot turns error kinds into words. It returns nil when it has
// answered; an error that is no kind is returned, so the turn is retried
// and, if it keeps failing, apologised for.
func (t *turn) explain(err error) error {
	var (
		taken *booking.SlotTakenError
		ve    *booking.ValidationError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &taken):
		return t.alternatives(taken.Alternatives, taken.Visits)
	case errors.Is(err, booking.ErrUnavailable), errors.Is(err, booking.ErrInProgress):
		// Nothing changed; the screen stays, so the same tap can be tried again.
		t.answer(t.tr("busy"))
		return nil
	case errors.As(err, &ve):
		return t.invalid(ve)
	case errors.Is(err, booking.ErrTooLate):
		hours := 0
		if t.salonC != nil {
			hours = t.salonC.CutoffHours
		}
		return t.ended(t.tr("too_late", hours))
	case errors.Is(err, booking.ErrConflict):
		return t.ended(t.tr("not_active"))
	case errors.Is(err, booking.ErrNotFound), errors.Is(err, booking.ErrForbidden):
		t.notice = t.tr("stale")
		if t.fromNotice {
			return nil // (an old notice, or a forged tap: the dialog goes on)
		}
		if t.managing() {
			return t.my()
		}
		return t.startBooking("")
	}
	return err
}

// ended says that what was asked cannot be done any more (too late, the
// booking no longer active), ending the dialog: of a notice's button
// (fromNotice), in the tap's answer alone, and a booking under way stays.
// A screen of the client's bookings becomes that list again, read anew,
// with text above it: the other bookings' buttons stay.
func (t *turn) ended(text string) error {
	if t.fromNotice {
		t.answer(text)
		return nil
	}
	if t.managing() {
		t.lead = text
		return t.my()
	}
	t.c.D = t.c.D.keep()
	t.show(text, nil)
	return nil
}

// invalid explains a refused field.
func (t *turn) invalid(ve *booking.ValidationError) error {
	fields := slices.Sorted(maps.Keys(ve.Fields))
	switch {
	case slices.Contains(fields, "starts_at"):
		// The time is no longer bookable (too soon now, or the schedule
		// changed), or a move goes past the balance paying the booking.
		t.notice = t.tr("gone")
		if s, err := t.salon(); err == nil && t.pastUntil(s, t.c.D.SlotAt) {
			until, _ := t.moveUntil()
			t.notice = t.tr("move_until", t.c.D.UntilHint, until.In(t.c.Lang))
		}
		return t.days()
	case slices.Contains(fields, "service_id") || slices.Contains(fields, "master_id"):
		t.notice = t.tr("gone")
		return t.services("")
	case slices.Contains(fields, "client.phone"):
		refused := t.c.D.Phone
		t.c.D.Phone, t.c.D.PhoneProven = "", false
		t.askContact(t.tr("bad_phone", refused, t.examplePhone(refused)))
		return nil
	}
	var b strings.Builder
	for _, f := range fields {
		b.WriteString("\n• " + i18n.Field(f).In(t.c.Lang) + ": " + ve.Fields[f].In(t.c.Lang))
	}
	t.answer(t.tr("invalid") + b.String())
	return nil
}

// answer tells the user something short: as the tapped button's answer,
// or as a message.
func (t *turn) answer(text string) {
	if t.cbID != "" && len([]rune(text)) <= 200 {
		t.notice = text
		return
	}
	t.say(text)
}

// managing reports whether the dialog is about an existing booking.
func (t *turn) managing() bool {
	return t.c.D.Moving != 0 || t.c.D.Step == stepMy || t.c.D.Step == stepMoveConfirm
}
