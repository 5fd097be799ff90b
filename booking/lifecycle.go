package booking

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"salon/i18n"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// CancelRequest asks to cancel a booking.
type CancelRequest struct {
	// SalonID, when not 0, is the salon the booking must be in.
	SalonID   int64
	BookingID int64
	Reason    string
	// ForClient, from staff: the client asked for it (by phone, at the
	// desk), so the salon's refund policy applies as to the client's own
	// cancellation at this time. Without it the salon cancels of its own
	// accord (the master is ill) and gives back all that was paid in
	// advance: the deposit, and what it reserved of a balance.
	ForClient bool
	// Stated: the request says whose cancellation it is (ForClient), as
	// the desk's form asks; the booking's history then records it. The
	// salon's own, so stated, tells the client the salon had to cancel,
	// and its time is not offered to the waitlist (it cannot be served).
	Stated bool
}

// Cancel cancels an active booking, freeing its time. Cancelling a cancelled
// booking returns it unchanged. The caller's credential decides whether they
// may (see Caller); clients only before the salon's cutoff. What was paid
// in advance is kept or given back by the salon's refund policy when the
// cancellation is the client's (see CancelRequest.ForClient).
// Errors: ErrNotFound (no such booking, or not one the caller may see),
// ErrInvalid, ErrTooLate (past the cutoff), ErrConflict (completed or
// no-show), ErrUnavailable.
func (s *Service) Cancel(ctx context.Context, r CancelRequest) (*Booking, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	r.Reason = cleanText(fe, "reason", r.Reason, MaxReasonLen, multiLine, false)
	if err := fe.err(); err != nil {
		return nil, err
	}
	now := s.now()
	var out *Booking
	var payments []int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		payments = nil
		b, salon, err := lockBooking(ctx, tx, caller, r.SalonID, r.BookingID)
		if err != nil {
			return err
		}
		if b.Status == StatusCancelled {
			out = b
			return nil
		}
		if err := mayChange(b, salon, caller, now); err != nil {
			return err
		}
		actor := caller.actor(b)
		byClient := caller.client() || caller.kind == callerStaff && r.ForClient
		if salon.keepsBalance(b, byClient, now) {
			// What the booking reserved of a balance is spent, not
			// released (the status trigger reads this).
			if _, err := tx.Exec(ctx, `SELECT set_config('salon.balance_keep', 'on', true)`); err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
		}
		bySalon := caller.kind == callerStaff && r.Stated && !r.ForClient
		if err := notOffered(ctx, tx, bySalon); err != nil {
			return err
		}
		detail := map[string]any{"reason": r.Reason}
		if caller.kind == callerStaff && r.Stated {
			detail["for_client"] = r.ForClient
		}
		out, err = setStatus(ctx, tx, b, StatusCancelled, r.Reason, actor, "cancelled", detail)
		if err != nil {
			return err
		}
		// The deposit: the one-time right to refund or release it is taken
		// here, before the provider is called.
		if payments, err = startRefund(ctx, tx, b, salon, byClient, now); err != nil {
			return err
		}
		n := notifyArgs(out, EventCancelled, actor, nil)
		n.BySalon = bySalon
		return s.enqueueNotice(ctx, tx, out, n, actor)
	})
	if err == nil {
		s.followUp(ctx, payments...)
	}
	return out, err
}

// RescheduleRequest asks to move a booking to another time, and optionally
// to another master who does the service.
type RescheduleRequest struct {
	// SalonID, when not 0, is the salon the booking must be in.
	SalonID   int64
	BookingID int64
	StartsAt  time.Time
	MasterID  int64 // 0: the same master
	// Items, for a visit, are its services in order with their masters (0:
	// any); none keeps its masters. A visit moves whole.
	Items []VisitItem
	// Segment moves only the segment BookingID of its visit (staff), to
	// StartsAt with MasterID (0: its own), when the visit stays whole: the
	// segment after the one before it and before the one after it.
	Segment bool
	// BySalon, from staff: the salon moves the booking of its own accord
	// (a master ill), not at the client's request. The client keeps the
	// price they booked (or the new master's, when lower) and the
	// deposit as it is, is told the salon had to change it, and the time
	// it frees is not offered to the waitlist (it cannot be served).
	BySalon bool
	// ForClient, from staff: the client asked for the move, as the desk
	// said (its history says so, as a cancellation's does).
	ForClient bool
}

