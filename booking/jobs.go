package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	// For a reschedule: where the booking was.
	FromStartsAt time.Time `json:"from_starts_at,omitzero"`
	FromMasterID int64     `json:"from_master_id,omitempty"`
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
// and the named arguments salon, master, from_master, origin_ch, origin_ref,
// by_ch, by_ref, job_kind and notify (the job's arguments but the booking id).
const notifyJobSQL = `INSERT INTO river_job (kind, args)
	SELECT @job_kind, @notify::jsonb || jsonb_build_object('booking_id', b.id) FROM b
	WHERE (@origin_ref::text IS NOT NULL AND (@origin_ch::text, @origin_ref::text) IS DISTINCT FROM (@by_ch::text, @by_ref::text))
	   OR EXISTS (SELECT 1 FROM client_identities ci WHERE ci.salon_id = @salon AND ci.client_id = b.client_id
	              AND (ci.channel, ci.external_id) IS DISTINCT FROM (@by_ch::text, @by_ref::text))
	   OR EXISTS (SELECT 1 FROM master_identities mi WHERE mi.salon_id = @salon AND mi.master_id IN (@master, @from_master))`

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
	n := notifyArgs(b, event, actor, from)
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
		"origin_ch": originCh, "origin_ref": originRef, "by_ch": string(actor.Identity.Channel), "by_ref": actor.Identity.ExternalID,
		"job_kind": n.Kind(), "notify": args, "email_on": s.couriers[ChannelEmail] != nil, "sms_on": s.couriers[ChannelSMS] != nil,
	})
	if _, err := tx.Exec(ctx, text, vals...); err != nil {
		return fmt.Errorf("enqueue %s: %w", event, err)
	}
	return nil
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
	rows, err := q.Query(ctx, `SELECT channel, external_id FROM master_identities
		WHERE salon_id = $1 AND master_id IN ($2, $3) ORDER BY master_id, channel, external_id`, b.SalonID, b.MasterID, masterFrom)
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
		if plans, err = s.clientPlans(ctx, s.pool, v, set, kind, ref, now, set.morning(now, v.Salon.Location()), a.By, true); err != nil {
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
// replica sweeps; it sends those due now. It returns how many reminders
// (bookings and offsets) it planned. Only the platform asks (ErrForbidden).
func (s *Service) Remind(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	now := s.now()
	type due struct {
		salon, booking int64
		lead           time.Duration
	}
	var list []due
	err := eachRow(ctx, s.pool, func(r pgx.Row) error {
		var d due
		var lead int
		err := r.Scan(&d.salon, &d.booking, &lead)
		d.lead = time.Duration(lead) * time.Minute
		list = append(list, d)
		return err
	}, `SELECT b.salon_id, b.id, o.lead FROM salons s
		CROSS JOIN LATERAL unnest(s.reminder_offsets_min) o(lead)
		CROSS JOIN LATERAL (
		    SELECT id, salon_id, starts_at FROM bookings
		    WHERE salon_id = s.id AND status = 'confirmed'
		      AND starts_at > $1::timestamptz + make_interval(mins => o.lead / 2)
		      AND starts_at <= $1::timestamptz + make_interval(mins => o.lead) + $2::interval
		) b
		WHERE NOT EXISTS (SELECT 1 FROM booking_reminders r WHERE r.booking_id = b.id AND r.starts_at = b.starts_at AND r.lead_min = o.lead)
		ORDER BY b.starts_at LIMIT 5000`, now, reminderPlanAhead)
	if err != nil {
		return 0, fmt.Errorf("reminders: %w", dbErr(err))
	}
	planned := 0
	var ids []int64
	sets := map[int64]*MessageSettings{}
	for _, d := range list {
		set := sets[d.salon]
		if set == nil {
			if set, err = readMessageSettings(ctx, s.pool, d.salon); err != nil {
				return planned, err
			}
			sets[d.salon] = set
		}
		got, ok, err := s.planReminder(ctx, set, d.salon, d.booking, d.lead, now)
		if err != nil {
			return planned, err
		}
		if ok {
			planned++
			ids = append(ids, got...)
		}
	}
	s.sendNow(ctx, ids)
	return planned, nil
}

// planReminder writes one booking's reminder for lead, on its client's
// channels, unless it was planned.
func (s *Service) planReminder(ctx context.Context, set *MessageSettings, salonID, bookingID int64, lead time.Duration,
	now time.Time) ([]int64, bool, error) {
	v, err := s.view(ctx, salonID, bookingID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	loc := v.Salon.Location()
	at := v.StartsAt.Add(-lead)
	chat := at
	if night, morning := set.quiet(at, loc); night {
		chat = morning
		if morning.After(v.StartsAt.Add(-lead / 2)) {
			chat = set.eveningBefore(at, loc)
		}
	}
	ref := fmt.Sprintf("%d:%d", int(lead.Minutes()), v.StartsAt.Unix())
	plans, err := s.clientPlans(ctx, s.pool, v, set, KindReminder, ref, later(at, now), later(chat, now), Identity{}, true)
	if err != nil {
		return nil, false, err
	}
	for i := range plans {
		plans[i].lead, plans[i].startsAt = lead, v.StartsAt
	}
	var ids []int64
	first := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO booking_reminders (booking_id, starts_at, lead_min) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, v.ID, v.StartsAt, int(lead.Minutes()))
		if err != nil {
			return err
		}
		if first = tag.RowsAffected() == 1; !first {
			return nil // another sweep planned it
		}
		ids, err = writePlans(ctx, tx, &v.Booking, plans)
		return err
	})
	return ids, first, dbErr(err)
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
