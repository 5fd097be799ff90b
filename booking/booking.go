package booking

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Status is a booking's state. Pending and confirmed bookings are active: they
// occupy their master's time.
type Status string

// Booking statuses.
const (
	StatusPending   Status = "pending"   // slot held, awaiting the deposit
	StatusConfirmed Status = "confirmed" // the client is expected
	StatusCancelled Status = "cancelled"
	StatusCompleted Status = "completed"
	StatusNoShow    Status = "no_show"
)

// Active reports whether the booking occupies its master's time.
func (s Status) Active() bool { return s == StatusPending || s == StatusConfirmed }

// Source is the front end a booking came through.
type Source string

// Booking sources.
const (
	SourceBot    Source = "bot"
	SourceWidget Source = "widget"
	SourcePanel  Source = "panel"
	SourceImport Source = "import"
)

// Booking is a client's appointment with a master for a service.
type Booking struct {
	ID          int64
	SalonID     int64
	MasterID    int64
	ServiceID   int64
	ClientID    int64
	StartsAt    time.Time
	DurationMin int // the master's work, from StartsAt
	BufferMin   int
	// ProcessingMin and FinishMin: after DurationMin the client stays
	// ProcessingMin more (a colour taking) while the master is free, then
	// the master works FinishMin more (0, 0: none).
	ProcessingMin int
	FinishMin     int
	// VisitID is the visit the booking is a segment of: the id of its first
	// segment (the booking's own id for a visit of one).
	VisitID int64
	// Segments are the visit's segments in visit order, the head first
	// (read with the visit by the calls that act on it; nil otherwise).
	Segments      []Booking
	Status        Status
	Source        Source
	Price         Money
	Deposit       Money
	HoldExpiresAt time.Time // set while pending
	Notes         string
	CancelReason  string
	// ContactName is the name given with the booking (the client record
	// keeps its own).
	ContactName string
	// ContactEmail is the e-mail given with the booking ("" for none):
	// where its messages go. The booking's own, never the client record's.
	ContactEmail string
	// Lang is the language the client booked in ("ru", "en"; "" for the
	// salon's): their messages are written in it.
	Lang string
	// ConfirmedAt and ConfirmedVia are the client's first confirmation that
	// they will come (a tap in a reminder), and its channel.
	ConfirmedAt  time.Time
	ConfirmedVia Channel
	// Origin is the chat identity that made the booking (zero for the web,
	// the panel and imports): it may see and change the booking.
	Origin    Identity
	CreatedAt time.Time
	UpdatedAt time.Time

	// ManageToken lets the visitor who booked on the web view, cancel and
	// reschedule the booking without an account. Only Book returns it (and
	// a replay of the same idempotent request); the database keeps only its
	// hash.
	ManageToken string
	// PaidWith is what the booking reserved of a package or a certificate
	// (nil for none; once the booking ended, settled: what was kept and
	// given back): returned by Book and ApplyBalance, read by
	// BookingView.
	PaidWith *PaidWith
	// Held is what the visit's deposit paid online holds (not refunded),
	// read with PaidWith when a balance pays it (a booking just made holds
	// nothing yet): what is left to pay at the salon (DueAtSalon) counts it.
	Held Money
}

// EndsAt is when the service ends for the client, processing and finish
// included (the buffer is not).
func (b *Booking) EndsAt() time.Time {
	return b.StartsAt.Add(time.Duration(b.DurationMin+b.ProcessingMin+b.FinishMin) * time.Minute)
}

// Processing is the part of the booking when its master is free for
// others while the client stays (a zero interval when there is none).
func (b *Booking) Processing() (start, end time.Time) {
	p := b.terms().gap(b.StartsAt)
	return p.start, p.end
}

// terms are the booking's own terms of time.
func (b *Booking) terms() timing {
	return timing{dur: minutes(b.DurationMin), buffer: minutes(b.BufferMin), processing: minutes(b.ProcessingMin),
		finish: minutes(b.FinishMin)}
}

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }

// Head reports whether b is its visit's first segment (or a visit of one).
func (b *Booking) Head() bool { return b.VisitID == 0 || b.VisitID == b.ID }

// visit is the id of b's visit.
func (b *Booking) visit() int64 { return cmp.Or(b.VisitID, b.ID) }

// BookRequest asks for a booking.
type BookRequest struct {
	SalonID   int64
	ServiceID int64
	MasterID  int64
	// Items, instead of ServiceID and MasterID, books a visit of several
	// services (in visit order), starting at StartsAt.
	Items    []VisitItem
	StartsAt time.Time
	Client   ClientInput
	// caller is who books, from Book's context: a Visitor of the widget
	// (who gets the booking's manage token), a chat identity (which becomes
	// the booking's origin), a panel user, an import or the system.
	caller Caller
	// Source is the front end; zero means the caller's own (web: widget,
	// chat: bot, staff: panel). Staff and the system may also book as
	// SourceImport.
	Source Source
	Notes  string
	// AskDeposit: staff ask the client to pay the service's deposit online
	// (the booking is pending, holding its time, and the client is sent a
	// link that pays it), not in the salon. Clients always pay online.
	AskDeposit bool
	// IdempotencyKey makes retries harmless: the same key with the same
	// request returns the first booking; with another request, ErrKeyReused.
	IdempotencyKey string
	// PayWith, when not nil, pays the booking with a package or a
	// certificate: what it uses is reserved with the booking.
	PayWith *PayWith
}

// MaxKeyLen is the longest idempotency key accepted.
const MaxKeyLen = 255

