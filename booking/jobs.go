package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// Background jobs. A change that someone can be told about (the client or
// the master is reachable on a chat channel) enqueues its notification job
// in its own transaction, whether or not any process runs the workers yet,
// so a crash can neither lose it nor create it for a change that did not
// happen. Reminders are not jobs per booking: a periodic sweep finds the
// bookings due one (so a reminder follows the booking's current time and
// reaches an identity linked after the booking was made). The core decides
// who is told, on which channels; each chat channel's Notifier (the bot)
// turns a notice into a message in the transaction that completes the work.

// Events a booking goes through, as NotifyArgs and Notice name them.
const (
	EventCreated     = "created"
	EventCancelled   = "cancelled"
	EventRescheduled = "rescheduled"
	EventHoldExpired = "hold_expired"
	EventPaid        = "paid" // the deposit came: the booking is confirmed
	// EventRefunded: the client's money for the booking goes back: an
	// authorization released (a payment that came after its time was
	// taken, or after it was cancelled: nothing is charged), or a refund.
	EventRefunded = "refunded"
	EventReminder = "reminder"
	// EventWaitlistOffer: a freed time is offered to a waitlist entry.
	EventWaitlistOffer = "waitlist_offer"
	// EventDepositDue: a paid booking moved to a larger deposit, and the
	// client is asked the difference online (a top-up).
	EventDepositDue = "deposit_due"
	// EventTopUpPaid: the difference came.
	EventTopUpPaid = "topup_paid"
	// EventPaidWithBalance: the desk paid the booking with the client's
	// package or a certificate (what is left to pay at the salon changed).
	EventPaidWithBalance = "paid_with_balance"
)

// NotifyArgs asks to tell the people concerned about a change of a booking.
type NotifyArgs struct {
	SalonID   int64     `json:"salon_id"`
	BookingID int64     `json:"booking_id"`
	Event     string    `json:"event"`
	Actor     ActorKind `json:"actor"`
	// Channel is the channel of the change (not of the booking's creation).
	Channel Channel `json:"channel"`
	// By is the chat identity that made the change, if one did: it saw the
	// result in its own chat and is not told again.
	By Identity `json:"by,omitzero"`
	// For a reschedule: where the booking was (for a move of one service
	// of a visit, where that service was).
	FromStartsAt time.Time `json:"from_starts_at,omitzero"`
	FromMasterID int64     `json:"from_master_id,omitempty"`
	// Segment, for a move of one service of a visit: its booking (the
	// notice is of the visit, and says which of it moved).
	Segment int64 `json:"segment,omitempty"`
	// For a refund: how much went back (0: the deposit, or a release).
	Amount Money `json:"amount,omitempty"`
	// BySalon, for a cancellation or a move: the salon's own, as the desk
	// said (a master ill), not the client's request: the client is told so.
	BySalon bool `json:"by_salon,omitempty"`
}

// Kind implements river.JobArgs.
func (NotifyArgs) Kind() string { return "booking_notify" }

// Recipient is who a notice is for: a chat identity, of the booking's
// client or of its master.
type Recipient struct {
	Identity
	Master bool // the master of the booking, not its client
}

// Notice is one message to one person on one chat channel.
type Notice struct {
	To      Recipient
	Event   string // EventCreated, ..., EventReminder
	Booking *View
	// Change is the job's arguments (for a reschedule, where it was).
	Change NotifyArgs
	// Lead is how long before the start a reminder is.
	Lead time.Duration
	// Key is unique for this notice: a retried job makes the same keys,
	// and a notifier queues a key once.
	Key string
	// Message is the notice's row of messages (0 for none): the
	// notifier's sender reports its outcome there.
	Message int64
	// Plain: a reminder of the salon's hold-out, without its one-tap
	// answers.
	Plain bool
	// At is when it goes (a reminder's words say how long is left).
	At time.Time
	// Offer is a waitlist offer's (EventWaitlistOffer): Booking then
	// shows the time offered, and is no booking yet.
	Offer *WaitOffer
}

