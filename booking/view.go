package booking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/i18n"
)

// View is a booking as its caller may read it: the salon, the names of the
// service and master, and what the caller may still do with it.
type View struct {
	Booking
	Salon       Salon
	ServiceName string
	MasterName  string
	// ClientName is the client record's name; only staff and the system
	// read it (a client sees the name given with the booking, ContactName).
	ClientName string
	// ChangeableUntil is when clients can no longer cancel or move it.
	ChangeableUntil time.Time
	// Changeable says whether the caller may cancel or move it now.
	Changeable bool
	// DepositDue is what the client still owes online of the deposit of a
	// confirmed booking moved to a larger one (a top-up; 0: nothing).
	DepositDue Money
	// CancelKeeps is what the caller cancelling now would leave of the
	// package or certificate it is paid with, by the salon's refund
	// policy (units; 0: all of it goes back); for staff, cancelling at
	// the client's request (CancelRequest.ForClient).
	CancelKeeps int64
	// Prepaid is what the salon holds of the deposit paid online for the
	// booking (for its visit): paid or authorized, less what was, or is
	// being, refunded.
	Prepaid Money
	// CancelKeepsPrepaid says whether the caller cancelling now would
	// leave Prepaid to the salon, by its refund policy (else it is
	// refunded, or released when not yet captured); for staff, as
	// CancelKeeps.
	CancelKeepsPrepaid bool
	// CancelledBySalon says the booking (its visit) was cancelled by the
	// salon of its own accord, as the desk said (a master ill).
	CancelledBySalon bool
	// PaidOnline says the client paid, or authorized, something online
	// for the booking (its visit), whether or not it was since refunded
	// or released.
	PaidOnline bool
	// Parts name the services and masters of a visit's Segments, in
	// their order (BookingView; nil for a booking of one service).
	Parts []Part
	// offer is the waitlist offer a message shows as this view (its
	// Booking the time offered, ID 0), nil for a booking.
	offer *WaitOffer
}

// Part names a segment of a visit: its service and master.
type Part struct{ ServiceName, MasterName string }

// Segment is the segment id of v's visit, and its names (false: v is not
// a visit read with its names, or id is none of its segments).
func (v *View) Segment(id int64) (*Booking, Part, bool) {
	i := slices.IndexFunc(v.Segments, func(sg Booking) bool { return sg.ID == id })
	if i < 0 || i >= len(v.Parts) {
		return nil, Part{}, false
	}
	return &v.Segments[i], v.Parts[i], true
}

// PartMoved says in lang, in the notice of a move of one service of v's
// visit (change.Segment), which service moved and where to: "Colour now
// starts at 14:00 (was 13:00), with Boris" ("": not such a move, or v not
// read with its parts).
func (v *View) PartMoved(change NotifyArgs, lang string) string {
	sg, part, ok := v.Segment(change.Segment)
	if change.Segment == 0 || !ok {
		return ""
	}
	loc := v.Salon.Location()
	now, was := i18n.Clock(sg.StartsAt.In(loc)), i18n.Clock(change.FromStartsAt.In(loc))
	if day := DateOf(sg.StartsAt.In(loc)); day != DateOf(change.FromStartsAt.In(loc)) || day != DateOf(v.StartsAt.In(loc)) {
		// (Another day than it was, or than the visit's start.)
		now, was = i18n.When(lang, sg.StartsAt, loc), i18n.When(lang, change.FromStartsAt, loc)
	}
	moved, other := !change.FromStartsAt.Equal(sg.StartsAt), change.FromMasterID != sg.MasterID
	var t i18n.Text
	switch {
	case moved && other:
		t = i18n.New("%s now starts at %s (was %s), with %s.", part.ServiceName, now, was, part.MasterName)
	case other:
		t = i18n.New("%s is now with %s.", part.ServiceName, part.MasterName)
	case moved:
		t = i18n.New("%s now starts at %s (was %s).", part.ServiceName, now, was)
	default:
		// Where it was again (moved back before the notice went): as it is.
		t = i18n.New("%s: %s, with %s.", part.ServiceName, now, part.MasterName)
	}
	return t.In(lang)
}

// Offer is the waitlist offer the view shows (nil for a booking).
func (v *View) Offer() *WaitOffer { return v.offer }

// Owed is what the client owes online of the booking's deposit now: a
// pending booking's deposit, or what a confirmed one moved to a larger
// deposit still owes of it (0: nothing).
func (v *View) Owed() Money {
	switch v.Status {
	case StatusPending:
		return v.Deposit
	case StatusConfirmed:
		return v.DepositDue
	}
	return 0
}

