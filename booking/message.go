package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The message layer. A change of a booking writes its notification job in
// its own transaction (jobs.go); the job plans the messages it owes, one
// row of messages per (kind, channel, recipient), on every channel the
// client and the masters are reachable on and the salon pays for; the
// reminder sweep plans reminders the same way. A row is sent by whichever
// replica claims it first (the claim is the row's sending_at), and its
// words are made from the booking as it is at that moment: a message that
// no longer applies (a reminder of a cancelled booking, of a time the
// booking moved from) is dropped, never sent. A provider that refuses
// fails the message with its reason; one that does not answer is asked
// again later with a backoff, but only while it is sure it sent nothing:
// a send whose outcome is unknown is failed, never repeated, so no client
// hears anything twice.

// Channels people are reached on besides chats.
const (
	ChannelEmail Channel = "email" // SMTP
	ChannelSMS   Channel = "sms"   // an SMS provider
)

// MessageKind is what a message says (CONTRACT section 9).
type MessageKind string

// Message kinds.
const (
	KindConfirmation  MessageKind = "confirmation" // booked (and, with a deposit, paid)
	KindChanged       MessageKind = "changed"      // moved
	KindCancelled     MessageKind = "cancelled"
	KindHoldExpired   MessageKind = "hold_expired" // the deposit did not come in time
	KindPaymentDue    MessageKind = "payment_due"  // held: the deposit is due
	KindPaid          MessageKind = "paid"         // the deposit came: confirmed
	KindRefunded      MessageKind = "refunded"
	KindReminder      MessageKind = "reminder"
	KindWaitlistOffer MessageKind = "waitlist_offer"
	KindNew           MessageKind = "new" // to the master: a booking came
	// KindBalanceSold: a balance bought online, its code (an e-mail sent
	// once by the process that made it; not a row of messages).
	KindBalanceSold MessageKind = "balance_sold"
	// KindBalanceRefunded: a refund of a balance bought online, told its
	// buyer (an e-mail with no row of messages either).
	KindBalanceRefunded MessageKind = "balance_refunded"
	// KindInvitation: an invitation to a salon's panel (an e-mail with no
	// row of messages).
	KindInvitation MessageKind = "invitation"
)

// ClientKinds are the kinds of message a client gets, in the order the
// panel lists them.
var ClientKinds = []MessageKind{KindConfirmation, KindChanged, KindCancelled, KindReminder, KindPaymentDue, KindPaid,
	KindRefunded, KindHoldExpired, KindWaitlistOffer}

// MessageState is where a message is.
type MessageState string

// Message states.
const (
	MessageQueued    MessageState = "queued"
	MessageSent      MessageState = "sent"      // the provider took it
	MessageDelivered MessageState = "delivered" // the provider reports it arrived
	MessageFailed    MessageState = "failed"    // with the provider's reason
	MessageDropped   MessageState = "dropped"   // it no longer applied when its time came
)

// Message is one message owed to a client or a master.
type Message struct {
	ID        int64
	SalonID   int64
	BookingID int64 // 0 for a waitlist offer's message
	OfferID   int64 // a waitlist offer's (kind waitlist_offer), else 0
	Kind      MessageKind
	Channel   Channel
	Recipient string // a Telegram user id, an e-mail address, a phone (E.164)
	ToMaster  bool
	State     MessageState
	Error     string
	Attempts  int
	// Lead and StartsAt: a reminder's, how long before which start.
	Lead     time.Duration
	StartsAt time.Time
	// Change is the change a notice reports (where a moved booking was).
	Change      NotifyArgs
	NotBefore   time.Time
	CreatedAt   time.Time
	SentAt      time.Time
	DeliveredAt time.Time
	ProviderID  string
	Segments    int // of an SMS
	// Plain: a reminder of the salon's hold-out, without one-tap answers.
	Plain bool
	// Subject and Body are the words sent (for the booking page and the
	// development outbox).
	Subject string
	Body    string
	sends   int // how many times a replica claimed it to send it
}

// Outgoing is a message about to go: its row, the booking as it is now, the
// language to write in, and the one-tap links made for it.
type Outgoing struct {
	Message
	Booking *View
	Lang    string
	Links   Links
}

// Links are the tokens of a message's links ("" for none); a courier makes
// URLs of them: /a/TOKEN for an action, the widget's manage page for
// Manage.
type Links struct {
	Confirm, Move, Cancel, Manage, Unsubscribe, Pay string
	// Offer takes a waitlist offer (its page: /o/TOKEN).
	Offer string
}

// Sent is what a courier reports of a message it handed to its provider.
type Sent struct {
	ProviderID string
	Subject    string
	Body       string
	Segments   int
}

// Courier delivers the messages of one channel (e-mail, SMS): it writes an
// Outgoing in words and hands it to its provider. Its errors say what is
// known: ErrDeliveryRefused (the provider refused: never again),
// ErrDeliveryUnknown (it may have gone: never again, or it could go
// twice); any other error means nothing went, and the message is tried
// again later.
type Courier interface {
	Deliver(ctx context.Context, o *Outgoing) (Sent, error)
}

// Tracker is a courier whose provider reports delivery: whether a message
// it took arrived (delivered), did not and will not (failure says why), or
// neither yet.
type Tracker interface {
	Track(ctx context.Context, providerID string) (delivered bool, failure string, err error)
}

// Delivery outcomes a courier reports (wrapped, with the provider's words).
var (
	ErrDeliveryRefused = errors.New("refused")
	ErrDeliveryUnknown = errors.New("no answer: it may or may not have gone, so it is not sent again")
)

// WithCourier delivers the messages of a channel (e-mail, SMS), at most
// perSecond a second to its provider from all replicas together (0: no
// bound). Messages are planned only for the channels a service has
// couriers (or, for chats, notifiers) for.
func WithCourier(ch Channel, c Courier, perSecond int) Option {
	return func(s *Service) {
		s.couriers[ch] = c
		if perSecond > 0 {
			s.limits[ch] = perSecond
		}
	}
}

