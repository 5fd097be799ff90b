package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Exports read a salon's data back out in a stable order (names, dates,
// phones; never ids, so two salons with the same data export the same
// bytes), streaming: fn gets one row at a time.

// EachShift calls fn with every shift of the salon, by master name, day
// and start.
func (s *Service) EachShift(ctx context.Context, salonID int64, fn func(master string, sh Shift) error) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	return each(ctx, s, `SELECT m.name, s.id, s.master_id, s.work_date, s.starts_at, s.ends_at, s.break_starts_at, s.break_ends_at
		FROM shifts s JOIN masters m ON m.id = s.master_id WHERE s.salon_id = $1 ORDER BY m.name, s.work_date, s.starts_at`,
		salonID, func(r pgx.Rows) error {
			var name string
			var out Shift
			var d time.Time
			sh, err := scanShift(r, &name, &out.ID, &out.MasterID, &d)
			if err != nil {
				return err
			}
			out.Date, out.Start, out.End, out.BreakStart, out.BreakEnd = DateOf(d), sh.start, sh.end, sh.breakStart, sh.breakEnd
			return fn(name, out)
		})
}

// EachClient calls fn with every client of the salon that has a phone, by
// phone, with their Telegram user id when the salon knows it.
func (s *Service) EachClient(ctx context.Context, salonID int64, fn func(c Client, telegram string) error) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	return each(ctx, s, `SELECT c.id, c.salon_id, c.name, c.phone, c.notes,
		COALESCE((SELECT min(external_id) FROM client_identities i WHERE i.client_id = c.id AND i.channel = 'telegram'), '')
		FROM clients c WHERE c.salon_id = $1 AND c.phone IS NOT NULL ORDER BY c.phone`, salonID, func(r pgx.Rows) error {
		var c Client
		var tg string
		if err := r.Scan(&c.ID, &c.SalonID, &c.Name, &c.Phone, &c.Notes, &tg); err != nil {
			return err
		}
		return fn(c, tg)
	})
}

// EachBooking calls fn with every booking of the salon that is not
// cancelled, by master name and start.
func (s *Service) EachBooking(ctx context.Context, salonID int64, fn func(l Listing) error) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	return each(ctx, s, `SELECT `+prefixed("b.", bookingColumns)+`, sv.name, m.name, c.name, COALESCE(c.phone, ''), c.notes,
		       b.visit_of IS NOT NULL OR EXISTS (SELECT 1 FROM bookings x WHERE x.visit_of = b.id)
		FROM bookings b JOIN services sv ON sv.id = b.service_id JOIN masters m ON m.id = b.master_id
		JOIN clients c ON c.id = b.client_id
		WHERE b.salon_id = $1 AND b.status <> 'cancelled' ORDER BY m.name, b.starts_at`, salonID, func(r pgx.Rows) error {
		var l Listing
		b, err := scanBooking(scanPrefix{r, []any{&l.ServiceName, &l.MasterName, &l.ClientName, &l.ClientPhone, &l.ClientNotes, &l.InVisit}})
		if err != nil {
			return err
		}
		l.Booking = *b
		return fn(l)
	})
}

// each streams the rows of a query to fn.
func each(ctx context.Context, s *Service, sql string, salonID int64, fn func(pgx.Rows) error) error {
	rows, err := s.pool.Query(ctx, sql, salonID)
	if err != nil {
		return fmt.Errorf("export: %w", dbErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export: %w", dbErr(err))
	}
	return nil
}