// AtSalon is what is left to pay at the salon of a visit paid with a
// package or certificate (DueAtSalon).
func (v *View) AtSalon() (Money, bool) { return DueAtSalon(&v.Booking) }

// TopUp reports whether what the client owes is the difference a move to
// a larger deposit asked.
func (v *View) TopUp() bool { return v.Status == StatusConfirmed && v.DepositDue > 0 }

// viewColumns name the booking's service and master; for a visit of
// several services, every service ("Haircut + Colour") and every master
// ("Anna, Boris"), in visit order, so that whatever tells the client
// about the visit names all of it.
const viewColumns = `COALESCE((SELECT string_agg(xs.name, ' + ' ORDER BY x.id) FROM bookings x
	    JOIN services xs ON xs.id = x.service_id WHERE x.id = b.visit_id OR x.visit_of = b.visit_id), sv.name),
	COALESCE((SELECT string_agg(q.n, ', ' ORDER BY q.f) FROM (SELECT xm.name n, min(x.id) f FROM bookings x
	    JOIN masters xm ON xm.id = x.master_id WHERE x.id = b.visit_id OR x.visit_of = b.visit_id GROUP BY xm.name) q), m.name),
	c.name, b.deposit_due, ` + prepaidSQL + `,
	b.status = 'cancelled' AND EXISTS (SELECT 1 FROM booking_events e WHERE e.booking_id = b.visit_id AND e.action = 'cancelled'
	    AND e.details->>'for_client' = 'false'),
	EXISTS (SELECT 1 FROM payment_sessions p WHERE p.booking_id = b.visit_id AND p.held_at IS NOT NULL)`

// prepaidSQL is View.Prepaid of booking b (a visit's, its head's: the
// visit's deposit, which a cancellation of any of it refunds or keeps).
const prepaidSQL = `(SELECT COALESCE(sum(p.amount - p.refunded - CASE WHEN p.status = 'refunding' THEN COALESCE(p.refund_amount, 0) ELSE 0 END), 0)
	    FROM payment_sessions p WHERE p.booking_id = b.visit_id AND p.status IN ('authorized', 'completed', 'refunding'))`

var viewFrom = `
	FROM bookings b
	JOIN services sv ON sv.id = b.service_id
	JOIN masters m ON m.id = b.master_id
	JOIN clients c ON c.id = b.client_id
	JOIN salons s ON s.id = b.salon_id`

// BookingView returns a booking the caller may see, with its names (in
// salonID, when not 0). Errors: ErrNotFound (no such booking, or not one the
// caller may see: the two are not told apart), ErrUnavailable.
func (s *Service) BookingView(ctx context.Context, salonID, bookingID int64) (*View, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	var g grants
	var visit bool // a visit of several services: its segments are read too
	v, err := scanViewRow(scanPrefix{s.pool.QueryRow(ctx, `SELECT `+prefixed("b.", bookingColumns)+`, `+viewColumns+`, `+
		prefixed("s.", salonColumns)+`, `+grantsSQL+`, b.visit_of IS NOT NULL OR EXISTS (SELECT 1 FROM bookings x WHERE x.visit_of = b.id)`+
		viewFrom+` WHERE b.id = @id AND (@salon = 0 OR b.salon_id = @salon)`,
		grantArgs(caller, pgx.NamedArgs{"id": bookingID, "salon": salonID})), append(g.dest(), &visit)})
	if isNoRows(err) {
		return nil, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("booking %d: %w", bookingID, dbErr(err))
	}
	g.origin = v.Origin
	if !caller.may(&v.Booking, g) {
		return nil, fmt.Errorf("booking %d: %w", bookingID, ErrNotFound)
	}
	if visit {
		if v.Segments, v.Parts, err = visitParts(ctx, s.pool, &v.Booking); err != nil {
			return nil, dbErr(err)
		}
	}
	if err := readPaidWith(ctx, s.pool, &v.Booking); err != nil {
		return nil, dbErr(err)
	}
	s.decorate(v, caller)
	return v, nil
}