// turn waits for the channel's provider to take one more message this
// second, counted for all replicas in message_rate (the database's clock
// decides the seconds), until ctx ends.
func (s *Service) turn(ctx context.Context, ch Channel) error {
	limit := s.limits[ch]
	if limit == 0 {
		return nil
	}
	for {
		var second time.Time
		err := s.pool.QueryRow(ctx, `INSERT INTO message_rate AS r (channel, second, n) VALUES ($1, date_trunc('second', clock_timestamp()), 1)
			ON CONFLICT (channel, second) DO UPDATE SET n = r.n + 1 WHERE r.n < $2
			RETURNING second`, ch, limit).Scan(&second)
		if err == nil {
			return nil
		}
		if !isNoRows(err) {
			return fmt.Errorf("rate of %s: %w", ch, dbErr(err))
		}
		// This second is full: the next one.
		wait := time.Second - time.Duration(time.Now().Nanosecond())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// Sending bounds.
const (
	// messageAttempts is how many times a message whose provider did not
	// take it is tried (about 16 minutes of backoff in all).
	messageAttempts = 6
	// sendTimeout bounds one provider call.
	sendTimeout = 30 * time.Second
	// sendingStale is how long a claimed send may stay unanswered before
	// the sweep takes its replica for dead and fails it (it may have gone).
	sendingStale = 5 * time.Minute
	// sendBatch is how many rows of the outbox one transaction plans;
	// claimBatch how many due messages a replica claims at a time (a claim
	// is sent within a provider's timeout or two: long before the claim is
	// taken for dead), and sendParallel how many it sends at once.
	sendBatch    = 100
	claimBatch   = 16
	sendParallel = 8
)

// MessageSettings is what a salon decides about its messages.
type MessageSettings struct {
	// QuietFrom and QuietTo ("21:00", "09:00", salon time) bound the night:
	// no SMS or chat message reaches a client then; they wait for the
	// morning edge (e-mail goes at any time).
	QuietFrom, QuietTo string
	// ReminderOffsets are how long before a booking its client is reminded.
	ReminderOffsets []time.Duration
	// EmailKinds and SMSKinds are what those channels carry (none: the
	// channel is off). Telegram carries every kind.
	EmailKinds, SMSKinds []MessageKind
	// HoldoutPct (0 to 50) is the share of bookings whose reminders are
	// plain, without one-tap answers: the group ReminderEffect compares
	// the others with.
	HoldoutPct int
}

// Carries reports whether the salon sends kind on the channel.
func (m *MessageSettings) Carries(ch Channel, kind MessageKind) bool {
	switch ch {
	case ChannelEmail:
		return slices.Contains(m.EmailKinds, kind)
	case ChannelSMS:
		return slices.Contains(m.SMSKinds, kind)
	}
	return true
}

// quiet reports whether t is in the salon's night, and when it ends.
func (m *MessageSettings) quiet(t time.Time, loc *time.Location) (bool, time.Time) {
	from, err1 := time.Parse("15:04", m.QuietFrom)
	to, err2 := time.Parse("15:04", m.QuietTo)
	if err1 != nil || err2 != nil || from.Equal(to) {
		return false, t
	}
	local := t.In(loc)
	clock := func(day time.Time, c time.Time) time.Time {
		edge := time.Date(day.Year(), day.Month(), day.Day(), c.Hour(), c.Minute(), 0, 0, loc)
		if !edge.After(t) {
			// The edge fell in a clock change's gap and went back: an
			// hour on, past the gap.
			edge = edge.Add(time.Hour)
		}
		return edge
	}
	mins := local.Hour()*60 + local.Minute()
	f, e := from.Hour()*60+from.Minute(), to.Hour()*60+to.Minute()
	switch {
	case f < e && mins >= f && mins < e: // a night within one day (01:00-06:00)
		return true, clock(local, to)
	case f > e && mins >= f: // the evening before midnight
		return true, clock(local.AddDate(0, 0, 1), to)
	case f > e && mins < e: // the small hours
		return true, clock(local, to)
	}
	return false, t
}

// morning returns t, or the end of the salon's night when t falls in it.
func (m *MessageSettings) morning(t time.Time, loc *time.Location) time.Time {
	_, end := m.quiet(t, loc)
	return end
}

// eveningBefore returns the start of the night that t falls in (t must be
// in it).
func (m *MessageSettings) eveningBefore(t time.Time, loc *time.Location) time.Time {
	from, _ := time.Parse("15:04", m.QuietFrom)
	local := t.In(loc)
	edge := time.Date(local.Year(), local.Month(), local.Day(), from.Hour(), from.Minute(), 0, 0, loc)
	if edge.After(local) {
		edge = edge.AddDate(0, 0, -1)
	}
	return edge.Add(-time.Minute)
}

const messageSettingsSQL = `SELECT to_char(quiet_from, 'HH24:MI'), to_char(quiet_to, 'HH24:MI'), reminder_offsets_min,
	email_kinds, sms_kinds, reminder_holdout_pct FROM salons WHERE id = $1`

func readMessageSettings(ctx context.Context, q querier, salonID int64) (*MessageSettings, error) {
	var m MessageSettings
	var offsets []int32
	var email, sms []string
	err := q.QueryRow(ctx, messageSettingsSQL, salonID).Scan(&m.QuietFrom, &m.QuietTo, &offsets, &email, &sms, &m.HoldoutPct)
	if isNoRows(err) {
		return nil, fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("message settings of salon %d: %w", salonID, dbErr(err))
	}
	for _, o := range offsets {
		m.ReminderOffsets = append(m.ReminderOffsets, time.Duration(o)*time.Minute)
	}
	m.EmailKinds, m.SMSKinds = kindsOf(email), kindsOf(sms)
	return &m, nil
}

// kindsOf reads a column of message kinds.
func kindsOf(ks []string) []MessageKind {
	out := make([]MessageKind, len(ks))
	for i, k := range ks {
		out[i] = MessageKind(k)
	}
	return out
}

// MessageSettingsOf returns a salon's message settings (staff of the salon).
func (s *Service) MessageSettingsOf(ctx context.Context, salonID int64) (*MessageSettings, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	return readMessageSettings(ctx, s.pool, salonID)
}

// UpdateMessageSettings changes a salon's message settings (its owner).
// Errors: *ValidationError naming quiet_from, quiet_to, reminder_offsets.
func (s *Service) UpdateMessageSettings(ctx context.Context, salonID int64, m MessageSettings) (*MessageSettings, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	for field, v := range map[string]string{"quiet_from": m.QuietFrom, "quiet_to": m.QuietTo} {
		if _, err := time.Parse("15:04", v); err != nil {
			fe.add(field, "a time like 21:00")
		}
	}
	var offsets []int32
	for _, o := range m.ReminderOffsets {
		if o < time.Minute || o > 7*24*time.Hour {
			fe.add("reminder_offsets", "between a minute and 7 days before")
			break
		}
		if !slices.Contains(offsets, int32(o.Minutes())) {
			offsets = append(offsets, int32(o.Minutes()))
		}
	}
	if len(offsets) > 4 {
		fe.add("reminder_offsets", "at most 4 reminders")
	}
	if m.HoldoutPct < 0 || m.HoldoutPct > 50 {
		fe.add("reminder_holdout_pct", "between %d and %d", 0, 50)
	}
	kinds := func(ks []MessageKind) []string {
		out := []string{}
		for _, k := range ks {
			if slices.Contains(ClientKinds, k) && !slices.Contains(out, string(k)) {
				out = append(out, string(k))
			}
		}
		return out
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	slices.Sort(offsets)
	slices.Reverse(offsets)
	if offsets == nil {
		offsets = []int32{}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error { // audited as its asker's
		_, err := tx.Exec(ctx, `UPDATE salons SET quiet_from = $2, quiet_to = $3, reminder_offsets_min = $4, email_kinds = $5, sms_kinds = $6,
			reminder_holdout_pct = $7 WHERE id = $1`, salonID, m.QuietFrom, m.QuietTo, offsets, kinds(m.EmailKinds), kinds(m.SMSKinds), m.HoldoutPct)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("message settings: %w", dbErr(err))
	}
	return readMessageSettings(ctx, s.pool, salonID)
}

// urgent reports whether a message of kind, of a booking in status st,
// goes at once even in the salon's quiet hours: a deposit due while the
// time is held (the hold is minutes long; the client has just booked, or
// the salon has just booked them, and waits for the link).
func urgent(kind MessageKind, st Status) bool { return kind == KindPaymentDue && st == StatusPending }

// plan is a message to be written.
type plan struct {
	kind      MessageKind
	channel   Channel
	recipient string
	toMaster  bool
	ref       string
	notBefore time.Time
	lead      time.Duration
	startsAt  time.Time
	change    *NotifyArgs
}

// clientKind is the kind of message a client gets for an event (of a
// booking in status st), and whether it is one of its kind for a booking
// (not one per change).
func clientKind(event string, st Status) (MessageKind, bool) {
	switch event {
	case EventCreated:
		if st == StatusPending {
			return KindPaymentDue, true
		}
		return KindConfirmation, true
	case EventCancelled:
		return KindCancelled, true
	case EventRescheduled:
		return KindChanged, false
	case EventHoldExpired:
		return KindHoldExpired, true
	case EventPaid:
		return KindPaid, true
	case EventDepositDue:
		return KindPaymentDue, false
	case EventTopUpPaid:
		return KindPaid, false
	case EventPaidWithBalance:
		return KindChanged, false
	case EventRefunded:
		return KindRefunded, false
	case EventReminder:
		return KindReminder, false
	}
	return "", false
}

// masterKind is the kind of message a master gets for an event ("" for
// none).
func masterKind(event string) MessageKind {
	switch event {
	case EventCreated, EventPaid:
		return KindNew
	case EventCancelled, EventHoldExpired:
		return KindCancelled
	case EventRescheduled:
		return KindChanged
	}
	return ""
}

// clientPlans are the messages of kind the client of v is owed, on every
// channel they are reachable on that carries it, not to by (who made the
// change and saw it): e-mail at due, SMS and chats at chat (never in the
// salon's night); chats only when chats is true. A channel without a
// courier or notifier here is not planned.
func (s *Service) clientPlans(ctx context.Context, q querier, v *View, set *MessageSettings, kind MessageKind, ref string,
	due, chat time.Time, by Identity, chats bool) ([]plan, error) {
	var out []plan
	if _, ok := s.notifiers[ChannelTelegram]; ok && chats {
		ids, err := recipients(ctx, q, &v.Booking, false, 0)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if id.Identity != by && id.Channel == ChannelTelegram {
				out = append(out, plan{kind: kind, channel: ChannelTelegram, recipient: id.ExternalID, ref: ref, notBefore: chat})
			}
		}
	}
	var phone string
	if _, ok := s.couriers[ChannelSMS]; ok && set.Carries(ChannelSMS, kind) {
		if err := q.QueryRow(ctx, `SELECT COALESCE(phone, '') FROM clients WHERE id = $1`, v.ClientID).Scan(&phone); err != nil && !isNoRows(err) {
			return nil, fmt.Errorf("client's phone: %w", err)
		}
	}
	var email string
	if _, ok := s.couriers[ChannelEmail]; ok && set.Carries(ChannelEmail, kind) {
		email = v.ContactEmail
	}
	if email == "" && phone == "" {
		return out, nil
	}
	var stopped []string
	err := eachRow(ctx, q, func(r pgx.Row) error {
		var ch, addr string
		if err := r.Scan(&ch, &addr); err != nil {
			return err
		}
		stopped = append(stopped, ch+":"+addr)
		return nil
	}, `SELECT channel, address FROM message_optouts WHERE salon_id = $1 AND (channel, address) IN (('email', $2), ('sms', $3))`,
		v.SalonID, email, phone)
	if err != nil {
		return nil, fmt.Errorf("opt-outs: %w", err)
	}
	if email != "" && !slices.Contains(stopped, "email:"+email) {
		out = append(out, plan{kind: kind, channel: ChannelEmail, recipient: email, ref: ref, notBefore: due})
	}
	if phone != "" && !slices.Contains(stopped, "sms:"+phone) {
		out = append(out, plan{kind: kind, channel: ChannelSMS, recipient: phone, ref: ref, notBefore: chat})
	}
	return out, nil
}

// masterPlans are the telegram messages of kind to the masters of b (and
// of masterFrom, a moved booking's master before).
func (s *Service) masterPlans(ctx context.Context, q querier, b *Booking, kind MessageKind, ref string, masterFrom int64,
	now time.Time) ([]plan, error) {
	if _, ok := s.notifiers[ChannelTelegram]; !ok || kind == "" {
		return nil, nil
	}
	var out []plan
	err := eachRow(ctx, q, func(r pgx.Row) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		out = append(out, plan{kind: kind, channel: ChannelTelegram, recipient: id, toMaster: true, ref: ref, notBefore: now})
		return nil
	}, `SELECT DISTINCT external_id FROM master_identities WHERE salon_id = $1 AND channel = 'telegram'
		AND (master_id IN ($2, $3) OR master_id IN (SELECT master_id FROM bookings WHERE id = $4 OR visit_of = $4))
		ORDER BY external_id`, b.SalonID, b.MasterID, masterFrom, b.visit())
	if err != nil {
		return nil, fmt.Errorf("master identities: %w", err)
	}
	return out, nil
}

// confirmations are the e-mail and SMS a new booking owes its client at
// once (its confirmation; for a held one, the deposit due), on the
// channels this service sends and the salon pays for: when there are any,
// Book writes the booking's row of the outbox, which planOutbox makes
// them of.
func (s *Service) confirmations(b *Booking, phone string, bc *bookContext) []plan {
	set := bc.messages
	if set == nil || b.Source == SourceImport {
		return nil
	}
	kind, _ := clientKind(EventCreated, b.Status)
	now := s.now()
	var out []plan
	if b.ContactEmail != "" && s.couriers[ChannelEmail] != nil && set.Carries(ChannelEmail, kind) {
		out = append(out, plan{kind: kind, channel: ChannelEmail, recipient: b.ContactEmail, notBefore: now})
	}
	if phone != "" && s.couriers[ChannelSMS] != nil && set.Carries(ChannelSMS, kind) {
		at := set.morning(now, bc.salon.Location())
		if urgent(kind, b.Status) {
			at = now
		}
		out = append(out, plan{kind: kind, channel: ChannelSMS, recipient: phone, notBefore: at})
	}
	return out
}

// planOutbox turns the rows of the booking outbox (new bookings whose
// client is owed a confirmation by e-mail or SMS) into the confirmations'
// messages, as they are owed now, deleting each row in the transaction
// that writes its messages; rows another replica holds are left to it.
func (s *Service) planOutbox(ctx context.Context) error {
	for range 50 {
		n := 0
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `DELETE FROM booking_outbox WHERE booking_id IN (
				    SELECT booking_id FROM booking_outbox ORDER BY booking_id LIMIT $1 FOR UPDATE SKIP LOCKED)
				RETURNING booking_id`, sendBatch)
			if err != nil {
				return err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return err
			}
			n = len(ids)
			sets := map[int64]*MessageSettings{}
			now := s.now()
			for _, id := range ids {
				v, err := s.view(ctx, 0, id)
				if errors.Is(err, ErrNotFound) {
					continue // erased since
				}
				if err != nil {
					return err
				}
				set := sets[v.SalonID]
				if set == nil {
					if set, err = readMessageSettings(ctx, tx, v.SalonID); err != nil {
						return err
					}
					sets[v.SalonID] = set
				}
				kind, _ := clientKind(EventCreated, v.Status)
				chat := set.morning(now, v.Salon.Location())
				if urgent(kind, v.Status) {
					chat = now
				}
				plans, err := s.clientPlans(ctx, tx, v, set, kind, "", now, chat, Identity{}, false)
				if err != nil {
					return err
				}
				if _, err := writePlans(ctx, tx, &v.Booking, plans); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("booking outbox: %w", dbErr(err))
		}
		if n < sendBatch {
			return nil
		}
	}
	return nil
}

// wakeMessages tells this replica's sender that messages were written.
func (s *Service) wakeMessages() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writePlans writes planned messages of booking b in tx, each once (a
// plan already written is skipped), and returns the ids of the new ones.
func writePlans(ctx context.Context, tx pgx.Tx, b *Booking, plans []plan) ([]int64, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	batch := &pgx.Batch{}
	var ids []int64
	for _, p := range plans {
		var change []byte
		if p.change != nil {
			change, _ = json.Marshal(p.change)
		}
		var lead *int
		var starts *time.Time
		if p.lead > 0 {
			l := int(p.lead.Minutes())
			lead, starts = &l, &p.startsAt
		}
		batch.Queue(`INSERT INTO messages (salon_id, booking_id, kind, channel, recipient, to_master, ref, not_before, lead_min, starts_at, change)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (booking_id, kind, channel, recipient, ref) DO NOTHING RETURNING id`,
			b.SalonID, b.ID, p.kind, p.channel, p.recipient, p.toMaster, p.ref, p.notBefore, lead, starts, change).
			QueryRow(newID(&ids))
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("messages of booking %d: %w", b.ID, err)
	}
	return ids, nil
}

// newID reads the id an INSERT ... ON CONFLICT DO NOTHING RETURNING id
// made into ids (none when the row was there already).
func newID(ids *[]int64) func(pgx.Row) error {
	return func(r pgx.Row) error {
		var id int64
		err := r.Scan(&id)
		if isNoRows(err) {
			return nil
		}
		*ids = append(*ids, id)
		return err
	}
}

// SendMessages sends the messages that are due (as many as come due while
// it runs, up to a limit), several at once, and fails the sends a dead
// replica left unanswered. It returns how many it finished (sent, failed
// or dropped). Only the platform asks (ErrForbidden).
func (s *Service) SendMessages(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	if err := s.planOutbox(ctx); err != nil {
		return 0, err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM message_rate WHERE second < now() - interval '1 minute'`); err != nil {
		return 0, fmt.Errorf("messages: %w", dbErr(err))
	}
	if _, err := s.pool.Exec(ctx, `UPDATE messages SET state = 'failed', sending_at = NULL,
		error = 'the replica sending it stopped before the provider answered: it may or may not have gone, so it is not sent again'
		WHERE state = 'queued' AND channel <> 'telegram' AND sending_at < $1`, s.now().Add(-sendingStale)); err != nil {
		return 0, fmt.Errorf("messages: %w", dbErr(err))
	}
	done, empty := 0, 0
	for range 50 {
		ids, err := s.claimMessages(ctx, nil)
		if err != nil {
			return done, err
		}
		if len(ids) == 0 {
			// Another replica may have held the first due ones at that
			// moment: a second look before calling it done.
			if empty++; empty > 2 {
				return done, nil
			}
			continue
		}
		empty = 0
		n, err := s.sendClaimed(ctx, ids)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// claimMessages claims due queued messages for this replica (those of ids
// only, when ids is not nil), on the channels it can send.
func (s *Service) claimMessages(ctx context.Context, ids []int64) ([]int64, error) {
	chans := []string{}
	for ch := range s.couriers {
		chans = append(chans, string(ch))
	}
	if _, ok := s.notifiers[ChannelTelegram]; ok {
		chans = append(chans, string(ChannelTelegram))
	}
	// Fair across salons: one salon's backlog (its 10,000 reminders) goes
	// a few at a time between the other salons' messages, and whatever is
	// not a reminder (a confirmation, a cancellation) before any reminder;
	// the turns are counted among the oldest due of each sort (the due
	// index's first rows), so a backlog costs each claim no more.
	rows, err := s.pool.Query(ctx, `UPDATE messages SET sending_at = $1, attempts = attempts + 1, sends = sends + 1 WHERE id IN (
		    SELECT id FROM messages WHERE id IN (
		        SELECT id FROM (
		            SELECT id, kind, not_before, row_number() OVER (PARTITION BY salon_id ORDER BY not_before, id) AS turn
		            FROM (
		                (SELECT id, salon_id, kind, not_before FROM messages
		                 WHERE state = 'queued' AND sending_at IS NULL AND not_before <= $1 AND channel = ANY($2)
		                   AND ($3::bigint[] IS NULL OR id = ANY($3)) AND kind <> 'reminder'
		                 ORDER BY not_before, id LIMIT 500)
		                UNION ALL
		                (SELECT id, salon_id, kind, not_before FROM messages
		                 WHERE state = 'queued' AND sending_at IS NULL AND not_before <= $1 AND channel = ANY($2)
		                   AND ($3::bigint[] IS NULL OR id = ANY($3)) AND kind = 'reminder'
		                 ORDER BY not_before, id LIMIT 2000)
		            ) candidates
		        ) due ORDER BY kind = 'reminder', turn, not_before LIMIT $4)
		      AND state = 'queued' AND sending_at IS NULL -- checked again on the row locked: another replica's claim may have come first
		    FOR UPDATE SKIP LOCKED)
		RETURNING id`, s.now(), chans, ids, claimBatch)
	if err != nil {
		return nil, fmt.Errorf("claim messages: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("claim messages: %w", dbErr(err))
	}
	slices.Sort(out)
	return out, nil
}

// sendNow sends the messages of ids that are due now, right after the
// transaction that wrote them (the sweep sends the rest when due). A
// failure here is left to the sweep.
func (s *Service) sendNow(ctx context.Context, ids []int64) {
	if len(ids) == 0 {
		return
	}
	claimed, err := s.claimMessages(ctx, ids)
	if err == nil {
		_, err = s.sendClaimed(ctx, claimed)
	}
	if err != nil {
		s.log.Warn("messages: sending now failed; the sweep sends them", "err", err)
	}
}

// sendClaimed sends claimed messages, up to sendParallel at once.
func (s *Service) sendClaimed(ctx context.Context, ids []int64) (int, error) {
	var (
		mu    sync.Mutex
		done  int
		first error
		wg    sync.WaitGroup
	)
	slots := make(chan struct{}, sendParallel)
	for _, id := range ids {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := s.sendOne(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			done++
		})
	}
	wg.Wait()
	return done, first
}

// sendOne sends one claimed message: in a first transaction it reads the
// message and its booking, drops it when it no longer applies, hands a
// chat message to its notifier (whose sender reports the outcome), or
// makes the links of an e-mail or SMS; then its courier sends it, outside
// any transaction; a second transaction records what happened.
func (s *Service) sendOne(ctx context.Context, id int64) error {
	var out *Outgoing
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		m, err := readMessage(ctx, tx, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		if m.State != MessageQueued {
			return nil
		}
		now := s.now()
		var v *View
		var why string
		if m.OfferID != 0 {
			v, why, err = s.offerView(ctx, tx, m.OfferID, now)
		} else if v, err = s.BookingView(As(ctx, BySystem()), m.SalonID, m.BookingID); err == nil {
			why = stale(m, v, now)
		}
		if err != nil {
			return err
		}
		if why == "" && !m.ToMaster && (m.Channel == ChannelEmail || m.Channel == ChannelSMS) {
			// Still theirs, and still wanted: not unsubscribed, and the
			// booking's e-mail, the client's phone still the address.
			var stopped bool
			var phone string
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM message_optouts WHERE salon_id = $1 AND channel = $2 AND address = $3),
				COALESCE((SELECT phone FROM clients WHERE id = $4), '')`, m.SalonID, m.Channel, m.Recipient, v.ClientID).Scan(&stopped, &phone); err != nil {
				return err
			}
			switch {
			case stopped:
				why = "the client unsubscribed"
			case m.Channel == ChannelEmail && m.Recipient != v.ContactEmail:
				why = "the booking's e-mail is no longer this one"
			case m.Channel == ChannelSMS && m.Recipient != phone:
				why = "the client's phone is no longer this one"
			}
		}
		if why != "" {
			_, err := tx.Exec(ctx, `UPDATE messages SET state = 'dropped', error = $2, sending_at = NULL WHERE id = $1`, id, why)
			return err
		}
		var set MessageSettings
		if err := tx.QueryRow(ctx, `SELECT to_char(quiet_from, 'HH24:MI'), to_char(quiet_to, 'HH24:MI'), reminder_holdout_pct
			FROM salons WHERE id = $1`, m.SalonID).Scan(&set.QuietFrom, &set.QuietTo, &set.HoldoutPct); err != nil {
			return err
		}
		if night, morning := set.quiet(now, v.Salon.Location()); night && !m.ToMaster && m.Channel != ChannelEmail && !urgent(m.Kind, v.Status) {
			// A retry that came due in the night: in the morning.
			_, err := tx.Exec(ctx, `UPDATE messages SET sending_at = NULL, not_before = $2 WHERE id = $1`, id, morning)
			return err
		}
		if !m.ToMaster && m.Channel == ChannelSMS {
			capped, err := s.smsAllowed(ctx, tx, m, &v.Salon, now)
			if err != nil {
				return err
			}
			if capped != "" {
				// Not sent, for staff to look at (the attention page)
				// and send again if it is a real client's.
				s.log.Warn("messages: an SMS over the salon's caps", "message", id, "salon", m.SalonID, "why", capped)
				_, err := tx.Exec(ctx, `UPDATE messages SET state = 'failed', error = $2, sending_at = NULL WHERE id = $1`, id, capped)
				return err
			}
		}
		// A booking of the salon's hold-out (its id's hash: not a run of
		// consecutive bookings) gets plain messages: nothing to tap.
		if !m.ToMaster && set.HoldoutPct > 0 && m.OfferID == 0 {
			if err := tx.QueryRow(ctx, `UPDATE messages SET plain = mod(abs(hashint8($2::bigint)::bigint), 100) < $3
				WHERE id = $1 RETURNING plain`, id, m.BookingID, set.HoldoutPct).Scan(&m.Plain); err != nil {
				return err
			}
		}
		if m.Channel == ChannelTelegram {
			// The bot's outbox has it now; its sender records the outcome.
			return s.notifyAll(ctx, tx, []Notice{m.notice(v, now)})
		}
		out = &Outgoing{Message: *m, Booking: v, Lang: v.Salon.Locale}
		if v.Lang != "" {
			out.Lang = v.Lang
		}
		switch {
		case m.OfferID != 0:
			if out.Links, err = makeOfferLinks(ctx, tx, m, v, now); err != nil {
				return err
			}
		case !m.ToMaster:
			if out.Links, err = makeLinks(ctx, tx, m, v, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.releaseClaim(ctx, id, err)
		return fmt.Errorf("message %d: %w", id, dbErr(err))
	}
	if out == nil {
		return nil
	}
	return s.deliver1(ctx, out)
}

// releaseClaim gives a claimed message back to the sweep after its first
// transaction failed (nothing was sent), a little later.
func (s *Service) releaseClaim(ctx context.Context, id int64, cause error) {
	_, err := s.pool.Exec(context.WithoutCancel(ctx), `UPDATE messages SET sending_at = NULL, not_before = $2, error = $3
		WHERE id = $1 AND state = 'queued'`, id, s.now().Add(time.Minute), cause.Error())
	if err != nil {
		s.log.Error("messages: a claim was not released; the sweep fails it", "message", id, "err", err)
	}
}

// deliver1 hands an e-mail or SMS to its courier, within the channel's
// rate, and records the outcome.
func (s *Service) deliver1(ctx context.Context, o *Outgoing) error {
	c, ok := s.couriers[o.Channel]
	if !ok {
		s.releaseClaim(ctx, o.ID, fmt.Errorf("no courier for %s here", o.Channel))
		return nil
	}
	if err := s.turn(ctx, o.Channel); err != nil {
		s.releaseClaim(ctx, o.ID, err)
		return fmt.Errorf("message %d: %w", o.ID, err)
	}
	// The claim is still this send's (not failed as dead, not queued
	// again), and its clock starts now: the provider is called.
	tag, err := s.pool.Exec(ctx, `UPDATE messages SET sending_at = $2 WHERE id = $1 AND state = 'queued' AND sends = $3`, o.ID, s.now(), o.sends)
	if err != nil {
		s.releaseClaim(ctx, o.ID, err)
		return fmt.Errorf("message %d: %w", o.ID, dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	sent, err := c.Deliver(sctx, o)
	timedOut := sctx.Err() != nil // the provider did not answer in time: it may have taken it
	cancel()
	rctx := context.WithoutCancel(ctx)
	// The words are kept for the booking's page, their links' tokens not:
	// the database keeps nothing that acts.
	sent.Body = RedactLinks(sent.Body)
	switch {
	case err == nil:
		_, err = s.pool.Exec(rctx, `UPDATE messages SET state = 'sent', sent_at = $2, sending_at = NULL, error = NULL,
			provider_id = NULLIF($3, ''), subject = $4, body = $5, segments = NULLIF($6, 0) WHERE id = $1 AND sends = $7`,
			o.ID, s.now(), sent.ProviderID, sent.Subject, sent.Body, sent.Segments, o.sends)
		s.observeMessage(o, "sent")
	case errors.Is(err, ErrDeliveryRefused), errors.Is(err, ErrDeliveryUnknown), timedOut, o.Attempts >= messageAttempts:
		s.log.Warn("messages: failed", "message", o.ID, "channel", o.Channel, "kind", o.Kind, "err", err)
		_, err = s.pool.Exec(rctx, `UPDATE messages SET state = 'failed', sending_at = NULL, error = $2, subject = $3, body = $4
			WHERE id = $1 AND sends = $5`, o.ID, err.Error(), sent.Subject, sent.Body, o.sends)
		s.observeMessage(o, "failed")
	default:
		// Nothing went: again later, backing off.
		backoff := time.Duration(1<<min(o.Attempts, 6)) * 15 * time.Second
		_, err = s.pool.Exec(rctx, `UPDATE messages SET sending_at = NULL, not_before = $2, error = $3 WHERE id = $1 AND sends = $4`,
			o.ID, s.now().Add(backoff), err.Error(), o.sends)
		s.observeMessage(o, "retry")
	}
	if err != nil {
		return fmt.Errorf("message %d: record: %w", o.ID, dbErr(err))
	}
	return nil
}

// linkTokenRE finds the tokens of a message's links: one-tap links
// (/a/TOKEN) and manage links (#t=TOKEN).
var linkTokenRE = regexp.MustCompile(`(/a/)[A-Za-z0-9_-]{22}|(#t=)[A-Za-z0-9_-]{16,}`)

// RedactLinks is text with its links' tokens replaced by "…": what may be
// stored or logged of a message.
func RedactLinks(text string) string { return linkTokenRE.ReplaceAllString(text, "${1}${2}…") }

// observeMessage reports a send's outcome to the metrics.
func (s *Service) observeMessage(o *Outgoing, outcome string) {
	if s.observeMsg != nil {
		s.observeMsg(o.Channel, outcome)
	}
}

// WithMessageObserver has every message outcome (sent, failed, retry,
// delivered, undelivered) reported to f, by channel (metrics).
func WithMessageObserver(f func(ch Channel, outcome string)) Option {
	return func(s *Service) { s.observeMsg = f }
}

// stale says why message m no longer applies to booking v ("" if it does).
func stale(m *Message, v *View, now time.Time) string {
	active := v.Status.Active()
	switch m.Kind {
	case KindReminder:
		switch {
		case v.Status != StatusConfirmed:
			return "the booking is " + string(v.Status)
		case !v.StartsAt.Equal(m.StartsAt):
			return "the booking moved"
		case now.After(v.StartsAt.Add(-m.Lead / 2)):
			return "too late to remind"
		}
	case KindConfirmation, KindChanged, KindPaid:
		switch {
		case !active:
			return "the booking is " + string(v.Status)
		case !now.Before(v.StartsAt):
			return "its time has passed"
		}
	case KindPaymentDue:
		switch {
		case v.TopUp() && m.Change.Event == EventDepositDue:
			if !now.Before(v.StartsAt) {
				return "its time has passed"
			}
		case v.Status == StatusConfirmed && m.Change.Event == EventDepositDue:
			return "the difference is paid"
		case v.Status != StatusPending:
			return "the booking is " + string(v.Status)
		case !now.Before(v.StartsAt):
			return "its time has passed"
		}
	case KindNew:
		if !active {
			return "the booking is " + string(v.Status)
		}
	case KindCancelled, KindHoldExpired:
		if v.Status != StatusCancelled {
			return "the booking is " + string(v.Status)
		}
	}
	return ""
}

// notice is a chat message as the channel's notifier takes it, keyed by
// the message and its claim (a retry an admin asks for is a new send).
func (m *Message) notice(v *View, at time.Time) Notice {
	event := map[MessageKind]string{KindConfirmation: EventCreated, KindPaymentDue: EventCreated, KindNew: EventCreated,
		KindCancelled: EventCancelled, KindChanged: EventRescheduled, KindHoldExpired: EventHoldExpired, KindPaid: EventPaid,
		KindRefunded: EventRefunded, KindReminder: EventReminder, KindWaitlistOffer: EventWaitlistOffer}[m.Kind]
	if m.Change.Event == EventDepositDue || m.Change.Event == EventPaidWithBalance {
		event = m.Change.Event
	}
	if m.ToMaster && m.Change.Event == EventHoldExpired {
		event = EventHoldExpired
	}
	return Notice{To: Recipient{Identity: Identity{Channel: m.Channel, ExternalID: m.Recipient}, Master: m.ToMaster},
		Event: event, Booking: v, Change: m.Change, Lead: m.Lead, Key: fmt.Sprintf("msg:%d:%d", m.ID, m.sends), Message: m.ID, Plain: m.Plain, At: at,
		Offer: v.offer}
}

const messageColumns = `id, salon_id, COALESCE(booking_id, 0), COALESCE(offer_id, 0), kind, channel, recipient, to_master, state, COALESCE(error, ''), attempts,
	COALESCE(lead_min, 0), COALESCE(starts_at, 'epoch'), change, not_before, created_at, COALESCE(sent_at, 'epoch'),
	COALESCE(delivered_at, 'epoch'), COALESCE(provider_id, ''), COALESCE(segments, 0), COALESCE(subject, ''), COALESCE(body, ''), plain, sends`

func scanMessage(r pgx.Row) (*Message, error) {
	var m Message
	var lead int
	var change []byte
	err := r.Scan(&m.ID, &m.SalonID, &m.BookingID, &m.OfferID, &m.Kind, &m.Channel, &m.Recipient, &m.ToMaster, &m.State, &m.Error,
		&m.Attempts, &lead, &m.StartsAt, &change, &m.NotBefore, &m.CreatedAt, &m.SentAt, &m.DeliveredAt, &m.ProviderID,
		&m.Segments, &m.Subject, &m.Body, &m.Plain, &m.sends)
	if err != nil {
		return nil, err
	}
	m.Lead = time.Duration(lead) * time.Minute
	if m.StartsAt.Unix() == 0 {
		m.StartsAt = time.Time{}
	}
	for _, t := range []*time.Time{&m.SentAt, &m.DeliveredAt} {
		if t.Unix() == 0 {
			*t = time.Time{}
		}
	}
	if len(change) > 0 {
		if err := json.Unmarshal(change, &m.Change); err != nil {
			return nil, fmt.Errorf("message %d: change: %w", m.ID, err)
		}
	}
	return &m, nil
}

func readMessage(ctx context.Context, q querier, id int64, lock string) (*Message, error) {
	m, err := scanMessage(q.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = $1 `+lock, id))
	if isNoRows(err) {
		return nil, fmt.Errorf("message %d: %w", id, ErrNotFound)
	}
	return m, err
}

// MessagesOf returns the messages of a booking, oldest first (staff of its
// salon, the system).
func (s *Service) MessagesOf(ctx context.Context, salonID, bookingID int64) ([]Message, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	return s.messages(ctx, `WHERE salon_id = $1 AND booking_id = $2 ORDER BY id`, salonID, bookingID)
}

// FailedMessages returns a salon's failed messages, newest first (up to
// limit), for its staff to retry or act on.
func (s *Service) FailedMessages(ctx context.Context, salonID int64, limit int) ([]Message, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	return s.messages(ctx, `WHERE salon_id = $1 AND state = 'failed' ORDER BY id DESC LIMIT $2`, salonID, limit)
}

// Outbox returns the newest messages of every salon (up to limit): the
// development outbox page. Only the platform asks.
func (s *Service) Outbox(ctx context.Context, limit int) ([]Message, error) {
	if err := onlySystem(ctx); err != nil {
		return nil, err
	}
	out, err := s.messages(ctx, `ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	// The codes' e-mails of balances sold online (no row of messages: they
	// are sent once, by the process that made the code), by negative ids.
	rows, err := s.pool.Query(ctx, `SELECT -id, salon_id, email, mailed_at IS NOT NULL, mail_error, COALESCE(mailed_at, updated_at)
		FROM balance_sales WHERE mailed_at IS NOT NULL OR mail_error <> '' ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", dbErr(err))
	}
	sales, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Message, error) {
		m := Message{Kind: KindBalanceSold, Channel: ChannelEmail, State: MessageFailed}
		var sent bool
		err := r.Scan(&m.ID, &m.SalonID, &m.Recipient, &sent, &m.Error, &m.CreatedAt)
		if sent {
			m.State = MessageSent
		}
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", dbErr(err))
	}
	out = append(out, sales...)
	slices.SortStableFunc(out, func(a, b Message) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out[:min(len(out), limit)], nil
}

func (s *Service) messages(ctx context.Context, where string, args ...any) ([]Message, error) {
	var out []Message
	err := eachRow(ctx, s.pool, func(r pgx.Row) error {
		m, err := scanMessage(r)
		if err == nil {
			out = append(out, *m)
		}
		return err
	}, `SELECT `+messageColumns+` FROM messages `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", dbErr(err))
	}
	return out, nil
}

// SMS caps: a salon's SMS to one number in a day, and to new clients
// (first seen in the last day) who booked from outside (online, the bot)
// in an hour; such a client's SMS abroad too (the costliest, and what a
// flood of made-up bookings would have the salon pay for: SMS pumping).
// A real client gets a handful a day (a confirmation, a change, two
// reminders), and a salon far fewer new clients an hour. The messages of
// bookings the salon made (the desk, an import), and of clients who came
// before, are not counted as new clients', and go abroad. A message over
// a cap fails, for staff to send again (which is past the caps). A
// waitlist offer's SMS counts for its number only.
const (
	smsPerNumberPerDay     = 10
	smsToNewClientsPerHour = 60
)

// smsAllowed tells why an SMS of m is not to be sent now (capped: staff
// may send it again; "" when it may go). One that may go is counted at
// once, under the salon's lock, so that sends at once, on any replica,
// pass a cap no more than one at a time.
func (s *Service) smsAllowed(ctx context.Context, tx pgx.Tx, m *Message, salon *Salon, now time.Time) (capped string, err error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('sms-caps:' || $1::bigint, 0))`, m.SalonID); err != nil {
		return "", fmt.Errorf("SMS caps: %w", err)
	}
	var uncapped, newOnline bool
	var toNumber int
	err = tx.QueryRow(ctx, `SELECT (SELECT uncapped FROM messages WHERE id = $1),
			(SELECT count(*) FROM messages WHERE salon_id = $2 AND recipient = $3 AND counted_at > $4::timestamptz - interval '1 day'),
			EXISTS (SELECT 1 FROM clients WHERE salon_id = $2 AND phone = $3 AND created_at > $4::timestamptz - interval '1 day')
				AND COALESCE((SELECT source FROM bookings WHERE id = $5) IN ('widget', 'bot'), false) -- (an offer has no booking)`,
		m.ID, m.SalonID, m.Recipient, now, m.BookingID).Scan(&uncapped, &toNumber, &newOnline)
	if err != nil {
		return "", fmt.Errorf("SMS caps: %w", err)
	}
	switch {
	case uncapped:
	case toNumber >= smsPerNumberPerDay:
		return "too many SMS to this number in a day: send it again if the client is real", nil
	case newOnline && !SMSReaches(m.Recipient, salon.Country):
		return "an SMS abroad to a client new online: send it again if the client is real", nil
	case newOnline:
		var toNew int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM messages m JOIN bookings b ON b.id = m.booking_id AND b.source IN ('widget', 'bot')
				JOIN clients c ON c.salon_id = m.salon_id AND c.phone = m.recipient
				WHERE m.salon_id = $1 AND m.counted_at > $2::timestamptz - interval '1 hour' AND c.created_at > $2::timestamptz - interval '1 day'`,
			m.SalonID, now).Scan(&toNew); err != nil {
			return "", fmt.Errorf("SMS caps: %w", err)
		}
		if toNew >= smsToNewClientsPerHour {
			return "too many SMS to new clients in an hour (a flood of bookings?): send it again if the client is real", nil
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE messages SET counted_at = $2 WHERE id = $1`, m.ID, now); err != nil {
		return "", fmt.Errorf("SMS caps: %w", err)
	}
	return "", nil
}

// RetryMessage queues a failed message again, to be rebuilt and sent now
// (staff of its salon), past the SMS caps. Errors: ErrNotFound,
// ErrConflict (not failed).
func (s *Service) RetryMessage(ctx context.Context, salonID, messageID int64) error {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE messages SET state = 'queued', attempts = 0, not_before = $3, sending_at = NULL, uncapped = true
		WHERE salon_id = $1 AND id = $2 AND state = 'failed'`, salonID, messageID, s.now())
	if err != nil {
		return fmt.Errorf("retry message %d: %w", messageID, dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		var state string
		if err := s.pool.QueryRow(ctx, `SELECT state FROM messages WHERE salon_id = $1 AND id = $2`, salonID, messageID).Scan(&state); err != nil {
			return fmt.Errorf("message %d: %w", messageID, ErrNotFound)
		}
		return conflict("message %d is %s", messageID, state)
	}
	s.sendNow(As(context.WithoutCancel(ctx), BySystem()), []int64{messageID})
	return nil
}

// TrackDeliveries asks the providers that report delivery what became of
// the messages they took in the last two days, and records it. Only the
// platform asks.
func (s *Service) TrackDeliveries(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	n := 0
	for ch, c := range s.couriers {
		t, ok := c.(Tracker)
		if !ok {
			continue
		}
		var due []Message
		due, err := s.messages(ctx, `WHERE state = 'sent' AND channel = $1 AND provider_id IS NOT NULL AND sent_at > $2 AND sent_at < $3
			ORDER BY sent_at DESC LIMIT 100`, ch, s.now().Add(-48*time.Hour), s.now().Add(-10*time.Second))
		if err != nil {
			return n, err
		}
		for _, m := range due {
			delivered, failure, err := t.Track(ctx, m.ProviderID)
			if err != nil {
				continue // asked again next time
			}
			switch {
			case delivered:
				_, err = s.pool.Exec(ctx, `UPDATE messages SET state = 'delivered', delivered_at = $2 WHERE id = $1 AND state = 'sent'`, m.ID, s.now())
				s.observeMessage(&Outgoing{Message: m}, "delivered")
			case failure != "":
				_, err = s.pool.Exec(ctx, `UPDATE messages SET state = 'failed', error = $2 WHERE id = $1 AND state = 'sent'`, m.ID, failure)
				s.observeMessage(&Outgoing{Message: m}, "undelivered")
			default:
				continue
			}
			if err != nil {
				return n, fmt.Errorf("delivery of message %d: %w", m.ID, dbErr(err))
			}
			n++
		}
	}
	return n, nil
}

// RunMessages offers freed time to the waitlists (OfferFreed) and sends
// due messages every interval, and at once when this replica wrote some
// (or freed time), and asks providers what became of those they took,
// until ctx ends (each replica runs it; a message, a freed time is claimed
// by one). Only the platform asks (ErrForbidden).
func (s *Service) RunMessages(ctx context.Context, every time.Duration) error {
	if err := onlySystem(ctx); err != nil {
		return err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	// Delivery reports and pruning, once a minute, beside the sending (a
	// slow provider's reports never hold a message back).
	done := make(chan struct{}, 2)
	defer func() { <-done; <-done }()
	go func() {
		defer func() { done <- struct{}{} }()
		s.listenFreed(ctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		minute := time.NewTicker(time.Minute)
		defer minute.Stop()
		for {
			if _, err := s.TrackDeliveries(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("messages: delivery reports", "err", err)
			}
			if _, err := s.pool.Exec(ctx, `DELETE FROM booking_links WHERE expires_at < $1`, s.now().Add(-7*24*time.Hour)); err != nil && ctx.Err() == nil {
				s.log.Warn("messages: pruning links", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-minute.C:
			}
		}
	}()
	for {
		// Freed time first: its offers are messages to send.
		if n, err := s.OfferFreed(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("waitlist: offering freed time", "err", err)
		} else if n > 0 {
			s.log.Info("waitlist offers made", "count", n)
		}
		if _, err := s.SendMessages(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("messages: sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wake:
		}
	}
}

// ClientChannels says which paid channels reach a client at a salon: SMS
// to their phone, e-mail to the addresses given with their bookings.
type ClientChannels struct {
	Phone   string
	Emails  []string
	NoSMS   bool // the phone is stopped
	NoEmail bool // every address is stopped
}

// ChannelsOf returns whether a client hears by SMS and e-mail (staff of
// the salon).
func (s *Service) ChannelsOf(ctx context.Context, salonID, clientID int64) (*ClientChannels, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var c ClientChannels
	var smsStopped, mailStopped int
	err := s.pool.QueryRow(ctx, `
		SELECT COALESCE(c.phone, ''),
		       ARRAY(SELECT DISTINCT contact_email FROM bookings WHERE client_id = c.id AND contact_email <> '' ORDER BY 1),
		       (SELECT count(*) FROM message_optouts o WHERE o.salon_id = c.salon_id AND o.channel = 'sms' AND o.address = c.phone),
		       (SELECT count(*) FROM message_optouts o WHERE o.salon_id = c.salon_id AND o.channel = 'email'
		              AND o.address IN (SELECT contact_email FROM bookings WHERE client_id = c.id))
		FROM clients c WHERE c.salon_id = $1 AND c.id = $2`, salonID, clientID).Scan(&c.Phone, &c.Emails, &smsStopped, &mailStopped)
	if isNoRows(err) {
		return nil, fmt.Errorf("client %d: %w", clientID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("client %d: %w", clientID, dbErr(err))
	}
	c.NoSMS = c.Phone != "" && smsStopped > 0
	c.NoEmail = len(c.Emails) > 0 && mailStopped >= len(c.Emails)
	return &c, nil
}

// SetClientChannels stops or restarts SMS and e-mail to a client, as they
// asked the salon (by phone, at the desk: SMS.ru carries no replies to
// opt out by). Staff of the salon; the change is audited.
func (s *Service) SetClientChannels(ctx context.Context, salonID, clientID int64, noSMS, noEmail bool) error {
	cur, err := s.ChannelsOf(ctx, salonID, clientID)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		set := func(ch Channel, addrs []string, stop bool) error {
			if len(addrs) == 0 {
				return nil
			}
			sql := `DELETE FROM message_optouts WHERE salon_id = $1 AND channel = $2 AND address = ANY($3)`
			if stop {
				sql = `INSERT INTO message_optouts (salon_id, channel, address) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`
			}
			_, err := tx.Exec(ctx, sql, salonID, ch, addrs)
			return err
		}
		var phones []string
		if cur.Phone != "" {
			phones = []string{cur.Phone}
		}
		if err := set(ChannelSMS, phones, noSMS); err != nil {
			return err
		}
		if err := set(ChannelEmail, cur.Emails, noEmail); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
			VALUES ($1, current_setting('salon.actor', true), 'update', 'client_channels', $2, $3, $4)`, salonID, clientID,
			map[string]bool{"no_sms": cur.NoSMS, "no_email": cur.NoEmail}, map[string]bool{"no_sms": noSMS, "no_email": noEmail})
		return err
	})
}
