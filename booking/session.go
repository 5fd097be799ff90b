package booking

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Panel sessions live in PostgreSQL, so every replica knows them and a
// logout ends them everywhere. The session id is 32 random bytes handed to
// the browser once; the database keeps only its SHA-256.

// Session lifetimes.
const (
	SessionIdle = 2 * time.Hour  // a session unused this long ends
	SessionMax  = 24 * time.Hour // and every session ends this long after login
)

// Login throttling: after LoginMaxFailures failed logins for one email (or
// from one address) within LoginWindow, logins for it are refused for at
// least LoginLockout, even with the right password.
const (
	LoginMaxFailures = 10
	LoginWindow      = 15 * time.Minute
	LoginLockout     = time.Minute
)

// ThrottledError refuses a login after too many failures. It unwraps to
// ErrForbidden.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed logins: try again in %s", e.RetryAfter.Round(time.Second))
}

// Unwrap returns ErrForbidden.
func (e *ThrottledError) Unwrap() error { return ErrForbidden }

// Login checks an email and password, from a client address, and opens a
// session: it returns the new session id (always a fresh one: a session id
// a browser had before is never promoted) and the user. A wrong email and a
// wrong password are the same error (ErrForbidden) and cost the same time.
//
// Every attempt is counted before its password is hashed: under one lock
// per throttle key (the email, the address) the recent failures are
// counted, and the attempt is written as one more, to be removed if the
// password turns out right. So a burst of guesses at once gets exactly
// LoginMaxFailures of them checked per email and per address, and the
// rest (the right password too) a *ThrottledError, without hashing.
// Hashing is bounded (WithPasswordChecks): when its queue is full the
// answer is ErrUnavailable at once; such an attempt, and one that waited
// past its deadline, was not a guess and is not counted.
func (s *Service) Login(ctx context.Context, email, password, addr string) (string, *User, error) {
	if _, err := asked(ctx); err != nil {
		return "", nil, err
	}
	email = strings.ToLower(strings.TrimSpace(email))
	if len(email) > 320 || len(password) > 1024 {
		return "", nil, fmt.Errorf("wrong email or password: %w", ErrForbidden)
	}
	keys := [][]byte{throttleKey("email", email), throttleKey("ip", addr)}
	now := s.now()
	// A burst for one e-mail or address waits for its keys' locks here,
	// not holding connections in the database.
	attempt, err := func() (int64, error) {
		leave, err := s.loginGates.enter(ctx, time.Now().Add(s.lockWait), string(keys[0]), string(keys[1]))
		if err != nil {
			return 0, err
		}
		defer leave()
		return s.countAttempt(ctx, keys, now)
	}()
	if err != nil {
		return "", nil, err
	}
	release, err := s.passwords.queue()
	if err != nil {
		s.forgetAttempt(ctx, attempt)
		return "", nil, err
	}
	defer release()
	u, err := s.authenticate(ctx, email, password)
	switch {
	case errors.Is(err, ErrUnavailable):
		// The password was never checked: not a guess.
		s.forgetAttempt(ctx, attempt)
		return "", nil, err
	case err != nil:
		// The attempt stays counted; old failures go as new ones come.
		if _, derr := s.pool.Exec(ctx, `DELETE FROM login_failures WHERE failed_at < $1`, now.Add(-2*LoginWindow)); derr != nil {
			return "", nil, fmt.Errorf("login: %w", dbErr(derr))
		}
		return "", nil, err
	}
	id := newSessionID()
	batch := &pgx.Batch{}
	batch.Queue(insertSessionSQL, sessionHash(id), u.ID, now, now.Add(SessionMax))
	// The right password clears the email's failures and this attempt.
	batch.Queue(`DELETE FROM login_failures WHERE key_hash = $1 OR attempt = $2`, keys[0], attempt)
	batch.Queue(`DELETE FROM panel_sessions WHERE expires_at < $1 OR seen_at < $2`, now, now.Add(-SessionIdle))
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return "", nil, fmt.Errorf("login: %w", dbErr(err))
	}
	return id, u, nil
}

// newSessionID returns a new session's id (256 random bits, URL-safe).
func newSessionID() string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(raw)
}

// insertSessionSQL opens a session ($1 its id's hash) for user $2 at $3
// until $4.
const insertSessionSQL = `INSERT INTO panel_sessions (id_hash, user_id, created_at, seen_at, expires_at) VALUES ($1, $2, $3, $3, $4)`

