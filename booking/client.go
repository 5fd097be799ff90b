package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Client is a person who books.
type Client struct {
	ID         int64
	SalonID    int64
	Name       string
	Phone      string // E.164 or empty
	TelegramID int64  // 0 when unknown
	Notes      string
}

// ClientInput identifies the client of a booking: by phone, by Telegram user
// id, or both. The client record is created on first booking and found again
// by either key afterwards.
type ClientInput struct {
	Name       string
	Phone      string
	TelegramID int64
}

// NormalizePhone returns phone in E.164 (+79991234567). It accepts spaces,
// dashes, dots and parentheses, a leading +, and the Russian national forms
// 8XXXXXXXXXX and a bare ten-digit 9XXXXXXXXX.
func NormalizePhone(phone string) (string, error) {
	var b strings.Builder
	plus := false
	for i, r := range strings.TrimSpace(phone) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			plus = true
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.' || unicode.IsSpace(r):
		default:
			return "", errors.New("a phone number has only digits, spaces, dashes and a leading +")
		}
	}
	d := b.String()
	switch {
	case plus:
	case len(d) == 11 && d[0] == '8':
		d = "7" + d[1:]
	case len(d) == 11 && d[0] == '7':
	case len(d) == 10 && d[0] == '9':
		d = "7" + d
	default:
		return "", errors.New("use the international format, like +7 999 123-45-67")
	}
	if len(d) < 8 || len(d) > 15 || d[0] == '0' {
		return "", errors.New("use the international format, like +7 999 123-45-67")
	}
	return "+" + d, nil
}

// normalize checks and cleans the input; fields are named with prefix.
func (c *ClientInput) normalize(fe fieldErrors, prefix string) {
	c.Name = strings.TrimSpace(c.Name)
	if len([]rune(c.Name)) > 100 {
		fe.add(prefix+"name", "too long (100 characters at most)")
	}
	if strings.ContainsFunc(c.Name, unicode.IsControl) {
		fe.add(prefix+"name", "must not contain control characters")
	}
	if c.Phone != "" {
		p, err := NormalizePhone(c.Phone)
		if err != nil {
			fe.add(prefix+"phone", err.Error())
		}
		c.Phone = p
	}
	if c.TelegramID < 0 {
		fe.add(prefix+"telegram_id", "must be positive")
	}
	if c.Phone == "" && c.TelegramID == 0 {
		fe.add(prefix+"phone", "required")
	}
	if c.Name == "" && c.TelegramID == 0 {
		fe.add(prefix+"name", "required")
	}
}

// Client returns a client of the salon. Errors: ErrNotFound.
func (s *Service) Client(ctx context.Context, salonID, id int64) (*Client, error) {
	return getClient(ctx, s.pool, `salon_id = $1 AND id = $2`, salonID, id)
}

// ClientByTelegram returns the salon's client with that Telegram user id.
// Errors: ErrNotFound.
func (s *Service) ClientByTelegram(ctx context.Context, salonID, telegramID int64) (*Client, error) {
	return getClient(ctx, s.pool, `salon_id = $1 AND telegram_id = $2`, salonID, telegramID)
}

func getClient(ctx context.Context, q querier, where string, args ...any) (*Client, error) {
	var c Client
	err := q.QueryRow(ctx, `SELECT id, salon_id, name, COALESCE(phone, ''), COALESCE(telegram_id, 0), notes
		FROM clients WHERE `+where, args...).Scan(&c.ID, &c.SalonID, &c.Name, &c.Phone, &c.TelegramID, &c.Notes)
	if isNoRows(err) {
		return nil, fmt.Errorf("client: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &c, nil
}