// visitParts reads the segments of b's visit in visit order, with their
// names.
func visitParts(ctx context.Context, q querier, b *Booking) ([]Booking, []Part, error) {
	rows, err := q.Query(ctx, `SELECT `+prefixed("x.", bookingColumns)+`, sv.name, m.name FROM bookings x
		JOIN services sv ON sv.id = x.service_id JOIN masters m ON m.id = x.master_id
		WHERE x.salon_id = $1 AND (x.id = $2 OR x.visit_of = $2) ORDER BY x.id`, b.SalonID, b.visit())
	if err != nil {
		return nil, nil, fmt.Errorf("visit %d: %w", b.visit(), err)
	}
	var segs []Booking
	var parts []Part
	for rows.Next() {
		var p Part
		sg, err := scanBooking(scanPrefix{rows, []any{&p.ServiceName, &p.MasterName}})
		if err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("visit %d: %w", b.visit(), err)
		}
		segs, parts = append(segs, *sg), append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("visit %d: %w", b.visit(), err)
	}
	return segs, parts, nil
}

// decorate fills in what the caller may still do with v, and hides what
// they may not read.
func (s *Service) decorate(v *View, caller Caller) {
	v.ChangeableUntil = v.Salon.ChangeableUntil(&v.Booking)
	v.Changeable = mayChange(&v.Booking, &v.Salon, caller, s.now()) == nil
	// (Staff read what cancelling at the client's request would keep.)
	byClient := caller.client() || caller.kind == callerStaff
	if p := v.PaidWith.live(); p != nil && v.Salon.keepsBalance(&v.Booking, byClient, s.now()) {
		v.CancelKeeps = p.Keeps
	}
	v.CancelKeepsPrepaid = v.Prepaid > 0 && v.Salon.keepsPaid(&v.Booking, byClient, s.now())
	if caller.client() {
		v.ClientName = ""
	}
}

// MaxUpcoming is the most bookings UpcomingBookings returns.
const MaxUpcoming = 20

// UpcomingBookings lists, by start, the active bookings that end after since
// and that the caller may see, in every salon: for a chat identity, those it
// made and those of the clients it was proven to be. Other callers have no
// such list (ErrForbidden).
func (s *Service) UpcomingBookings(ctx context.Context, since time.Time) ([]View, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	if caller.kind != callerIdentity {
		return nil, fmt.Errorf("only a chat identity has a list of its bookings: %w", ErrForbidden)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+prefixed("b.", bookingColumns)+`, `+viewColumns+`, `+prefixed("s.", salonColumns)+viewFrom+`
		WHERE b.id IN (
		    SELECT id FROM bookings WHERE origin_channel = @ch AND origin_ref = @ref
		    UNION
		    SELECT x.id FROM client_identities ci JOIN bookings x ON x.client_id = ci.client_id
		    WHERE ci.channel = @ch AND ci.external_id = @ref
		) AND b.status IN ('pending', 'confirmed') AND b.visit_of IS NULL
		  AND booking_slot_end(b.starts_at, b.duration_min + b.processing_min + b.finish_min) > @since
		ORDER BY b.starts_at, b.id LIMIT @limit`,
		pgx.NamedArgs{"ch": caller.identity.Channel, "ref": caller.identity.ExternalID, "since": since, "limit": MaxUpcoming})
	if err != nil {
		return nil, fmt.Errorf("upcoming bookings: %w", dbErr(err))
	}
	out, err := s.collectViews(rows, caller)
	if err != nil {
		return nil, fmt.Errorf("upcoming bookings: %w", dbErr(err))
	}
	if err := s.withSegments(ctx, out); err != nil {
		return nil, fmt.Errorf("upcoming bookings: %w", dbErr(err))
	}
	return out, nil
}

// withSegments reads the segments of the visits among views (heads), in
// one query; a visit of one keeps none.
func (s *Service) withSegments(ctx context.Context, views []View) error {
	ids := make([]int64, len(views))
	for i := range views {
		ids[i] = views[i].ID
	}
	rows, err := s.pool.Query(ctx, `SELECT `+bookingColumns+` FROM bookings WHERE visit_of = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return err
	}
	rest, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Booking, error) {
		b, err := scanBooking(r)
		if err != nil {
			return Booking{}, err
		}
		return *b, nil
	})
	if err != nil {
		return err
	}
	for i := range views {
		for _, sg := range rest {
			if sg.VisitID == views[i].ID {
				if views[i].Segments == nil {
					views[i].Segments = []Booking{views[i].Booking}
				}
				views[i].Segments = append(views[i].Segments, sg)
			}
		}
	}
	return nil
}

// collectViews reads rows of booking, view and salon columns as the caller
// sees them.
func (s *Service) collectViews(rows pgx.Rows, caller Caller) ([]View, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (View, error) {
		v, err := scanViewRow(r)
		if err != nil {
			return View{}, err
		}
		s.decorate(v, caller)
		return *v, nil
	})
}

// scanViewRow scans the booking, view and salon columns, then rest.
func scanViewRow(row pgx.Row) (*View, error) {
	var v View
	rest := append([]any{&v.ServiceName, &v.MasterName, &v.ClientName, &v.DepositDue, &v.Prepaid, &v.CancelledBySalon, &v.PaidOnline}, v.Salon.dest()...)
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

// Salons lists salons by name, at most limit: the directory a client
// chooses from (staff have their own salon: ErrForbidden).
func (s *Service) Salons(ctx context.Context, limit int) ([]Salon, error) {
	c, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	if c.kind == callerStaff || c.kind == callerImport {
		return nil, fmt.Errorf("staff have their own salon: %w", ErrForbidden)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+salonColumns+` FROM salons ORDER BY name, id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("salons: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Salon, error) {
		sal, err := scanSalon(r)
		if err != nil {
			return Salon{}, err
		}
		return *sal, nil
	})
	if err != nil {
		return nil, fmt.Errorf("salons: %w", dbErr(err))
	}
	return out, nil
}

