package booking

import (
	"context"
	"fmt"
	"net/mail"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Client is a person who books, as the salon knows them: one record per
// phone number in a salon.
type Client struct {
	ID      int64
	SalonID int64
	Name    string
	Phone   string // E.164, or empty
	Notes   string
}

// ClientInput is who a booking is for, as given with it. The client record
// is found by phone (or created); a booking never renames an existing
// record, and the name given is kept on the booking itself.
type ClientInput struct {
	Name  string
	Phone string
	// Email is optional: where this booking's messages go (see
	// Booking.ContactEmail).
	Email string
	// Lang is the language the client writes in ("ru" or "en"; anything
	// else: the salon's): the booking's messages are in it.
	Lang string
	// Verified says the caller's chat channel vouched that Phone is the
	// caller's own (a Telegram contact shared by its owner). Only then does
	// the caller's identity join the client record: from then on it sees
	// and may change every booking of that client, and pay with that
	// client's package by its id, no code asked. A typed phone is never
	// verified: it books, and reveals nothing.
	Verified bool
}

// normalize checks and cleans the input for a salon in region; fields are
// named with prefix.
func (c *ClientInput) normalize(fe fieldErrors, prefix, region string) {
	c.Name = cleanText(fe, prefix+"name", c.Name, MaxNameLen, oneLine, true)
	p, err := ClientPhone(c.Phone, region)
	if err != nil && c.Verified {
		p, err = VouchedPhone(c.Phone) // the channel has seen it: possible will do
	}
	if err != nil {
		fe.addErr(prefix+"phone", err)
	}
	c.Phone = p
	if c.Email = strings.ToLower(strings.TrimSpace(c.Email)); c.Email != "" {
		if a, err := mail.ParseAddress(c.Email); err != nil || a.Address != c.Email || len(c.Email) > MaxEmailLen {
			fe.add(prefix+"email", "not an email address")
		}
	}
	if c.Lang != "ru" && c.Lang != "en" {
		c.Lang = ""
	}
}

// MaxEmailLen is the longest e-mail address (RFC 5321's path).
const MaxEmailLen = 254

// Client returns a client of the salon, to its staff. Errors: ErrNotFound,
// ErrForbidden (not staff).
func (s *Service) Client(ctx context.Context, salonID, id int64) (*Client, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	return getClient(ctx, s.pool, `salon_id = $1 AND id = $2`, salonID, id)
}

// ClientByPhone returns the salon's client with the phone, read however it
// is typed in the salon's country, to its staff (the panel fills in a known
// client's name). Errors: ErrNotFound (none, or not a phone), ErrForbidden.
func (s *Service) ClientByPhone(ctx context.Context, salonID int64, phone string) (*Client, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	p, err := NormalizePhone(phone, salon.Country)
	if err != nil {
		return nil, fmt.Errorf("client by phone: %w", ErrNotFound)
	}
	return getClient(ctx, s.pool, `salon_id = $1 AND phone = $2`, salonID, p)
}

// IdentityClient returns the client that the calling chat identity was
// proven to be in the salon (its own record: the person behind it shared
// it). Errors: ErrNotFound (none), ErrForbidden (not a chat identity).
func (s *Service) IdentityClient(ctx context.Context, salonID int64) (*Client, error) {
	id, err := chatIdentity(ctx)
	if err != nil {
		return nil, err
	}
	return getClient(ctx, s.pool, `salon_id = $1 AND id = (SELECT client_id FROM client_identities
		WHERE salon_id = $1 AND channel = $2 AND external_id = $3)`, salonID, id.Channel, id.ExternalID)
}

func getClient(ctx context.Context, q querier, where string, args ...any) (*Client, error) {
	var c Client
	err := q.QueryRow(ctx, `SELECT id, salon_id, name, COALESCE(phone, ''), notes
		FROM clients WHERE `+where, args...).Scan(&c.ID, &c.SalonID, &c.Name, &c.Phone, &c.Notes)
	if isNoRows(err) {
		return nil, fmt.Errorf("client: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("client: %w", dbErr(err))
	}
	return &c, nil
}

// clientIdentities returns the chat identities a client was proven to have.
func clientIdentities(ctx context.Context, q querier, salonID, clientID int64) ([]Identity, error) {
	rows, err := q.Query(ctx, `SELECT channel, external_id FROM client_identities
		WHERE salon_id = $1 AND client_id = $2 ORDER BY channel, external_id`, salonID, clientID)
	if err != nil {
		return nil, fmt.Errorf("client identities: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Identity, error) {
		var id Identity
		err := r.Scan(&id.Channel, &id.ExternalID)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("client identities: %w", err)
	}
	return out, nil
}

// clientByPhone returns the salon's client of c's phone, made now when
// there is none (one without a name yet gets c's).
func clientByPhone(ctx context.Context, q querier, salonID int64, c ClientInput) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO clients (salon_id, name, phone) VALUES ($1, $2, $3)
		ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET
		    name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END
		RETURNING id`, salonID, c.Name, c.Phone).Scan(&id)
	return id, err
}
