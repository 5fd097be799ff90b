package booking

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// One-tap links. An e-mail or SMS carries links of one purpose each
// (confirm, move, cancel, manage, unsubscribe) for one booking, made when
// the message is sent: random tokens, of which the database keeps only the
// SHA-256, expiring (the action ones at the booking's start). Opening a
// link (OpenLink) changes nothing, so mail scanners and link previews are
// harmless; only using it (UseLink, a POST) acts, as the client, through
// the channel that carried it, under the salon's rules (the cutoff for a
// cancellation). A manage link is a manage token of the booking (ByToken).

// LinkAction is what a link does.
type LinkAction string

// Link actions.
const (
	LinkConfirm     LinkAction = "confirm"
	LinkMove        LinkAction = "move"
	LinkCancel      LinkAction = "cancel"
	LinkManage      LinkAction = "manage"      // the widget's page of the booking
	LinkUnsubscribe LinkAction = "unsubscribe" // no more e-mail from the salon to this address
	LinkTelegram    LinkAction = "telegram"    // the bot's deep link: this chat hears of the booking
	LinkPay         LinkAction = "pay"         // the deposit's payment page (again after a decline)
)

// Link errors.
var (
	ErrLinkExpired = errors.New("the link has expired")
	ErrLinkUsed    = errors.New("the link was used")
)

// How long links last.
const (
	manageLinkAfter  = 7 * 24 * time.Hour // after the start: the booking page for a week more
	moveLinkLife     = time.Hour          // the manage link a Move makes
	unsubscribeLife  = 365 * 24 * time.Hour
	telegramLinkLife = 7 * 24 * time.Hour
)

// newLinkToken returns a random link token (128 bits, 22 URL-safe
// characters: short enough for an SMS).
func newLinkToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// insertLink stores a link of booking b and returns its token.
func insertLink(ctx context.Context, q querier, b *Booking, action LinkAction, ch Channel, address string, message int64,
	expires time.Time) (string, error) {
	token := newLinkToken()
	var msg *int64
	if message != 0 {
		msg = &message
	}
	_, err := q.Exec(ctx, `INSERT INTO booking_links (token_hash, salon_id, booking_id, action, channel, address, message_id, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, tokenHash(token), b.SalonID, b.ID, action, ch, address, msg, expires)
	if err != nil {
		return "", fmt.Errorf("link: %w", err)
	}
	return token, nil
}

// makeLinks makes the links message m carries, in tx, in one statement:
// reminders and confirmations confirm, move (e-mail) and cancel, with the
// booking's page (e-mail); a deposit due by e-mail the booking's page
// (which pays it); every e-mail its unsubscribe link.
func makeLinks(ctx context.Context, tx pgx.Tx, m *Message, v *View, now time.Time) (Links, error) {
	var l Links
	var hashes [][]byte
	var actions []string
	var expires []time.Time
	add := func(to *string, a LinkAction, until time.Time) {
		if until.After(now) {
			*to = newLinkToken()
			hashes, actions, expires = append(hashes, tokenHash(*to)), append(actions, string(a)), append(expires, until)
		}
	}
	switch {
	case m.Plain: // the hold-out: nothing to tap, but the booking's page
		if m.Channel == ChannelEmail && m.Kind != KindCancelled && m.Kind != KindHoldExpired {
			add(&l.Manage, LinkManage, v.StartsAt.Add(manageLinkAfter))
		}
	case m.Kind == KindChanged && m.Change.Event == EventPaidWithBalance:
		// (A notice of what the desk paid: the booking's page, no
		// actions; an SMS, none.)
		if m.Channel == ChannelEmail {
			add(&l.Manage, LinkManage, v.StartsAt.Add(manageLinkAfter))
		}
	case m.Kind == KindReminder, m.Kind == KindConfirmation, m.Kind == KindPaid, m.Kind == KindChanged:
		add(&l.Confirm, LinkConfirm, v.StartsAt)
		add(&l.Cancel, LinkCancel, v.StartsAt)
		if m.Channel == ChannelEmail {
			add(&l.Move, LinkMove, v.StartsAt)
			add(&l.Manage, LinkManage, v.StartsAt.Add(manageLinkAfter))
		}
	case m.Kind == KindPaymentDue:
		// Paid while the hold lasts (a top-up: until the visit).
		until := v.StartsAt
		if v.Status == StatusPending {
			until = v.HoldExpiresAt
		}
		add(&l.Pay, LinkPay, until)
		if m.Channel == ChannelEmail {
			add(&l.Manage, LinkManage, v.StartsAt)
		}
	}
	if m.Channel == ChannelEmail {
		add(&l.Unsubscribe, LinkUnsubscribe, now.Add(unsubscribeLife))
	}
	if len(hashes) == 0 {
		return l, nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO booking_links (token_hash, salon_id, booking_id, action, channel, address, message_id, expires_at)
		SELECT x.hash, $4, $5, x.action, $6, $7, $8, x.expires FROM unnest($1::bytea[], $2::text[], $3::timestamptz[]) AS x(hash, action, expires)`,
		hashes, actions, expires, v.SalonID, v.ID, m.Channel, m.Recipient, m.ID)
	if err != nil {
		return Links{}, fmt.Errorf("links of message %d: %w", m.ID, err)
	}
	return l, nil
}

