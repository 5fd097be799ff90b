package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Service is the booking core. Every front end (bot, widget, panel, importer)
// changes a salon's calendar only through its methods. It is safe for
// concurrent use; run as many replicas as you like against one database.
type Service struct {
	pool     *pgxpool.Pool
	now      func() time.Time
	log      *slog.Logger
	catalogs sync.Map // salon id -> *catalog
	deposits bool     // take deposits online: bookings wait for payment
	jobs     Jobs     // enqueues notification and reminder jobs; nil: none
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock the service reads "now" from (tests pin it).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLogger sets the logger for events worth an operator's attention.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithOnlineDeposits makes client bookings of services with a deposit wait
// for the payment: they are created pending, holding their slot for the
// salon's hold minutes. Without it (until a payment provider is wired) the
// deposit is recorded on the booking, which is confirmed, and paid in the
// salon.
func WithOnlineDeposits() Option { return func(s *Service) { s.deposits = true } }

// New returns a Service over pool.
func New(pool *pgxpool.Pool, opts ...Option) *Service {
	s := &Service{pool: pool, now: time.Now, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Pool returns the pool the service runs on, for wiring (health checks, jobs).
func (s *Service) Pool() *pgxpool.Pool { return s.pool }

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now() }

// querier is what unexported helpers take: a pool, a connection or a
// transaction. Helpers never open transactions of their own.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// inTx runs fn in one transaction, committing when fn returns nil.
func (s *Service) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// lockMasters takes the per-master advisory transaction locks that serialise
// writes to one master's calendar, in ascending id order so that paths which
// touch two masters never deadlock. The key is namespaced ("booking-master:")
// so other advisory lock users cannot collide with it.
func lockMasters(ctx context.Context, q querier, ids ...int64) error {
	switch len(ids) {
	case 1:
		_, err := q.Exec(ctx, lockMasterSQL, ids[0])
		if err != nil {
			return fmt.Errorf("lock master %d: %w", ids[0], err)
		}
		return nil
	case 2:
		a, b := ids[0], ids[1]
		if a == b {
			return lockMasters(ctx, q, a)
		}
		if a > b {
			a, b = b, a
		}
		if err := lockMasters(ctx, q, a); err != nil {
			return err
		}
		return lockMasters(ctx, q, b)
	}
	return errors.New("lockMasters: one or two ids")
}

const lockMasterSQL = `SELECT pg_advisory_xact_lock(hashtextextended('booking-master:' || $1::bigint, 0))`
