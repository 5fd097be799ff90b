package booking

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// CalendarQuery asks for a salon's calendar: the days from First, for every
// master (MasterID 0) or one.
type CalendarQuery struct {
	SalonID  int64
	MasterID int64
	First    Date
	Days     int // 1 (a day view) to 31
}

// Calendar is what the panel's day and week views show: the masters, their
// shifts and the bookings that touch the days, with a version that moves
// whenever any of it changes.
type Calendar struct {
	Salon    Salon
	First    Date
	Days     int
	Masters  []Master  // active masters, and inactive ones with bookings in range; by name
	Shifts   []Shift   // the range's, and the day before's that run into it (a night shift); by start
	Bookings []Listing // every status; by start
	Version  string
}

// Listing is a booking as a calendar lists it: with the names of its
// client, service and master.
type Listing struct {
	Booking
	ServiceName string
	MasterName  string
	ClientName  string
	ClientPhone string
	ClientNotes string // what the salon keeps about the client (an allergy)
	// InVisit: the booking is a service of a visit of several (read by
	// EachBooking only).
	InVisit bool
	// PaidWith is the kind of the balance its visit reserved ("": none;
	// read by Calendar and the feed); a package's, on the services it
	// pays only. InPart: a certificate's that pays less of the visit's
	// price than what the deposit paid online leaves: the rest is due at
	// the salon.
	PaidWith BalanceKind
	InPart   bool
}

// MaxCalendarDays is the most days one calendar covers.
const MaxCalendarDays = 31

// bookingReach is how far before a day a booking that still touches it can
// start: the longest stay (a service, its processing and finish: 24 hours)
// and a buffer.
const bookingReach = 28 * time.Hour

// Calendar reads the calendar in one round trip of a fixed number of
// queries, however many masters and bookings there are. Staff (see As).
// Errors: ErrNotFound (salon, or master), ErrInvalid.
func (s *Service) Calendar(ctx context.Context, q CalendarQuery) (*Calendar, error) {
	if err := authorize(ctx, q.SalonID, RoleAdmin); err != nil {
		return nil, err
	}
	if q.First.IsZero() {
		return nil, Invalid("date", "required")
	}
	if q.Days < 1 || q.Days > MaxCalendarDays {
		return nil, Invalid("days", "between 1 and %d", MaxCalendarDays)
	}
	salon, err := s.currentCatalog(ctx, q.SalonID)
	if err != nil {
		return nil, err
	}
	loc := salon.salon.Location()
	from, to := q.First.Start(loc), q.First.AddDays(q.Days).Start(loc)
	args := pgx.NamedArgs{"salon": q.SalonID, "master": q.MasterID, "from": from, "to": to,
		"reach": from.Add(-bookingReach), "dprev": q.First.AddDays(-1).dbDate(), "d1": q.First.AddDays(q.Days).dbDate()}
	cal := &Calendar{Salon: salon.salon, First: q.First, Days: q.Days}
	batch := &pgx.Batch{}
	var masterFound bool
	batch.Queue(`SELECT $1 = 0 OR EXISTS (SELECT 1 FROM masters WHERE salon_id = $2 AND id = $1)`, q.MasterID, q.SalonID).
		QueryRow(func(r pgx.Row) error { return r.Scan(&masterFound) })
	sql, a := positional(calendarMastersSQL, args)
	batch.Queue(sql, a...).Query(func(rows pgx.Rows) error {
		var err error
		cal.Masters, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Master, error) {
			var m Master
			err := r.Scan(&m.ID, &m.SalonID, &m.Name, &m.Phone, &m.Active)
			return m, err
		})
		return err
	})
	sql, a = positional(calendarShiftsSQL, args)
	batch.Queue(sql, a...).Query(func(rows pgx.Rows) error {
		var err error
		cal.Shifts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Shift, error) {
			var out Shift
			var d time.Time
			sh, err := scanShift(r, &out.ID, &out.MasterID, &d)
			out.Date, out.Start, out.End, out.BreakStart, out.BreakEnd = DateOf(d), sh.start, sh.end, sh.breakStart, sh.breakEnd
			return out, err
		})
		return err
	})
	sql, a = positional(calendarBookingsSQL, args)
	batch.Queue(sql, a...).Query(func(rows pgx.Rows) error {
		var err error
		cal.Bookings, err = pgx.CollectRows(rows, scanListing)
		return err
	})
	sql, a = positional(calendarVersionSQL, args)
	batch.Queue(sql, a...).QueryRow(func(r pgx.Row) error { return r.Scan(&cal.Version) })
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("calendar: %w", dbErr(err))
	}
	if !masterFound {
		return nil, fmt.Errorf("master %d: %w", q.MasterID, ErrNotFound)
	}
	// Bookings that end before the range were read for nothing.
	kept := cal.Bookings[:0]
	for _, b := range cal.Bookings {
		if b.EndsAt().After(from) {
			kept = append(kept, b)
		}
	}
	cal.Bookings = kept
	return cal, nil
}