// LinkState says whether a link can still be used.
type LinkState string

// Link states.
const (
	LinkLive    LinkState = "live"
	LinkUsed    LinkState = "used"
	LinkExpired LinkState = "expired"
)

// Link is a one-tap link as its page shows it.
type Link struct {
	Action  LinkAction
	Channel Channel
	Address string // where the message went (an unsubscribe link's e-mail)
	State   LinkState
	Booking *View
	// Confirmed: the booking was confirmed already (by this link or
	// another).
	Confirmed bool
}

// readLink reads a link by its token (ErrNotFound for none).
func (s *Service) readLink(ctx context.Context, q querier, token, lock string) (*Link, *linkRow, error) {
	if token == "" || len(token) > 64 {
		return nil, nil, fmt.Errorf("link: %w", ErrNotFound)
	}
	var r linkRow
	var used *time.Time
	err := q.QueryRow(ctx, `SELECT salon_id, COALESCE(booking_id, 0), action, channel, address, expires_at, used_at FROM booking_links
		WHERE token_hash = $1 `+lock, tokenHash(token)).Scan(&r.salonID, &r.bookingID, &r.action, &r.channel, &r.address, &r.expires, &used)
	if isNoRows(err) {
		return nil, nil, fmt.Errorf("link: %w", ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("link: %w", dbErr(err))
	}
	r.used = used != nil
	var v *View
	if r.bookingID == 0 {
		// An unsubscribe link of a message of no booking (a waitlist
		// offer's e-mail): the salon alone.
		salon, err := getSalon(ctx, q, r.salonID)
		if err != nil {
			return nil, nil, err
		}
		v = &View{Booking: Booking{SalonID: r.salonID}, Salon: *salon}
	} else if v, err = s.BookingView(As(ctx, Caller{kind: callerLink, link: linkGrant{bookingID: r.bookingID, channel: r.channel}}),
		r.salonID, r.bookingID); err != nil {
		return nil, nil, err
	}
	l := &Link{Action: r.action, Channel: r.channel, Address: r.address, Booking: v, State: LinkLive, Confirmed: !v.ConfirmedAt.IsZero()}
	switch {
	case r.used && r.action != LinkConfirm && r.action != LinkMove && r.action != LinkUnsubscribe:
		l.State = LinkUsed
	case !s.now().Before(r.expires):
		l.State = LinkExpired
	}
	return l, &r, nil
}

type linkRow struct {
	salonID, bookingID int64
	action             LinkAction
	channel            Channel
	address            string
	expires            time.Time
	used               bool
}

// OpenLink shows what a link would do, changing nothing (a GET: mail
// scanners and previews open links). Errors: ErrNotFound (no such link).
func (s *Service) OpenLink(ctx context.Context, token string) (*Link, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	l, _, err := s.readLink(ctx, s.pool, token, "")
	return l, err
}

// LinkResult is what using a link did.
type LinkResult struct {
	Link
	// Already: it had been done before (a second confirmation, an
	// unsubscribe repeated): nothing changed now.
	Already bool
	// ManageToken, for a move: a manage token of the booking, good for an
	// hour, with which the widget's page moves it.
	ManageToken string
}

// PayByLink starts (or returns) the payment a pay link asks for, as the
// booking's client through the link's channel: a pending booking's
// deposit, or what a moved one still owes of it (StartPayment, the client
// sent back to back(ref)). The link stays live until it expires, so a
// client whose payment was declined taps it again. Errors: ErrNotFound
// (no such link, or not a pay link), ErrLinkExpired, ErrConflict (nothing
// is owed now), ErrUnavailable.
func (s *Service) PayByLink(ctx context.Context, token string, back ReturnLink) (*PaymentSession, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	l, r, err := s.readLink(ctx, s.pool, token, "")
	if err != nil {
		return nil, err
	}
	if r.action != LinkPay {
		return nil, fmt.Errorf("%s link: %w", r.action, ErrNotFound)
	}
	if l.State == LinkExpired {
		return nil, fmt.Errorf("pay link: %w", ErrLinkExpired)
	}
	as := As(ctx, Caller{kind: callerLink, link: linkGrant{bookingID: r.bookingID, channel: r.channel}})
	sess, err := s.StartPayment(as, r.bookingID, back)
	if err != nil {
		return nil, err
	}
	if sess.URL == "" {
		return sess, conflict("booking %d owes no deposit online now", r.bookingID)
	}
	return sess, nil
}

// UseLink does what a link says, as the booking's client through the
// link's channel: confirm (idempotent: a second tap is Already), cancel
// (once, before the salon's cutoff: ErrTooLate after it), move (a manage
// token for the widget's reschedule), unsubscribe (that e-mail hears no
// more from the salon). Errors: ErrNotFound, ErrLinkExpired, ErrLinkUsed,
// ErrTooLate, ErrConflict (the booking is no longer active).
func (s *Service) UseLink(ctx context.Context, token string) (*LinkResult, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	l, r, err := s.readLink(ctx, s.pool, token, "")
	if err != nil {
		return nil, err
	}
	switch l.State {
	case LinkExpired:
		return nil, fmt.Errorf("%s link: %w", l.Action, ErrLinkExpired)
	case LinkUsed:
		return nil, fmt.Errorf("%s link: %w", l.Action, ErrLinkUsed)
	}
	as := As(ctx, Caller{kind: callerLink, link: linkGrant{bookingID: r.bookingID, channel: r.channel}})
	out := &LinkResult{Link: *l}
	switch r.action {
	case LinkConfirm:
		b, first, err := s.ConfirmAttendance(as, r.salonID, r.bookingID)
		if err != nil {
			return nil, err
		}
		out.Already, out.Confirmed = !first, true
		out.Booking.Booking = *b
	case LinkCancel:
		b, err := s.Cancel(as, CancelRequest{SalonID: r.salonID, BookingID: r.bookingID})
		if err != nil {
			return nil, err
		}
		out.Booking.Booking = *b
		// What the cancellation kept of the balance that paid it, and gave
		// back.
		if out.Booking.PaidWith, err = paidWith(ctx, s.pool, b.visit()); err != nil {
			return nil, dbErr(err)
		}
		// And of the deposit paid online (a refund is under way from
		// the cancellation's own transaction).
		if err := s.pool.QueryRow(ctx, `SELECT `+prepaidSQL+` FROM bookings b WHERE b.id = $1`, b.ID).Scan(&out.Booking.Prepaid); err != nil {
			return nil, dbErr(err)
		}
	case LinkMove:
		if !l.Booking.Changeable {
			return nil, tooLate("changes close %d hours before the start", l.Booking.Salon.CutoffHours)
		}
		exp := s.now().Add(moveLinkLife)
		if exp.After(l.Booking.StartsAt) {
			exp = l.Booking.StartsAt
		}
		if out.ManageToken, err = insertLink(ctx, s.pool, &l.Booking.Booking, LinkManage, r.channel, r.address, 0, exp); err != nil {
			return nil, dbErr(err)
		}
	case LinkUnsubscribe:
		tag, err := s.pool.Exec(ctx, `INSERT INTO message_optouts (salon_id, channel, address) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, r.salonID, ChannelEmail, r.address)
		if err != nil {
			return nil, fmt.Errorf("unsubscribe: %w", dbErr(err))
		}
		out.Already = tag.RowsAffected() == 0
	default:
		return nil, fmt.Errorf("%s link: %w", r.action, ErrNotFound)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE booking_links SET used_at = COALESCE(used_at, $2) WHERE token_hash = $1`,
		tokenHash(token), s.now()); err != nil {
		return nil, fmt.Errorf("link: %w", dbErr(err))
	}
	return out, nil
}

// ConfirmAttendance records that the client will come: the first
// confirmation's time and channel (a reminder's tap in Telegram, a link
// of an e-mail or SMS, the widget's page); a later one changes nothing
// (first is false). Clients only. Errors: ErrNotFound, ErrConflict (the
// booking is not confirmed, or has begun).
func (s *Service) ConfirmAttendance(ctx context.Context, salonID, bookingID int64) (*Booking, bool, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, false, err
	}
	if !caller.client() || caller.kind == callerVisitor {
		return nil, false, fmt.Errorf("only the client confirms they will come: %w", ErrForbidden)
	}
	via := caller.channel()
	if via == ChannelWeb {
		via = "widget"
	}
	var out *Booking
	first := false
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b, g, err := readBooking(ctx, tx, caller, salonID, bookingID, "FOR UPDATE OF b")
		if err != nil {
			return err
		}
		if !caller.may(b, g) {
			return fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
		}
		out = b
		if !b.ConfirmedAt.IsZero() {
			return nil
		}
		if b.Status != StatusConfirmed || !s.now().Before(b.StartsAt) {
			return conflict("booking %d is %s", b.ID, string(b.Status))
		}
		actor := caller.actor(b)
		out, err = scanBooking(tx.QueryRow(ctx, `
			WITH b AS (
			    UPDATE bookings SET client_confirmed_at = $3, client_confirmed_via = $4
			    WHERE salon_id = $1 AND id = $2 AND client_confirmed_at IS NULL
			    RETURNING `+bookingColumns+`
			), e AS (
			    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, channel, details)
			    SELECT $1, id, 'client_confirmed', $5, $6, $7, '{}' FROM b
			)
			SELECT * FROM b`, b.SalonID, b.ID, s.now(), via, actor.Kind, actor.dbID(), actor.Channel))
		if err != nil {
			return fmt.Errorf("confirm booking %d: %w", b.ID, err)
		}
		first = true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, first, nil
}

// TelegramLink makes a one-time token for the bot's deep link of a
// booking (t.me/BOT?start=b_TOKEN), for the holder of its manage token:
// opening it in Telegram (ClaimTelegramLink) has that chat hear of the
// booking.
func (s *Service) TelegramLink(ctx context.Context, salonID, bookingID int64) (string, error) {
	v, err := s.BookingView(ctx, salonID, bookingID)
	if err != nil {
		return "", err
	}
	if c := callerOf(ctx); c.kind != callerToken && c.kind != callerSystem {
		return "", fmt.Errorf("only the booking's manage token: %w", ErrForbidden)
	}
	if !v.Status.Active() {
		return "", conflict("booking %d is %s", v.ID, string(v.Status))
	}
	token, err := insertLink(ctx, s.pool, &v.Booking, LinkTelegram, ChannelTelegram, "", 0, s.now().Add(telegramLinkLife))
	return token, dbErr(err)
}

// PayLink makes a link that pays what a booking owes online (a pending
// booking's deposit, or what a moved one still owes of it), for staff to
// hand to the client themselves (a message of their own, a chat): live
// while the hold lasts (a top-up's, until the visit). It returns the
// token (the page is /a/{token}) and when it expires. Admins and owners.
// Errors: ErrNotFound, ErrForbidden, ErrConflict (nothing is owed online).
func (s *Service) PayLink(ctx context.Context, salonID, bookingID int64) (string, time.Time, error) {
	if _, err := s.salonAs(ctx, salonID, RoleAdmin); err != nil {
		return "", time.Time{}, err
	}
	v, err := s.BookingView(ctx, salonID, bookingID)
	if err != nil {
		return "", time.Time{}, err
	}
	until := v.StartsAt // (a top-up's: until the visit)
	switch {
	case s.psp == nil:
		return "", time.Time{}, conflict("deposits are paid in the salon")
	case v.Owed() <= 0:
		return "", time.Time{}, conflict("booking %d owes no deposit online", v.ID)
	case v.Status == StatusPending:
		until = v.HoldExpiresAt
	}
	if !until.After(s.now()) {
		return "", time.Time{}, conflict("the time to pay is over")
	}
	token, err := insertLink(ctx, s.pool, &v.Booking, LinkPay, ChannelPanel, "", 0, until)
	return token, until, dbErr(err)
}

// ClaimTelegramLink links the chat identity that asks to the booking of a
// deep link token: the identity becomes the booking's origin (it sees the
// booking and hears of it), unless another chat made or claimed it.
// Errors: ErrNotFound, ErrLinkExpired, ErrLinkUsed.
func (s *Service) ClaimTelegramLink(ctx context.Context, token string) (*View, error) {
	id, err := chatIdentity(ctx)
	if err != nil {
		return nil, err
	}
	var salonID, bookingID int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var used *time.Time
		var expires time.Time
		err := tx.QueryRow(ctx, `SELECT salon_id, booking_id, expires_at, used_at FROM booking_links
			WHERE token_hash = $1 AND action = 'telegram' FOR UPDATE`, tokenHash(token)).Scan(&salonID, &bookingID, &expires, &used)
		if isNoRows(err) {
			return fmt.Errorf("link: %w", ErrNotFound)
		}
		if err != nil {
			return err
		}
		if used != nil {
			return fmt.Errorf("telegram link: %w", ErrLinkUsed)
		}
		if !s.now().Before(expires) {
			return fmt.Errorf("telegram link: %w", ErrLinkExpired)
		}
		tag, err := tx.Exec(ctx, `UPDATE bookings SET origin_channel = $3, origin_ref = $4
			WHERE salon_id = $1 AND id = $2 AND (origin_channel IS NULL OR (origin_channel, origin_ref) = ($3, $4))`,
			salonID, bookingID, id.Channel, id.ExternalID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("telegram link: another chat has the booking: %w", ErrLinkUsed)
		}
		_, err = tx.Exec(ctx, `UPDATE booking_links SET used_at = $2 WHERE token_hash = $1`, tokenHash(token), s.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.BookingView(ctx, salonID, bookingID)
}
