package psp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sandbox is the built-in provider for development and demos. Its payments
// live in PostgreSQL (sandbox_payments), so every replica sees them; its
// payment page is a page of this server (SandboxPath) with Pay and Decline,
// after which it notifies, like a real provider's webhook, and sends the
// client back.
type Sandbox struct {
	Pool *pgxpool.Pool
	// BaseURL is the server's public URL; payment pages are under it.
	BaseURL string
	// Notify is told about a payment the client paid or declined (the
	// webhook path); set by the wiring.
	Notify func(ctx context.Context, id string)
	// Delay is added to every call; FailureRate is the share of calls
	// that fail as if the provider did not answer (for demos of the saga).
	Delay       time.Duration
	FailureRate float64
	// Down, while set, fails every call so (an outage, for tests; safe to
	// set while the sandbox serves).
	Down atomic.Bool
}

// SandboxPath is where the sandbox's payment pages are served.
const SandboxPath = "/sandbox/pay/"

// Name implements Provider.
func (s *Sandbox) Name() string { return "sandbox" }

func (s *Sandbox) before(ctx context.Context) error {
	if s.Delay > 0 {
		select {
		case <-time.After(s.Delay):
		case <-ctx.Done():
			return fmt.Errorf("sandbox: %v: %w", ctx.Err(), ErrUnknown)
		}
	}
	if s.Down.Load() || s.FailureRate > 0 && rand.Float64() < s.FailureRate {
		return fmt.Errorf("sandbox: injected failure: %w", ErrUnknown)
	}
	return nil
}

const sandboxColumns = `id, status, amount, currency, refunded, metadata`

func (s *Sandbox) scan(row pgx.Row) (*Payment, error) {
	var p Payment
	var md []byte
	if err := row.Scan(&p.ID, &p.Status, &p.Amount, &p.Currency, &p.Refunded, &md); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, &RejectedError{Code: "not_found", Message: "no such payment"}
		}
		return nil, fmt.Errorf("sandbox: %v: %w", err, ErrUnknown)
	}
	_ = json.Unmarshal(md, &p.Metadata)
	if p.Status == Pending {
		p.ConfirmationURL = strings.TrimRight(s.BaseURL, "/") + SandboxPath + p.ID
	}
	return &p, nil
}

// Create implements Provider.
func (s *Sandbox) Create(ctx context.Context, key string, r CreateRequest) (*Payment, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	md, _ := json.Marshal(r.Metadata)
	return s.scan(s.Pool.QueryRow(ctx, `INSERT INTO sandbox_payments (id, idempotence_key, status, amount, currency, description, return_url, metadata, locale)
		VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8)
		ON CONFLICT (idempotence_key) DO UPDATE SET idempotence_key = EXCLUDED.idempotence_key
		RETURNING `+sandboxColumns, "sbx-"+randomID(), key, r.Amount, r.Currency, r.Description, r.ReturnURL, md, r.Locale))
}

// Get implements Provider.
func (s *Sandbox) Get(ctx context.Context, id string) (*Payment, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	return s.scan(s.Pool.QueryRow(ctx, `SELECT `+sandboxColumns+` FROM sandbox_payments WHERE id = $1`, id))
}

// List implements Lister: the sandbox's payments created since since, in
// pages of 100 (the cursor is the last id of the page before).
func (s *Sandbox) List(ctx context.Context, since time.Time, cursor string) ([]Payment, string, error) {
	if err := s.before(ctx); err != nil {
		return nil, "", err
	}
	rows, err := s.Pool.Query(ctx, `SELECT `+sandboxColumns+` FROM sandbox_payments WHERE created_at >= $1 AND id > $2
		ORDER BY id LIMIT 100`, since, cursor)
	return sandboxPage(rows, err, func(r pgx.Rows) (Payment, error) {
		p, err := s.scan(r)
		if err != nil {
			return Payment{}, err
		}
		return *p, nil
	}, func(p Payment) string { return p.ID })
}

// sandboxPage is a page of a list, read from rows (a query's, err its
// error) of at most 100 by scan (whose errors it returns as they are),
// and the cursor to the next page: the last id of a full one ("" after
// the last).
func sandboxPage[T any](rows pgx.Rows, err error, scan func(pgx.Rows) (T, error), id func(T) string) ([]T, string, error) {
	if err != nil {
		return nil, "", fmt.Errorf("sandbox: %v: %w", err, ErrUnknown)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("sandbox: %v: %w", err, ErrUnknown)
	}
	next := ""
	if len(out) == 100 {
		next = id(out[len(out)-1])
	}
	return out, next, nil
}

// Capture implements Provider.
func (s *Sandbox) Capture(ctx context.Context, _, id string, _ int64, _ string) (*Payment, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	return s.move(ctx, id, []Status{WaitingForCapture, Succeeded}, Succeeded)
}

// Cancel implements Provider.
func (s *Sandbox) Cancel(ctx context.Context, _, id string) (*Payment, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	return s.move(ctx, id, []Status{WaitingForCapture, Canceled}, Canceled)
}

