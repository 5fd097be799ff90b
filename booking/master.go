package booking

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Master is a person clients book: a stylist, a barber, a nail artist.
type Master struct {
	ID         int64
	SalonID    int64
	Name       string
	Phone      string // E.164 or empty
	Active     bool
	ServiceIDs []int64 // services this master does
}

// Offer is a service a master does, with optional per-master terms.
type Offer struct {
	ServiceID   int64
	DurationMin int   // 0: the service's duration
	Price       Money // 0: the service's price
}

// normalize checks and cleans the master's name and phone (read in the
// salon's country).
func (m *Master) normalize(country string) error {
	fe := fieldErrors{}
	m.Name = cleanText(fe, "name", m.Name, MaxNameLen, oneLine, true)
	if strings.TrimSpace(m.Phone) != "" {
		p, err := NormalizePhone(m.Phone, country)
		if err != nil {
			fe.add("phone", err.Error())
		}
		m.Phone = p
	}
	return fe.err()
}

// CreateMaster adds an active master who does the given services.
// Errors: ErrNotFound (salon), ErrInvalid (a field; unknown service ids).
func (s *Service) CreateMaster(ctx context.Context, salonID int64, in Master, offers ...Offer) (*Master, error) {
	salon, err := s.salonAs(ctx, salonID, RoleOwner)
	if err != nil {
		return nil, err
	}
	if err := in.normalize(salon.Country); err != nil {
		return nil, err
	}
	in.SalonID, in.Active = salonID, true
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO masters (salon_id, name, phone) VALUES ($1, $2, NULLIF($3, '')) RETURNING id`,
			salonID, in.Name, in.Phone).Scan(&in.ID)
		switch {
		case pgCode(err) == pgUniqueViolation:
			return invalid("name", "a master with this name exists")
		case pgCode(err) == "23503":
			return fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("create master: %w", err)
		}
		return setOffers(ctx, tx, salonID, in.ID, offers)
	})
	if err != nil {
		return nil, err
	}
	for _, o := range offers {
		in.ServiceIDs = append(in.ServiceIDs, o.ServiceID)
	}
	return &in, nil
}

// SetOffers replaces the services a master does.
// Errors: ErrNotFound (master), ErrInvalid (unknown service ids, bad terms).
func (s *Service) SetOffers(ctx context.Context, salonID, masterID int64, offers []Offer) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := masterExists(ctx, tx, salonID, masterID); err != nil {
			return err
		}
		if err := lockMasters(ctx, tx, masterID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM master_services WHERE master_id = $1`, masterID); err != nil {
			return fmt.Errorf("set offers: %w", err)
		}
		return setOffers(ctx, tx, salonID, masterID, offers)
	})
}

func setOffers(ctx context.Context, q querier, salonID, masterID int64, offers []Offer) error {
	for i, o := range offers {
		field := fmt.Sprintf("services[%d]", i)
		if o.DurationMin != 0 && (o.DurationMin < 5 || o.DurationMin > 720) {
			return invalid(field, "duration must be between 5 and 720 minutes")
		}
		if o.Price < 0 {
			return invalid(field, "price must not be negative")
		}
		_, err := q.Exec(ctx, `
			INSERT INTO master_services (salon_id, master_id, service_id, duration_min, price)
			VALUES ($1, $2, $3, NULLIF($4, 0), NULLIF($5::numeric, 0))
			ON CONFLICT (master_id, service_id) DO UPDATE
			SET duration_min = EXCLUDED.duration_min, price = EXCLUDED.price`,
			salonID, masterID, o.ServiceID, o.DurationMin, o.Price)
		if pgCode(err) == "23503" {
			return unknown(field, fmt.Sprintf("no service %d in this salon", o.ServiceID))
		}
		if err != nil {
			return fmt.Errorf("set offers: %w", err)
		}
	}
	return nil
}

// Masters lists the salon's active masters by name; with serviceID > 0 only
// those who do that service.
func (s *Service) Masters(ctx context.Context, salonID, serviceID int64) ([]Master, error) {
	if err := mayRead(ctx, salonID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT m.id, m.salon_id, m.name, COALESCE(m.phone, ''), m.active,
		       COALESCE(array_agg(ms.service_id ORDER BY ms.service_id) FILTER (WHERE ms.service_id IS NOT NULL), '{}')
		FROM masters m
		LEFT JOIN master_services ms ON ms.master_id = m.id
		WHERE m.salon_id = $1 AND m.active
		GROUP BY m.id
		HAVING $2 = 0 OR $2 = ANY (array_agg(ms.service_id))
		ORDER BY m.name, m.id`, salonID, serviceID)
	if err != nil {
		return nil, fmt.Errorf("masters: %w", err)
	}
	defer rows.Close()
	var out []Master
	for rows.Next() {
		var m Master
		if err := rows.Scan(&m.ID, &m.SalonID, &m.Name, &m.Phone, &m.Active, &m.ServiceIDs); err != nil {
			return nil, fmt.Errorf("masters: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("masters: %w", err)
	}
	return out, nil
}
