package booking

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"salon/i18n"
)

// Error kinds. Every error a Service method returns either wraps one of these
// (test with errors.Is) or is an internal error: a front end shows the kind
// and logs anything else as "internal error".
var (
	// ErrNotFound: the salon, booking, master or service does not exist (in this salon).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the input is malformed or breaks a rule; see *ValidationError for the fields.
	ErrInvalid = errors.New("invalid input")
	// ErrSlotTaken: the time overlaps another booking; see *SlotTakenError for alternatives.
	ErrSlotTaken = errors.New("slot taken")
	// ErrConflict: the request clashes with the current state (a completed booking
	// cannot be cancelled, an idempotency key was reused for another request).
	ErrConflict = errors.New("conflict")
	// ErrForbidden: the actor may not do this.
	ErrForbidden = errors.New("forbidden")
	// ErrTooLate: past the salon's cancel/reschedule cutoff.
	ErrTooLate = errors.New("too late")
	// ErrUnavailable: the request could not be served in time (a lock wait,
	// a statement or the caller's deadline ran out, or the database is
	// unreachable). Nothing was written; the same request may be tried again.
	ErrUnavailable = errors.New("temporarily unavailable")
)

// Idempotency errors; both unwrap to ErrConflict.
var (
	// ErrKeyReused: the idempotency key was first used with a different request.
	ErrKeyReused = fmt.Errorf("idempotency key was used for a different request: %w", ErrConflict)
	// ErrInProgress: the first request with this idempotency key is still running.
	ErrInProgress = fmt.Errorf("a request with this idempotency key is still running: %w", ErrConflict)
)

// ValidationError names each invalid field with a human-readable reason. It
// unwraps to ErrInvalid, and also to ErrNotFound when a field refers to
// something that does not exist.
type ValidationError struct {
	Fields   map[string]i18n.Text // field -> why (i18n puts both in the reader's language)
	notFound bool
}

func (e *ValidationError) Error() string {
	keys := slices.Sorted(maps.Keys(e.Fields))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + e.Fields[k].String()
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Unwrap returns the kinds this error belongs to.
func (e *ValidationError) Unwrap() []error {
	if e.notFound {
		return []error{ErrInvalid, ErrNotFound}
	}
	return []error{ErrInvalid}
}

// Invalid returns a ValidationError for one field: why is an i18n key, with
// its arguments.
func Invalid(field, why string, args ...any) *ValidationError {
	return &ValidationError{Fields: map[string]i18n.Text{field: i18n.New(why, args...)}}
}

// invalidBy returns a ValidationError for a field refused by err (a parse
// error that says why: an i18n.Text).
func invalidBy(field string, err error) *ValidationError {
	return &ValidationError{Fields: map[string]i18n.Text{field: i18n.Of(err)}}
}

// unknown returns a ValidationError for a field that names nothing that exists.
func unknown(field, why string, args ...any) *ValidationError {
	return &ValidationError{Fields: map[string]i18n.Text{field: i18n.New(why, args...)}, notFound: true}
}

// reasonError is an error kind (ErrConflict, ErrTooLate) with why, in
// words i18n puts in the reader's language.
type reasonError struct {
	why  i18n.Text
	kind error
}

func (e *reasonError) Error() string { return e.why.String() + ": " + e.kind.Error() }

// Unwrap returns why and the kind.
func (e *reasonError) Unwrap() []error { return []error{e.why, e.kind} }

// conflict is ErrConflict because of why (an i18n key, with args).
func conflict(why string, args ...any) error {
	return &reasonError{why: i18n.New(why, args...), kind: ErrConflict}
}

// tooLate is ErrTooLate because of why (an i18n key, with args).
func tooLate(why string, args ...any) error {
	return &reasonError{why: i18n.New(why, args...), kind: ErrTooLate}
}

// fieldErrors collects field problems; err returns nil when there were none.
type fieldErrors map[string]i18n.Text

// add names the first problem of field: why is an i18n key, with args.
func (f fieldErrors) add(field, why string, args ...any) {
	if _, ok := f[field]; !ok {
		f[field] = i18n.New(why, args...)
	}
}

// addErr names the first problem of field as err says it.
func (f fieldErrors) addErr(field string, err error) {
	if _, ok := f[field]; !ok {
		f[field] = i18n.Of(err)
	}
}

func (f fieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	return &ValidationError{Fields: f}
}

// SlotTakenError says the requested time is no longer free and offers the
// nearest free starts, computed in the same transaction that was refused.
type SlotTakenError struct {
	Alternatives []Slot
	// Visits are the alternatives of a visit: whole-visit starts (not nil
	// for a visit, even when there are none).
	Visits []VisitSlot
}

func (e *SlotTakenError) Error() string {
	return fmt.Sprintf("slot taken (%d alternatives)", len(e.Alternatives)+len(e.Visits))
}

// Unwrap returns ErrSlotTaken.
func (e *SlotTakenError) Unwrap() error { return ErrSlotTaken }

// PostgreSQL error codes the core acts on.
const (
	pgExclusionViolation  = "23P01"
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
	pgLockNotAvailable    = "55P03"
	pgQueryCanceled       = "57014" // statement_timeout, or a cancelled query
	pgDeadlock            = "40P01"
	pgSerialization       = "40001"
	pgBadEncoding         = "22021" // invalid byte sequence (a NUL, bad UTF-8)
	pgUntranslatable      = "22P05"
)

// dbErr turns the database failures that are not the caller's fault and
// pass with time (a lock or statement timeout, a deadline, a lost
// connection, a server shutting down, restarting, out of connections or of
// resources) into ErrUnavailable, and text the database cannot store into
// ErrInvalid; other errors are returned as they are (internal).
func dbErr(err error) error {
	if err == nil {
		return nil
	}
	switch code := pgCode(err); {
	case code == pgLockNotAvailable, code == pgQueryCanceled, code == pgDeadlock, code == pgSerialization,
		passing(code):
		return fmt.Errorf("%w (%v)", ErrUnavailable, err)
	case code == pgBadEncoding, code == pgUntranslatable:
		return Invalid("input", "contains characters that cannot be stored")
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return err // the server answered: a real error
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || pgconn.Timeout(err) ||
		pgconn.SafeToRetry(err) || isConnError(err) {
		return fmt.Errorf("%w (%v)", ErrUnavailable, err)
	}
	return err
}

// passing reports the SQLSTATEs of a server that cannot serve now but will:
// class 08 (connection exception), 53 (insufficient resources: too many
// connections, out of memory or disk), 57P01-57P03 (admin or crash
// shutdown, cannot connect now: starting up or shutting down), 25P03 (an
// idle transaction timed out).
func passing(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03", "25P03":
		return true
	}
	return false
}

// isConnError reports a failure to reach the server or a connection lost.
func isConnError(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// pgCode returns the SQLSTATE of err, or "".
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// violated reports whether err is a violation of the named constraint.
func violated(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == constraint
}
