package booking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
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
// wrong password are the same error (ErrForbidden). Too many failures for
// the email or from the address are a *ThrottledError, checked before the
// password.
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
	for _, k := range keys {
		if wait, err := s.lockedOut(ctx, k, now); err != nil {
			return "", nil, err
		} else if wait > 0 {
			return "", nil, &ThrottledError{RetryAfter: wait}
		}
	}
	u, err := s.authenticate(ctx, email, password)
	if err != nil {
		batch := &pgx.Batch{}
		for _, k := range keys {
			batch.Queue(`INSERT INTO login_failures (key_hash, failed_at) VALUES ($1, $2)`, k, now)
		}
		// Old failures go as new ones come.
		batch.Queue(`DELETE FROM login_failures WHERE failed_at < $1`, now.Add(-2*LoginWindow))
		if berr := s.pool.SendBatch(ctx, batch).Close(); berr != nil {
			return "", nil, fmt.Errorf("login: %w", dbErr(berr))
		}
		return "", nil, err
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	id := base64.RawURLEncoding.EncodeToString(raw)
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO panel_sessions (id_hash, user_id, created_at, seen_at, expires_at) VALUES ($1, $2, $3, $3, $4)`,
		sessionHash(id), u.ID, now, now.Add(SessionMax))
	batch.Queue(`DELETE FROM login_failures WHERE key_hash = $1`, keys[0])
	batch.Queue(`DELETE FROM panel_sessions WHERE expires_at < $1 OR seen_at < $2`, now, now.Add(-SessionIdle))
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return "", nil, fmt.Errorf("login: %w", dbErr(err))
	}
	return id, u, nil
}

// lockedOut returns how long logins for key are refused (0: not).
func (s *Service) lockedOut(ctx context.Context, key []byte, now time.Time) (time.Duration, error) {
	rows, err := s.pool.Query(ctx, `SELECT failed_at FROM login_failures WHERE key_hash = $1 AND failed_at > $2
		ORDER BY failed_at DESC LIMIT $3`, key, now.Add(-LoginWindow-LoginLockout), LoginMaxFailures)
	if err != nil {
		return 0, fmt.Errorf("login: %w", dbErr(err))
	}
	at, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		return 0, fmt.Errorf("login: %w", dbErr(err))
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
	return until.Sub(now), nil
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
