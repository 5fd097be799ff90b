package booking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// View is a booking with what people need to read it: the salon, the names
// of the service, master and client, and who of them has Telegram.
type View struct {
	Booking
	Salon            Salon
	ServiceName      string
	MasterName       string
	ClientName       string
	ClientTelegramID int64
	MasterTelegramID int64
}

var viewQuery = `
	SELECT ` + prefixed("b.", bookingColumns) + `,
	       sv.name, m.name, c.name, COALESCE(c.telegram_id, 0), COALESCE(m.telegram_id, 0), ` + prefixed("s.", salonColumns) + `
	FROM bookings b
	JOIN services sv ON sv.id = b.service_id
	JOIN masters m ON m.id = b.master_id
	JOIN clients c ON c.id = b.client_id
	JOIN salons s ON s.id = b.salon_id`

// View returns a booking with its names. Errors: ErrNotFound.
func (s *Service) View(ctx context.Context, salonID, bookingID int64) (*View, error) {
	v, err := scanViewRow(s.pool.QueryRow(ctx, viewQuery+` WHERE b.salon_id = $1 AND b.id = $2`, salonID, bookingID))
	if isNoRows(err) {
		return nil, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("booking %d: %w", bookingID, err)
	}
	return v, nil
}

// TelegramBookings lists the active bookings, in every salon, of the
// clients with that Telegram user id that end after since, by start.
func (s *Service) TelegramBookings(ctx context.Context, telegramID int64, since time.Time) ([]View, error) {
	rows, err := s.pool.Query(ctx, viewQuery+`
		WHERE c.telegram_id = $1 AND b.status IN ('pending', 'confirmed') AND booking_slot_end(b.starts_at, b.duration_min) > $2
		ORDER BY b.starts_at, b.id LIMIT 20`, telegramID, since)
	if err != nil {
		return nil, fmt.Errorf("telegram bookings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (View, error) {
		v, err := scanViewRow(r)
		if err != nil {
			return View{}, err
		}
		return *v, nil
	})
	if err != nil {
		return nil, fmt.Errorf("telegram bookings: %w", err)
	}
	return out, nil
}

// scanViewRow scans the columns of viewQuery: the booking, the names, the salon.
func scanViewRow(row pgx.Row) (*View, error) {
	var v View
	rest := append([]any{&v.ServiceName, &v.MasterName, &v.ClientName, &v.ClientTelegramID, &v.MasterTelegramID},
		v.Salon.dest()...)
	b, err := scanBooking(scanPrefix{row, rest})
	if err != nil {
		return nil, err
	}
	if err := v.Salon.resolveZone(); err != nil {
		return nil, err
	}
	v.Booking = *b
	return &v, nil
}

// Salons lists salons by name, at most limit.
func (s *Service) Salons(ctx context.Context, limit int) ([]Salon, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+salonColumns+` FROM salons ORDER BY name, id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("salons: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Salon, error) {
		sal, err := scanSalon(r)
		if err != nil {
			return Salon{}, err
		}
		return *sal, nil
	})
	if err != nil {
		return nil, fmt.Errorf("salons: %w", err)
	}
	return out, nil
}

// LinkCodeTTL is how long a master's link code stays valid.
const LinkCodeTTL = 24 * time.Hour

// NewLinkCode returns a one-time code with which the master links their
// Telegram account (by sending "/link CODE" to the bot). Only its hash is
// stored. Errors: ErrNotFound (master).
func (s *Service) NewLinkCode(ctx context.Context, salonID, masterID int64) (string, time.Time, error) {
	if err := masterExists(ctx, s.pool, salonID, masterID); err != nil {
		return "", time.Time{}, err
	}
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	code := string(b)
	expires := s.now().Add(LinkCodeTTL)
	sum := sha256.Sum256([]byte(code))
	if _, err := s.pool.Exec(ctx, `INSERT INTO master_link_codes (code_hash, salon_id, master_id, expires_at) VALUES ($1, $2, $3, $4)`,
		sum[:], salonID, masterID, expires); err != nil {
		return "", time.Time{}, fmt.Errorf("link code: %w", err)
	}
	return code, expires, nil
}

// LinkMaster uses a link code: the master it was made for gets telegramID.
// A code works once. Errors: ErrNotFound (no such code, used or expired),
// ErrConflict (that Telegram account is another master's in the salon).
func (s *Service) LinkMaster(ctx context.Context, code string, telegramID int64) (*Master, error) {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	var m Master
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var salonID, masterID int64
		err := tx.QueryRow(ctx, `UPDATE master_link_codes SET used_at = $2
			WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING salon_id, master_id`, sum[:], s.now()).Scan(&salonID, &masterID)
		if isNoRows(err) {
			return fmt.Errorf("link code: %w", ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("link code: %w", err)
		}
		err = tx.QueryRow(ctx, `UPDATE masters SET telegram_id = $3 WHERE salon_id = $1 AND id = $2
			RETURNING id, salon_id, name, COALESCE(phone, ''), telegram_id, active`, salonID, masterID, telegramID).
			Scan(&m.ID, &m.SalonID, &m.Name, &m.Phone, &m.TelegramID, &m.Active)
		if pgCode(err) == pgUniqueViolation {
			return fmt.Errorf("this Telegram account is linked to another master: %w", ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("link master: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}
