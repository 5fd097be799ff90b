package booking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
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
// A booking of a service with a deposit, made by the client through the bot
// or widget, is pending until paid, holding its slot for the salon's hold
// minutes; otherwise it is confirmed.
//
// Errors: ErrNotFound (salon); ErrInvalid (fields; unknown service or master
// also unwrap to ErrNotFound); *SlotTakenError (ErrSlotTaken); ErrKeyReused,
// ErrInProgress (ErrConflict). Nothing is written when an error is returned.
func (s *Service) Book(ctx context.Context, r BookRequest) (*Booking, error) {
	if err := r.normalize(); err != nil {
		return nil, err
	}
	now := s.now()
	var out *Booking
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var fp []byte
		if r.IdempotencyKey != "" {
			fp = r.fingerprint()
			prior, err := claimKey(ctx, tx, r.SalonID, "book", r.IdempotencyKey, fp)
			if err != nil {
				return err
			}
			if prior != nil {
				b, err := getBooking(ctx, tx, r.SalonID, prior.BookingID)
				if err != nil {
					return err
				}
				b.ManageToken = prior.ManageToken
				out = b
				return nil
			}
		}
		bc, err := loadBookContext(ctx, tx, r.SalonID, r.ServiceID, r.MasterID, r.StartsAt)
		if err != nil {
			return err
		}
		if err := bc.check(r.StartsAt, r.Source, r.Source.public(), now); err != nil {
			return err
		}
		clientID, err := upsertClient(ctx, tx, r.SalonID, r.Client)
		if err != nil {
			return err
		}
		b := &Booking{
			SalonID: r.SalonID, MasterID: r.MasterID, ServiceID: r.ServiceID, ClientID: clientID,
			StartsAt: r.StartsAt, DurationMin: bc.durationMin, BufferMin: bc.svc.BufferMin,
			Status: StatusConfirmed, Source: r.Source, Price: bc.price, Deposit: bc.svc.Deposit, Notes: r.Notes,
		}
		if b.Deposit > 0 && r.Source.public() && r.Actor.Kind == ActorClient {
			b.Status = StatusPending
			b.HoldExpiresAt = now.Add(time.Duration(bc.salon.HoldMin) * time.Minute)
		}
		actor := r.Actor
		if actor.Kind == ActorClient && actor.ID == 0 {
			actor.ID = clientID
		}
		token := newToken()
		err = insertBooking(ctx, tx, b, tokenHash(token), actor)
		if pgCode(err) == pgExclusionViolation {
			alts, aerr := alternatives(ctx, tx, &bc.salon, &bc.svc, r.MasterID, r.StartsAt, now, 0)
			if aerr != nil {
				return aerr
			}
			return &SlotTakenError{Alternatives: alts}
		}
		if err != nil {
			return err
		}
		b.ManageToken = token
		if fp != nil {
			if err := storeKeyResult(ctx, tx, r.SalonID, "book", r.IdempotencyKey, idemResult{BookingID: b.ID, ManageToken: token}); err != nil {
				return err
			}
		}
		out = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// loadBookContext takes the master's lock and, in the same round trip, reads
// the salon, the service, the master's terms for it and the shifts around at.
func loadBookContext(ctx context.Context, q querier, salonID, serviceID, masterID int64, at time.Time) (*bookContext, error) {
	var bc bookContext
	batch := &pgx.Batch{}
	batch.Queue(lockMasterSQL, masterID)
	batch.Queue(`
		SELECT `+prefixed("s.", salonColumns)+`,
		       sv.id IS NOT NULL AND sv.active, COALESCE(sv.id, 0), COALESCE(sv.name, ''),
		       COALESCE(sv.duration_min, 0), COALESCE(sv.buffer_min, 0), COALESCE(sv.price, 0),
		       COALESCE(sv.deposit, 0),
		       m.id IS NOT NULL AND m.active, ms.master_id IS NOT NULL,
		       COALESCE(ms.duration_min, sv.duration_min, 0), COALESCE(ms.price, sv.price, 0)
		FROM salons s
		LEFT JOIN services sv ON sv.salon_id = s.id AND sv.id = $2
		LEFT JOIN masters m ON m.salon_id = s.id AND m.id = $3
		LEFT JOIN master_services ms ON ms.master_id = m.id AND ms.service_id = sv.id
		WHERE s.id = $1`, salonID, serviceID, masterID).QueryRow(func(row pgx.Row) error {
		sal, err := scanSalon(scanPrefix{row, []any{
			&bc.serviceOK, &bc.svc.ID, &bc.svc.Name, &bc.svc.DurationMin, &bc.svc.BufferMin, &bc.svc.Price,
			&bc.svc.Deposit, &bc.masterOK, &bc.offered, &bc.durationMin, &bc.price}})
		if err != nil {
			return err
		}
		bc.salon = *sal
		return nil
	})
	batch.Queue(`
		SELECT starts_at, ends_at, break_starts_at, break_ends_at FROM shifts
		WHERE salon_id = $1 AND master_id = $2 AND starts_at <= $3 AND ends_at > $3`,
		salonID, masterID, at).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var sh shift
			var bs, be *time.Time
			if err := rows.Scan(&sh.start, &sh.end, &bs, &be); err != nil {
				return err
			}
			if bs != nil && be != nil {
				sh.breakStart, sh.breakEnd = *bs, *be
			}
			bc.shifts = append(bc.shifts, sh)
		}
		return rows.Err()
	})
	err := q.SendBatch(ctx, batch).Close()
	if isNoRows(err) {
		return nil, fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("book: %w", err)
	}
	bc.svc.SalonID, bc.svc.Active = salonID, bc.serviceOK
	return &bc, nil
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

