package booking

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// A master's bookings as a calendar feed (iCalendar, which phones and
// calendar apps subscribe to) at a secret URL: the token is shown once,
// only its hash is kept, and a new token revokes the old.

// NewCalendarToken makes (or replaces) the master's calendar token.
// Staff. Errors: ErrNotFound, ErrConflict (the master is not active).
func (s *Service) NewCalendarToken(ctx context.Context, salonID, masterID int64) (string, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return "", err
	}
	token := newToken()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := activeMaster(ctx, tx, salonID, masterID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO master_calendars (master_id, salon_id, token_hash) VALUES ($1, $2, $3)
			ON CONFLICT (master_id) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = now()`,
			masterID, salonID, calendarHash(token))
		return err
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// RevokeCalendar ends the master's calendar feed. Errors: ErrNotFound.
func (s *Service) RevokeCalendar(ctx context.Context, salonID, masterID int64) error {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := masterExists(ctx, tx, salonID, masterID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM master_calendars WHERE salon_id = $1 AND master_id = $2`, salonID, masterID)
		return err
	})
}

// HasCalendar reports whether the master has a calendar feed.
func (s *Service) HasCalendar(ctx context.Context, salonID, masterID int64) (bool, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return false, err
	}
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM master_calendars WHERE salon_id = $1 AND master_id = $2)`,
		salonID, masterID).Scan(&ok)
	return ok, dbErr(err)
}

func calendarHash(token string) []byte {
	sum := sha256.Sum256([]byte("calendar\x00" + token))
	return sum[:]
}

// Feed is a master's calendar: their bookings from 30 days ago to a year
// ahead, at most MaxFeedEvents. Cancelled ones are left out but for those
// cancelled in the last FeedCancelledFor that have not started, so that
// calendars that keep events drop them (their clients' details are not
// for a feed: a calendar needs only that they are off).
type Feed struct {
	Salon    Salon
	Master   Master
	Bookings []Listing
}

// MasterFeed returns the calendar a token opens. Errors: ErrNotFound (no
// such token, or revoked).
func (s *Service) MasterFeed(ctx context.Context, token string) (*Feed, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	if token == "" || len(token) > 100 {
		return nil, fmt.Errorf("calendar: %w", ErrNotFound)
	}
	var salonID, masterID int64
	err := s.pool.QueryRow(ctx, `SELECT salon_id, master_id FROM master_calendars WHERE token_hash = $1`, calendarHash(token)).
		Scan(&salonID, &masterID)
	if isNoRows(err) {
		return nil, fmt.Errorf("calendar: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("calendar: %w", dbErr(err))
	}
	salon, err := getSalon(ctx, s.pool, salonID)
	if err != nil {
		return nil, err
	}
	f := &Feed{Salon: *salon}
	if err := s.pool.QueryRow(ctx, `SELECT id, salon_id, name, COALESCE(phone, ''), active FROM masters WHERE id = $1`, masterID).
		Scan(&f.Master.ID, &f.Master.SalonID, &f.Master.Name, &f.Master.Phone, &f.Master.Active); err != nil {
		return nil, fmt.Errorf("calendar: %w", dbErr(err))
	}
	if !f.Master.Active {
		return nil, fmt.Errorf("calendar of an inactive master: %w", ErrNotFound)
	}
	now := s.now()
	rows, err := s.pool.Query(ctx, `SELECT `+prefixed("b.", bookingColumns)+`, sv.name, m.name,
		       CASE WHEN b.status = 'cancelled' THEN '' ELSE c.name END,
		       CASE WHEN b.status = 'cancelled' THEN '' ELSE COALESCE(c.phone, '') END,
		       CASE WHEN b.status = 'cancelled' THEN '' ELSE c.notes END, `+listingPaidWithSQL+`
		FROM bookings b JOIN services sv ON sv.id = b.service_id JOIN masters m ON m.id = b.master_id
		JOIN clients c ON c.id = b.client_id
		WHERE b.master_id = $1 AND b.starts_at >= $2 AND b.starts_at < $3
		  AND (b.status <> 'cancelled' OR (b.updated_at > now() - $4::interval AND b.starts_at > $5))
		ORDER BY b.starts_at, b.id LIMIT $6`,
		masterID, now.Add(-30*24*time.Hour), now.Add(366*24*time.Hour), FeedCancelledFor.String(), now, MaxFeedEvents)
	if err != nil {
		return nil, fmt.Errorf("calendar: %w", dbErr(err))
	}
	f.Bookings, err = pgx.CollectRows(rows, scanListing)
	if err != nil {
		return nil, fmt.Errorf("calendar: %w", dbErr(err))
	}
	for i := range f.Bookings {
		if b := &f.Bookings[i]; b.Status == StatusCancelled {
			b.ContactName, b.Notes, b.CancelReason = "", "", ""
		}
	}
	return f, nil
}

// Bounds of a master's feed.
const (
	MaxFeedEvents    = 2000
	FeedCancelledFor = 7 * 24 * time.Hour
)

// BookingCalendarToken returns a token for a link to the booking's .ics
// file, for a caller who may see the booking (the bot gives it to a chat
// client, who holds no manage token). A new token replaces the last.
// Errors: ErrNotFound.
func (s *Service) BookingCalendarToken(ctx context.Context, bookingID int64) (string, error) {
	if _, err := s.BookingView(ctx, 0, bookingID); err != nil {
		return "", err
	}
	token := newToken()
	if _, err := s.pool.Exec(ctx, `UPDATE bookings SET calendar_token_hash = $2 WHERE id = $1`, bookingID, calendarHash(token)); err != nil {
		return "", fmt.Errorf("calendar link: %w", dbErr(err))
	}
	return token, nil
}

// BookingByCalendarToken returns the booking a calendar link opens.
// Errors: ErrNotFound.
func (s *Service) BookingByCalendarToken(ctx context.Context, token string) (*View, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	if token == "" || len(token) > 100 {
		return nil, fmt.Errorf("calendar: %w", ErrNotFound)
	}
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM bookings WHERE calendar_token_hash = $1`, calendarHash(token)).Scan(&id)
	if isNoRows(err) {
		return nil, fmt.Errorf("calendar: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("calendar: %w", dbErr(err))
	}
	return s.BookingView(As(ctx, BySystem()), 0, id)
}