// Notifier delivers the notices of one chat channel. Notify queues the
// message in tx, the transaction that completes the job: both happen or
// neither.
type Notifier interface {
	Notify(ctx context.Context, tx pgx.Tx, n Notice) error
}

// A job is written as a row of River's river_job table, in River's published
// row format (the one River's Python and Ruby clients write: kind and args;
// every other column has its default), in the transaction of the change
// that causes it: the job exists if and only if the change does, and it
// costs a booking no round trip of its own (Book writes it in the same
// statement as the booking). River's workers pick it up within their fetch
// interval. A change nobody can be told about (no chat identity of the
// client other than the one that made it, none of the masters) writes none.
//
// notifyJobSQL reads the changed booking from a relation b (id, client_id)
// and the named arguments salon, master, from_master, masters (the other
// masters of a visit), origin_ch, origin_ref, by_ch, by_ref, job_kind and
// notify (the job's arguments but the booking id).
const notifyJobSQL = `INSERT INTO river_job (kind, args)
	SELECT @job_kind, @notify::jsonb || jsonb_build_object('booking_id', b.id) FROM b
	WHERE (@origin_ref::text IS NOT NULL AND (@origin_ch::text, @origin_ref::text) IS DISTINCT FROM (@by_ch::text, @by_ref::text))
	   OR EXISTS (SELECT 1 FROM client_identities ci WHERE ci.salon_id = @salon AND ci.client_id = b.client_id
	              AND (ci.channel, ci.external_id) IS DISTINCT FROM (@by_ch::text, @by_ref::text))
	   OR EXISTS (SELECT 1 FROM master_identities mi WHERE mi.salon_id = @salon
	              AND (mi.master_id IN (@master, @from_master) OR mi.master_id = ANY (@masters::bigint[])
	                   OR mi.master_id IN (SELECT x.master_id FROM bookings x WHERE x.visit_of = b.id)))`

// notifyArgs are the arguments of the notification of a change of b.
func notifyArgs(b *Booking, event string, actor Actor, from *Booking) NotifyArgs {
	n := NotifyArgs{SalonID: b.SalonID, BookingID: b.ID, Event: event, Actor: actor.Kind, Channel: actor.Channel, By: actor.Identity}
	if from != nil {
		n.FromStartsAt, n.FromMasterID = from.StartsAt, from.MasterID
	}
	return n
}

// enqueueChange writes, in tx, the notification job of a change of b, when
// anyone can be told about it.
func (s *Service) enqueueChange(ctx context.Context, tx pgx.Tx, b *Booking, event string, actor Actor, from *Booking) error {
	return s.enqueueNotice(ctx, tx, b, notifyArgs(b, event, actor, from), actor)
}

// enqueueNotice is enqueueChange with its arguments made.
func (s *Service) enqueueNotice(ctx context.Context, tx pgx.Tx, b *Booking, n NotifyArgs, actor Actor) error {
	event := n.Event
	args, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", event, err)
	}
	var originCh, originRef *string
	if !b.Origin.IsZero() {
		ch, ref := string(b.Origin.Channel), b.Origin.ExternalID
		originCh, originRef = &ch, &ref
	}
	text, vals := positional(`WITH b AS (SELECT @booking::bigint AS id, @client::bigint AS client_id,
		    EXISTS (SELECT 1 FROM bookings bk JOIN salons s ON s.id = bk.salon_id WHERE bk.id = @booking
		            AND ((bk.contact_email <> '' AND cardinality(s.email_kinds) > 0 AND @email_on) OR (cardinality(s.sms_kinds) > 0 AND @sms_on))) AS paid) `+notifyJobSQL+` OR b.paid`, map[string]any{
		"booking": b.ID, "client": b.ClientID, "salon": b.SalonID, "master": b.MasterID, "from_master": n.FromMasterID,
		"masters":   otherMasters(b),
		"origin_ch": originCh, "origin_ref": originRef, "by_ch": string(actor.Identity.Channel), "by_ref": actor.Identity.ExternalID,
		"job_kind": n.Kind(), "notify": args, "email_on": s.couriers[ChannelEmail] != nil, "sms_on": s.couriers[ChannelSMS] != nil,
	})
	if _, err := tx.Exec(ctx, text, vals...); err != nil {
		return fmt.Errorf("enqueue %s: %w", event, err)
	}
	return nil
}

