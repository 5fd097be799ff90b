package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/i18n"
)

// The waitlist as the salon's staff see it: each day's entries with the
// offers made to them, an offer by hand, and the fill rate.

// WaitlistRow is an entry as the panel lists it: with who waits.
type WaitlistRow struct {
	WaitEntry
	ClientName string
	Phone      string
}

// Contact is the name, phone, e-mail and language the client gave when
// joining (the phone is the client record's).
func (e *WaitEntry) Contact() ClientInput { return e.contact }

// maxWaitlistRows bounds one day's list.
const maxWaitlistRows = 500

// WaitlistOn returns the entries of the salon whose days hold day: those
// waiting, and those booked, left or ended (to see who was offered what),
// in the order they joined, with their offers (staff of the salon).
func (s *Service) WaitlistOn(ctx context.Context, salonID int64, day Date) ([]WaitlistRow, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+entryColumns+`, c.name FROM waitlist_entries w JOIN clients c ON c.id = w.client_id
		WHERE w.salon_id = $1 AND w.from_date <= $2 AND w.to_date >= $2 ORDER BY w.id LIMIT $3`, salonID, day.dbDate(), maxWaitlistRows)
	if err != nil {
		return nil, fmt.Errorf("waitlist: %w", dbErr(err))
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (WaitlistRow, error) {
		var w WaitlistRow
		e, _, err := scanEntry(r, &w.ClientName)
		if err == nil {
			w.WaitEntry, w.Phone = *e, e.contact.Phone
		}
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("waitlist: %w", dbErr(err))
	}
	if len(list) == 0 {
		return list, nil
	}
	ids := make([]int64, len(list))
	at := map[int64]int{}
	for i, w := range list {
		ids[i], at[w.ID] = w.ID, i
	}
	offers, err := readOffers(ctx, s.pool, `entry_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("waitlist: %w", dbErr(err))
	}
	for _, o := range offers {
		list[at[o.EntryID]].Offers = append(list[at[o.EntryID]].Offers, o)
	}
	return list, nil
}

// OfferTime offers the time of master from start to one waiting entry, by
// hand (staff of the salon): as freed time is offered, by the salon's
// mode (held for the client, or open), and told to the client on their
// channels. Errors: ErrNotFound, ErrConflict (the entry no longer waits,
// or the time does not suit it: not free, not in its days or hours, not
// a service of the master, offered to it before, or it holds a time).
func (s *Service) OfferTime(ctx context.Context, entryID, masterID int64, start time.Time) (*WaitEntry, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	if caller.kind != callerStaff && caller.kind != callerSystem {
		return nil, fmt.Errorf("only staff offer times: %w", ErrForbidden)
	}
	var msgs []int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		e, err := s.entry(ctx, tx, caller, entryID, "FOR UPDATE OF w")
		if err != nil {
			return err
		}
		if e.Status != WaitWaiting {
			return conflict("this waitlist entry is %s", i18n.New(e.Status))
		}
		made, ids, err := s.offer(ctx, tx, e.SalonID, masterID, start, start.Add(time.Minute), s.now(), e.ID, freedTime{})
		if err != nil {
			return err
		}
		if made == 0 {
			return conflict("this time does not suit this client: it is not free for their services, not in their days or hours, or was offered to them before")
		}
		msgs = ids
		return nil
	})
	if err != nil {
		return nil, dbErr(err)
	}
	s.sendNow(ctx, msgs)
	return s.entry(ctx, s.pool, caller, entryID, "")
}

// fillDays is the fill rate's window: the last 30 days.
const fillDays = 30

// WaitlistFill is how much freed time the waitlist sold again.
type WaitlistFill struct {
	Days int
	// FreedMin: minutes of bookings' time freed while someone waited;
	// RebookedMin: minutes booked from the list's offers.
	FreedMin, RebookedMin int
	Waiting, Booked       int // entries waiting now; entries booked in the window
}

// Rate is the share of the freed minutes rebooked from the list (0 to 1).
func (f WaitlistFill) Rate() float64 {
	if f.FreedMin == 0 {
		return 0
	}
	return min(float64(f.RebookedMin)/float64(f.FreedMin), 1)
}

// WaitlistFillOf returns the salon's fill rate over the last 30 days
// (staff of the salon).
func (s *Service) WaitlistFillOf(ctx context.Context, salonID int64) (*WaitlistFill, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	f := &WaitlistFill{Days: fillDays}
	since := s.now().AddDate(0, 0, -fillDays)
	err := s.pool.QueryRow(ctx, `SELECT
		    COALESCE((SELECT sum(extract(epoch FROM ends_at - starts_at))::bigint / 60 FROM waitlist_freed
		              WHERE salon_id = $1 AND cause = 'booking' AND created_at >= $2), 0),
		    COALESCE((SELECT sum(extract(epoch FROM o.ends_at - o.starts_at))::bigint / 60 FROM waitlist_offers o
		              WHERE o.salon_id = $1 AND o.status = 'taken' AND o.created_at >= $2), 0),
		    (SELECT count(*) FROM waitlist_entries WHERE salon_id = $1 AND status = 'waiting'),
		    (SELECT count(*) FROM waitlist_entries WHERE salon_id = $1 AND status = 'booked' AND updated_at >= $2)`,
		salonID, since).Scan(&f.FreedMin, &f.RebookedMin, &f.Waiting, &f.Booked)
	if err != nil {
		return nil, fmt.Errorf("waitlist fill: %w", dbErr(err))
	}
	return f, nil
}
