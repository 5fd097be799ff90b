package booking

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/argon2"
)

// Role is a panel user's role in their salon.
type Role string

// Roles.
const (
	RoleOwner Role = "owner" // everything, including users and imports
	RoleAdmin Role = "admin" // the day's work: calendar, bookings, payments
)

// User is a panel user.
type User struct {
	ID      int64
	SalonID int64
	Email   string
	Role    Role
	Lang    string // the panel's language for the user; "" for the salon's
}

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 8

// CreateUser creates a panel user with an argon2id password hash: the
// platform's own act (salon admin create, the demo); a salon's owner
// invites (InviteUser), which tells them nothing of other salons' users.
// Errors: ErrForbidden (not the platform), ErrNotFound (salon),
// ErrInvalid (email, password, role; email taken).
func (s *Service) CreateUser(ctx context.Context, salonID int64, email, password string, role Role) (*User, error) {
	if err := onlySystem(ctx); err != nil {
		return nil, err
	}
	u, hash, err := s.newUser(ctx, salonID, email, password, role)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error { return u.insert(ctx, tx, hash) })
	if err != nil {
		return nil, err
	}
	return u, nil
}

// newUser checks a new user's email, password and role and hashes the
// password.
func (s *Service) newUser(ctx context.Context, salonID int64, email, password string, role Role) (*User, string, error) {
	fe := fieldErrors{}
	email = staffEmail(fe, email)
	if utf8.RuneCountInString(password) < MinPasswordLen {
		fe.add("password", "at least %d characters", MinPasswordLen)
	}
	if role != RoleOwner && role != RoleAdmin {
		fe.add("role", "owner or admin")
	}
	if err := fe.err(); err != nil {
		return nil, "", err
	}
	hash, err := s.passwords.hash(ctx, password)
	if err != nil {
		return nil, "", err
	}
	return &User{SalonID: salonID, Email: email, Role: role}, hash, nil
}

// staffEmail is a panel user's login as stored: trimmed, in lower case;
// one that is no plain address is said in fe.
func staffEmail(fe fieldErrors, email string) string {
	email = strings.ToLower(strings.TrimSpace(email))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > MaxEmailLen {
		fe.add("email", "not an email address")
	}
	return email
}

// insert writes the user (its ID is set).
func (u *User) insert(ctx context.Context, tx pgx.Tx, hash string) error {
	err := tx.QueryRow(ctx, `INSERT INTO users (salon_id, email, password_hash, role) VALUES ($1, $2, $3, $4) RETURNING id`,
		u.SalonID, u.Email, hash, u.Role).Scan(&u.ID)
	switch {
	case pgCode(err) == pgUniqueViolation:
		return Invalid("email", "a user with this email exists")
	case pgCode(err) == "23503":
		return fmt.Errorf("salon %d: %w", u.SalonID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

// authenticate returns the user with that email and password. A wrong email
// and a wrong password are the same error (ErrForbidden), and take the same
// time: a missing user is checked against a dummy hash. A check that could
// not run before the deadline is ErrUnavailable.
func (s *Service) authenticate(ctx context.Context, email, password string) (*User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var u User
	var hash string
	err := s.pool.QueryRow(ctx, `SELECT id, salon_id, email, role, COALESCE(lang, ''), password_hash FROM users WHERE email = $1`, email).
		Scan(&u.ID, &u.SalonID, &u.Email, &u.Role, &u.Lang, &hash)
	if err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("authenticate: %w", dbErr(err))
	}
	known := err == nil
	if !known {
		hash = dummyHash
	}
	var ok bool
	if err := s.passwords.run(ctx, func() { ok = CheckPassword(hash, password) }); err != nil {
		return nil, err
	}
	if !ok || !known {
		return nil, fmt.Errorf("wrong email or password: %w", ErrForbidden)
	}
	return &u, nil
}

// passwordChecks bounds a process's password hashing. An argon2id hash
// takes argonMemory (64 MiB) and a tenth of a second of both cores: run
// unbounded, forty logins at once held gigabytes. Checks run a few at a
// time, each one's memory collected before the next starts, and wait in a
// queue of bounded length; past it, a check is refused at once.
type passwordChecks struct {
	queued  chan struct{} // checks running or waiting
	running chan struct{} // checks running
	wait    time.Duration // the longest a check waits in the queue
}

// Default bounds of password hashing (WithPasswordChecks).
const (
	DefaultPasswordChecks      = 1  // hashes at once
	DefaultPasswordChecksQueue = 16 // hashes running or waiting
)

// WithPasswordChecks sets how many password hashes run at once, how many
// may run or wait (a login beyond that is ErrUnavailable at once), and how
// long one may wait in the queue (0: PasswordCheckWait).
func WithPasswordChecks(running, queued int, wait time.Duration) Option {
	return func(s *Service) { s.passwords = newPasswordChecks(running, queued, wait) }
}

func newPasswordChecks(running, queued int, wait time.Duration) *passwordChecks {
	running = max(running, 1)
	if wait <= 0 {
		wait = PasswordCheckWait
	}
	return &passwordChecks{running: make(chan struct{}, running), queued: make(chan struct{}, max(queued, running)), wait: wait}
}

// queue takes a place in the queue, at once or not at all (ErrUnavailable).
func (p *passwordChecks) queue() (release func(), err error) {
	select {
	case p.queued <- struct{}{}:
		return func() { <-p.queued }, nil
	default:
		return nil, fmt.Errorf("too many logins at once: %w", ErrUnavailable)
	}
}

// PasswordCheckWait is the longest a password check waits in the queue:
// long enough for a burst of LoginMaxFailures to be checked in turn on a
// busy machine, within a request's deadline.
const PasswordCheckWait = 8 * time.Second

// run runs f (a hash) when a check may run, waiting at most p.wait or
// until ctx is done (ErrUnavailable), and collects its memory before the
// next starts.
func (p *passwordChecks) run(ctx context.Context, f func()) error {
	wait := time.NewTimer(p.wait)
	defer wait.Stop()
	select {
	case p.running <- struct{}{}:
	case <-wait.C:
		return fmt.Errorf("too many logins at once: %w", ErrUnavailable)
	case <-ctx.Done():
		return fmt.Errorf("waiting to check a password: %w", ErrUnavailable)
	}
	defer func() { <-p.running }()
	f()
	runtime.GC() // the hash's 64 MiB, before the next hash asks for its own
	return nil
}

// hash is HashPassword, queued and run like a check.
func (p *passwordChecks) hash(ctx context.Context, password string) (string, error) {
	release, err := p.queue()
	if err != nil {
		return "", err
	}
	defer release()
	var h string
	err = p.run(ctx, func() { h = HashPassword(password) })
	return h, err
}

// argon2id parameters (RFC 9106's second recommended option, with 64 MiB).
const (
	argonTime    = 3
	argonMemory  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
)

// dummyHash is checked for unknown emails, so they take as long as known
// ones: a hash of a random password nobody knows, made once with the
// parameters below (a test checks that they match).
const dummyHash = "$argon2id$v=19$m=65536,t=3,p=2$bHP+O3gQmLkJ5rbKqsl6/Q$94msrmZ+wiNad4vO/ICNPTNcf4kmN544YYzxjqLce6A"

// HashPassword returns an argon2id hash of password in the PHC string format.
func HashPassword(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password matches a hash from HashPassword
// (with whatever parameters it was made), comparing in constant time.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var mem uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil || mem == 0 || t == 0 || p == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if errors.Join(err1, err2) != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