// countAttempt counts a login attempt for keys before its password is
// checked: under each key's lock (taken in one order), a key locked out
// refuses it (*ThrottledError); otherwise it is written as a failure of
// every key, and its id returned.
func (s *Service) countAttempt(ctx context.Context, keys [][]byte, now time.Time) (int64, error) {
	sorted := slices.SortedFunc(slices.Values(keys), bytes.Compare)
	var attempt int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, k := range sorted {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('login-throttle:' || encode($1, 'hex'), 0))`, k); err != nil {
				return fmt.Errorf("login: %w", err)
			}
		}
		var wait time.Duration
		for _, k := range keys {
			w, err := lockedOut(ctx, tx, k, now)
			if err != nil {
				return err
			}
			wait = max(wait, w)
		}
		if wait > 0 {
			return &ThrottledError{RetryAfter: wait}
		}
		return tx.QueryRow(ctx, `WITH a AS (SELECT nextval('login_attempts') AS id),
			ins AS (INSERT INTO login_failures (key_hash, failed_at, attempt) SELECT k, $2, a.id FROM unnest($1::bytea[]) k, a)
			SELECT id FROM a`, keys, now).Scan(&attempt)
	})
	return attempt, err
}

// forgetAttempt removes a counted attempt whose password was never checked.
func (s *Service) forgetAttempt(ctx context.Context, attempt int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM login_failures WHERE attempt = $1`, attempt); err != nil {
		s.log.Warn("login: forget an unchecked attempt", "err", err)
	}
}

// lockedOut returns how long logins for key are refused (0: not).
func lockedOut(ctx context.Context, q querier, key []byte, now time.Time) (time.Duration, error) {
	rows, err := q.Query(ctx, `SELECT failed_at FROM login_failures WHERE key_hash = $1 AND failed_at > $2
		ORDER BY failed_at DESC LIMIT $3`, key, now.Add(-LoginWindow-LoginLockout), LoginMaxFailures)
	if err != nil {
		return 0, fmt.Errorf("login: %w", err)
	}
	at, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		return 0, fmt.Errorf("login: %w", err)
	}
	if len(at) < LoginMaxFailures {
		return 0, nil
	}
	// The last LoginMaxFailures failures lie within the window: refused
	// until the oldest of them leaves it, and at least a minute after the
	// last one.
	newest, oldest := at[0], at[len(at)-1]
	if newest.Sub(oldest) > LoginWindow {
		return 0, nil
	}
	until := oldest.Add(LoginWindow)
	if m := newest.Add(LoginLockout); m.After(until) {
		until = m
	}
	if !until.After(now) {
		return 0, nil
	}
	// At least a second: a lockout never reads "try again in 0 s".
	return max(until.Sub(now), time.Second), nil
}

func throttleKey(kind, v string) []byte {
	sum := sha256.Sum256([]byte("login-throttle\x00" + kind + "\x00" + v))
	return sum[:]
}

func sessionHash(id string) []byte {
	sum := sha256.Sum256([]byte("panel-session\x00" + id))
	return sum[:]
}

// SessionUser returns the user of a live session and marks it used. An
// unknown, expired, idle or logged-out session is ErrNotFound.
func (s *Service) SessionUser(ctx context.Context, id string) (*User, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	if id == "" || len(id) > 100 {
		return nil, fmt.Errorf("session: %w", ErrNotFound)
	}
	now := s.now()
	var u User
	// The seen mark is written at most once a minute per session.
	err := s.pool.QueryRow(ctx, `
		WITH sess AS (
		    SELECT id_hash, user_id, seen_at FROM panel_sessions
		    WHERE id_hash = $1 AND expires_at > $2 AND seen_at > $3
		), touch AS (
		    UPDATE panel_sessions p SET seen_at = $2 FROM sess
		    WHERE p.id_hash = sess.id_hash AND sess.seen_at < $2::timestamptz - interval '1 minute'
		)
		SELECT u.id, u.salon_id, u.email, u.role, COALESCE(u.lang, '') FROM sess JOIN users u ON u.id = sess.user_id`,
		sessionHash(id), now, now.Add(-SessionIdle)).Scan(&u.ID, &u.SalonID, &u.Email, &u.Role, &u.Lang)
	if isNoRows(err) {
		return nil, fmt.Errorf("session: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", dbErr(err))
	}
	return &u, nil
}

// Logout ends a session on the server: its id opens nothing from then on.
func (s *Service) Logout(ctx context.Context, id string) error {
	if _, err := asked(ctx); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM panel_sessions WHERE id_hash = $1`, sessionHash(id)); err != nil {
		return fmt.Errorf("logout: %w", dbErr(err))
	}
	return nil
}
