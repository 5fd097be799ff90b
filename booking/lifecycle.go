package booking

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// CancelRequest asks to cancel a booking.
type CancelRequest struct {
	SalonID   int64
	BookingID int64
	Actor     Actor
	Reason    string
}

// Cancel cancels an active booking, freeing its time. Cancelling a cancelled
// booking returns it unchanged. A client may cancel only their own booking
// and only before the salon's cutoff.
// Errors: ErrNotFound, ErrInvalid (actor), ErrForbidden (another client's
// booking), ErrTooLate (past the cutoff), ErrConflict (completed or no-show).
func (s *Service) Cancel(ctx context.Context, r CancelRequest) (*Booking, error) {
	if !r.Actor.valid() {
		return nil, invalid("actor", "unknown actor")
	}
	r.Reason = strings.TrimSpace(r.Reason)
	if len([]rune(r.Reason)) > 500 {
		return nil, invalid("reason", "too long (500 characters at most)")
	}
	now := s.now()
	var out *Booking
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b, salon, err := lockBooking(ctx, tx, r.SalonID, r.BookingID, 0)
		if err != nil {
			return err
		}
		if err := mayChange(b, salon, r.Actor, now); err != nil {
			if b.Status == StatusCancelled {
				out = b
				return nil
			}
			return err
		}
		out, err = setStatus(ctx, tx, b, StatusCancelled, r.Reason, r.Actor, "cancelled", map[string]any{"reason": r.Reason})
		if err != nil {
			return err
		}
		return s.enqueueChange(ctx, tx, out, EventCancelled, r.Actor, nil)
	})
	return out, err
}

// RescheduleRequest asks to move a booking to another time, and optionally
// to another master who does the service.
type RescheduleRequest struct {
	SalonID   int64
	BookingID int64
	StartsAt  time.Time
	MasterID  int64 // 0: the same master
	Actor     Actor
}