func (s *Sandbox) move(ctx context.Context, id string, from []Status, to Status) (*Payment, error) {
	p, err := s.scan(s.Pool.QueryRow(ctx, `UPDATE sandbox_payments SET status = $3 WHERE id = $1 AND status = ANY($2)
		RETURNING `+sandboxColumns, id, from, to))
	if IsRejected(err) {
		cur, gerr := s.Get(ctx, id)
		if gerr != nil {
			return nil, gerr
		}
		return nil, &RejectedError{Code: "invalid_request", Message: "payment is " + string(cur.Status)}
	}
	return p, err
}

// GetRefund implements RefundGetter (the sandbox's refunds are made at
// once).
func (s *Sandbox) GetRefund(ctx context.Context, id string) (*Refund, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	r := Refund{ID: id, Status: "succeeded"}
	err := s.Pool.QueryRow(ctx, `SELECT amount FROM sandbox_refunds WHERE id = $1`, id).Scan(&r.Amount)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &RejectedError{Code: "not_found", Message: "no such refund"}
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: %v: %w", err, ErrUnknown)
	}
	return &r, nil
}

// ListRefunds implements RefundLister: the sandbox's refunds of a payment,
// newest first, in pages of 100 (the cursor is the page's last id; ids
// are random, so a page is ordered by time, then id).
func (s *Sandbox) ListRefunds(ctx context.Context, paymentID, cursor string) ([]Refund, string, error) {
	if err := s.before(ctx); err != nil {
		return nil, "", err
	}
	rows, err := s.Pool.Query(ctx, `SELECT id, amount, created_at FROM sandbox_refunds
		WHERE payment_id = $1 AND ($2 = '' OR (created_at, id) < (SELECT created_at, id FROM sandbox_refunds WHERE id = $2))
		ORDER BY created_at DESC, id DESC LIMIT 100`, paymentID, cursor)
	return sandboxPage(rows, err, func(r pgx.Rows) (Refund, error) {
		f := Refund{Status: "succeeded"} // the sandbox's refunds are made at once
		if err := r.Scan(&f.ID, &f.Amount, &f.CreatedAt); err != nil {
			return f, fmt.Errorf("sandbox: %v: %w", err, ErrUnknown)
		}
		return f, nil
	}, func(f Refund) string { return f.ID })
}

// Refund implements Provider.
func (s *Sandbox) Refund(ctx context.Context, key, paymentID string, amount int64, _ string, _ *Receipt) (*Refund, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	r := Refund{Status: "succeeded"} // the sandbox's refunds are made at once
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT id, amount FROM sandbox_refunds WHERE idempotence_key = $1`, key).Scan(&r.ID, &r.Amount)
		if err == nil {
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE sandbox_payments SET refunded = refunded + $2
			WHERE id = $1 AND status = 'succeeded' AND refunded + $2 <= amount`, paymentID, amount)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &RejectedError{Code: "invalid_request", Message: "cannot refund"}
		}
		r.ID, r.Amount = "sbr-"+randomID(), amount
		_, err = tx.Exec(ctx, `INSERT INTO sandbox_refunds (id, idempotence_key, payment_id, amount) VALUES ($1, $2, $3, $4)`,
			r.ID, key, paymentID, amount)
		return err
	})
	if IsRejected(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: %v: %w", err, ErrUnknown)
	}
	r.Status = "succeeded"
	return &r, nil
}

// SandboxPayment is what the payment page shows.
type SandboxPayment struct {
	ID, Description, ReturnURL, Currency string
	Amount                               int64
	Status                               Status
	Locale                               string // the payer's language, as the payment asked ("": not said)
	Refunded                             int64  // what its refunds gave back
}

// Page returns a payment for its page.
func (s *Sandbox) Page(ctx context.Context, id string) (*SandboxPayment, error) {
	var p SandboxPayment
	err := s.Pool.QueryRow(ctx, `SELECT id, description, return_url, currency, amount, status, locale, refunded FROM sandbox_payments WHERE id = $1`, id).
		Scan(&p.ID, &p.Description, &p.ReturnURL, &p.Currency, &p.Amount, &p.Status, &p.Locale, &p.Refunded)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Pay is the client paying on the sandbox's page: the payment is held
// (waiting_for_capture) and the provider notifies.
func (s *Sandbox) Pay(ctx context.Context, id string) error {
	return s.decide(ctx, id, WaitingForCapture)
}

// Decline is the client declining on the sandbox's page.
func (s *Sandbox) Decline(ctx context.Context, id string) error { return s.decide(ctx, id, Canceled) }

func (s *Sandbox) decide(ctx context.Context, id string, to Status) error {
	tag, err := s.Pool.Exec(ctx, `UPDATE sandbox_payments SET status = $2 WHERE id = $1 AND status = 'pending'`, id, to)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return &RejectedError{Code: "invalid_request", Message: "the payment is no longer pending"}
	}
	if s.Notify != nil {
		s.Notify(ctx, id)
	}
	return nil
}

func randomID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 20)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