func (r *BookRequest) normalize(region string) error {
	fe := fieldErrors{}
	switch {
	case len(r.Items) > 0 && (r.ServiceID != 0 || r.MasterID != 0):
		fe.add("items", "give either service_id and master_id or items")
	case len(r.Items) > 0:
	default:
		if r.ServiceID <= 0 {
			fe.add("service_id", "required")
		}
		if r.MasterID <= 0 {
			fe.add("master_id", "required")
		}
	}
	if r.StartsAt.IsZero() {
		fe.add("starts_at", "required")
	} else if r.StartsAt.Second() != 0 || r.StartsAt.Nanosecond() != 0 {
		fe.add("starts_at", "must be a whole minute")
	}
	if err := r.caller.check(); err != nil {
		return err
	}
	implied := map[callerKind]Source{callerVisitor: SourceWidget, callerIdentity: SourceBot,
		callerStaff: SourcePanel, callerSystem: SourcePanel, callerImport: SourceImport}[r.caller.kind]
	switch {
	case implied == "":
		fe.add("caller", "a manage token cannot book")
	case r.Source == "":
		r.Source = implied
	case r.Source == implied:
	case r.Source == SourceImport && !r.caller.client():
	default:
		fe.add("source", "not a source for this caller")
	}
	r.Client.normalize(fe, "client.", region)
	if r.Client.Verified && r.caller.kind != callerIdentity {
		fe.add("client.phone", "only a chat channel can verify a phone")
	}
	r.Notes = cleanText(fe, "notes", r.Notes, MaxNotesLen, multiLine, false)
	checkKey(fe, "idempotency_key", r.IdempotencyKey)
	r.PayWith.normalize(fe)
	return fe.err()
}

// fingerprint identifies the request for idempotency: replays must match it.
func (r *BookRequest) fingerprint() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "book\x00%d\x00%d\x00%d\x00%d\x00%s\x00%s\x00%t\x00%s\x00%s\x00%d\x00%s\x00%d",
		r.SalonID, r.ServiceID, r.MasterID, r.StartsAt.UnixNano(), r.Client.Name, r.Client.Phone, r.Client.Verified,
		r.Source, r.Notes, r.caller.kind, r.caller.identity, r.caller.user.ID)
	if r.AskDeposit {
		h.Write([]byte("\x00deposit online")) // (a request without it hashes as before)
	}
	for _, it := range r.Items {
		fmt.Fprintf(h, "\x00item %d:%d", it.ServiceID, it.MasterID)
	}
	h.Write([]byte(r.PayWith.fingerprint()))
	return h.Sum(nil)
}

// bookContext is what a booking change reads, under the master's lock, to
// check a request.
type bookContext struct {
	version             int64 // of the salon's catalogue
	salon               Salon
	svc                 SalonService
	serviceOK, masterOK bool
	offered             bool
	durationMin         int
	price               Money
	shifts              []shift
	// client is the record of the request's phone (read with the rest):
	// its id (0 for none yet), and whether it has no name yet.
	client clientRecord
	// listeners: the master is reachable on a chat channel, or some client
	// of the salon is (then the job's own check decides, for this client).
	listeners bool
	// messages: what the salon sends on which channel, when.
	messages *MessageSettings
}

// Book books the client with the master for the service at StartsAt, for
// the caller the context carries (As).
//
// A request whose start another active booking visibly covers is refused at
// once, without queueing for the master. Otherwise it takes the master's
// advisory lock (waiting at most the service's lock wait), checks the
// request (the master does the service; the time is inside a shift and
// clear of breaks, not in the past; for clients also on the grid, after the
// minimum notice and within the horizon), finds or creates the client by
// phone (never renaming one), and inserts the booking under a savepoint.
// When the time overlaps another active booking, the exclusion constraint
// refuses the insert and the transaction ends; the nearest free starts are
// then computed from a fresh snapshot, after the lock is released (they are
// advice: the constraint alone decides), and returned in a *SlotTakenError.
//
// A Visitor gets a manage token with the booking; a chat identity becomes
// the booking's origin (it may see and change it), and, when the client's
// phone is Verified by the channel, joins the client record.
//
// With WithOnlineDeposits, a client's booking of a service with a deposit
// is pending until paid, holding its slot for the salon's hold minutes;
// otherwise it is confirmed.
//
// Errors: ErrForbidden (nobody asks); ErrNotFound (salon); ErrInvalid
// (fields; unknown service or master
// also unwrap to ErrNotFound); *SlotTakenError (ErrSlotTaken); ErrKeyReused,
// ErrInProgress (ErrConflict); ErrUnavailable (the master stayed busy past
// the lock wait, or the deadline ran out). Nothing is written when an error
// is returned, but a phone counted against a package's code (see
// CheckBalance).
func (s *Service) Book(ctx context.Context, r BookRequest) (b *Booking, err error) {
	r.caller = callerOf(ctx)
	if s.observe != nil {
		start := time.Now()
		defer func() {
			o := Observation{Channel: r.caller.channel(), Took: time.Since(start), Outcome: "booked"}
			var st *SlotTakenError
			switch {
			case errors.As(err, &st):
				o.Outcome, o.Alternatives = "taken", len(st.Alternatives)+len(st.Visits)
			case errors.Is(err, ErrInvalid), errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict):
				o.Outcome = "invalid"
			case errors.Is(err, ErrUnavailable):
				o.Outcome = "unavailable"
			case err != nil:
				o.Outcome = "error"
			}
			s.observe(o)
		}()
	}
	return s.bookUnobserved(ctx, r)
}

