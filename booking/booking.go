package booking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

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

// public reports whether the source is a client-facing one, where the
// salon's grid, minimum notice and horizon apply.
func (s Source) public() bool { return s == SourceBot || s == SourceWidget }

func (s Source) valid() bool {
	switch s {
	case SourceBot, SourceWidget, SourcePanel, SourceImport:
		return true
	}
	return false
}

// Booking is a client's appointment with a master for a service.
type Booking struct {
	ID            int64
	SalonID       int64
	MasterID      int64
	ServiceID     int64
	ClientID      int64
	StartsAt      time.Time
	DurationMin   int
	BufferMin     int
	Status        Status
	Source        Source
	Price         Money
	Deposit       Money
	HoldExpiresAt time.Time // set while pending
	Notes         string
	CancelReason  string
	CreatedAt     time.Time
	UpdatedAt     time.Time

	// ManageToken lets the client view, cancel and reschedule the booking
	// without an account. Only Book returns it (and a replay of the same
	// idempotent request); the database keeps only its hash.
	ManageToken string
}

// EndsAt is when the service ends (the buffer is not included).
func (b *Booking) EndsAt() time.Time {
	return b.StartsAt.Add(time.Duration(b.DurationMin) * time.Minute)
}

// BookRequest asks for a booking.
type BookRequest struct {
	SalonID   int64
	ServiceID int64
	MasterID  int64
	StartsAt  time.Time
	Client    ClientInput
	Source    Source
	// Actor is who books; the zero Actor means the client themself.
	Actor Actor
	Notes string
	// IdempotencyKey makes retries harmless: the same key with the same
	// request returns the first booking; with another request, ErrKeyReused.
	IdempotencyKey string
}

// MaxKeyLen is the longest idempotency key accepted.
const MaxKeyLen = 255

func (r *BookRequest) normalize() error {
	fe := fieldErrors{}
	if r.ServiceID <= 0 {
		fe.add("service_id", "required")
	}
	if r.MasterID <= 0 {
		fe.add("master_id", "required")
	}
	if r.StartsAt.IsZero() {
		fe.add("starts_at", "required")
	} else if r.StartsAt.Second() != 0 || r.StartsAt.Nanosecond() != 0 {
		fe.add("starts_at", "must be a whole minute")
	}
	if !r.Source.valid() {
		fe.add("source", "unknown source")
	}
	if r.Actor == (Actor{}) {
		r.Actor = Actor{Kind: ActorClient}
	}
	if !r.Actor.valid() {
		fe.add("actor", "unknown actor")
	}
	r.Client.normalize(fe, "client.")
	r.Notes = strings.TrimSpace(r.Notes)
	if len([]rune(r.Notes)) > 1000 {
		fe.add("notes", "too long (1000 characters at most)")
	}
	r.IdempotencyKey = strings.TrimSpace(r.IdempotencyKey)
	if len(r.IdempotencyKey) > MaxKeyLen || strings.ContainsFunc(r.IdempotencyKey, unicode.IsControl) {
		fe.add("idempotency_key", fmt.Sprintf("at most %d printable characters", MaxKeyLen))
	}
	return fe.err()
}

// fingerprint identifies the request for idempotency: replays must match it.
func (r *BookRequest) fingerprint() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "book\x00%d\x00%d\x00%d\x00%d\x00%s\x00%s\x00%d\x00%s\x00%s\x00%s\x00%d",
		r.SalonID, r.ServiceID, r.MasterID, r.StartsAt.UnixNano(), r.Client.Name, r.Client.Phone,
		r.Client.TelegramID, r.Source, r.Notes, r.Actor.Kind, r.Actor.ID)
	return h.Sum(nil)
}

// bookContext is what Book reads, under the master's lock, to check a request.
type bookContext struct {
	version             int64 // of the salon's catalogue
	salon               Salon
	svc                 SalonService
	serviceOK, masterOK bool
	offered             bool
	durationMin         int
	price               Money
	shifts              []shift
}

