package booking

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// idemResult is what an idempotency record keeps of a finished request.
type idemResult struct {
	BookingID   int64  `json:"booking_id"`
	ManageToken string `json:"manage_token,omitempty"`
}

// keyClaim is an idempotency key being claimed in a batch.
type keyClaim struct {
	salonID     int64
	scope, key  string
	fingerprint []byte
	claimed     bool // this request is the first with the key
}

// queueClaim queues the claim of an idempotency key: this request's record
// is inserted unless one exists. A concurrent first request makes the insert
// wait for its outcome (up to a few seconds, then the batch fails with
// lock_not_available, which callers report as ErrInProgress); a first
// request that failed left no record, so this one proceeds.
func queueClaim(batch *pgx.Batch, salonID int64, scope, key string, fingerprint []byte) *keyClaim {
	c := &keyClaim{salonID: salonID, scope: scope, key: key, fingerprint: fingerprint}
	batch.Queue(`SET LOCAL lock_timeout = '5s'`)
	batch.Queue(`
		INSERT INTO idempotency_keys (salon_id, scope, key, request_hash) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING RETURNING true`, salonID, scope, key, fingerprint).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&c.claimed)
		if isNoRows(err) {
			return nil
		}
		return err
	})
	batch.Queue(`SET LOCAL lock_timeout = 0`)
	return c
}

// prior returns the first request's result, or ErrKeyReused when the
// requests differ, or ErrInProgress when the first has no result yet.
func (c *keyClaim) prior(ctx context.Context, q querier) (*idemResult, error) {
	var stored []byte
	var res *idemResult
	if err := q.QueryRow(ctx, `SELECT request_hash, result FROM idempotency_keys WHERE salon_id = $1 AND scope = $2 AND key = $3`,
		c.salonID, c.scope, c.key).Scan(&stored, &res); err != nil {
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

// PruneIdempotencyKeys deletes idempotency records older than age; a replay
// after that is treated as a new request.
func (s *Service) PruneIdempotencyKeys(ctx context.Context, age time.Duration) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, s.now().Add(-age))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