func (s *Service) bookUnobserved(ctx context.Context, r BookRequest) (*Booking, error) {
	if err := r.caller.check(); err != nil {
		return nil, err
	}
	// Staff of another salon find nothing here.
	if (r.caller.kind == callerStaff || r.caller.kind == callerImport) && r.caller.user.SalonID != r.SalonID {
		return nil, fmt.Errorf("salon %d: %w", r.SalonID, ErrNotFound)
	}
	// The salon's country reads phone numbers; a cached catalogue of any
	// version will do (the country hardly ever changes).
	c, err := s.catalogAt(ctx, s.pool, r.SalonID, 0)
	if err != nil {
		return nil, err
	}
	if err := r.normalize(c.salon.Country); err != nil {
		return nil, err
	}
	now := s.now()
	if len(r.Items) > 0 {
		return s.bookVisit(ctx, &r, now)
	}
	b, err := s.bookGated(ctx, &r, now)
	if errors.Is(err, errTaken) {
		alts, err := s.alternatives(ctx, r.SalonID, r.ServiceID, r.MasterID, r.StartsAt, now, 0, !r.caller.client())
		if err != nil {
			return nil, err
		}
		return nil, &SlotTakenError{Alternatives: alts}
	}
	if err != nil {
		return nil, dbErr(err)
	}
	s.wakeMessages() // its confirmation, if it has one, is due now
	return b, nil
}

// bookGated runs book until it is done: when the master is busy, again at
// the master's gate (then waiting in the database, until the lock wait's
// deadline); when the client's record changed under it, again, a few
// times. The gate is left before the caller computes alternatives.
func (s *Service) bookGated(ctx context.Context, r *BookRequest, now time.Time) (*Booking, error) {
	deadline := time.Now().Add(s.lockWait)
	var gated *passed
	leave := func() {}
	defer func() { leave() }()
	for moved := 0; ; {
		b, err := s.book(ctx, r, now, gated)
		var busy *busyError
		switch {
		case errors.As(err, &busy) && gated == nil:
			l, gerr := s.masterGates.enter(ctx, deadline, r.MasterID)
			if gerr != nil {
				return nil, gerr
			}
			leave, gated = l, &passed{masters: []int64{r.MasterID}, deadline: deadline}
			continue
		case (errors.Is(err, errClientMoved) || errors.Is(err, errBalanceMoved)) && moved < 3:
			moved++ // read the client's record, or the balance, anew
			continue
		case errors.Is(err, errClientMoved), errors.Is(err, errBalanceMoved):
			return nil, fmt.Errorf("the client's record or the balance keeps changing: %w", ErrUnavailable)
		}
		return b, err
	}
}

// clientRecord is what a booking read of the client record of its phone.
type clientRecord struct {
	read     bool  // it was read (the zero value: not, and the insert finds it)
	id       int64 // 0: none yet
	nameless bool  // the record has no name yet: the booking gives it one
}

// errClientMoved says the client record read for the phone changed before
// the insert (another booking created it first, or it was erased): the
// booking, run again, reads it anew.
var errClientMoved = errors.New("the client record changed meanwhile")

// errTaken says the requested time is taken; the caller computes the
// alternatives once every lock is released.
var errTaken = errors.New("slot taken")