// Reschedule moves an active booking. It is atomic: when the new time is
// taken the booking keeps its old time and the error offers alternatives
// (which count the booking's own old time as free). Moving between masters
// locks both in ascending id order. Clients are held to the cutoff (on the
// old time) and to the grid, notice and horizon (on the new one).
// Errors: ErrNotFound, ErrInvalid, ErrForbidden, ErrTooLate, ErrConflict
// (not active), *SlotTakenError.
func (s *Service) Reschedule(ctx context.Context, r RescheduleRequest) (*Booking, error) {
	fe := fieldErrors{}
	if !r.Actor.valid() {
		fe.add("actor", "unknown actor")
	}
	if r.StartsAt.IsZero() {
		fe.add("starts_at", "required")
	} else if r.StartsAt.Second() != 0 || r.StartsAt.Nanosecond() != 0 {
		fe.add("starts_at", "must be a whole minute")
	}
	if r.MasterID < 0 {
		fe.add("master_id", "must be positive")
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	now := s.now()
	var out *Booking
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b, salon, err := lockBooking(ctx, tx, r.SalonID, r.BookingID, r.MasterID)
		if err != nil {
			return err
		}
		if err := mayChange(b, salon, r.Actor, now); err != nil {
			return err
		}
		master := cmp.Or(r.MasterID, b.MasterID)
		if master == b.MasterID && r.StartsAt.Equal(b.StartsAt) {
			out = b
			return nil
		}
		// The master lock is already held: bookContext takes it again (a
		// no-op for a lock this transaction holds).
		bc, err := s.bookContext(ctx, tx, r.SalonID, b.ServiceID, master, r.StartsAt)
		if err != nil {
			return err
		}
		public := r.Actor.Kind == ActorClient
		if err := bc.check(r.StartsAt, SourcePanel, public, now); err != nil {
			return err
		}
		details, _ := json.Marshal(map[string]any{
			"from": b.StartsAt, "to": r.StartsAt, "from_master_id": b.MasterID, "to_master_id": master})
		batch := &pgx.Batch{}
		batch.Queue(`SAVEPOINT reschedule`)
		batch.Queue(`
			WITH b AS (
			    UPDATE bookings SET starts_at = $3, master_id = $4, duration_min = $5, updated_at = now()
			    WHERE salon_id = $1 AND id = $2
			    RETURNING `+bookingColumns+`
			), e AS (
			    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, details)
			    SELECT $1, id, 'rescheduled', $6, $7, $8 FROM b
			)
			SELECT * FROM b`, r.SalonID, b.ID, r.StartsAt, master, bc.durationMin, r.Actor.Kind, r.Actor.dbID(), details,
		).QueryRow(func(row pgx.Row) error {
			nb, err := scanBooking(row)
			out = nb
			return err
		})
		err = tx.SendBatch(ctx, batch).Close()
		if pgCode(err) == pgExclusionViolation {
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT reschedule`); err != nil {
				return fmt.Errorf("reschedule: %w", err)
			}
			alts, err := alternatives(ctx, tx, &bc.salon, &bc.svc, master, r.StartsAt, now, b.ID)
			if err != nil {
				return err
			}
			return &SlotTakenError{Alternatives: alts}
		}
		if err != nil {
			return fmt.Errorf("reschedule: %w", err)
		}
		return s.enqueueChange(ctx, tx, out, EventRescheduled, r.Actor, b)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MarkCompleted records that a confirmed booking took place. Only admins and
// the system may, and only once it has started. Marking it again is a no-op.
// Errors: ErrNotFound, ErrForbidden, ErrConflict (not confirmed, or not started).
func (s *Service) MarkCompleted(ctx context.Context, salonID, bookingID int64, actor Actor) (*Booking, error) {
	return s.markOutcome(ctx, salonID, bookingID, actor, StatusCompleted)
}

// MarkNoShow records that the client did not come. Same rules as MarkCompleted.
func (s *Service) MarkNoShow(ctx context.Context, salonID, bookingID int64, actor Actor) (*Booking, error) {
	return s.markOutcome(ctx, salonID, bookingID, actor, StatusNoShow)
}

func (s *Service) markOutcome(ctx context.Context, salonID, bookingID int64, actor Actor, to Status) (*Booking, error) {
	if !actor.valid() {
		return nil, invalid("actor", "unknown actor")
	}
	if actor.Kind == ActorClient {
		return nil, fmt.Errorf("clients cannot mark a booking %s: %w", to, ErrForbidden)
	}
	now := s.now()
	var out *Booking
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b, _, err := lockBooking(ctx, tx, salonID, bookingID, 0)
		if err != nil {
			return err
		}
		switch {
		case b.Status == to:
			out = b
			return nil
		case b.Status != StatusConfirmed:
			return fmt.Errorf("booking %d is %s: %w", b.ID, b.Status, ErrConflict)
		case now.Before(b.StartsAt):
			return fmt.Errorf("booking %d has not started yet: %w", b.ID, ErrConflict)
		}
		out, err = setStatus(ctx, tx, b, to, "", actor, string(to), nil)
		return err
	})
	return out, err
}

// ExpireHolds cancels pending bookings whose hold has expired, freeing their
// slots, and returns how many. Replicas may run it at once: each row is
// taken by one of them (SKIP LOCKED).
func (s *Service) ExpireHolds(ctx context.Context) (int, error) {
	now := s.now()
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+bookingColumns+` FROM bookings
			WHERE status = 'pending' AND hold_expires_at <= $1
			ORDER BY hold_expires_at LIMIT 500 FOR UPDATE SKIP LOCKED`, now)
		if err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		bks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Booking, error) { return scanBooking(r) })
		if err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		for _, b := range bks {
			out, err := setStatus(ctx, tx, b, StatusCancelled, "hold expired", System, "hold_expired", nil)
			if err != nil {
				return err
			}
			if err := s.enqueueChange(ctx, tx, out, EventHoldExpired, System, nil); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// lockBooking takes the lock of the booking's master (and of extraMaster,
// when not 0, in ascending order) and then reads the booking FOR UPDATE. A
// booking moved to another master between the first read and the lock is
// read again.
func lockBooking(ctx context.Context, tx pgx.Tx, salonID, bookingID, extraMaster int64) (*Booking, *Salon, error) {
	salon, err := getSalon(ctx, tx, salonID)
	if err != nil {
		return nil, nil, err
	}
	for range 5 {
		var master int64
		err := tx.QueryRow(ctx, `SELECT master_id FROM bookings WHERE salon_id = $1 AND id = $2`, salonID, bookingID).Scan(&master)
		if isNoRows(err) {
			return nil, nil, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("booking %d: %w", bookingID, err)
		}
		ids := []int64{master}
		if extraMaster != 0 && extraMaster != master {
			ids = append(ids, extraMaster)
		}
		if err := lockMasters(ctx, tx, ids...); err != nil {
			return nil, nil, err
		}
		b, err := scanBooking(tx.QueryRow(ctx, `SELECT `+bookingColumns+` FROM bookings
			WHERE salon_id = $1 AND id = $2 FOR UPDATE`, salonID, bookingID))
		if err != nil {
			return nil, nil, fmt.Errorf("booking %d: %w", bookingID, err)
		}
		if b.MasterID == master {
			return b, salon, nil
		}
	}
	return nil, nil, fmt.Errorf("booking %d keeps moving between masters: %w", bookingID, ErrConflict)
}

// mayChange checks that actor may cancel or reschedule b now.
func mayChange(b *Booking, salon *Salon, actor Actor, now time.Time) error {
	if actor.Kind == ActorClient && actor.ID != b.ClientID {
		return fmt.Errorf("booking %d belongs to another client: %w", b.ID, ErrForbidden)
	}
	if !b.Status.Active() {
		return fmt.Errorf("booking %d is %s: %w", b.ID, b.Status, ErrConflict)
	}
	if actor.Kind == ActorClient {
		cutoff := b.StartsAt.Add(-time.Duration(salon.CutoffHours) * time.Hour)
		if now.After(cutoff) {
			return fmt.Errorf("changes close %d hours before the start: %w", salon.CutoffHours, ErrTooLate)
		}
	}
	return nil
}

// setStatus moves b to status and records the event.
func setStatus(ctx context.Context, tx pgx.Tx, b *Booking, to Status, reason string, actor Actor, action string,
	details map[string]any) (*Booking, error) {
	if details == nil {
		details = map[string]any{}
	}
	details["from"] = b.Status
	dj, _ := json.Marshal(details)
	out, err := scanBooking(tx.QueryRow(ctx, `
		WITH b AS (
		    UPDATE bookings SET status = $3, cancel_reason = CASE WHEN $3 = 'cancelled' THEN $4 ELSE cancel_reason END,
		           hold_expires_at = CASE WHEN $3 = 'pending' THEN hold_expires_at END, updated_at = now()
		    WHERE salon_id = $1 AND id = $2
		    RETURNING `+bookingColumns+`
		), e AS (
		    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, details)
		    SELECT $1, id, $5, $6, $7, $8 FROM b
		)
		SELECT * FROM b`, b.SalonID, b.ID, to, reason, action, actor.Kind, actor.dbID(), dj))
	if err != nil {
		return nil, fmt.Errorf("booking %d: set %s: %w", b.ID, to, err)
	}
	return out, nil
}