// Book books the client with the master for the service at StartsAt. It
// takes the master's advisory lock, checks the request (the master does the
// service; the time is inside a shift and clear of breaks, not in the past;
// for bot and widget also on the grid, after the minimum notice and within
// the horizon), finds or creates the client, and inserts the booking under a
// savepoint. When the time overlaps another active booking, the exclusion
// constraint refuses the insert, the savepoint is rolled back and the same
// transaction computes the nearest free starts.
//
// With WithOnlineDeposits, a booking of a service with a deposit, made by the
// client through the bot or widget, is pending until paid, holding its slot
// for the salon's hold minutes; otherwise it is confirmed.
//
// Errors: ErrNotFound (salon); ErrInvalid (fields; unknown service or master
// also unwrap to ErrNotFound); *SlotTakenError (ErrSlotTaken); ErrKeyReused,
// ErrInProgress (ErrConflict). Nothing is written when an error is returned.
func (s *Service) Book(ctx context.Context, r BookRequest) (*Booking, error) {
	if err := r.normalize(); err != nil {
		return nil, err
	}
	now := s.now()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("book: %w", err)
	}
	defer conn.Release()
	// The transaction is driven by hand so that BEGIN and COMMIT travel in
	// the same round trips as the statements next to them: a booking costs
	// two round trips. Any early return rolls back; a connection left
	// inside a transaction is closed by the pool, never reused.
	tx := &pipelinedTx{conn: conn}
	defer tx.rollback(ctx)

	// Round trip 1: begin, claim the idempotency key, take the master's
	// lock, read everything the checks need.
	batch := &pgx.Batch{}
	batch.Queue(`BEGIN`)
	var claim *keyClaim
	if r.IdempotencyKey != "" {
		claim = queueClaim(batch, r.SalonID, "book", r.IdempotencyKey, r.fingerprint())
	}
	bc := queueBookContext(batch, r.SalonID, r.MasterID, r.StartsAt)
	tx.open = true
	if err := bookContextErr(conn.SendBatch(ctx, batch).Close(), r.SalonID); err != nil {
		return nil, err
	}
	if claim != nil && !claim.claimed {
		res, err := claim.prior(ctx, conn)
		if err != nil {
			return nil, err
		}
		b, err := getBooking(ctx, conn, r.SalonID, res.BookingID)
		if err != nil {
			return nil, err
		}
		b.ManageToken = res.ManageToken
		return b, nil
	}
	if err := s.resolve(ctx, conn, bc, r.SalonID, r.ServiceID, r.MasterID); err != nil {
		return nil, err
	}
	if err := bc.check(r.StartsAt, r.Source, r.Source.public(), now); err != nil {
		return nil, err
	}

	// Round trip 2: savepoint, client and booking and event in one
	// statement, the idempotency result, commit.
	b := &Booking{
		SalonID: r.SalonID, MasterID: r.MasterID, ServiceID: r.ServiceID,
		StartsAt: r.StartsAt, DurationMin: bc.durationMin, BufferMin: bc.svc.BufferMin,
		Status: StatusConfirmed, Source: r.Source, Price: bc.price, Deposit: bc.svc.Deposit, Notes: r.Notes,
	}
	if s.deposits && b.Deposit > 0 && r.Source.public() && r.Actor.Kind == ActorClient {
		b.Status = StatusPending
		b.HoldExpiresAt = now.Add(time.Duration(bc.salon.HoldMin) * time.Minute)
	}
	token := newToken()
	batch = &pgx.Batch{}
	batch.Queue(`SAVEPOINT book`)
	queueInsertBooking(batch, b, r.Client, token, r.Actor, claim)
	if s.jobs == nil {
		batch.Queue(`COMMIT`) // nothing else to do in the transaction
	}
	err = conn.SendBatch(ctx, batch).Close()
	if pgCode(err) == pgExclusionViolation {
		if _, err := conn.Exec(ctx, `ROLLBACK TO SAVEPOINT book`); err != nil {
			return nil, fmt.Errorf("book: %w", err)
		}
		alts, err := alternatives(ctx, conn, &bc.salon, &bc.svc, r.MasterID, r.StartsAt, now, 0)
		if err != nil {
			return nil, err
		}
		return nil, &SlotTakenError{Alternatives: alts}
	}
	if err != nil {
		return nil, fmt.Errorf("book: %w", err)
	}
	if s.jobs != nil {
		actor := r.Actor
		if actor.Kind == ActorClient && actor.ID == 0 {
			actor.ID = b.ClientID
		}
		if err := s.enqueueChange(ctx, &connTx{conn: conn.Conn()}, b, EventCreated, actor, nil); err != nil {
			return nil, err
		}
		if _, err := conn.Exec(ctx, `COMMIT`); err != nil {
			return nil, fmt.Errorf("book: commit: %w", err)
		}
	}
	tx.open = false
	b.UpdatedAt = b.CreatedAt
	b.ManageToken = token
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