// CalendarVersion returns the version Calendar would return for q: one
// cheap query, for views that refresh when it moves.
func (s *Service) CalendarVersion(ctx context.Context, q CalendarQuery) (string, error) {
	if err := authorize(ctx, q.SalonID, RoleAdmin); err != nil {
		return "", err
	}
	if q.First.IsZero() || q.Days < 1 || q.Days > MaxCalendarDays {
		return "", Invalid("date", "required")
	}
	c, err := s.currentCatalog(ctx, q.SalonID)
	if err != nil {
		return "", err
	}
	loc := c.salon.Location()
	from, to := q.First.Start(loc), q.First.AddDays(q.Days).Start(loc)
	sql, a := positional(calendarVersionSQL, pgx.NamedArgs{"salon": q.SalonID, "master": q.MasterID, "from": from, "to": to,
		"reach": from.Add(-bookingReach), "dprev": q.First.AddDays(-1).dbDate(), "d1": q.First.AddDays(q.Days).dbDate()})
	var v string
	if err := s.pool.QueryRow(ctx, sql, a...).Scan(&v); err != nil {
		return "", fmt.Errorf("calendar version: %w", dbErr(err))
	}
	return v, nil
}

const calendarMastersSQL = `
	SELECT m.id, m.salon_id, m.name, COALESCE(m.phone, ''), m.active FROM masters m
	WHERE m.salon_id = @salon AND (@master = 0 OR m.id = @master)
	  AND (m.active OR EXISTS (SELECT 1 FROM bookings b WHERE b.master_id = m.id AND b.starts_at >= @reach AND b.starts_at < @to))
	ORDER BY m.name, m.id`

const calendarShiftsSQL = `
	SELECT id, master_id, work_date, starts_at, ends_at, break_starts_at, break_ends_at FROM shifts
	WHERE salon_id = @salon AND (@master = 0 OR master_id = @master) AND work_date >= @dprev AND work_date < @d1 AND ends_at > @from
	ORDER BY starts_at, master_id`

var calendarBookingsSQL = `
	SELECT ` + prefixed("b.", bookingColumns) + `, sv.name, m.name, c.name, COALESCE(c.phone, ''), c.notes, ` + listingPaidWithSQL + `
	FROM bookings b
	JOIN services sv ON sv.id = b.service_id
	JOIN masters m ON m.id = b.master_id
	JOIN clients c ON c.id = b.client_id
	WHERE b.salon_id = @salon AND (@master = 0 OR b.master_id = @master) AND b.starts_at >= @reach AND b.starts_at < @to
	ORDER BY b.starts_at, b.id`

// calendarVersionSQL hashes what a calendar shows: its bookings' state,
// its shifts (replaced rows get new ids) and the catalogue's version.
const calendarVersionSQL = `
	SELECT md5(COALESCE(string_agg(x, ',' ORDER BY x), '')) FROM (
	    SELECT concat_ws(':', 'b', id, status, master_id, extract(epoch FROM starts_at), duration_min,
	                     extract(epoch FROM updated_at), client_id) AS x
	    FROM bookings WHERE salon_id = @salon AND (@master = 0 OR master_id = @master)
	      AND starts_at >= @reach AND starts_at < @to
	    UNION ALL
	    SELECT concat_ws(':', 's', id) FROM shifts
	    WHERE salon_id = @salon AND (@master = 0 OR master_id = @master) AND work_date >= @dprev AND work_date < @d1 AND ends_at > @from
	    UNION ALL
	    SELECT concat_ws(':', 'v', catalog_version) FROM salons WHERE id = @salon
	) t`

// listingPaidWithSQL selects the kind of the balance booking b's visit
// reserved (an empty string: none); a package's, for the services of the
// visit its visits pay only (the first of its services, in visit order,
// as the reservation chose them); a certificate's that leaves part of the
// visit's price to pay at the salon (what it reserved is less than the
// price less what the deposit paid online), followed by ":part".
const listingPaidWithSQL = `COALESCE((SELECT a.kind || CASE WHEN a.kind = 'certificate' AND -e.delta <
	        (SELECT round(sum(vb.price) * 100)::bigint FROM bookings vb WHERE vb.id = e.booking_id OR vb.visit_of = e.booking_id)
	        - (SELECT COALESCE(round(sum(ps.amount - ps.refunded) * 100), 0)::bigint FROM payment_sessions ps
	           WHERE ps.booking_id = e.booking_id AND ps.status IN ('completed', 'refunding', 'refunded'))
	      THEN ':part' ELSE '' END
	FROM balance_entries e JOIN balances a ON a.id = e.balance_id
	WHERE e.booking_id = COALESCE(b.visit_id, b.id) AND e.type = 'reserve'
	  AND (a.kind <> 'package' OR b.id IN (SELECT x.id FROM bookings x WHERE (x.id = e.booking_id OR x.visit_of = e.booking_id)
	                                       AND x.service_id = ANY (a.service_ids) ORDER BY x.id LIMIT -e.delta))
	ORDER BY e.id LIMIT 1), '')`

// scanListing scans the booking columns, then the service, master and
// client names, the client's phone and notes, and the kind of balance
// that paid it.
func scanListing(r pgx.CollectableRow) (Listing, error) {
	var l Listing
	var paid string
	b, err := scanBooking(scanPrefix{r, []any{&l.ServiceName, &l.MasterName, &l.ClientName, &l.ClientPhone, &l.ClientNotes, &paid}})
	if err != nil {
		return l, err
	}
	kind, part := strings.CutSuffix(paid, ":part")
	l.Booking, l.PaidWith, l.InPart = *b, BalanceKind(kind), part
	return l, nil
}
