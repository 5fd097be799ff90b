package psp

import (
	"context"
	"errors"
)

// Receipt is a fiscal receipt (Russia's 54-FZ) as a payment, a refund or a
// settlement carries it: who it is for, what was sold, and for a
// settlement (a receipt of its own) what it settles.
type Receipt struct {
	Customer  ReceiptCustomer `json:"customer"`
	Items     []ReceiptItem   `json:"items"`
	TaxSystem int             `json:"tax_system_code,omitempty"` // 1..6; 0: not given
	// A settlement receipt's own fields (POST /receipts).
	Type        string       `json:"type,omitempty"` // "payment"
	PaymentID   string       `json:"payment_id,omitempty"`
	Send        bool         `json:"send,omitempty"`
	Settlements []Settlement `json:"settlements,omitempty"`
}

// ReceiptCustomer is where the receipt is sent: an e-mail or a phone
// (digits only, with the country code).
type ReceiptCustomer struct {
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
}

// ReceiptItem is one line of a receipt.
type ReceiptItem struct {
	Description    string `json:"description"` // at most 128 characters
	Quantity       string `json:"quantity"`    // "1.00"
	Amount         int64  `json:"amount"`      // minor units, for the whole line
	Currency       string `json:"currency"`
	VatCode        int    `json:"vat_code"`
	PaymentSubject string `json:"payment_subject"` // "service"
	PaymentMode    string `json:"payment_mode"`    // full_prepayment, partial_prepayment, full_payment
}

// Settlement is what a settlement receipt settles ("prepayment": the
// deposit paid before).
type Settlement struct {
	Type     string `json:"type"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Receipter is a provider that sends a receipt of its own (a settlement).
type Receipter interface {
	SendReceipt(ctx context.Context, key string, r Receipt) error
}

// ErrNoReceipts is a provider that sends no receipts.
var ErrNoReceipts = errors.New("payment provider: sends no receipts")

// SendReceipt sends r through p when it can (through any wrappers).
func SendReceipt(ctx context.Context, p Provider, key string, r Receipt) error {
	if s, ok := p.(Receipter); ok {
		return s.SendReceipt(ctx, key, r)
	}
	if u, ok := p.(interface{ Unwrap() Provider }); ok {
		return SendReceipt(ctx, u.Unwrap(), key, r)
	}
	return ErrNoReceipts
}
