package booking

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Idempotency records keep nothing that grants access: the key is stored as
// a hash (a replay proves it knows the key), and the manage token of a
// booking made with a key is derived from the key and a stored salt, so a
// replay gets the same token back while the database never holds it.

// idemResult is what an idempotency record keeps of a finished request.
type idemResult struct {
	BookingID int64 `json:"booking_id"`
	// TokenSalt, when the booking has a manage token, derives it from the key.
	TokenSalt []byte `json:"token_salt,omitempty"`
}

// keyClaim is an idempotency key being claimed in a batch.
type keyClaim struct {
	salonID     int64
	scope, key  string // key is never stored
	fingerprint []byte
	claimed     bool // this request is the first with the key
	reached     bool // the claim's statement succeeded (a later one failed, if any)
}

func keyHash(key string) []byte {
	h := sha256.Sum256([]byte("idempotency-key\x00" + key))
	return h[:]
}

// queueClaim queues the claim of an idempotency key: this request's record
// is inserted unless one exists. A concurrent first request makes the insert
// wait for its outcome (up to lockWait milliseconds, set as the
// transaction's lock_timeout, then the batch fails with lock_not_available,
// which callers report as ErrInProgress); a first request that failed left
// no record, so this one proceeds.
func queueClaim(batch *pgx.Batch, salonID int64, scope, key string, fingerprint []byte, lockWait int64) *keyClaim {
	c := &keyClaim{salonID: salonID, scope: scope, key: key, fingerprint: fingerprint}
	batch.Queue(`
		INSERT INTO idempotency_keys (salon_id, scope, key_hash, request_hash)
		SELECT $1, $2, $3, $4 FROM (SELECT set_config('lock_timeout', $5::bigint::text, true)) lt
		ON CONFLICT DO NOTHING RETURNING true`, salonID, scope, keyHash(key), fingerprint, lockWait).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&c.claimed)
		if isNoRows(err) {
			err = nil
		}
		c.reached = err == nil
		return err
	})
	return c
}

// prior returns the first request's result, or ErrKeyReused when the
// requests differ, or ErrInProgress when the first has no result yet.
func (c *keyClaim) prior(ctx context.Context, q querier) (*idemResult, error) {
	var stored []byte
	var res *idemResult
	if err := q.QueryRow(ctx, `SELECT request_hash, result FROM idempotency_keys WHERE salon_id = $1 AND scope = $2 AND key_hash = $3`,
		c.salonID, c.scope, keyHash(c.key)).Scan(&stored, &res); err != nil {
		return nil, fmt.Errorf("idempotency key: %w", err)
	}
	if subtle.ConstantTimeCompare(stored, c.fingerprint) != 1 {
		return nil, ErrKeyReused
	}
	if res == nil {
		return nil, ErrInProgress
	}
	return res, nil
}

// token returns the manage token of a booking made with this key and salt.
func (c *keyClaim) token(salt []byte) string {
	m := hmac.New(sha256.New, []byte(c.key))
	m.Write([]byte("salon manage token\x00"))
	m.Write(salt)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:24])
}

// newSalt returns a random salt for a derived token.
func newSalt() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return b
}

// PruneIdempotencyKeys deletes idempotency records older than age; a replay
// after that is treated as a new request. Only the platform asks.
func (s *Service) PruneIdempotencyKeys(ctx context.Context, age time.Duration) (int64, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, s.now().Add(-age))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency keys: %w", dbErr(err))
	}
	return tag.RowsAffected(), nil
}