// queueBookContext queues the master's lock and, after it, the read of the
// salon's catalogue version and of the master's shifts around at; the result
// is filled in when the batch is read, and completed by resolve.
func queueBookContext(batch *pgx.Batch, salonID, masterID int64, at time.Time) *bookContext {
	bc := &bookContext{}
	batch.Queue(lockMasterSQL, masterID)
	batch.Queue(`
		SELECT s.catalog_version, COALESCE(sh.starts, '{}'), COALESCE(sh.ends, '{}'),
		       COALESCE(sh.break_starts, '{}'), COALESCE(sh.break_ends, '{}')
		FROM salons s
		LEFT JOIN LATERAL (
		    SELECT array_agg(starts_at) AS starts, array_agg(ends_at) AS ends,
		           array_agg(break_starts_at) AS break_starts, array_agg(break_ends_at) AS break_ends
		    FROM shifts WHERE salon_id = s.id AND master_id = $2 AND ends_at > $3
		      AND starts_at <= $3 AND starts_at > $3::timestamptz - interval '24 hours'
		) sh ON true
		WHERE s.id = $1`, salonID, masterID, at).QueryRow(func(row pgx.Row) error {
		var starts, ends []time.Time
		var bstarts, bends []pgtype.Timestamptz
		if err := row.Scan(&bc.version, &starts, &ends, &bstarts, &bends); err != nil {
			return err
		}
		for i := range starts {
			sh := shift{start: starts[i], end: ends[i]}
			if bstarts[i].Valid && bends[i].Valid {
				sh.breakStart, sh.breakEnd = bstarts[i].Time, bends[i].Time
			}
			bc.shifts = append(bc.shifts, sh)
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
	o, ok := c.offers[[2]int64{masterID, serviceID}]
	bc.offered, bc.durationMin, bc.price = ok, o.durationMin, o.price
	return nil
}

// bookContext takes the master's lock and reads the booking context in one
// round trip (two when the catalogue must be reloaded).
func (s *Service) bookContext(ctx context.Context, q querier, salonID, serviceID, masterID int64, at time.Time) (*bookContext, error) {
	batch := &pgx.Batch{}
	bc := queueBookContext(batch, salonID, masterID, at)
	if err := bookContextErr(q.SendBatch(ctx, batch).Close(), salonID); err != nil {
		return nil, err
	}
	if err := s.resolve(ctx, q, bc, salonID, serviceID, masterID); err != nil {
		return nil, err
	}
	return bc, nil
}

// bookContextErr maps the errors of a batch that read a booking context.
func bookContextErr(err error, salonID int64) error {
	switch {
	case err == nil:
		return nil
	case isNoRows(err):
		return fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	case pgCode(err) == pgLockNotAvailable:
		return ErrInProgress
	}
	return fmt.Errorf("book: %w", err)
}

// check applies the booking rules to a start at now.
func (bc *bookContext) check(at time.Time, src Source, public bool, now time.Time) error {
	switch {
	case !bc.serviceOK:
		return unknown("service_id", "no such service")
	case !bc.masterOK:
		return unknown("master_id", "no such master")
	case !bc.offered:
		return invalid("master_id", "this master does not do this service")
	}
	if src == SourceImport {
		return nil // history: the past and old schedules are allowed
	}
	r := rules(&bc.salon, &bc.svc, offerTerms{durationMin: bc.durationMin}, now)
	switch {
	case at.Before(now):
		return invalid("starts_at", "is in the past")
	case public && at.Before(r.earliest):
		return invalid("starts_at", fmt.Sprintf("too soon: book at least %d minutes ahead", bc.salon.MinNoticeMin))
	case public && !at.Before(r.latest):
		return invalid("starts_at", fmt.Sprintf("too far ahead: book within %d days", bc.salon.HorizonDays))
	case !slices.ContainsFunc(bc.shifts, func(sh shift) bool { return sh.fits(at, r.dur, 0) }):
		return invalid("starts_at", "outside the master's working hours")
	case public && !slices.ContainsFunc(bc.shifts, func(sh shift) bool { return sh.fits(at, r.dur, r.step) }):
		return invalid("starts_at", "not one of the offered times")
	}
	return nil
}

// queueInsertBooking queues one statement that finds or creates the client
// (by Telegram id, then by phone; filling in a missing name, phone or
// Telegram id, never overwriting one), inserts the booking with its creator,
// and stores the result for the claimed idempotency key
// (when claim is not nil). Reading the batch fills b's ID, ClientID and
// CreatedAt.
func queueInsertBooking(batch *pgx.Batch, b *Booking, c ClientInput, token string, actor Actor, claim *keyClaim) {
	var hold *time.Time
	if !b.HoldExpiresAt.IsZero() {
		hold = &b.HoldExpiresAt
	}
	var client string
	switch {
	case c.Phone != "" && c.TelegramID == 0:
		// A returning client (the common case) costs an index lookup and
		// no write; a new one is inserted, racing inserts of the same phone
		// meeting in ON CONFLICT.
		client = `
		found AS (SELECT id FROM clients WHERE salon_id = @salon AND phone = @phone AND name <> ''),
		ins AS (
		    INSERT INTO clients (salon_id, name, phone) SELECT @salon, @name, @phone
		    WHERE NOT EXISTS (SELECT 1 FROM found)
		    ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET
		        name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END
		    RETURNING id
		), c AS (SELECT id FROM found UNION ALL SELECT id FROM ins)`
	case c.Phone != "":
		client = `
		tg AS (
		    UPDATE clients SET
		        name  = CASE WHEN name = '' THEN @name ELSE name END,
		        phone = COALESCE(phone, CASE WHEN NOT EXISTS (
		            SELECT 1 FROM clients o WHERE o.salon_id = @salon AND o.phone = @phone) THEN @phone END)
		    WHERE salon_id = @salon AND telegram_id = @tg
		    RETURNING id
		), ph AS (
		    INSERT INTO clients (salon_id, name, phone, telegram_id)
		    SELECT @salon, @name, @phone, NULLIF(@tg, 0) WHERE NOT EXISTS (SELECT 1 FROM tg)
		    ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET
		        name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END,
		        telegram_id = COALESCE(clients.telegram_id, EXCLUDED.telegram_id)
		    RETURNING id
		), c AS (SELECT id FROM tg UNION ALL SELECT id FROM ph)`
	default:
		client = `
		c AS (
		    INSERT INTO clients (salon_id, name, telegram_id) VALUES (@salon, @name, @tg)
		    ON CONFLICT (salon_id, telegram_id) WHERE telegram_id IS NOT NULL DO UPDATE SET
		        name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END
		    RETURNING id
		)`
	}
	args := pgx.NamedArgs{
		"salon": b.SalonID, "master": b.MasterID, "service": b.ServiceID, "starts": b.StartsAt,
		"dur": b.DurationMin, "buffer": b.BufferMin, "status": b.Status, "source": b.Source,
		"price": b.Price, "deposit": b.Deposit, "hold": hold, "token": tokenHash(token), "notes": b.Notes,
		"name": c.Name, "phone": c.Phone, "tg": c.TelegramID,
		"actor_kind": actor.Kind, "actor_id": actor.ID,
	}
	keyResult := ""
	if claim != nil {
		keyResult = `, k AS (
		    UPDATE idempotency_keys SET result = jsonb_build_object('booking_id', (SELECT id FROM b), 'manage_token', @plain_token::text)
		    WHERE salon_id = @salon AND scope = @scope AND key = @key
		)`
		args["plain_token"], args["scope"], args["key"] = token, claim.scope, claim.key
	}
	batch.Queue(`WITH `+client+`,
		b AS (
		    INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min,
		                          buffer_min, status, source, price, deposit, hold_expires_at,
		                          manage_token_hash, notes, created_by_kind, created_by_id)
		    SELECT @salon, @master, @service, c.id, @starts, @dur, @buffer, @status, @source, @price,
		           @deposit, @hold, @token, @notes, @actor_kind,
		           CASE WHEN @actor_kind = 'client' AND @actor_id = 0 THEN c.id ELSE NULLIF(@actor_id, 0) END
		    FROM c
		    RETURNING id, client_id, created_at
		)`+keyResult+`
		SELECT id, client_id, created_at FROM b`,
		args).QueryRow(func(row pgx.Row) error { return row.Scan(&b.ID, &b.ClientID, &b.CreatedAt) })
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
	status, source, price, deposit, hold_expires_at, notes, cancel_reason, created_at, updated_at`

func scanBooking(row pgx.Row) (*Booking, error) {
	var b Booking
	var hold *time.Time
	err := row.Scan(&b.ID, &b.SalonID, &b.MasterID, &b.ServiceID, &b.ClientID, &b.StartsAt, &b.DurationMin,
		&b.BufferMin, &b.Status, &b.Source, &b.Price, &b.Deposit, &hold, &b.Notes, &b.CancelReason,
		&b.CreatedAt, &b.UpdatedAt)
	if err != nil {
		return nil, err
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

// Booking returns a booking of the salon. Errors: ErrNotFound.
func (s *Service) Booking(ctx context.Context, salonID, id int64) (*Booking, error) {
	return getBooking(ctx, s.pool, salonID, id)
}

// BookingByToken returns the booking if token is its manage token (compared
// in constant time). Errors: ErrNotFound (no such booking, or a wrong token:
// the two are not told apart).
func (s *Service) BookingByToken(ctx context.Context, id int64, token string) (*Booking, error) {
	var hash []byte
	b, err := scanBooking(scanPrefix{s.pool.QueryRow(ctx, `SELECT `+bookingColumns+`, manage_token_hash
		FROM bookings WHERE id = $1`, id), []any{&hash}})
	if isNoRows(err) || (err == nil && (len(hash) == 0 || subtle.ConstantTimeCompare(hash, tokenHash(token)) != 1)) {
		return nil, fmt.Errorf("booking %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("booking %d: %w", id, err)
	}
	return b, nil
}

// ClientBookings lists a client's bookings that end after since, by start.
func (s *Service) ClientBookings(ctx context.Context, salonID, clientID int64, since time.Time) ([]Booking, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+bookingColumns+` FROM bookings
		WHERE salon_id = $1 AND client_id = $2 AND booking_slot_end(starts_at, duration_min) > $3
		ORDER BY starts_at, id`, salonID, clientID, since)
	if err != nil {
		return nil, fmt.Errorf("client bookings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Booking, error) {
		b, err := scanBooking(r)
		if err != nil {
			return Booking{}, err
		}
		return *b, nil
	})
	if err != nil {
		return nil, fmt.Errorf("client bookings: %w", err)
	}
	return out, nil
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