// Reschedule moves an active booking. It is atomic: when the new time is
// taken the booking keeps its old time and the error offers alternatives
// (which count the booking's own old time as free), computed after the
// locks are released. Moving between masters locks both at once, in
// ascending id order, and takes the new master's price (and the service's
// current deposit and buffer), but for the salon's own move (BySalon).
// Clients are held to the cutoff (on the old time) and to the grid,
// notice and horizon (on the new one).
// Errors: ErrNotFound, ErrInvalid, ErrTooLate, ErrConflict (not active),
// *SlotTakenError, ErrUnavailable.
func (s *Service) Reschedule(ctx context.Context, r RescheduleRequest) (*Booking, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
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
	r.BySalon = r.BySalon && caller.kind == callerStaff
	switch {
	case r.Segment:
		return s.rescheduleSegment(ctx, caller, r, now)
	case len(r.Items) > 0:
		return s.rescheduleVisit(ctx, caller, r, now)
	}
	var out, old *Booking
	var refunds []int64
	master := r.MasterID
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		refunds = nil
		b, salon, err := lockBooking(ctx, tx, caller, r.SalonID, r.BookingID, r.MasterID)
		if err != nil {
			return err
		}
		old = b
		if len(b.Segments) > 1 {
			return errVisit
		}
		if err := mayChange(b, salon, caller, now); err != nil {
			return err
		}
		if err := notOffered(ctx, tx, r.BySalon); err != nil {
			return err
		}
		master = cmp.Or(r.MasterID, b.MasterID)
		if master == b.MasterID && r.StartsAt.Equal(b.StartsAt) {
			out = b
			return nil
		}
		// The masters' locks are held: read the new master's context.
		batch := &pgx.Batch{}
		bc := queueBookContext(batch, b.SalonID, master, r.StartsAt, "")
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf("reschedule: %w", err)
		}
		if err := s.resolve(ctx, tx, bc, b.SalonID, b.ServiceID, master); err != nil {
			return err
		}
		if err := bc.check(r.StartsAt, SourcePanel, caller.client(), now); err != nil {
			return err
		}
		price, deposit, buffer := b.Price, b.Deposit, b.BufferMin
		due := Money(-1) // (as it is)
		paid, err := paidWith(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		paid = paid.live()
		if err := paid.validOn(salon.Today(r.StartsAt)); err != nil {
			return err
		}
		if master != b.MasterID {
			price, deposit, buffer = bc.price, bc.svc.Deposit, bc.svc.BufferMin
			switch {
			case r.BySalon:
				// The salon's own move: the client's terms stay, but for
				// a lower price.
				price, deposit = min(price, b.Price), b.Deposit
			case paid != nil:
				// Paid (in part) with a balance: the new master's price
				// (a certificate's visit spends no more of it than that:
				// the rest goes back when it is settled), and the deposit
				// left to pay online stays.
				deposit = b.Deposit
			case deposit != b.Deposit && b.Deposit > 0:
				if deposit, due, refunds, err = reprice(ctx, tx, b, salon, deposit, now); err != nil {
					return err
				}
			}
		}
		actor := caller.actor(b)
		details, _ := json.Marshal(actor.details(movedDetails(b, r.StartsAt, master, &r)))
		var dueNow, dueWas Money
		batch = &pgx.Batch{}
		batch.Queue(`SAVEPOINT reschedule`)
		batch.Queue(`
			WITH b AS (
			    UPDATE bookings SET starts_at = $3, master_id = $4, duration_min = $5, price = $6, deposit = $7,
			           buffer_min = $8, deposit_due = CASE WHEN $13::numeric < 0 THEN deposit_due ELSE $13 END, updated_at = now()
			    WHERE salon_id = $1 AND id = $2
			    RETURNING `+bookingColumns+`, deposit_due, (SELECT deposit_due FROM bookings WHERE id = $2)
			), e AS (
			    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, channel, details)
			    SELECT $1, id, 'rescheduled', $9, $10, $11, $12 FROM b
			)
			SELECT * FROM b`, b.SalonID, b.ID, r.StartsAt, master, bc.durationMin, price, deposit, buffer,
			actor.Kind, actor.dbID(), actor.Channel, details, due,
		).QueryRow(func(row pgx.Row) error {
			nb, err := scanBooking(scanPrefix{row, []any{&dueNow, &dueWas}})
			out = nb
			return err
		})
		err = tx.SendBatch(ctx, batch).Close()
		if pgCode(err) == pgExclusionViolation {
			// The update alone is undone; the transaction then ends and
			// releases the locks before alternatives are computed.
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT reschedule`); err != nil {
				return fmt.Errorf("reschedule: %w", err)
			}
			return errTaken
		}
		if err != nil {
			return fmt.Errorf("reschedule: %w", err)
		}
		n := notifyArgs(out, EventRescheduled, actor, b)
		n.BySalon = r.BySalon
		if err := s.enqueueNotice(ctx, tx, out, n, actor); err != nil {
			return err
		}
		if dueNow > dueWas {
			// The client owes more of the deposit: they are asked for it.
			return s.enqueueChange(ctx, tx, out, EventDepositDue, actor, nil)
		}
		return nil
	})
	if errors.Is(err, errVisit) {
		return s.rescheduleVisit(ctx, caller, r, now)
	}
	if errors.Is(err, errTaken) {
		alts, err := s.alternatives(ctx, old.SalonID, old.ServiceID, master, r.StartsAt, now, old.ID, !caller.client())
		if err != nil {
			return nil, err
		}
		return nil, &SlotTakenError{Alternatives: notWhereItIs(alts, old)}
	}
	if err != nil {
		return nil, err
	}
	s.followUp(ctx, refunds...)
	return out, nil
}

// reprice is a moved booking's deposit when the move would change it (the
// new master's service asks another), and what of it the client will owe
// online (-1: as it is). While money of it is moving (a payment being made
// or captured, a release, a refund) nothing changes: the payment is of
// that amount. Otherwise the change is what moves: a larger deposit is
// owed online (TopUpOnline: the client's next payment is of what is owed)
// or taken at the visit (TopUpSalon: the deposit stays); a smaller one
// first owes less, then has what was paid online beyond it refunded,
// newest payment first (unless the salon keeps deposits). What was paid
// in the salon, or given back by staff, stays as it was. A booking with
// nothing paid online takes the new deposit as it is. It returns the
// deposit, what is owed, and the sessions to follow up.
func reprice(ctx context.Context, tx pgx.Tx, b *Booking, salon *Salon, deposit Money, now time.Time) (Money, Money, []int64, error) {
	ss, err := lockSessions(ctx, tx, b.ID)
	if err != nil {
		return 0, 0, nil, err
	}
	for _, m := range ss {
		if m.inFlight() {
			return b.Deposit, -1, nil, nil
		}
	}
	due, err := depositDue(ctx, tx, b.ID)
	if err != nil {
		return 0, 0, nil, err
	}
	held := heldOf(ss)
	if held == 0 && due == 0 {
		return deposit, 0, nil, nil // nothing paid online: the new terms
	}
	if deposit > b.Deposit {
		if salon.DepositTopUp == TopUpOnline {
			return deposit, due + deposit - b.Deposit, nil, nil
		}
		return b.Deposit, due, nil, nil // the rest of the price is paid at the visit
	}
	less := min(due, b.Deposit-deposit)
	back := min(b.Deposit-deposit-less, held)
	switch {
	case back == 0:
		return deposit, due - less, nil, nil
	case salon.RefundPolicy == RefundNever:
		return deposit + back, due - less, nil, nil // the salon keeps what was paid
	}
	ids, err := refundAcross(ctx, tx, ss, back, "the difference refunded: the booking moved to a smaller deposit", now)
	if errors.Is(err, ErrConflict) {
		return b.Deposit, -1, nil, nil // not refundable now: kept as it is
	}
	if err != nil {
		return 0, 0, nil, err
	}
	return deposit, due - less, ids, nil
}

// MarkCompleted records that a confirmed booking took place. Only staff and
// the system may, and only once it has started. Marking it again is a no-op.
// Errors: ErrNotFound, ErrForbidden (a client), ErrConflict (not confirmed,
// or not started).
func (s *Service) MarkCompleted(ctx context.Context, bookingID int64) (*Booking, error) {
	return s.markOutcome(ctx, bookingID, StatusCompleted)
}

// MarkNoShow records that the client did not come. Same rules as MarkCompleted.
func (s *Service) MarkNoShow(ctx context.Context, bookingID int64) (*Booking, error) {
	return s.markOutcome(ctx, bookingID, StatusNoShow)
}

func (s *Service) markOutcome(ctx context.Context, bookingID int64, to Status) (*Booking, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out *Booking
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b, _, err := lockBooking(ctx, tx, caller, 0, bookingID)
		if err != nil {
			return err
		}
		switch {
		case caller.client():
			return fmt.Errorf("clients cannot mark a booking %s: %w", to, ErrForbidden)
		case b.Status == to:
			out = b
			return nil
		case b.Status != StatusConfirmed:
			return conflict("booking %d is %s", b.ID, i18n.New(string(b.Status)))
		case now.Before(b.StartsAt):
			return conflict("booking %d has not started yet", b.ID)
		}
		out, err = setStatus(ctx, tx, b, to, "", caller.actor(b), string(to), nil)
		return err
	})
	return out, err
}

// ExpireHolds cancels pending bookings whose hold has expired, freeing their
// slots, and returns how many. Replicas may run it at once: each row is
// taken by one of them (SKIP LOCKED). Only the platform asks (ErrForbidden).
func (s *Service) ExpireHolds(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	now := s.now()
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// Heads only: a visit's segments follow their head.
		rows, err := tx.Query(ctx, `SELECT `+bookingColumns+` FROM bookings
			WHERE status = 'pending' AND hold_expires_at <= $1 AND visit_of IS NULL
			ORDER BY hold_expires_at LIMIT 500 FOR UPDATE SKIP LOCKED`, now)
		if err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		bks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Booking, error) { return scanBooking(r) })
		if err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		ids := make([]int64, len(bks))
		for i, b := range bks {
			ids[i] = b.ID
		}
		// Waitlist holds not taken: the offer expires, and the time
		// freed goes to the next in line; nobody had paid or booked, so
		// nobody is told.
		rows, err = tx.Query(ctx, `UPDATE waitlist_offers SET status = 'expired'
			WHERE booking_id = ANY($1) AND status IN ('held', 'expired') RETURNING booking_id`, ids)
		if err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		offered, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		for _, b := range bks {
			if slices.Contains(offered, b.ID) {
				if _, err := setStatus(ctx, tx, b, StatusCancelled, waitlistHoldReason, System, "waitlist_hold_expired", nil); err != nil {
					return err
				}
				n++
				continue
			}
			out, err := setStatus(ctx, tx, b, StatusCancelled, holdExpiredReason, System, "hold_expired", nil)
			if err != nil {
				return err
			}
			if err := s.enqueueChange(ctx, tx, out, EventHoldExpired, System, nil); err != nil {
				return err
			}
			n++
		}
		// A booking taken from the waiting list whose deposit did not
		// come: its client waits again, while their days last.
		if _, err := tx.Exec(ctx, `UPDATE waitlist_entries w SET status = 'waiting', booking_id = NULL, updated_at = now()
			FROM salons s WHERE s.id = w.salon_id AND w.booking_id = ANY($1) AND w.status = 'booked'
			  AND w.to_date >= ($2::timestamptz AT TIME ZONE s.timezone)::date`, ids, now); err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		// Whether a payment came just in time, or comes just too late,
		// matters now: its session is looked at again at once, and then
		// soon and more and more rarely, as a new one.
		if _, err := tx.Exec(ctx, `UPDATE payment_sessions SET next_check_at = $2, checks = 0, version = version + 1
			WHERE booking_id = ANY($1) AND status IN ('registering', 'registered', 'unknown')`, ids, now); err != nil {
			return fmt.Errorf("expire holds: %w", err)
		}
		return nil
	})
	if n > 0 {
		s.wakeMessages() // the time freed: offered to the waitlist at once
	}
	return n, err
}

// grantsSQL reads, for booking b, what callers may hold: the hash of its
// manage token, whether the identity (@ch, @ref) was proven to be its
// client's, and whether @tok is the hash of a live manage link of one of
// its messages (grantArgs names them).
const grantsSQL = `b.manage_token_hash,
	EXISTS (SELECT 1 FROM client_identities ci WHERE ci.salon_id = b.salon_id AND ci.client_id = b.client_id
	        AND ci.channel = @ch AND ci.external_id = @ref),
	EXISTS (SELECT 1 FROM booking_links l WHERE l.token_hash = @tok AND l.booking_id = b.id
	        AND l.action = 'manage' AND l.expires_at > @now)`

// grantArgs are grantsSQL's arguments for the caller, with args.
func grantArgs(caller Caller, args pgx.NamedArgs) pgx.NamedArgs {
	args["ch"], args["ref"] = caller.identity.Channel, caller.identity.ExternalID
	args["tok"], args["now"] = nil, caller.now
	if caller.now.IsZero() {
		args["now"] = time.Now()
	}
	if caller.kind == callerToken {
		args["tok"] = tokenHash(caller.token)
	}
	return args
}

// dest is where grantsSQL's columns scan to.
func (g *grants) dest() []any { return []any{&g.tokenHash, &g.verified, &g.link} }

// lockBooking finds a booking the caller may change, takes the locks of
// its visit's masters (and of extraMasters: all at once, ascending), and
// reads the visit FOR UPDATE with its salon. A segment of a visit stands
// for its visit: the visit's head is returned, with its Segments. A caller
// without a credential for it gets ErrNotFound before any lock is taken.
// A visit moved to other masters between the first read and the lock
// makes the whole transaction start again (errRetry), so locks are only
// ever taken in one order.
func lockBooking(ctx context.Context, tx pgx.Tx, caller Caller, salonID, bookingID int64, extraMasters ...int64) (*Booking, *Salon, error) {
	b, g, err := readBooking(ctx, tx, caller, salonID, bookingID, "")
	if err != nil {
		return nil, nil, err
	}
	if !b.Head() {
		bookingID = b.VisitID
		if b, g, err = readBooking(ctx, tx, caller, salonID, bookingID, ""); err != nil {
			return nil, nil, err
		}
	}
	if !caller.may(b, g) {
		return nil, nil, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
	}
	masters, err := visitMastersOf(ctx, tx, b)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range extraMasters {
		if m != 0 {
			masters = append(masters, m)
		}
	}
	if err := lockMasters(ctx, tx, masters...); err != nil {
		return nil, nil, err
	}
	locked, g, err := readBooking(ctx, tx, caller, salonID, bookingID, "FOR UPDATE OF b")
	if err != nil {
		return nil, nil, err
	}
	if !caller.may(locked, g) {
		return nil, nil, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
	}
	if locked.Segments, err = visitSegments(ctx, tx, locked, "FOR UPDATE"); err != nil {
		return nil, nil, err
	}
	for _, sg := range locked.Segments {
		if !slices.Contains(masters, sg.MasterID) {
			return nil, nil, errRetry
		}
	}
	salon, err := getSalon(ctx, tx, locked.SalonID)
	if err != nil {
		return nil, nil, err
	}
	return locked, salon, nil
}

// readBooking reads a booking (in salonID, when not 0) with its grants for
// the caller; lock is "" or a locking clause.
func readBooking(ctx context.Context, q querier, caller Caller, salonID, bookingID int64, lock string) (*Booking, grants, error) {
	var g grants
	b, err := scanBooking(scanPrefix{q.QueryRow(ctx, `SELECT `+prefixed("b.", bookingColumns)+`, `+grantsSQL+`
		FROM bookings b WHERE b.id = @id AND (@salon = 0 OR b.salon_id = @salon) `+lock,
		grantArgs(caller, pgx.NamedArgs{"id": bookingID, "salon": salonID})), g.dest()})
	if isNoRows(err) {
		return nil, g, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
	}
	if err != nil {
		return nil, g, fmt.Errorf("booking %d: %w", bookingID, err)
	}
	g.origin = b.Origin
	return b, g, nil
}

// mayChange checks that the caller may cancel or reschedule b now: it must
// be active, and clients are held to the salon's cutoff.
func mayChange(b *Booking, salon *Salon, caller Caller, now time.Time) error {
	if !b.Status.Active() {
		return conflict("booking %d is %s", b.ID, i18n.New(string(b.Status)))
	}
	if caller.client() && !now.Before(salon.ChangeableUntil(b)) {
		return tooLate("changes close %d hours before the start", salon.CutoffHours)
	}
	return nil
}

// ChangeableUntil is when clients can no longer cancel or move b themselves:
// the salon's cutoff before its start (a visit's, when b is a segment read
// with its visit's segments: its first service's).
func (s *Salon) ChangeableUntil(b *Booking) time.Time {
	start := b.StartsAt
	for _, sg := range b.Segments {
		if sg.StartsAt.Before(start) {
			start = sg.StartsAt
		}
	}
	return start.Add(-time.Duration(s.CutoffHours) * time.Hour)
}

// ClientMayChange reports whether the client may still cancel or move b
// themselves at now: it is active and the cutoff has not passed.
func (s *Salon) ClientMayChange(b *Booking, now time.Time) bool {
	return b.Status.Active() && now.Before(s.ChangeableUntil(b))
}

// setStatus moves b's visit (every segment) to status and records the
// event on each; it returns b as it now is.
func setStatus(ctx context.Context, tx pgx.Tx, b *Booking, to Status, reason string, actor Actor, action string,
	details map[string]any) (*Booking, error) {
	details = actor.details(details)
	details["from"] = b.Status
	dj, _ := json.Marshal(details)
	out, err := scanBooking(tx.QueryRow(ctx, `
		WITH b AS (
		    UPDATE bookings SET status = $3, cancel_reason = CASE WHEN $3 = 'cancelled' THEN $4 WHEN $3 = 'confirmed' THEN '' ELSE cancel_reason END,
		           hold_expires_at = CASE WHEN $3 = 'pending' THEN hold_expires_at END, updated_at = now()
		    WHERE salon_id = $1 AND (id = $10 OR visit_of = $10)
		    RETURNING `+bookingColumns+`
		), e AS (
		    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, channel, details)
		    SELECT $1, id, $5, $6, $7, $8, $9 FROM b
		)
		SELECT * FROM b WHERE id = $2`, b.SalonID, b.ID, to, reason, action, actor.Kind, actor.dbID(), actor.Channel, dj, b.visit()))
	if err != nil {
		return nil, fmt.Errorf("booking %d: set %s: %w", b.ID, to, err)
	}
	out.Segments = b.Segments
	for i := range out.Segments {
		out.Segments[i].Status = to
	}
	return out, nil
}

// notOffered, when bySalon, says the time the transaction frees is the
// salon's own (a master ill, the salon closed: it cannot be served): the
// waitlist is not offered it (the trigger's WHEN reads
// salon.not_offered).
func notOffered(ctx context.Context, tx pgx.Tx, bySalon bool) error {
	if !bySalon {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('salon.not_offered', 'on', true)`); err != nil {
		return fmt.Errorf("not offered: %w", err)
	}
	return nil
}

// notWhereItIs drops from a move's alternatives the place booking b is
// at (the search counts its own time as free).
func notWhereItIs(alts []Slot, b *Booking) []Slot {
	return slices.DeleteFunc(alts, func(sl Slot) bool { return sl.MasterID == b.MasterID && sl.Start.Equal(b.StartsAt) })
}

// movedDetails are a move's history details: from where to where, and
// who asked for it, as staff said: the salon of its own accord, or the
// client.
func movedDetails(b *Booking, to time.Time, master int64, r *RescheduleRequest) map[string]any {
	d := map[string]any{"from": b.StartsAt, "to": to, "from_master_id": b.MasterID, "to_master_id": master}
	switch {
	case r.BySalon:
		d["by_salon"] = true
	case r.ForClient:
		d["for_client"] = true
	}
	return d
}
