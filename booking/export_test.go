package booking

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DueSQL is the reminder sweep's query, for the test of its cost.
const DueSQL = dueSQL

// FinishRefund records, in a transaction of its own, session id's refund
// of key as made (as a check whose answer came late would).
func FinishRefund(ctx context.Context, pool *pgxpool.Pool, id int64, key string, now time.Time) (int, error) {
	var part int
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		part, err = finishRefund(ctx, tx, id, key, "refunded", now)
		return err
	})
	return part, err
}

// ClaimRefundPost records, as a check of s about to POST would, that a
// refund's POST under key is made now: ErrRefundKeyMoved when it is not
// to be made. (A function, not a method: the Service's methods are the
// ones its callers have.)
func ClaimRefundPost(ctx context.Context, s *Service, table string, id int64, key string) error {
	return s.claimRefundPost(ctx, table, id, key)
}

// ErrRefundKeyMoved is errRefundKeyMoved, for the tests.
var ErrRefundKeyMoved = errRefundKeyMoved

// CodeLockKey is the key of the advisory lock a client's try of code
// holds (as typed: it is normalized first).
func CodeLockKey(code string) string { return codeLockKey(tokenHash(normalizeCode(code))) }

// GateWaiting is how many requests of s hold or wait at master's gate.
func GateWaiting(s *Service, master int64) int {
	s.masterGates.mu.Lock()
	defer s.masterGates.mu.Unlock()
	if g := s.masterGates.m[master]; g != nil {
		return g.waiting
	}
	return 0
}
