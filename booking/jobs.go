package booking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Background jobs. A change that should tell someone (the client, the
// master) enqueues its jobs in its own transaction, so a crash can neither
// lose them nor create them for a change that did not happen. The workers
// live with the front end that delivers them (the bot).

// Events a booking goes through, as NotifyArgs name them.
const (
	EventCreated     = "created"
	EventCancelled   = "cancelled"
	EventRescheduled = "rescheduled"
	EventHoldExpired = "hold_expired"
)

// NotifyArgs asks to tell the people concerned about a change of a booking.
type NotifyArgs struct {
	SalonID   int64     `json:"salon_id"`
	BookingID int64     `json:"booking_id"`
	Event     string    `json:"event"`
	Actor     ActorKind `json:"actor"`
	Source    Source    `json:"source"`
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

// WithJobs makes the service enqueue notification and reminder jobs with
// every change of a booking.
func WithJobs(j Jobs) Option { return func(s *Service) { s.jobs = j } }

// enqueueChange inserts, in tx, the jobs a change of b causes: a
// notification, and for a new or moved booking its reminders.
func (s *Service) enqueueChange(ctx context.Context, tx pgx.Tx, b *Booking, event string, actor Actor, from *Booking) error {
	if s.jobs == nil {
		return nil
	}
	n := NotifyArgs{SalonID: b.SalonID, BookingID: b.ID, Event: event, Actor: actor.Kind, Source: b.Source}
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

// connTx is the pgx.Tx of a transaction Book drives by hand on a connection
// (BEGIN and COMMIT travel in its batches), so that job inserts can join it.
// Begin makes savepoints, as pgx's own pseudo-nested transactions do.
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

// AddWorkers registers the core's workers.
func AddWorkers(w *river.Workers, s *Service) {
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

// UseJobs sets the job inserter after construction (the workers need the
// service first). Call it before the service serves requests.
func (s *Service) UseJobs(j Jobs) { s.jobs = j }
