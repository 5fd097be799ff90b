package booking

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Background jobs. A change that should tell someone (the client, the
// master) enqueues its jobs in its own transaction, whether or not any
// process runs the workers yet, so a crash can neither lose them nor create
// them for a change that did not happen. The core's workers decide who is
// told, on which channels; each chat channel's Notifier (the bot) turns a
// notice into messages in the transaction that completes the job.

// Events a booking goes through, as NotifyArgs and Notice name them.
const (
	EventCreated     = "created"
	EventCancelled   = "cancelled"
	EventRescheduled = "rescheduled"
	EventHoldExpired = "hold_expired"
	EventReminder    = "reminder"
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

// ReminderArgs asks to remind the client of a booking Lead before StartsAt.
// The worker checks that the booking still starts then and is active.
type ReminderArgs struct {
	SalonID   int64         `json:"salon_id"`
	BookingID int64         `json:"booking_id"`
	StartsAt  time.Time     `json:"starts_at"`
	Lead      time.Duration `json:"lead"`
}

// Kind implements river.JobArgs.
func (ReminderArgs) Kind() string { return "booking_reminder" }

// ReminderLeads are how long before a booking its client is reminded.
var ReminderLeads = []time.Duration{24 * time.Hour, 2 * time.Hour}

// Jobs inserts jobs inside a transaction; *river.Client[pgx.Tx] is one.
type Jobs interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Role is who a notice is for.
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
}

// Notifier delivers the notices of one chat channel. Notify queues the
// message in tx, the transaction that completes the job: both happen or
// neither.
type Notifier interface {
	Notify(ctx context.Context, tx pgx.Tx, n Notice) error
}

var channelRE = regexp.MustCompile(`^[a-z][a-z0-9_]{1,31}$`)

// enqueueChange inserts, in tx, the jobs a change of b causes: a
// notification, and for a new or moved booking its reminders.
func (s *Service) enqueueChange(ctx context.Context, tx pgx.Tx, b *Booking, event string, actor Actor, from *Booking) error {
	n := NotifyArgs{SalonID: b.SalonID, BookingID: b.ID, Event: event, Actor: actor.Kind, Channel: actor.Channel, By: actor.Identity}
	if from != nil {
		n.FromStartsAt, n.FromMasterID = from.StartsAt, from.MasterID
	}
	params := []river.InsertManyParams{{Args: n}}
	if event == EventCreated || event == EventRescheduled {
		for _, lead := range ReminderLeads {
			params = append(params, river.InsertManyParams{
				Args:       ReminderArgs{SalonID: b.SalonID, BookingID: b.ID, StartsAt: b.StartsAt, Lead: lead},
				InsertOpts: &river.InsertOpts{ScheduledAt: b.StartsAt.Add(-lead)},
			})
		}
	}
	if _, err := s.jobs.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue %s jobs: %w", event, err)
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

// deliver hands the notices to their channels' notifiers and completes the
// job, in one transaction.
func (s *Service) deliver(ctx context.Context, notices []Notice, complete func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, n := range notices {
			nt, ok := s.notifiers[n.To.Channel]
			if !ok {
				continue // no front end delivers this channel here
			}
			if err := nt.Notify(ctx, tx, n); err != nil {
				return fmt.Errorf("notify %s: %w", n.To.Identity, err)
			}
		}
		return complete(tx)
	})
}

// view reads a booking for a job (as the system).
func (s *Service) view(ctx context.Context, salonID, bookingID int64) (*View, error) {
	return s.BookingView(ctx, BySystem(), salonID, bookingID)
}

type notifyWorker struct {
	river.WorkerDefaults[NotifyArgs]
	s *Service
}