// otherMasters are the masters of b's visit's other segments, as read
// (none for a visit of one).
func otherMasters(b *Booking) []int64 {
	var out []int64
	for i := range b.Segments {
		if m := b.Segments[i].MasterID; m != b.MasterID && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// recipients returns who hears about booking b: its client on every chat
// identity proven to be theirs and on the identity that made the booking;
// with masters, its master (and masterFrom, when not 0) on theirs.
func recipients(ctx context.Context, q querier, b *Booking, masters bool, masterFrom int64) ([]Recipient, error) {
	ids, err := clientIdentities(ctx, q, b.SalonID, b.ClientID)
	if err != nil {
		return nil, err
	}
	var out []Recipient
	seen := map[Identity]bool{}
	for _, id := range append([]Identity{b.Origin}, ids...) {
		if !id.IsZero() && !seen[id] {
			seen[id] = true
			out = append(out, Recipient{Identity: id})
		}
	}
	if !masters {
		return out, nil
	}
	// The visit's masters, every one of them (a segment's own included).
	rows, err := q.Query(ctx, `SELECT channel, external_id FROM master_identities
		WHERE salon_id = $1 AND (master_id IN ($2, $3) OR master_id IN (SELECT master_id FROM bookings WHERE id = $4 OR visit_of = $4))
		ORDER BY master_id, channel, external_id`, b.SalonID, b.MasterID, masterFrom, b.visit())
	if err != nil {
		return nil, fmt.Errorf("master identities: %w", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Recipient, error) {
		rc := Recipient{Master: true}
		err := r.Scan(&rc.Channel, &rc.ExternalID)
		return rc, err
	})
	if err != nil {
		return nil, fmt.Errorf("master identities: %w", err)
	}
	return append(out, ms...), nil
}

// notifyAll hands notices to their channels' notifiers, in tx. A channel
// this process has no notifier for fails the work, which is tried again
// (by another replica, or after a restart): a notice is never dropped.
func (s *Service) notifyAll(ctx context.Context, tx pgx.Tx, notices []Notice) error {
	for _, n := range notices {
		nt, ok := s.notifiers[n.To.Channel]
		if !ok {
			return fmt.Errorf("notify %s: no notifier for the channel %q here", n.To.Identity, n.To.Channel)
		}
		if err := nt.Notify(ctx, tx, n); err != nil {
			return fmt.Errorf("notify %s: %w", n.To.Identity, err)
		}
	}
	return nil
}

// view reads a booking for a job (as the system).
func (s *Service) view(ctx context.Context, salonID, bookingID int64) (*View, error) {
	return s.BookingView(As(ctx, BySystem()), salonID, bookingID)
}

type notifyWorker struct {
	river.WorkerDefaults[NotifyArgs]
	s *Service
}

// Work plans the messages a change owes: to the client, on every channel
// they are reachable on but the chat identity that made the change, and to
// the masters concerned; it writes them with the job's completion, in one
// transaction, and sends those due now.
func (w *notifyWorker) Work(ctx context.Context, job *river.Job[NotifyArgs]) error {
	a := job.Args
	s := w.s
	v, err := s.view(ctx, a.SalonID, a.BookingID)
	if errors.Is(err, ErrNotFound) {
		return nil // gone: nothing to tell
	}
	if err != nil {
		return err
	}
	set, err := readMessageSettings(ctx, s.pool, a.SalonID)
	if err != nil {
		return err
	}
	now := s.now()
	each := fmt.Sprintf("job:%d", job.ID)
	var plans []plan
	if kind, once := clientKind(a.Event, v.Status); kind != "" {
		ref := each
		if once {
			ref = ""
		}
		chat := set.morning(now, v.Salon.Location())
		if urgent(kind, v.Status) {
			chat = now
		}
		if plans, err = s.clientPlans(ctx, s.pool, v, set, kind, ref, now, chat, a.By, true); err != nil {
			return err
		}
	}
	ms, err := s.masterPlans(ctx, s.pool, &v.Booking, masterKind(a.Event), each, a.FromMasterID, now)
	if err != nil {
		return err
	}
	plans = append(plans, ms...)
	for i := range plans {
		plans[i].change = &a
	}
	var ids []int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if ids, err = writePlans(ctx, tx, &v.Booking, plans); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	if err != nil {
		return dbErr(err)
	}
	s.sendNow(As(ctx, BySystem()), ids)
	return nil
}

// reminderPlanAhead is how long before its time a reminder is planned: a
// reminder due in the salon's night goes to chats and SMS at the morning
// edge, or, when that would be too late (past half its lead), at the
// evening edge before.
const reminderPlanAhead = 13 * time.Hour

// Remind plans the reminders that come due within reminderPlanAhead: for
// each of its salon's offsets, to the client of every confirmed booking
// that starts within that offset (but not within half of it: a reminder
// that late would say the wrong thing) on every channel they are reachable
// on, as messages, each once per booking, start and offset, whichever
// replica sweeps. The sweep is a few statements whatever the number due:
// one reads what is due with everything planning needs, one marks it
// planned and writes its messages. It returns how many reminders
// (bookings and offsets) it planned. Only the platform asks (ErrForbidden).
func (s *Service) Remind(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	now := s.now()
	due, err := s.dueReminders(ctx, now)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	_, tg := s.notifiers[ChannelTelegram]
	var plans []reminderPlan
	for _, d := range due {
		loc := d.salon.loc
		at := later(d.startsAt.Add(-d.lead), now) // when it is due, or now for one due already
		chat := at
		if night, morning := d.set.quiet(at, loc); night {
			// Chats and SMS wait for the morning; when the morning is too
			// late (past half the lead), they go at the evening edge
			// before, if it is still to come.
			chat = morning
			if ev := d.set.eveningBefore(at, loc); morning.After(d.startsAt.Add(-d.lead/2)) && ev.After(now) {
				chat = ev
			}
		}
		p := plan{kind: KindReminder, ref: fmt.Sprintf("%d:%d", int(d.lead.Minutes()), d.startsAt.Unix()), lead: d.lead, startsAt: d.startsAt}
		add := func(ch Channel, to string, when time.Time) {
			q := p
			q.channel, q.recipient, q.notBefore = ch, to, later(when, now)
			plans = append(plans, reminderPlan{plan: q, booking: d.booking, salon: d.salon.id})
		}
		if tg {
			for _, id := range d.chats {
				add(ChannelTelegram, id, chat)
			}
		}
		if d.email != "" && s.couriers[ChannelEmail] != nil && d.set.Carries(ChannelEmail, KindReminder) {
			add(ChannelEmail, d.email, at)
		}
		if d.phone != "" && s.couriers[ChannelSMS] != nil && d.set.Carries(ChannelSMS, KindReminder) {
			add(ChannelSMS, d.phone, chat)
		}
	}
	var n int
	var sendable []int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Marked first: a reminder another sweep marked meanwhile is its.
		ids, starts, leads := make([]int64, len(due)), make([]time.Time, len(due)), make([]int32, len(due))
		for i, d := range due {
			ids[i], starts[i], leads[i] = d.booking, d.startsAt, int32(d.lead.Minutes())
		}
		mine := map[[2]int64]bool{}
		err := eachRow(ctx, tx, func(r pgx.Row) error {
			var id int64
			var lead int32
			err := r.Scan(&id, &lead)
			mine[[2]int64{id, int64(lead)}] = true
			return err
		}, `INSERT INTO booking_reminders (booking_id, starts_at, lead_min)
			SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::integer[])
			ON CONFLICT DO NOTHING RETURNING booking_id, lead_min`, ids, starts, leads)
		if err != nil {
			return err
		}
		n = len(mine)
		var keep []reminderPlan
		for _, p := range plans {
			if mine[[2]int64{p.booking, int64(p.lead.Minutes())}] {
				keep = append(keep, p)
			}
		}
		sendable, err = insertReminders(ctx, tx, keep, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reminders: %w", dbErr(err))
	}
	s.sendNow(ctx, sendable) // the first of those due now; the sender takes the rest
	s.wakeMessages()
	return n, nil
}

// reminderPlan is a planned reminder with its booking.
type reminderPlan struct {
	plan
	booking, salon int64
}

// insertReminders writes planned reminders as messages, in one
// statement, but to addresses their salon's clients stopped; it returns
// the ids of those due by now.
func insertReminders(ctx context.Context, tx pgx.Tx, plans []reminderPlan, now time.Time) ([]int64, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	n := len(plans)
	salons, bookings, chans, to, refs := make([]int64, n), make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	at, starts, leads := make([]time.Time, n), make([]time.Time, n), make([]int32, n)
	for i, p := range plans {
		salons[i], bookings[i], chans[i], to[i], refs[i] = p.salon, p.booking, string(p.channel), p.recipient, p.ref
		at[i], starts[i], leads[i] = p.notBefore, p.startsAt, int32(p.lead.Minutes())
	}
	var due []int64
	err := eachRow(ctx, tx, func(r pgx.Row) error {
		var id int64
		var at time.Time
		err := r.Scan(&id, &at)
		if !at.After(now) && len(due) < sendBatch {
			due = append(due, id)
		}
		return err
	}, `INSERT INTO messages (salon_id, booking_id, kind, channel, recipient, ref, not_before, lead_min, starts_at)
		SELECT x.salon, x.booking, 'reminder', x.channel, x.recipient, x.ref, x.at, x.lead, x.starts
		FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::integer[], $8::timestamptz[])
		     AS x(salon, booking, channel, recipient, ref, at, lead, starts)
		WHERE x.channel = 'telegram' OR NOT EXISTS (SELECT 1 FROM message_optouts o
		      WHERE o.salon_id = x.salon AND o.channel = x.channel AND o.address = x.recipient)
		ON CONFLICT DO NOTHING RETURNING id, not_before`, salons, bookings, chans, to, refs, at, leads, starts)
	return due, err
}

// dueReminder is a booking due a reminder, with what planning it needs.
type dueReminder struct {
	booking  int64
	startsAt time.Time
	lead     time.Duration
	email    string
	phone    string
	chats    []string // the client's Telegram user ids (the booking's origin among them)
	salon    *salonZone
	set      *MessageSettings
}

type salonZone struct {
	id  int64
	loc *time.Location
}

// dueSQL finds the reminders due within the planning window: for each
// salon and offset, its confirmed bookings in the window, by the salon's
// time index (a range of the window's bookings, however many a salon has),
// not yet planned; with the client's phone where the salon sends SMS
// reminders and this replica SMS ($4), and their Telegram identities when
// it runs Telegram ($5).
const dueSQL = `
	SELECT b.id, b.starts_at, o.lead, b.contact_email,
	       CASE WHEN $4 AND 'reminder' = ANY(s.sms_kinds) THEN (SELECT COALESCE(c.phone, '') FROM clients c WHERE c.id = b.client_id) ELSE '' END,
	       CASE WHEN $5 THEN ARRAY(SELECT DISTINCT x FROM unnest(ARRAY(SELECT ci.external_id FROM client_identities ci
	                 WHERE ci.salon_id = b.salon_id AND ci.client_id = b.client_id AND ci.channel = 'telegram')
	                 || CASE WHEN b.origin_channel = 'telegram' THEN ARRAY[b.origin_ref] ELSE '{}'::text[] END) x ORDER BY x)
	            ELSE '{}'::text[] END,
	       s.id, s.timezone, to_char(s.quiet_from, 'HH24:MI'), to_char(s.quiet_to, 'HH24:MI'), s.email_kinds, s.sms_kinds
	FROM salons s
	CROSS JOIN LATERAL unnest(s.reminder_offsets_min) o(lead)
	CROSS JOIN LATERAL (
	    SELECT id, salon_id, client_id, starts_at, contact_email, origin_channel, origin_ref FROM bookings
	    WHERE salon_id = s.id AND status = 'confirmed' AND visit_of IS NULL -- a visit is reminded once, by its head
	      AND starts_at > $1::timestamptz + make_interval(mins => o.lead / 2)
	      AND starts_at <= $1::timestamptz + make_interval(mins => o.lead) + $2::interval
	) b
	WHERE NOT EXISTS (SELECT 1 FROM booking_reminders r WHERE r.booking_id = b.id AND r.starts_at = b.starts_at AND r.lead_min = o.lead)
	ORDER BY b.starts_at LIMIT $3`

// dueLimit bounds one sweep; the next takes the rest.
const dueLimit = 20000

func (s *Service) dueReminders(ctx context.Context, now time.Time) ([]dueReminder, error) {
	salons := map[int64]*salonZone{}
	sets := map[int64]*MessageSettings{}
	var out []dueReminder
	err := eachRow(ctx, s.pool, func(r pgx.Row) error {
		var d dueReminder
		var lead int32
		var salonID int64
		var tz string
		var set MessageSettings
		var email, sms []string
		if err := r.Scan(&d.booking, &d.startsAt, &lead, &d.email, &d.phone, &d.chats, &salonID, &tz, &set.QuietFrom, &set.QuietTo,
			&email, &sms); err != nil {
			return err
		}
		d.lead = time.Duration(lead) * time.Minute
		if d.salon = salons[salonID]; d.salon == nil {
			loc, err := loadLocation(tz)
			if err != nil {
				loc = time.UTC
			}
			d.salon = &salonZone{id: salonID, loc: loc}
			salons[salonID] = d.salon
			set.EmailKinds, set.SMSKinds = kindsOf(email), kindsOf(sms)
			sets[salonID] = &set
		}
		d.set = sets[salonID]
		out = append(out, d)
		return nil
	}, dueSQL, now, reminderPlanAhead, dueLimit, s.couriers[ChannelSMS] != nil, s.notifiers[ChannelTelegram] != nil)
	if err != nil {
		return nil, fmt.Errorf("reminders: %w", dbErr(err))
	}
	return out, nil
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// RemindArgs is the periodic job that sends due reminders.
type RemindArgs struct{}

// Kind implements river.JobArgs.
func (RemindArgs) Kind() string { return "booking_remind" }

// ExpireHoldsArgs is the periodic job that cancels unpaid holds.
type ExpireHoldsArgs struct{}

// Kind implements river.JobArgs.
func (ExpireHoldsArgs) Kind() string { return "expire_holds" }

// PruneKeysArgs is the periodic job that forgets old idempotency records.
type PruneKeysArgs struct{}

// Kind implements river.JobArgs.
func (PruneKeysArgs) Kind() string { return "prune_idempotency_keys" }

// paymentWorker follows a payment session up (PaymentCheckArgs). A
// provider that does not answer is left to the sweep, which backs off; the
// job itself is done.
type paymentWorker struct {
	river.WorkerDefaults[PaymentCheckArgs]
	s *Service
}

func (w *paymentWorker) Work(ctx context.Context, job *river.Job[PaymentCheckArgs]) error {
	_, err := w.s.CheckPayment(As(ctx, BySystem()), job.Args.SessionID)
	if err != nil && (errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict)) {
		return nil
	}
	return err
}

// SweepPaymentsArgs is the periodic job that follows up payment sessions.
type SweepPaymentsArgs struct{}

// Kind implements river.JobArgs.
func (SweepPaymentsArgs) Kind() string { return "sweep_payments" }

// ReconcilePaymentsArgs is the periodic job that reads the provider's list
// of payments against ours (ReconcilePayments).
type ReconcilePaymentsArgs struct{}

// Kind implements river.JobArgs.
func (ReconcilePaymentsArgs) Kind() string { return "reconcile_payments" }

// CompletePastArgs is the periodic job that marks past bookings completed.
type CompletePastArgs struct{}

// Kind implements river.JobArgs.
func (CompletePastArgs) Kind() string { return "complete_past_bookings" }

// sweep is the worker of a periodic job: it runs one of the service's
// sweeps and logs how much it did.
type sweep[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	what    string
	run     func(context.Context) (int, error)
	log     *slog.Logger
	timeout time.Duration // 0: River's default (a minute)
}

// Timeout implements river.Worker: how long one run may take.
func (w *sweep[T]) Timeout(*river.Job[T]) time.Duration { return w.timeout }

func (w *sweep[T]) Work(ctx context.Context, _ *river.Job[T]) error {
	n, err := w.run(As(ctx, BySystem()))
	if n > 0 {
		w.log.Info(w.what, "count", n)
	}
	return err
}

// AddWorkers registers the core's workers: notifications and the reminder
// sweep (delivered through the service's notifiers), hold expiry, the
// completion of past bookings, key pruning.
func AddWorkers(w *river.Workers, s *Service) {
	river.AddWorker(w, &notifyWorker{s: s})
	river.AddWorker(w, &sweep[RemindArgs]{what: "reminders sent", run: s.Remind, log: s.log})
	river.AddWorker(w, &sweep[ExpireHoldsArgs]{what: "expired holds", run: s.ExpireHolds, log: s.log})
	river.AddWorker(w, &paymentWorker{s: s})
	river.AddWorker(w, &saleRefundMailWorker{s: s})
	river.AddWorker(w, &sweep[SweepPaymentsArgs]{what: "payment sessions checked", run: s.SweepPayments, log: s.log})
	// (A pass reads eight days of the provider's list: it may take longer
	// than River's minute.)
	river.AddWorker(w, &sweep[ReconcilePaymentsArgs]{what: "payments settled by reconciliation", log: s.log, timeout: 15 * time.Minute,
		run: func(ctx context.Context) (int, error) {
			r, err := s.ReconcilePayments(ctx)
			return r.Settled, err
		}})
	river.AddWorker(w, &sweep[CompletePastArgs]{what: "past bookings completed", run: s.CompletePast, log: s.log})
	river.AddWorker(w, &sweep[PruneKeysArgs]{what: "idempotency records pruned", log: s.log, run: func(ctx context.Context) (int, error) {
		n, err := s.PruneIdempotencyKeys(ctx, 24*time.Hour)
		return int(n), err
	}})
}

// PeriodicJobs are the core's recurring jobs (River runs each on one
// replica); the provider's list is reconciled every reconcile
// (DefaultReconcileEvery when 0).
func PeriodicJobs(reconcile time.Duration) []*river.PeriodicJob {
	if reconcile <= 0 {
		reconcile = DefaultReconcileEvery
	}
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(reconcile),
			func() (river.JobArgs, *river.InsertOpts) { return ReconcilePaymentsArgs{}, nil }, nil),
		river.NewPeriodicJob(river.PeriodicInterval(30*time.Second),
			func() (river.JobArgs, *river.InsertOpts) { return ExpireHoldsArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return RemindArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return PruneKeysArgs{}, nil }, nil),
		river.NewPeriodicJob(river.PeriodicInterval(10*time.Second),
			func() (river.JobArgs, *river.InsertOpts) { return SweepPaymentsArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return CompletePastArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}),
	}
}