// LinkCodeTTL is how long a master's link code stays valid.
const LinkCodeTTL = 24 * time.Hour

// NewLinkCode returns a one-time code with which the master links a chat
// account (on Telegram, by sending "/link CODE" to the bot). Only its hash
// is stored. Errors: ErrNotFound (master), ErrConflict (the master is not
// active).
func (s *Service) NewLinkCode(ctx context.Context, salonID, masterID int64) (string, time.Time, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
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
	if err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := activeMaster(ctx, tx, salonID, masterID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO master_link_codes (code_hash, salon_id, master_id, expires_at) VALUES ($1, $2, $3, $4)`,
			sum[:], salonID, masterID, expires)
		return err
	}); err != nil {
		return "", time.Time{}, fmt.Errorf("link code: %w", err)
	}
	return code, expires, nil
}

// LinkMaster uses a link code: the calling chat identity becomes the
// master's, who is then told about their bookings on that channel. A code
// works once. Errors: ErrNotFound (no such code, used or expired),
// ErrConflict (that account is another master's in the salon),
// ErrForbidden (the caller is not a chat identity).
func (s *Service) LinkMaster(ctx context.Context, code string) (*Master, error) {
	id, err := chatIdentity(ctx)
	if err != nil {
		return nil, err
	}
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) > 64 {
		return nil, fmt.Errorf("link code: %w", ErrNotFound)
	}
	sum := sha256.Sum256([]byte(code))
	var m Master
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// The master first, then the code, as a deactivation takes them
		// (no deadlock): a master deactivated meanwhile voided the code.
		var salonID, masterID int64
		err := tx.QueryRow(ctx, `SELECT salon_id, master_id FROM master_link_codes
			WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2`, sum[:], s.now()).Scan(&salonID, &masterID)
		if isNoRows(err) {
			return fmt.Errorf("link code: %w", ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("link code: %w", err)
		}
		if err := activeMaster(ctx, tx, salonID, masterID); errors.Is(err, ErrConflict) {
			return fmt.Errorf("link code: %w", ErrNotFound)
		} else if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE master_link_codes SET used_at = $2
			WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2`, sum[:], s.now())
		if err != nil {
			return fmt.Errorf("link code: %w", err)
		}
		if tag.RowsAffected() == 0 { // used or voided meanwhile
			return fmt.Errorf("link code: %w", ErrNotFound)
		}
		var other int64
		err = tx.QueryRow(ctx, `SELECT master_id FROM master_identities WHERE salon_id = $1 AND channel = $2 AND external_id = $3`,
			salonID, id.Channel, id.ExternalID).Scan(&other)
		switch {
		case err == nil && other != masterID:
			return conflict("this account is linked to another master")
		case err != nil && !isNoRows(err):
			return fmt.Errorf("link master: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO master_identities (salon_id, master_id, channel, external_id, verified_by)
			VALUES ($1, $2, $3, $4, 'link_code') ON CONFLICT (salon_id, channel, external_id) DO NOTHING`,
			salonID, masterID, id.Channel, id.ExternalID); err != nil {
			return fmt.Errorf("link master: %w", err)
		}
		return tx.QueryRow(ctx, `SELECT id, salon_id, name, COALESCE(phone, ''), active FROM masters WHERE id = $1`, masterID).
			Scan(&m.ID, &m.SalonID, &m.Name, &m.Phone, &m.Active)
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}
