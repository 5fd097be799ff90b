// Package psp is the payment providers behind one small interface: create
// a payment (two-stage: authorized first, captured later) with an
// idempotence key, get it, capture or cancel it, refund it. The booking core
// drives them (see booking's payments); they never touch a booking.
//
// Providers: Sandbox, built in, for development and demos; YooKassa (API
// v3). Errors say whether the outcome is known: ErrUnknown (a timeout, a
// lost answer, a 5xx: the call may or may not have happened; retry with the
// same key) or a *RejectedError (the provider refused; retrying will not
// help).
package psp

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is a payment's state at the provider (YooKassa's names).
type Status string

// Payment statuses.
const (
	Pending           Status = "pending"             // created; the client has not paid
	WaitingForCapture Status = "waiting_for_capture" // paid and held (authorized)
	Succeeded         Status = "succeeded"           // captured
	Canceled          Status = "canceled"            // declined, expired, or released
)

// Payment is a payment as the provider reports it.
type Payment struct {
	ID              string
	Status          Status
	Amount          int64 // minor units
	Currency        string
	ConfirmationURL string // where the client pays (while pending)
	Refunded        int64  // minor units refunded so far: by refunds that succeeded, not pending ones
	Metadata        map[string]string
}

// CreateRequest is a payment to create.
type CreateRequest struct {
	Amount      int64 // minor units
	Currency    string
	Description string
	ReturnURL   string // where the client comes back after paying
	// Locale is the payer's language ("ru", "en"): the provider's page
	// and its messages speak it ("": the provider's default).
	Locale   string
	Metadata map[string]string
	Receipt  *Receipt // the payment's fiscal receipt (nil: none)
}

// Refund is a refund as the provider reports it.
type Refund struct {
	ID        string
	Status    string // pending, succeeded, canceled
	Amount    int64
	CreatedAt time.Time // when the provider made it (zero: not said)
}

// Provider is a payment provider. Every method that changes something takes
// an idempotence key: the same key again returns the first call's result.
type Provider interface {
	Name() string
	Create(ctx context.Context, key string, r CreateRequest) (*Payment, error)
	Get(ctx context.Context, id string) (*Payment, error)
	Capture(ctx context.Context, key, id string, amount int64, currency string) (*Payment, error)
	Cancel(ctx context.Context, key, id string) (*Payment, error)
	// Refund returns amount of a captured payment; receipt (nil: none) is
	// the refund's fiscal receipt.
	Refund(ctx context.Context, key, paymentID string, amount int64, currency string, receipt *Receipt) (*Refund, error)
}

// Lister is a provider that lists its payments, newest first or not, in
// pages: those created since since, from cursor ("" for the first page);
// next is "" after the last page. Reconciliation reads it.
type Lister interface {
	List(ctx context.Context, since time.Time, cursor string) (page []Payment, next string, err error)
}

// KeyWindow is how long a provider remembers an idempotence key: the same
// call again within it returns the first call's result, after it is a new
// call (YooKassa: 24 hours). A call that may have happened is not repeated
// under its key once the window is near: what it made is read instead.
const KeyWindow = 24 * time.Hour

// RefundGetter is a provider that reads a refund by its id (where a
// pending refund is followed, and never made again).
type RefundGetter interface {
	GetRefund(ctx context.Context, id string) (*Refund, error)
}

// ErrCannotGetRefund is a provider that reads no refund by its id.
var ErrCannotGetRefund = errors.New("payment provider: reads no refund by its id")

// GetRefund reads refund id at p when it can (through any wrappers).
func GetRefund(ctx context.Context, p Provider, id string) (*Refund, error) {
	if g, ok := p.(RefundGetter); ok {
		return g.GetRefund(ctx, id)
	}
	if u, ok := p.(interface{ Unwrap() Provider }); ok {
		return GetRefund(ctx, u.Unwrap(), id)
	}
	return nil, ErrCannotGetRefund
}

// RefundLister is a provider that lists the refunds it made of a payment,
// whatever their state, in pages from cursor ("" for the first page); next
// is "" after the last page. A refund whose answer never came is found
// there (a payment's refunded amount counts only the refunds that
// succeeded: a pending one is in the list alone).
type RefundLister interface {
	ListRefunds(ctx context.Context, paymentID, cursor string) (page []Refund, next string, err error)
}

// ErrCannotListRefunds is a provider that lists no refunds of a payment.
var ErrCannotListRefunds = errors.New("payment provider: lists no refunds of a payment")

// ListRefunds lists p's refunds of payment paymentID when it can (through
// any wrappers).
func ListRefunds(ctx context.Context, p Provider, paymentID, cursor string) ([]Refund, string, error) {
	if l, ok := p.(RefundLister); ok {
		return l.ListRefunds(ctx, paymentID, cursor)
	}
	if u, ok := p.(interface{ Unwrap() Provider }); ok {
		return ListRefunds(ctx, u.Unwrap(), paymentID, cursor)
	}
	return nil, "", ErrCannotListRefunds
}

// ErrCannotList is a provider that keeps no list to read.
var ErrCannotList = errors.New("payment provider: lists no payments")

// List lists p's payments when it can (through any wrappers).
func List(ctx context.Context, p Provider, since time.Time, cursor string) ([]Payment, string, error) {
	if l, ok := p.(Lister); ok {
		return l.List(ctx, since, cursor)
	}
	if u, ok := p.(interface{ Unwrap() Provider }); ok {
		return List(ctx, u.Unwrap(), since, cursor)
	}
	return nil, "", ErrCannotList
}

// ErrUnknown says the outcome of a call is not known (a timeout, a lost
// answer, a server error): it may have happened. Retry with the same key.
var ErrUnknown = errors.New("payment provider: outcome unknown")

// RejectedError is the provider refusing a request; retrying will not help.
type RejectedError struct {
	Code    string
	Message string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("payment provider refused: %s %s", e.Code, e.Message)
}

// IsRejected reports whether err is the provider refusing.
func IsRejected(err error) bool {
	var r *RejectedError
	return errors.As(err, &r)
}
