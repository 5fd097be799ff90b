package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"

	"salon/booking/psp"
)

// Service is the booking core. Every front end (bot, widget, panel, importer)
// changes a salon's calendar only through its methods. It is safe for
// concurrent use; run as many replicas as you like against one database.
type Service struct {
	pool       *pgxpool.Pool
	now        func() time.Time
	log        *slog.Logger
	catalogs   sync.Map // salon id -> *catalog
	deposits   bool     // take deposits online: bookings wait for payment
	psp        psp.Provider
	receipts   bool // fiscal receipts with payments, refunds and settlements
	health     providerHealth
	observe    func(Observation)
	notifiers  map[Channel]Notifier
	couriers   map[Channel]Courier
	limits     map[Channel]int // messages a second the couriers' providers take, all replicas together
	observeMsg func(Channel, string)
	wake       chan struct{}      // messages were written: RunMessages looks now
	lockWait   time.Duration      // the longest wait for a master's lock
	alts       singleflight.Group // losers of one slot share one search for alternatives
	passwords  *passwordChecks    // bounds password hashing
	// masterGates bound the requests that wait for a busy master's lock;
	// loginGates those that wait for a login throttle key's.
	masterGates gates[int64]
	loginGates  gates[string]
	// waitSwept is when this replica last ended the waitlist entries whose
	// days are over (unix seconds).
	waitSwept atomic.Int64
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

// WithNotifier delivers the notices of a chat channel (the Telegram bot's
// outbox). Notices for a channel without a notifier are not sent.
func WithNotifier(ch Channel, n Notifier) Option {
	return func(s *Service) { s.notifiers[ch] = n }
}

// Observation is one Book call as a metrics system sees it: the channel it
// came through, its outcome (booked, taken, invalid, unavailable, error),
// how long it took and how many alternatives a taken time was offered.
type Observation struct {
	Channel      Channel
	Outcome      string
	Took         time.Duration
	Alternatives int
}

// WithObserver has every Book call reported to f (metrics; it must be
// quick and must not block).
func WithObserver(f func(Observation)) Option { return func(s *Service) { s.observe = f } }

// WithLockWait bounds how long a change waits for a master's lock (and an
// idempotent replay for its first request) before it answers
// ErrUnavailable. The default is DefaultLockWait.
func WithLockWait(d time.Duration) Option { return func(s *Service) { s.lockWait = d } }

// DefaultLockWait is how long a change queues for a busy master by default.
const DefaultLockWait = 5 * time.Second

// New returns a Service over pool. The jobs its changes cause are written
// in their transactions whether or not this process runs workers (see
// AddWorkers).
func New(pool *pgxpool.Pool, opts ...Option) *Service {
	s := &Service{pool: pool, now: time.Now, log: slog.Default(), notifiers: map[Channel]Notifier{}, couriers: map[Channel]Courier{}, wake: make(chan struct{}, 1), limits: map[Channel]int{}, lockWait: DefaultLockWait,
		passwords:   newPasswordChecks(DefaultPasswordChecks, DefaultPasswordChecksQueue, PasswordCheckWait),
		masterGates: gates[int64]{what: "master"}, loginGates: gates[string]{what: "login"}}
	for _, o := range opts {
		o(s)
	}
	if s.psp != nil {
		s.psp = watched{p: s.psp, s: s} // PaymentsDown counts its answers
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

// eachRow runs a query and hands every row to fn, closing the rows
// whatever happens; it returns the query's, fn's or the rows' error.
func eachRow(ctx context.Context, q querier, fn func(pgx.Row) error, sql string, args ...any) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// errRetry asks inTx to run the transaction again from the start, with
// every lock released (a booking moved to another master under us).
var errRetry = errors.New("retry the transaction")

// inTx runs fn in one transaction, committing when fn returns nil. The
// transaction's lock waits are bounded by the service's lock wait. A
// deadlock or serialization failure (which PostgreSQL resolves by failing
// one side), or fn asking for it with errRetry, runs fn again from the
// start, a few times; so does a master found busy (lockMasters), once its
// gates are passed, waiting for it in the database only then. Database
// timeouts come back as ErrUnavailable.
func (s *Service) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	deadline := time.Now().Add(s.lockWait)
	leave := func() {}
	defer func() { leave() }()
	var err error
	for range 5 {
		err = s.txOnce(ctx, fn)
		code := pgCode(err)
		var busy *busyError
		if p := passedOf(ctx); errors.As(err, &busy) && !p.covers(busy.masters) {
			// The gates are entered holding none (and no lock: the
			// transaction ended), all at once in ascending order, so
			// waiting at them never closes a cycle.
			masters := busy.masters
			if p != nil {
				masters = append(slices.Clone(p.masters), masters...)
			}
			leave()
			leave = func() {}
			l, gerr := s.masterGates.enter(ctx, deadline, masters...)
			if gerr != nil {
				return gerr
			}
			leave = l
			ctx = context.WithValue(ctx, passedKey{}, &passed{masters: masters, deadline: deadline})
			continue
		}
		if !errors.Is(err, errRetry) && code != pgDeadlock && code != pgSerialization {
			break
		}
		if code == pgDeadlock {
			// (Run again, unseen by the caller: logged, as the lock order
			// that should have made it impossible was broken somewhere.)
			s.log.Warn("deadlock: the transaction runs again", "err", err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	var busy *busyError
	switch {
	case errors.Is(err, errRetry):
		return conflict("the booking keeps changing under this request")
	case errors.As(err, &busy):
		return fmt.Errorf("%v: %w", err, ErrUnavailable)
	}
	return dbErr(err)
}

func (s *Service) txOnce(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	// The lock waits are bounded (after gates, by what is left of the
	// wait); the changes are audited under the caller's name when it has
	// one.
	wait := max(s.lockWait.Milliseconds(), 1)
	if p := passedOf(ctx); p != nil {
		wait = lockTimeout(p.deadline)
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true), set_config('salon.actor', $2, true)`,
		fmt.Sprint(wait), callerOf(ctx).auditName()); err != nil {
		return fmt.Errorf("lock timeout: %w", err)
	}
	var in pgx.Tx = tx
	if p := passedOf(ctx); p != nil {
		in = &gatedTx{Tx: tx, passed: p}
	}
	if err := fn(in); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// lockManyMasters takes the locks of many masters (a batch, a salon's
// schedule) in one statement, in ascending order, as lockMasters does for
// one or two; each wait is bounded by the transaction's lock_timeout.
func lockManyMasters(ctx context.Context, tx pgx.Tx, ids []int64) error {
	ids = slices.Sorted(slices.Values(ids)) // and the statement's ORDER BY: the order never depends on a plan
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('booking-master:' || m, 0))
		FROM unnest($1::bigint[]) m ORDER BY m`, ids)
	return err
}

// lockMasters takes the per-master advisory transaction locks that serialise
// writes to one master's calendar, all at once and in ascending id order, so
// that paths which touch two masters never deadlock. The key is namespaced
// ("booking-master:") so other advisory lock users cannot collide with it.
// (A visit's move may touch its old masters and its new ones.)
// A transaction takes its master locks once: a path that finds it needs
// another master rolls back and starts again (errRetry). A lock that is
// taken is waited for only once the masters' gates were passed (see
// gates): before, it is a *busyError, and the transaction starts again.
// (A client's try of a code waits for them at once: see waitMasters.)
func lockMasters(ctx context.Context, q querier, ids ...int64) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 || len(ids) > 2*MaxVisitItems {
		return fmt.Errorf("lockMasters: %d ids", len(ids))
	}
	if g, ok := q.(*gatedTx); ok && g.passed.covers(ids) {
		return waitMasters(ctx, q, g.passed.deadline, 0, ids...)
	}
	var all bool
	if err := q.QueryRow(ctx, `SELECT bool_and(pg_try_advisory_xact_lock(hashtextextended('booking-master:' || m, 0)))
		FROM unnest($1::bigint[]) m`, ids).Scan(&all); err != nil {
		return fmt.Errorf("lock masters %v: %w", ids, err)
	}
	if !all {
		return &busyError{masters: ids}
	}
	return nil
}

// waitMasters takes the locks of masters ids, in ascending order, waiting
// for them until deadline in all (each lock's lock_timeout what is left of
// it), then leaves lock_timeout at then (ms; 0: what is left). A
// transaction past its masters' gates waits so; and so does a client's
// try of a balance's code, which holds the code's lock (codeLockKey) and
// would lose its turn among the code's tries if it left at a busy master.
func waitMasters(ctx context.Context, q querier, deadline time.Time, then int64, ids ...int64) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	batch := &pgx.Batch{}
	batch.Queue(`
		SELECT count(*) FROM (
		    SELECT set_config('lock_timeout', greatest(1, $2::bigint - (extract(epoch FROM clock_timestamp() - s.t0) * 1000)::bigint)::text, true) AS t,
		           pg_advisory_xact_lock(hashtextextended('booking-master:' || m, 0)) AS l
		    FROM (SELECT clock_timestamp() AS t0) s, unnest($1::bigint[]) AS m) x`, ids, lockTimeout(deadline))
	if then > 0 {
		batch.Queue(`SELECT set_config('lock_timeout', $1::bigint::text, true)`, then)
	}
	if err := q.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("lock masters %v: %w", ids, err)
	}
	return nil
}

// gatedTx is a transaction run after its masters' gates were passed: it
// may wait for their locks in the database (lockMasters).
type gatedTx struct {
	pgx.Tx
	passed *passed
}
