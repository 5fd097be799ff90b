package booking

import (
	"context"
	"fmt"
	"strconv"
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
	// Terms are what a client of this master gets for each service the
	// master does: the master's own duration and price, else the
	// service's (filled by Masters, in the order of ServiceIDs).
	Terms []Offer
}

// TermRange is the least and the most a service costs and lasts over the
// masters who do it.
type TermRange struct {
	MinPrice, MaxPrice       Money
	MinDuration, MaxDuration int
}

// Durations is the range of minutes as people read it: 60, or 45–90.
func (r TermRange) Durations() string { return minutesRange(r.MinDuration, r.MaxDuration) }

// Stays is the range of minutes a client of sv stays, as people read it:
// its durations with a processing time's wait and finish after the work.
func (r TermRange) Stays(sv *SalonService) string {
	return minutesRange(sv.StayMin(r.MinDuration), sv.StayMin(r.MaxDuration))
}

func minutesRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
}

// TermRanges is each service's range over masters (as Masters reads them,
// with their Terms).
func TermRanges(masters []Master) map[int64]TermRange {
	out := map[int64]TermRange{}
	for _, m := range masters {
		for _, o := range m.Terms {
			r, ok := out[o.ServiceID]
			if !ok {
				r = TermRange{o.Price, o.Price, o.DurationMin, o.DurationMin}
			}
			r.MinPrice, r.MaxPrice = min(r.MinPrice, o.Price), max(r.MaxPrice, o.Price)
			r.MinDuration, r.MaxDuration = min(r.MinDuration, o.DurationMin), max(r.MaxDuration, o.DurationMin)
			out[o.ServiceID] = r
		}
	}
	return out
}

// TermsOf is what a client of the master gets for the service (ok false
// when the master does not do it, or Terms were not read).
func (m *Master) TermsOf(serviceID int64) (Offer, bool) {
	for _, o := range m.Terms {
		if o.ServiceID == serviceID {
			return o, true
		}
	}
	return Offer{}, false
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
			fe.addErr("phone", err)
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
			return Invalid("name", "a master with this name exists")
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
			return Invalid(field, "duration must be between 5 and 720 minutes")
		}
		if o.Price < 0 {
			return Invalid(field, "price must not be negative")
		}
		_, err := q.Exec(ctx, `
			INSERT INTO master_services (salon_id, master_id, service_id, duration_min, price)
			VALUES ($1, $2, $3, NULLIF($4, 0), NULLIF($5::numeric, 0))
			ON CONFLICT (master_id, service_id) DO UPDATE
			SET duration_min = EXCLUDED.duration_min, price = EXCLUDED.price`,
			salonID, masterID, o.ServiceID, o.DurationMin, o.Price)
		if pgCode(err) == "23503" {
			return unknown(field, "no service %d in this salon", o.ServiceID)
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
		       COALESCE(array_agg(ms.service_id ORDER BY ms.service_id) FILTER (WHERE ms.service_id IS NOT NULL), '{}'),
		       COALESCE(array_agg(COALESCE(ms.duration_min, sv.duration_min)::bigint ORDER BY ms.service_id) FILTER (WHERE ms.service_id IS NOT NULL), '{}'),
		       COALESCE(array_agg(COALESCE(ms.price, sv.price) ORDER BY ms.service_id) FILTER (WHERE ms.service_id IS NOT NULL), '{}')
		FROM masters m
		LEFT JOIN master_services ms ON ms.master_id = m.id
		LEFT JOIN services sv ON sv.id = ms.service_id
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
		var durs []int64
		var prices []Money
		if err := rows.Scan(&m.ID, &m.SalonID, &m.Name, &m.Phone, &m.Active, &m.ServiceIDs, &durs, &prices); err != nil {
			return nil, fmt.Errorf("masters: %w", err)
		}
		m.Terms = make([]Offer, len(m.ServiceIDs))
		for i, id := range m.ServiceIDs {
			m.Terms[i] = Offer{ServiceID: id, DurationMin: int(durs[i]), Price: prices[i]}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("masters: %w", err)
	}
	return out, nil
}