// book runs Book's transaction in two round trips, driven by hand so that
// BEGIN and COMMIT travel with the statements next to them. Round trip 1:
// BEGIN, the idempotency claim (its wait bounded by the lock wait), the
// master's lock if it is free, the reads the checks need. (When the master
// is busy, one more round trip: the answer that the time is visibly taken,
// or, before the master's gate was passed, a *busyError that ends the
// transaction; once it was (gated), the wait for the lock in the database,
// until the gate's deadline.) Round trip 2: a savepoint, one statement
// inserting the client, the booking, its notification job and the
// idempotency result, and COMMIT. Any early return rolls back (but for a
// phone not a package's client's, whose count commits alone); a
// connection left inside a transaction is closed, never reused.
func (s *Service) book(ctx context.Context, r *BookRequest, now time.Time, gated *passed) (*Booking, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("book: %w", err)
	}
	defer conn.Release()
	tx := &pipelinedTx{conn: conn}
	defer tx.rollback(ctx)
	start := time.Now() // (the lock wait's start)

	batch := &pgx.Batch{}
	batch.Queue(`BEGIN`)
	lockWait := max(s.lockWait.Milliseconds(), 1)
	if gated != nil {
		lockWait = lockTimeout(gated.deadline) // (what is left of the wait)
	}
	var claim *keyClaim
	if r.IdempotencyKey != "" {
		claim = queueClaim(batch, r.SalonID, "book", r.IdempotencyKey, r.fingerprint(), lockWait)
	}
	// The master's lock, at once if nobody holds it (the common case:
	// nothing else to do, and the reads after it are current).
	var locked bool
	tryLock, args := `SELECT pg_try_advisory_xact_lock(hashtextextended('booking-master:' || $1::bigint, 0))`, []any{r.MasterID}
	// A client's try of a code takes the code's lock first, and waits for
	// it (codeLockKey); when the master is busy and the code is a
	// balance's (so that the try has a turn among the code's tries to
	// keep), it then waits for the master's lock here, holding the code's,
	// as a request past the gate does, within the same lock wait; a code
	// that is nobody's has no turn and goes to the gate as any booking
	// does. The balance's lock (taken by the reservation's entry) is
	// waited for at most the lock wait too. The claim sets the same
	// bound; else it is set here, before either wait.
	codeLock := r.PayWith != nil && r.PayWith.Code != "" && r.caller.client()
	switch {
	case codeLock && claim == nil:
		tryLock += ` FROM (SELECT set_config('lock_timeout', $2::bigint::text, true) AS t) lt,
			LATERAL (SELECT pg_advisory_xact_lock(hashtextextended($3::text, 0)) WHERE lt.t IS NOT NULL) cl`
		args = append(args, lockWait, codeLockKey(tokenHash(r.PayWith.Code)))
	case codeLock:
		tryLock += ` FROM (SELECT pg_advisory_xact_lock(hashtextextended($2::text, 0))) cl`
		args = append(args, codeLockKey(tokenHash(r.PayWith.Code)))
	case r.PayWith != nil && claim == nil:
		tryLock += ` FROM (SELECT set_config('lock_timeout', $2::bigint::text, true)) lt`
		args = append(args, lockWait)
	}
	batch.Queue(tryLock, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&locked) })
	bc := queueBookContext(batch, r.SalonID, r.MasterID, r.StartsAt, r.Client.Phone)
	var sp *spendable
	if r.PayWith != nil {
		sp = queueSpendable(batch, r.SalonID, r.PayWith, r.caller, false)
	}
	tx.open = true
	err = conn.SendBatch(ctx, batch).Close()
	switch {
	case err == nil:
	case isNoRows(err):
		return nil, fmt.Errorf("salon %d: %w", r.SalonID, ErrNotFound)
	case pgCode(err) == pgLockNotAvailable && claim != nil && !claim.reached:
		return nil, ErrInProgress
	default:
		return nil, fmt.Errorf("book: %w", err)
	}
	if claim != nil && !claim.claimed {
		return s.replay(ctx, conn, claim, r.SalonID)
	}
	if !locked && gated == nil && codeLock && sp.found {
		// A try of a balance's code keeps its turn: it waits here, as
		// past the gate, until the lock wait that began with the code's.
		gated = &passed{masters: []int64{r.MasterID}, deadline: start.Add(s.lockWait)}
	}
	if !locked {
		// The master is busy. A request whose start an active booking
		// visibly covers has lost already and does not queue. The others
		// wait their turn: at the master's gate, without this connection
		// (busyError), then, past it, here (until the gate's deadline), and
		// read again.
		var taken bool
		batch = &pgx.Batch{}
		const coveredSQL = `EXISTS (SELECT 1 FROM master_busy WHERE salon_id = $1 AND master_id = $2
			AND tstzrange(starts_at, booking_slot_end(starts_at, duration_min)) @> $3::timestamptz)`
		if gated == nil {
			batch.Queue(`SELECT `+coveredSQL, r.SalonID, r.MasterID, r.StartsAt).QueryRow(func(row pgx.Row) error { return row.Scan(&taken) })
		} else {
			batch.Queue(`
				SELECT CASE WHEN `+coveredSQL+` THEN true
				            ELSE pg_advisory_xact_lock(hashtextextended('booking-master:' || $2::bigint, 0)) IS NULL END
				FROM (SELECT set_config('lock_timeout', $4::bigint::text, true)) lt`,
				r.SalonID, r.MasterID, r.StartsAt, lockTimeout(gated.deadline)).QueryRow(func(row pgx.Row) error { return row.Scan(&taken) })
			bc = queueBookContext(batch, r.SalonID, r.MasterID, r.StartsAt, r.Client.Phone)
			if r.PayWith != nil {
				sp = queueSpendable(batch, r.SalonID, r.PayWith, r.caller, false)
			}
		}
		if err := conn.SendBatch(ctx, batch).Close(); err != nil {
			return nil, fmt.Errorf("book: %w", err)
		}
		switch {
		case taken:
			return nil, errTaken
		case gated == nil:
			return nil, &busyError{masters: []int64{r.MasterID}}
		}
	}
	if err := s.resolve(ctx, conn, bc, r.SalonID, r.ServiceID, r.MasterID); err != nil {
		return nil, err
	}
	if err := bc.check(r.StartsAt, r.Source, r.caller.client(), now); err != nil {
		return nil, err
	}
	var rsv *reservation
	if sp != nil {
		// What is left was read without the balance's lock: the entry's
		// trigger takes it, and an entry that would overdraw is refused
		// (then the booking runs again, reading it anew).
		pay := payment{clientID: bc.client.id, proven: r.Client.Verified, services: []int64{r.ServiceID}, prices: []Money{bc.price},
			deposits: []Money{bc.svc.Deposit}, day: bc.salon.Today(r.StartsAt)}
		if rsv, err = sp.reserve(r.PayWith, r.caller, pay); err != nil {
			var miss *phoneMiss
			if !errors.As(err, &miss) {
				return nil, err
			}
			// Counted under the code's lock, and committed alone.
			batch = &pgx.Batch{}
			c := queueMissCount(batch, miss, r.Client.Phone, claim)
			batch.Queue(`COMMIT`)
			if err := conn.SendBatch(ctx, batch).Close(); err != nil {
				return nil, fmt.Errorf("book: %w", err)
			}
			tx.open = false
			return nil, c.refusal()
		}
	}

	b := &Booking{
		SalonID: r.SalonID, MasterID: r.MasterID, ServiceID: r.ServiceID,
		StartsAt: r.StartsAt, DurationMin: bc.durationMin, BufferMin: bc.svc.BufferMin,
		ProcessingMin: bc.svc.ProcessingMin, FinishMin: bc.svc.FinishMin, Status: StatusConfirmed, Source: r.Source, Price: bc.price, Deposit: bc.svc.Deposit, Notes: r.Notes,
		ContactName: r.Client.Name, ContactEmail: r.Client.Email, Lang: r.Client.Lang,
	}
	if r.caller.kind == callerIdentity {
		b.Origin = r.caller.identity
	}
	if rsv != nil {
		b.Deposit = max(b.Deposit-rsv.covers, 0) // (paid with the balance)
	}
	if err := s.awaitDeposit(b, r, &bc.salon, now); err != nil {
		return nil, err
	}
	token, salt := r.manageToken(claim)
	actor := r.caller.actor(b)
	if r.Source == SourceImport {
		actor.Channel = ChannelImport
	}
	var notify []byte // nobody to tell: no job, and no check for one
	if bc.listeners {
		if notify, err = json.Marshal(notifyArgs(b, EventCreated, actor, nil)); err != nil {
			return nil, fmt.Errorf("book: %w", err)
		}
	}
	batch = &pgx.Batch{}
	who := r.caller.auditName()
	switch {
	case rsv != nil && gated != nil:
		// The balance's lock is waited for at most until the gate's
		// deadline (less than the lock wait set in round trip 1 is left).
		var actorArg *string // (nil: set_config, strict, leaves it unset)
		if who != "" {
			actorArg = &who
		}
		batch.Queue(`SELECT set_config('salon.actor', $1::text, true), set_config('lock_timeout', $2::bigint::text, true)`, actorArg,
			lockTimeout(gated.deadline))
	case who != "":
		batch.Queue(`SELECT set_config('salon.actor', $1, true)`, who)
	}
	batch.Queue(`SAVEPOINT book`)
	queueInsertBooking(batch, b, r.Client, bc.client, r.caller.identity, token, actor, claim, salt, notify,
		len(s.confirmations(b, r.Client.Phone, bc)) > 0, nil, rsv)
	batch.Queue(`COMMIT`)
	err = conn.SendBatch(ctx, batch).Close()
	if (bc.client.id == 0 && violated(err, "clients_phone")) || (bc.client.id != 0 && isNoRows(err)) {
		return nil, errClientMoved // (the deferred rollback ends the transaction)
	}
	if overdrawn(err) {
		return nil, errBalanceMoved
	}
	if pgCode(err) == pgExclusionViolation {
		// The insert alone is undone, then the transaction ends: the lock
		// is released before anyone computes alternatives.
		if err := conn.SendBatch(ctx, rollbackToBook()).Close(); err != nil {
			return nil, fmt.Errorf("book: %w", err)
		}
		tx.open = false
		return nil, errTaken
	}
	if err != nil {
		return nil, fmt.Errorf("book: %w", err)
	}
	tx.open = false
	b.UpdatedAt = b.CreatedAt
	b.ManageToken = token
	b.VisitID = b.ID
	b.PaidWith = rsv.paid()
	return b, nil
}