// insertBooking inserts b and its "created" event under a savepoint, so that
// an exclusion violation leaves the transaction usable: on error the
// savepoint has been rolled back to.
func insertBooking(ctx context.Context, tx pgx.Tx, b *Booking, tokenHash []byte, actor Actor) error {
	var hold *time.Time
	if !b.HoldExpiresAt.IsZero() {
		hold = &b.HoldExpiresAt
	}
	details, _ := json.Marshal(map[string]any{"starts_at": b.StartsAt, "master_id": b.MasterID, "source": b.Source})
	batch := &pgx.Batch{}
	batch.Queue(`SAVEPOINT book`)
	batch.Queue(`
		WITH b AS (
		    INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min,
		                          buffer_min, status, source, price, deposit, hold_expires_at,
		                          manage_token_hash, notes)
		    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		    RETURNING id, created_at
		), e AS (
		    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, details)
		    SELECT $1, id, 'created', $15, $16, $17 FROM b
		)
		SELECT id, created_at FROM b`,
		b.SalonID, b.MasterID, b.ServiceID, b.ClientID, b.StartsAt, b.DurationMin, b.BufferMin, b.Status,
		b.Source, b.Price, b.Deposit, hold, tokenHash, b.Notes, actor.Kind, actor.dbID(), details,
	).QueryRow(func(row pgx.Row) error { return row.Scan(&b.ID, &b.CreatedAt) })
	err := tx.SendBatch(ctx, batch).Close()
	if err != nil {
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT book`); rerr != nil {
			return fmt.Errorf("insert booking: %w (rollback to savepoint: %v)", err, rerr)
		}
		return fmt.Errorf("insert booking: %w", err)
	}
	b.UpdatedAt = b.CreatedAt
	return nil
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

// idemResult is what an idempotency record keeps of a finished booking request.
type idemResult struct {
	BookingID   int64  `json:"booking_id"`
	ManageToken string `json:"manage_token,omitempty"`
}

// claimKey records the key for this request, or returns the result of the
// first request with it. A concurrent first request makes this one wait for
// its outcome (up to a few seconds, then ErrInProgress); a first request
// that failed leaves no record, so this one proceeds.
func claimKey(ctx context.Context, tx pgx.Tx, salonID int64, scope, key string, fp []byte) (*idemResult, error) {
	var claimed bool
	batch := &pgx.Batch{}
	batch.Queue(`SET LOCAL lock_timeout = '5s'`)
	batch.Queue(`
		INSERT INTO idempotency_keys (salon_id, scope, key, request_hash) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING RETURNING true`, salonID, scope, key, fp).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&claimed)
		if isNoRows(err) {
			return nil
		}
		return err
	})
	batch.Queue(`SET LOCAL lock_timeout = 0`)
	err := tx.SendBatch(ctx, batch).Close()
	switch {
	case pgCode(err) == pgLockNotAvailable:
		return nil, ErrInProgress
	case pgCode(err) == "23503":
		return nil, fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("idempotency key: %w", err)
	case claimed:
		return nil, nil
	}
	var stored []byte
	var res *idemResult
	if err := tx.QueryRow(ctx, `SELECT request_hash, result FROM idempotency_keys WHERE salon_id = $1 AND scope = $2 AND key = $3`,
		salonID, scope, key).Scan(&stored, &res); err != nil {
		return nil, fmt.Errorf("idempotency key: %w", err)
	}
	if subtle.ConstantTimeCompare(stored, fp) != 1 {
		return nil, ErrKeyReused
	}
	if res == nil {
		return nil, ErrInProgress
	}
	return res, nil
}

func storeKeyResult(ctx context.Context, tx pgx.Tx, salonID int64, scope, key string, res idemResult) error {
	_, err := tx.Exec(ctx, `UPDATE idempotency_keys SET result = $4 WHERE salon_id = $1 AND scope = $2 AND key = $3`,
		salonID, scope, key, res)
	if err != nil {
		return fmt.Errorf("idempotency key: %w", err)
	}
	return nil
}

// PruneIdempotencyKeys deletes idempotency records older than age; a replay
// after that is treated as a new request.
func (s *Service) PruneIdempotencyKeys(ctx context.Context, age time.Duration) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, s.now().Add(-age))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
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
