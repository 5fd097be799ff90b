package booking

import (
	"context"
	"fmt"
	"strings"
)

// SalonService is something a salon sells: a haircut, a manicure. (The type is
// not called Service because Service is the booking core itself.)
type SalonService struct {
	ID          int64
	SalonID     int64
	Name        string
	DurationMin int   // how long the client is in the chair
	BufferMin   int   // minutes kept free after it (cleaning); not shown to clients
	Price       Money // default price; a master may have another
	Deposit     Money // prepaid part; 0 when none is required
	Active      bool
}

func (sv *SalonService) normalize() error {
	sv.Name = strings.TrimSpace(sv.Name)
	fe := fieldErrors{}
	if sv.Name == "" {
		fe.add("name", "required")
	} else if len(sv.Name) > 200 {
		fe.add("name", "too long")
	}
	checkRange(fe, "duration_min", sv.DurationMin, 5, 720)
	checkRange(fe, "buffer_min", sv.BufferMin, 0, 240)
	if sv.Price < 0 {
		fe.add("price", "must not be negative")
	}
	if sv.Deposit < 0 {
		fe.add("deposit", "must not be negative")
	} else if sv.Deposit > sv.Price {
		fe.add("deposit", "must not exceed the price")
	}
	return fe.err()
}

// CreateService adds a service to the salon's menu (active).
// Errors: ErrNotFound (salon), ErrInvalid (a field, or the name is taken).
func (s *Service) CreateService(ctx context.Context, salonID int64, in SalonService) (*SalonService, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	in.SalonID, in.Active = salonID, true
	err := s.pool.QueryRow(ctx, `
		INSERT INTO services (salon_id, name, duration_min, buffer_min, price, deposit)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		salonID, in.Name, in.DurationMin, in.BufferMin, in.Price, in.Deposit).Scan(&in.ID)
	switch {
	case pgCode(err) == pgUniqueViolation:
		return nil, invalid("name", "a service with this name exists")
	case pgCode(err) == "23503":
		return nil, fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("create service: %w", err)
	}
	return &in, nil
}

// Services lists the salon's active services by name.
func (s *Service) Services(ctx context.Context, salonID int64) ([]SalonService, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, salon_id, name, duration_min, buffer_min, price, deposit, active
		FROM services WHERE salon_id = $1 AND active ORDER BY name, id`, salonID)
	if err != nil {
		return nil, fmt.Errorf("services: %w", err)
	}
	defer rows.Close()
	var out []SalonService
	for rows.Next() {
		var sv SalonService
		if err := rows.Scan(&sv.ID, &sv.SalonID, &sv.Name, &sv.DurationMin, &sv.BufferMin, &sv.Price,
			&sv.Deposit, &sv.Active); err != nil {
			return nil, fmt.Errorf("services: %w", err)
		}
		out = append(out, sv)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("services: %w", err)
	}
	return out, nil
}