// awaitDeposit makes b pending, holding its time, when its deposit is paid
// online (a client's booking, or staff asking for it with AskDeposit);
// while online payment is down, by the salon's fallback.
func (s *Service) awaitDeposit(b *Booking, r *BookRequest, salon *Salon, now time.Time) error {
	if !s.deposits || b.Deposit <= 0 || (!r.caller.client() && !r.AskDeposit) {
		return nil
	}
	switch {
	case !s.PaymentsDown():
		b.Status = StatusPending
		b.HoldExpiresAt = now.Add(time.Duration(salon.HoldMin) * time.Minute)
	case r.AskDeposit:
		return fmt.Errorf("%w: %w", ErrPaymentsDown, ErrUnavailable) // staff choose: paid in the salon
	case salon.DepositFallback == FallbackInSalon:
		// Online payment is down: booked, the deposit paid in the salon.
		b.Notes = strings.TrimSpace(b.Notes + "\n" + depositInSalonNote)
	default:
		return fmt.Errorf("%w: %w", ErrPaymentsDown, ErrUnavailable)
	}
	return nil
}

// manageToken is the manage token a visitor gets with the booking (none
// for other callers), and, with an idempotency key, the salt it was
// derived with.
func (r *BookRequest) manageToken(claim *keyClaim) (string, []byte) {
	switch {
	case r.caller.kind != callerVisitor:
		return "", nil
	case claim != nil:
		salt := newSalt()
		return claim.token(salt), salt
	}
	return newToken(), nil
}

// rollbackToBook undoes the refused insert, then ends the transaction.
func rollbackToBook() *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(`ROLLBACK TO SAVEPOINT book`)
	b.Queue(`ROLLBACK`)
	return b
}

// replay answers a request whose idempotency key was used before: the first
// request's booking, with the same manage token.
func (s *Service) replay(ctx context.Context, q querier, claim *keyClaim, salonID int64) (*Booking, error) {
	res, err := claim.prior(ctx, q)
	if err != nil {
		return nil, err
	}
	b, err := getBooking(ctx, q, salonID, res.BookingID)
	if err != nil {
		return nil, err
	}
	// A visit's replay is the whole visit.
	if segs, err := visitSegments(ctx, q, b, ""); err != nil {
		return nil, err
	} else if len(segs) > 1 {
		b.Segments = segs
	}
	if len(res.TokenSalt) > 0 {
		b.ManageToken = claim.token(res.TokenSalt)
	}
	if err := readPaidWith(ctx, q, b); err != nil {
		return nil, err
	}
	return b, nil
}

