// Package sms is the SMS providers behind one small interface: send a text
// to a phone, and ask what became of it. The message layer drives them; they
// never touch a booking.
//
// Providers: SMSRU (SMS.ru's HTTP API, https://sms.ru/api) and Log, which
// writes what it would send (development). Errors say whether the outcome
// is known: ErrNotSent (the provider could not be reached, or answered that
// it could not take the text now: sending again is safe), ErrUnknown (a
// timeout, a lost or unreadable answer: the text may or may not have gone;
// the caller decides, and never sends it twice blindly) or a
// *RejectedError (the provider refused: a bad number, no money).
package sms

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Provider sends texts.
type Provider interface {
	// Send sends text to phone (E.164) and returns the provider's id of
	// the message.
	Send(ctx context.Context, phone, text string) (string, error)
	// Status reports what became of a message sent before.
	Status(ctx context.Context, id string) (Delivery, error)
}

// Delivery is what became of a message.
type Delivery string

// Deliveries.
const (
	InProgress  Delivery = "in_progress" // queued or on its way
	Delivered   Delivery = "delivered"
	Undelivered Delivery = "undelivered" // expired, refused by the operator, unreachable
)

// ErrUnknown: the provider did not say what happened (a timeout, a lost
// connection, an answer that did not parse).
var ErrUnknown = errors.New("sms provider: outcome unknown")

// ErrNotSent: the provider took nothing (it could not be reached, or
// answered 503 or 429): sending again is safe.
var ErrNotSent = errors.New("sms provider: not sent")

// RejectedError is a provider's refusal: sending again will not help.
type RejectedError struct {
	Code int    // the provider's status code
	Text string // and its words
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("sms provider refused (%d): %s", e.Code, e.Text)
}

// IsRejected reports a refusal.
func IsRejected(err error) bool {
	var r *RejectedError
	return errors.As(err, &r)
}

// Segments is how many parts an SMS of text takes, and whether it is sent
// as UCS-2 (any character outside GSM 03.38, Cyrillic included: 70
// characters, 67 a part when split) rather than GSM-7 (160, 153).
func Segments(text string) (parts int, ucs2 bool) {
	n := 0
	for _, r := range text {
		switch {
		case strings.ContainsRune(gsmExtended, r):
			n += 2 // an escape and the character
		case strings.ContainsRune(gsmBasic, r):
			n++
		default:
			ucs2 = true
		}
	}
	if ucs2 {
		n = utf8.RuneCountInString(text)
		for _, r := range text {
			if r > 0xFFFF {
				n++ // a surrogate pair
			}
		}
		return split(n, 70, 67), true
	}
	return split(n, 160, 153), false
}

func split(n, one, part int) int {
	switch {
	case n == 0:
		return 0
	case n <= one:
		return 1
	}
	return (n + part - 1) / part
}

// The GSM 03.38 alphabet: its basic set, and the extension table's
// characters (each sent as an escape and a character).
const (
	gsmBasic    = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExtended = "^{}\\[~]|€\f"
)

// Log is a provider for development: it logs what it would send and says
// every message was delivered.
type Log struct {
	Logger *slog.Logger
	n      atomic.Int64
}

// Send logs the text, its links' tokens hidden (a log grants nothing).
func (l *Log) Send(_ context.Context, phone, text string) (string, error) {
	parts, _ := Segments(text)
	l.Logger.Info("sms (not sent: SMS_PROVIDER=log)", "to", phone, "parts", parts, "text", tokenRE.ReplaceAllString(text, "$1…"))
	return fmt.Sprintf("log-%d", l.n.Add(1)), nil
}

// tokenRE finds the token of a one-tap link in a text.
var tokenRE = regexp.MustCompile(`(/a/)[A-Za-z0-9_-]{22}`)

// Status says delivered.
func (l *Log) Status(context.Context, string) (Delivery, error) { return Delivered, nil }