// Work tells the client (on each identity except the one that made the
// change) and the masters concerned about a change.
func (w *notifyWorker) Work(ctx context.Context, job *river.Job[NotifyArgs]) error {
	a := job.Args
	v, err := w.s.view(ctx, a.SalonID, a.BookingID)
	if errors.Is(err, ErrNotFound) {
		return nil // gone: nothing to tell
	}
	if err != nil {
		return err
	}
	to, err := recipients(ctx, w.s.pool, &v.Booking, true, a.FromMasterID)
	if err != nil {
		return err
	}
	var notices []Notice
	for i, rc := range to {
		if !rc.Master && rc.Identity == a.By {
			continue
		}
		notices = append(notices, Notice{To: rc, Event: a.Event, Booking: v, Change: a, Key: fmt.Sprintf("job:%d:%d", job.ID, i)})
	}
	return w.s.deliver(ctx, notices, func(tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

type reminderWorker struct {
	river.WorkerDefaults[ReminderArgs]
	s *Service
}

// Work reminds the client of a booking that is still on at the time the
// reminder was made for. It waits for the service's clock: a reminder due
// later snoozes; one that comes much later than due (the booking was made
// at short notice, or the jobs were down) would say the wrong thing and is
// dropped.
func (w *reminderWorker) Work(ctx context.Context, job *river.Job[ReminderArgs]) error {
	a := job.Args
	now := w.s.now()
	if due := a.StartsAt.Add(-a.Lead); now.Before(due.Add(-time.Minute)) {
		return river.JobSnooze(due.Sub(now))
	}
	v, err := w.s.view(ctx, a.SalonID, a.BookingID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var notices []Notice
	stale := now.After(a.StartsAt.Add(-a.Lead / 2))
	if v.Status.Active() && v.StartsAt.Equal(a.StartsAt) && !stale {
		to, err := recipients(ctx, w.s.pool, &v.Booking, false, 0)
		if err != nil {
			return err
		}
		for i, rc := range to {
			notices = append(notices, Notice{To: rc, Event: EventReminder, Booking: v, Lead: a.Lead, Key: fmt.Sprintf("job:%d:%d", job.ID, i)})
		}
	}
	return w.s.deliver(ctx, notices, func(tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

// connTx is the pgx.Tx of a transaction Book drives by hand on a connection
// (BEGIN and COMMIT travel in its batches, which is what makes a booking
// cost few round trips), so that job inserts can join it. Begin makes
// savepoints, as pgx's own pseudo-nested transactions do; the outer
// transaction is committed and rolled back by Book.
type connTx struct {
	conn  *pgx.Conn
	depth int
	done  bool
}

func (t *connTx) Begin(ctx context.Context) (pgx.Tx, error) {
	nested := &connTx{conn: t.conn, depth: t.depth + 1}
	if _, err := t.conn.Exec(ctx, fmt.Sprintf("SAVEPOINT sp_%d", nested.depth)); err != nil {
		return nil, err
	}
	return nested, nil
}

func (t *connTx) Commit(ctx context.Context) error {
	if t.done {
		return pgx.ErrTxClosed
	}
	t.done = true
	if t.depth == 0 {
		return errors.New("connTx: the outer transaction is committed by its owner")
	}
	_, err := t.conn.Exec(ctx, fmt.Sprintf("RELEASE SAVEPOINT sp_%d", t.depth))
	return err
}

func (t *connTx) Rollback(ctx context.Context) error {
	if t.done {
		return pgx.ErrTxClosed
	}
	t.done = true
	if t.depth == 0 {
		return errors.New("connTx: the outer transaction is rolled back by its owner")
	}
	_, err := t.conn.Exec(ctx, fmt.Sprintf("ROLLBACK TO SAVEPOINT sp_%d", t.depth))
	return err
}

func (t *connTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return t.conn.CopyFrom(ctx, table, cols, src)
}
func (t *connTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return t.conn.SendBatch(ctx, b)
}
func (t *connTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }
func (t *connTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Prepare(ctx, name, sql)
}
func (t *connTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.conn.Exec(ctx, sql, args...)
}
func (t *connTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.conn.Query(ctx, sql, args...)
}
func (t *connTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.conn.QueryRow(ctx, sql, args...)
}
func (t *connTx) Conn() *pgx.Conn { return t.conn }

// ExpireHoldsArgs is the periodic job that cancels unpaid holds.
type ExpireHoldsArgs struct{}

// Kind implements river.JobArgs.
func (ExpireHoldsArgs) Kind() string { return "expire_holds" }

// PruneKeysArgs is the periodic job that forgets old idempotency records.
type PruneKeysArgs struct{}

// Kind implements river.JobArgs.
func (PruneKeysArgs) Kind() string { return "prune_idempotency_keys" }

type expireHoldsWorker struct {
	river.WorkerDefaults[ExpireHoldsArgs]
	s *Service
}

func (w *expireHoldsWorker) Work(ctx context.Context, _ *river.Job[ExpireHoldsArgs]) error {
	n, err := w.s.ExpireHolds(ctx)
	if n > 0 {
		w.s.log.Info("expired holds", "count", n)
	}
	return err
}

type pruneKeysWorker struct {
	river.WorkerDefaults[PruneKeysArgs]
	s *Service
}

func (w *pruneKeysWorker) Work(ctx context.Context, _ *river.Job[PruneKeysArgs]) error {
	_, err := w.s.PruneIdempotencyKeys(ctx, 24*time.Hour)
	return err
}

// AddWorkers registers the core's workers: notifications and reminders
// (delivered through the service's notifiers), hold expiry, key pruning.
func AddWorkers(w *river.Workers, s *Service) {
	river.AddWorker(w, &notifyWorker{s: s})
	river.AddWorker(w, &reminderWorker{s: s})
	river.AddWorker(w, &expireHoldsWorker{s: s})
	river.AddWorker(w, &pruneKeysWorker{s: s})
}

// PeriodicJobs are the core's recurring jobs (River runs each on one replica).
func PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(30*time.Second),
			func() (river.JobArgs, *river.InsertOpts) { return ExpireHoldsArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return PruneKeysArgs{}, nil }, nil),
	}
}