// pipelinedTx tracks a transaction begun and committed by hand on conn.
type pipelinedTx struct {
	conn *pgxpool.Conn
	open bool
}

// rollback ends the transaction if it is still open. If that fails the
// connection is closed, so it is never returned to the pool mid-transaction.
func (t *pipelinedTx) rollback(ctx context.Context) {
	if !t.open {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := t.conn.Exec(ctx, `ROLLBACK`); err != nil {
		_ = t.conn.Conn().Close(ctx)
	}
	t.open = false
}

// queueBookContext queues the read of the salon's catalogue version and of
// the master's shifts around at; the result is filled in when the batch is
// read, and completed by resolve. The master's lock must be taken before it
// (in an earlier statement: this one then sees what the lock's last holder
// committed).
func queueBookContext(batch *pgx.Batch, salonID, masterID int64, at time.Time, phone string) *bookContext {
	bc := &bookContext{}
	// One row per shift that may hold the start (one with no shift when
	// none does): a plain join plans and reads cheaper than aggregates.
	batch.Queue(`
		SELECT s.catalog_version, sh.starts_at, sh.ends_at, sh.break_starts_at, sh.break_ends_at, cl.id, cl.name = ''
		FROM salons s
		LEFT JOIN clients cl ON cl.salon_id = s.id AND cl.phone = $4
		LEFT JOIN shifts sh ON sh.salon_id = s.id AND sh.master_id = $2 AND sh.ends_at > $3
		     AND sh.starts_at <= $3 AND sh.starts_at > $3::timestamptz - interval '24 hours'
		WHERE s.id = $1`, salonID, masterID, at, phone).Query(func(rows pgx.Rows) error {
		found := false
		for rows.Next() {
			var start, end, bstart, bend pgtype.Timestamptz
			var client *int64
			var nameless *bool
			if err := rows.Scan(&bc.version, &start, &end, &bstart, &bend, &client, &nameless); err != nil {
				return err
			}
			bc.client.read = true
			if client != nil {
				bc.client.id, bc.client.nameless = *client, *nameless
			}
			found = true
			if !start.Valid {
				continue
			}
			sh := shift{start: start.Time, end: end.Time}
			if bstart.Valid && bend.Valid {
				sh.breakStart, sh.breakEnd = bstart.Time, bend.Time
			}
			bc.shifts = append(bc.shifts, sh)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return pgx.ErrNoRows
		}
		return nil
	})
	return bc
}

// resolve completes bc from the salon's catalogue at the version read under
// the lock (cached, or loaded through q).
func (s *Service) resolve(ctx context.Context, q querier, bc *bookContext, salonID, serviceID, masterID int64) error {
	c, err := s.catalogAt(ctx, q, salonID, bc.version)
	if err != nil {
		return err
	}
	bc.salon = c.salon
	sv, ok := c.services[serviceID]
	bc.svc, bc.serviceOK = sv, ok && sv.Active
	bc.masterOK = c.masters[masterID]
	bc.listeners = c.linked[masterID] || c.chatClients
	bc.messages = &c.messages
	o, ok := c.offers[[2]int64{masterID, serviceID}]
	bc.offered, bc.durationMin, bc.price = ok, o.durationMin, o.price
	return nil
}

// check applies the booking rules to a start at now; client rules (grid,
// notice, horizon) when client is true.
func (bc *bookContext) check(at time.Time, src Source, client bool, now time.Time) error {
	switch {
	case !bc.serviceOK:
		return unknown("service_id", "no such service")
	case !bc.masterOK:
		return unknown("master_id", "no such master")
	case !bc.offered:
		return Invalid("master_id", "this master does not do this service")
	}
	if src == SourceImport {
		return nil // history: the past and old schedules are allowed
	}
	r := rules(&bc.salon, &bc.svc, offerTerms{durationMin: bc.durationMin}, now)
	switch {
	case at.Before(now):
		return Invalid("starts_at", "is in the past")
	case client && at.Before(r.earliest):
		return Invalid("starts_at", "too soon: book at least %d minutes ahead", bc.salon.MinNoticeMin)
	case client && !at.Before(r.latest):
		return Invalid("starts_at", "too far ahead: book within %d days", bc.salon.HorizonDays)
	case !slices.ContainsFunc(bc.shifts, func(sh shift) bool { return r.fitsIn(sh, at, 0) }):
		return Invalid("starts_at", "outside the master's working hours")
	case client && !slices.ContainsFunc(bc.shifts, func(sh shift) bool { return r.fitsIn(sh, at, r.step) }):
		return Invalid("starts_at", "not one of the offered times")
	}
	return nil
}

// queueInsertBooking queues one statement that finds or creates the client
// by phone (filling in a missing name, never renaming), joins the caller's
// identity to it when its phone was verified, inserts the booking with its
// creator and origin and, when notify is not nil, its notification job
// (notify are the job's arguments but for the booking id), and stores the result for the claimed
// idempotency key (when claim is not nil). Reading the batch fills b's ID, ClientID and
// CreatedAt.
//
// rest are the visit's other segments, in visit order (none for a visit of
// one): inserted in the same statement, after b, naming it as their visit;
// reading the batch fills their IDs.
//
// rsv, when not nil, is the balance's reservation: its entry is inserted by
// the same statement, and what the balance has left is read after it.
func queueInsertBooking(batch *pgx.Batch, b *Booking, c ClientInput, known clientRecord, caller Identity, token string, actor Actor,
	claim *keyClaim, salt, notify []byte, confirm bool, rest []Booking, rsv *reservation) {
	var hold *time.Time
	if !b.HoldExpiresAt.IsZero() {
		hold = &b.HoldExpiresAt
	}
	var tokenH []byte
	if token != "" {
		tokenH = tokenHash(token)
	}
	var originCh, originRef *string
	if !b.Origin.IsZero() {
		ch, ref := string(b.Origin.Channel), b.Origin.ExternalID
		originCh, originRef = &ch, &ref
	}
	// The client record, as known was read with the booking's context: a
	// returning client (the common case) costs a primary key lookup, which
	// checks that the record still has the phone (or the statement
	// inserts nothing, and the booking runs again); a new one is a plain
	// insert, which a booking of the same new phone elsewhere may beat to
	// it (a unique violation: the booking runs again, and finds it); one
	// without a name yet gets the name given.
	sql := `WITH found AS (SELECT id FROM clients WHERE salon_id = @salon AND phone = @phone AND name <> ''),
		ins AS (
		    INSERT INTO clients (salon_id, name, phone) SELECT @salon, @name, @phone
		    WHERE NOT EXISTS (SELECT 1 FROM found)
		    ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET
		        name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END
		    RETURNING id
		), c AS (SELECT id FROM found UNION ALL SELECT id FROM ins)`
	switch {
	case !known.read:
		// Not read (an import): found, or inserted, racing inserts of the
		// same phone meeting in ON CONFLICT.
	case known.id != 0 && !known.nameless:
		sql = `WITH c AS (SELECT id FROM clients WHERE id = @client AND salon_id = @salon AND phone = @phone)`
	case known.id == 0:
		sql = `WITH c AS (INSERT INTO clients (salon_id, name, phone) VALUES (@salon, @name, @phone) RETURNING id)`
	default:
		sql = `WITH c AS (UPDATE clients SET name = @name WHERE id = @client AND salon_id = @salon AND phone = @phone AND name = '' RETURNING id)`
	}
	args := map[string]any{
		"salon": b.SalonID, "master": b.MasterID, "service": b.ServiceID, "starts": b.StartsAt,
		"dur": b.DurationMin, "buffer": b.BufferMin, "status": b.Status, "source": b.Source,
		"price": b.Price, "deposit": b.Deposit, "hold": hold, "token": tokenH, "notes": b.Notes,
		"name": c.Name, "phone": c.Phone, "contact": b.ContactName, "origin_ch": originCh, "origin_ref": originRef,
		"actor_kind": actor.Kind, "actor_id": actor.ID, "job_kind": NotifyArgs{}.Kind(), "notify": notify,
		"by_ch": string(actor.Identity.Channel), "by_ref": actor.Identity.ExternalID, "from_master": int64(0),
		"masters": restMasters(rest),
		"client":  known.id, "email": b.ContactEmail, "lang": b.Lang,
		"processing": b.ProcessingMin, "finish": b.FinishMin,
	}
	if c.Verified && !caller.IsZero() {
		// The channel vouched that the phone is the caller's own: the
		// identity joins (or moves to) this client record.
		sql += `, idn AS (
		    INSERT INTO client_identities (salon_id, client_id, channel, external_id, verified_by)
		    SELECT @salon, id, @id_channel, @id_ref, 'contact' FROM c
		    ON CONFLICT (salon_id, channel, external_id) DO UPDATE SET
		        client_id = EXCLUDED.client_id, verified_by = EXCLUDED.verified_by, verified_at = now()
		)`
		args["id_channel"], args["id_ref"] = caller.Channel, caller.ExternalID
	}
	sql += `,
		b AS (
		    INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min,
		                          buffer_min, status, source, price, deposit, hold_expires_at,
		                          manage_token_hash, notes, contact_name, origin_channel, origin_ref,
		                          created_by_kind, created_by_id, contact_email, lang, processing_min, finish_min)
		    SELECT @salon, @master, @service, c.id, @starts, @dur, @buffer, @status, @source, @price,
		           @deposit, @hold, @token, @notes, @contact, @origin_ch, @origin_ref, @actor_kind,
		           CASE WHEN @actor_kind = 'client' THEN c.id ELSE NULLIF(@actor_id, 0) END, @email, @lang,
		           @processing, @finish
		    FROM c
		    RETURNING id, client_id, created_at
		)`
	if len(rest) > 0 {
		n := len(rest)
		ms, svs, durs, bufs, procs, fins := make([]int64, n), make([]int64, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		starts, prices := make([]time.Time, n), make([]Money, n)
		for i, sg := range rest {
			ms[i], svs[i], starts[i], prices[i] = sg.MasterID, sg.ServiceID, sg.StartsAt, sg.Price
			durs[i], bufs[i], procs[i], fins[i] = int32(sg.DurationMin), int32(sg.BufferMin), int32(sg.ProcessingMin), int32(sg.FinishMin)
		}
		args["r_master"], args["r_service"], args["r_start"], args["r_price"] = ms, svs, starts, prices
		args["r_dur"], args["r_buf"], args["r_proc"], args["r_fin"] = durs, bufs, procs, fins
		sql += `, r AS (
		    INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min,
		                          buffer_min, status, source, price, deposit, hold_expires_at,
		                          notes, contact_name, origin_channel, origin_ref,
		                          created_by_kind, created_by_id, contact_email, lang, processing_min, finish_min, visit_of)
		    SELECT @salon, x.m, x.s, b.client_id, x.t, x.d, x.bf, @status, @source, x.p, 0, @hold,
		           '', @contact, @origin_ch, @origin_ref, @actor_kind,
		           CASE WHEN @actor_kind = 'client' THEN b.client_id ELSE NULLIF(@actor_id, 0) END, @email, @lang, x.pr, x.f, b.id
		    FROM b, unnest(@r_master::bigint[], @r_service::bigint[], @r_start::timestamptz[], @r_dur::int[], @r_buf::int[],
		                   @r_price::numeric[], @r_proc::int[], @r_fin::int[]) WITH ORDINALITY x (m, s, t, d, bf, p, pr, f, n)
		    ORDER BY x.n
		    RETURNING id
		)`
	}
	if confirm {
		// The client is owed a confirmation by e-mail or SMS: the
		// outbox's row (the sender plans the messages from the booking).
		sql += `, o AS (INSERT INTO booking_outbox (booking_id) SELECT id FROM b)`
	}
	if notify != nil {
		// Someone can be told: the notification job (with its own check,
		// in this statement's snapshot, of who listens).
		sql += `, j AS (` + notifyJobSQL + `)`
	}
	if rsv != nil {
		sql += reserveSQL(rsv, args)
	}
	if claim != nil {
		sql += `, k AS (
		    UPDATE idempotency_keys SET result = jsonb_build_object('booking_id', (SELECT id FROM b), 'token_salt', @salt::text)
		    WHERE salon_id = @salon AND scope = @scope AND key_hash = @key
		)`
		var salt64 *string
		if salt != nil {
			v := base64.StdEncoding.EncodeToString(salt)
			salt64 = &v
		}
		args["salt"], args["scope"], args["key"] = salt64, claim.scope, keyHash(claim.key)
	}
	// With a reservation, what the balance has left after it: its entry's
	// (the entry's trigger writes it).
	cols, dest := ` SELECT id, client_id, created_at`, []any{&b.ID, &b.ClientID, &b.CreatedAt}
	if rsv != nil {
		cols, dest = cols+`, (SELECT balance_after FROM rsv)`, append(dest, &rsv.remaining)
	}
	if len(rest) == 0 {
		text, vals := positional(sql+cols+` FROM b`, args)
		batch.Queue(text, vals...).QueryRow(func(row pgx.Row) error { return row.Scan(dest...) })
		return
	}
	text, vals := positional(sql+cols+`, ARRAY(SELECT id FROM r ORDER BY id) FROM b`, args)
	batch.Queue(text, vals...).QueryRow(func(row pgx.Row) error {
		var ids []int64
		if err := row.Scan(append(dest, &ids)...); err != nil {
			return err
		}
		if len(ids) != len(rest) {
			return fmt.Errorf("visit: %d of %d segments inserted", len(ids), len(rest))
		}
		for i := range rest {
			rest[i].ID, rest[i].ClientID, rest[i].CreatedAt, rest[i].VisitID = ids[i], b.ClientID, b.CreatedAt, b.ID
		}
		b.VisitID = b.ID
		return nil
	})
}

// restMasters are the masters of a visit's segments after its head.
func restMasters(rest []Booking) []int64 {
	out := make([]int64, 0, len(rest))
	for _, sg := range rest {
		out = append(out, sg.MasterID)
	}
	return out
}

// newToken returns a random manage token (192 bits, URL-safe).
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

const bookingColumns = `id, salon_id, master_id, service_id, client_id, starts_at, duration_min, buffer_min,
	status, source, price, deposit, hold_expires_at, notes, cancel_reason, contact_name, origin_channel, origin_ref,
	created_at, updated_at, contact_email, lang, client_confirmed_at, client_confirmed_via, processing_min, finish_min, visit_id`

func scanBooking(row pgx.Row) (*Booking, error) {
	var b Booking
	var hold *time.Time
	var originCh, originRef *string
	var confirmed *time.Time
	var via *string
	err := row.Scan(&b.ID, &b.SalonID, &b.MasterID, &b.ServiceID, &b.ClientID, &b.StartsAt, &b.DurationMin,
		&b.BufferMin, &b.Status, &b.Source, &b.Price, &b.Deposit, &hold, &b.Notes, &b.CancelReason,
		&b.ContactName, &originCh, &originRef, &b.CreatedAt, &b.UpdatedAt, &b.ContactEmail, &b.Lang, &confirmed, &via,
		&b.ProcessingMin, &b.FinishMin, &b.VisitID)
	if err != nil {
		return nil, err
	}
	if confirmed != nil && via != nil {
		b.ConfirmedAt, b.ConfirmedVia = *confirmed, Channel(*via)
	}
	if originCh != nil && originRef != nil {
		b.Origin = Identity{Channel: Channel(*originCh), ExternalID: *originRef}
	}
	if hold != nil {
		b.HoldExpiresAt = *hold
	}
	return &b, nil
}

func getBooking(ctx context.Context, q querier, salonID, id int64) (*Booking, error) {
	b, err := scanBooking(q.QueryRow(ctx, `SELECT `+bookingColumns+` FROM bookings WHERE salon_id = $1 AND id = $2`, salonID, id))
	if isNoRows(err) {
		return nil, fmt.Errorf("booking %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("booking %d: %w", id, err)
	}
	return b, nil
}

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// scanPrefix scans a row whose leading columns are read by another scanner
// and whose trailing columns go to rest.
type scanPrefix struct {
	row  pgx.Row
	rest []any
}

func (p scanPrefix) Scan(dest ...any) error { return p.row.Scan(append(dest, p.rest...)...) }
