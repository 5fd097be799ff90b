package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// What reminders do, measured: nobody publishes it, so each salon sees its
// own. The bookings whose visit is over (come, missed, or cancelled) and
// that were reminded fall in three groups: those the client confirmed with
// a tap, those reminded and not confirmed, and the hold-out (a share the
// salon sets, reminded plainly, with no answers to tap). For each month,
// each group's no-show rate and late-cancellation rate (cancelled within
// the salon's cutoff of the start, by the client or at their request: a
// cancellation the desk said was the salon's own, a master ill, is not
// the client's).

// EffectGroup is a group of reminded bookings.
type EffectGroup string

// Effect groups.
const (
	EffectConfirmed   EffectGroup = "confirmed"   // the client confirmed, by a tap
	EffectUnconfirmed EffectGroup = "unconfirmed" // reminded with answers, not confirmed
	EffectHoldout     EffectGroup = "holdout"     // reminded plainly, with no answers
)

// EffectRow is one group's month.
type EffectRow struct {
	Month       Date // its first day
	Group       EffectGroup
	Bookings    int
	NoShows     int
	LateCancels int
}

// NoShowRate and LateCancelRate are shares of the group's bookings.
func (r EffectRow) NoShowRate() float64     { return share(r.NoShows, r.Bookings) }
func (r EffectRow) LateCancelRate() float64 { return share(r.LateCancels, r.Bookings) }

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// ReminderEffect returns, for the salon's last months (this one
// included), each group's bookings, no-shows and late cancellations, by
// month (newest first) and group (staff of the salon).
func (s *Service) ReminderEffect(ctx context.Context, salonID int64, months int) ([]EffectRow, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	salon, err := getSalon(ctx, s.pool, salonID)
	if err != nil {
		return nil, err
	}
	months = min(max(months, 1), 24)
	loc := salon.Location()
	today := salon.Today(s.now())
	first := Date{Year: today.Year, Month: today.Month, Day: 1}
	from := time.Date(first.Year, first.Month-time.Month(months-1), 1, 0, 0, 0, 0, loc)
	var out []EffectRow
	err = eachRow(ctx, s.pool, func(r pgx.Row) error {
		var e EffectRow
		var month time.Time
		if err := r.Scan(&month, &e.Group, &e.Bookings, &e.NoShows, &e.LateCancels); err != nil {
			return err
		}
		e.Month = Date{Year: month.Year(), Month: month.Month(), Day: 1}
		out = append(out, e)
		return nil
	}, `
		WITH b AS (
		    SELECT b.id, b.status, b.starts_at, date_trunc('month', b.starts_at AT TIME ZONE $4) AS month,
		           CASE WHEN bool_or(m.plain) THEN 'holdout'
		                WHEN b.client_confirmed_at IS NOT NULL THEN 'confirmed'
		                ELSE 'unconfirmed' END AS grp,
		           b.status = 'cancelled' AND coalesce((
		               SELECT e.at >= b.starts_at - make_interval(hours => $5) AND e.details->>'for_client' IS DISTINCT FROM 'false'
		               FROM booking_events e WHERE e.booking_id = b.id AND e.action = 'cancelled' ORDER BY e.id DESC LIMIT 1), false) AS late
		    FROM bookings b
		    JOIN messages m ON m.booking_id = b.id AND m.kind = 'reminder' AND m.state IN ('sent', 'delivered')
		    WHERE b.salon_id = $1 AND b.starts_at >= $2 AND b.starts_at < $3 AND b.status IN ('completed', 'no_show', 'cancelled')
		    GROUP BY b.id
		)
		SELECT month, grp, count(*), count(*) FILTER (WHERE status = 'no_show'),
		       count(*) FILTER (WHERE late)
		FROM b GROUP BY month, grp ORDER BY month DESC, grp`, salonID, from, s.now(), salon.Timezone, salon.CutoffHours)
	if err != nil {
		return nil, fmt.Errorf("reminder effect: %w", dbErr(err))
	}
	return out, nil
}
