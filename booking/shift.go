package booking

import (
	"context"
	"errors"
	"fmt"
	"salon/i18n"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Clock is a wall-clock time of day in minutes after midnight (0..1440);
// a shift's end after midnight is a Clock past 1440 (26:00 is 02:00 of the
// next day).
type Clock int

// MaxShift is the longest shift: a longer one is taken for a mistake.
const MaxShift Clock = 16 * 60

// ParseClock reads H:MM or HH:MM (24:00 allowed, meaning the end of the day).
func ParseClock(s string) (Clock, error) {
	hs, ms, ok := strings.Cut(strings.TrimSpace(s), ":")
	h, err1 := strconv.Atoi(hs)
	m, err2 := strconv.Atoi(ms)
	if !ok || err1 != nil || err2 != nil || len(hs) < 1 || len(hs) > 2 || len(ms) != 2 ||
		h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, i18n.New("%q is not a time like 9:30 or 18:00", s)
	}
	return Clock(h*60 + m), nil
}

// ParseShiftEnd reads the end of a shift: a time of its day (18:00, 24:00),
// or one of the next day for a shift that crosses midnight, written with a
// plus (+02:00) or past 24 hours (26:00).
func ParseShiftEnd(s string) (Clock, error) {
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, "+"); ok {
		c, err := ParseClock(rest)
		if err != nil {
			return 0, i18n.New("%q is not a time of the next day like +02:00", s)
		}
		return 24*60 + c, nil
	}
	if hs, ms, ok := strings.Cut(t, ":"); ok && len(hs) == 2 && len(ms) == 2 && hs > "24" {
		h, err1 := strconv.Atoi(hs)
		m, err2 := strconv.Atoi(ms)
		if err1 != nil || err2 != nil || h > 47 || m < 0 || m > 59 {
			return 0, i18n.New("%q is not a time like 18:00, or 26:00 for 02:00 of the next day", s)
		}
		return Clock(h*60 + m), nil
	}
	return ParseClock(s)
}

// String formats c as HH:MM; a time of the next day as +HH:MM.
func (c Clock) String() string {
	if c > 24*60 {
		return "+" + (c - 24*60).String()
	}
	return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60)
}

// ShiftInput is one working interval of a day in wall-clock times. A shift
// that crosses midnight says so: its End is past 24:00 (see ParseShiftEnd);
// an End at or before Start is refused, never read as the next day. A break
// is optional (BreakStart == BreakEnd means none) and must lie inside the
// shift; a break time before Start is one of the next day.
type ShiftInput struct {
	Start, End           Clock
	BreakStart, BreakEnd Clock
}

// Shift is a stored working interval of a master.
type Shift struct {
	ID         int64
	MasterID   int64
	Date       Date // the salon-local day it belongs to
	Start, End time.Time
	BreakStart time.Time // zero when there is no break
	BreakEnd   time.Time
}

// instants resolves the input on day in loc. Wall times that do not exist
// (the hour skipped when DST starts) move forward by the gap, but for a
// break's, which is refused; ambiguous ones (the hour repeated when it
// ends) take the first occurrence.
func (in ShiftInput) instants(day Date, loc *time.Location) (shift, error) {
	switch {
	case in.Start >= 24*60 && in.Start <= 48*60:
		return shift{}, &shiftError{"start", i18n.New("a shift starts before 24:00 (one starting at midnight is the next day's, from 00:00)")}
	case in.Start < 0 || in.Start >= 24*60 || in.End < 0 || in.End > 48*60:
		return shift{}, i18n.New("times must be between 00:00 and 24:00")
	case in.End == in.Start:
		return shift{}, &shiftError{"end", i18n.New("shift %s-%s is empty: it ends when it starts", in.Start, in.End)}
	case in.BreakStart == in.BreakEnd && in.BreakStart != 0:
		return shift{}, &shiftError{"break_end", i18n.New("break %s-%s is empty: leave both times out for no break", in.BreakStart, in.BreakEnd)}
	}
	if in.End <= in.Start {
		return shift{}, &shiftError{"end", i18n.New("shift %s-%s ends before it starts (a shift past midnight ends like 26:00 or +02:00: 2 am the next day)", in.Start, in.End)}
	}
	if in.End-in.Start > MaxShift {
		return shift{}, &shiftError{"end", i18n.New("shift %s-%s is longer than %d hours", in.Start, in.End, int(MaxShift/60))}
	}
	sh := shift{start: day.At(loc, int(in.Start)), end: day.At(loc, int(in.End))}
	if in.BreakStart != in.BreakEnd {
		bs, be := in.BreakStart, in.BreakEnd
		if bs < in.Start {
			bs += 24 * 60
		}
		if be <= bs {
			be += 24 * 60
		}
		switch {
		case be > in.End && in.BreakEnd < in.BreakStart && in.BreakStart >= in.Start:
			return shift{}, &shiftError{"break_end", i18n.New("break %s-%s ends before it starts", in.BreakStart, in.BreakEnd)}
		case be > in.End && bs >= in.End:
			return shift{}, &shiftError{"break_start", i18n.New("break %s-%s is outside the shift %s-%s", in.BreakStart, in.BreakEnd, in.Start, in.End)}
		case be > in.End:
			return shift{}, &shiftError{"break_end", i18n.New("break %s-%s is outside the shift %s-%s", in.BreakStart, in.BreakEnd, in.Start, in.End)}
		}
		// A break is what it says or nothing: one at a time the clocks
		// skip that day is refused, not moved.
		var err error
		if sh.breakStart, err = day.AtClock(loc, bs); err != nil {
			return shift{}, &shiftError{"break_start", i18n.Of(err)}
		}
		if sh.breakEnd, err = day.AtClock(loc, be); err != nil {
			return shift{}, &shiftError{"break_end", i18n.Of(err)}
		}
	}
	if !sh.start.Before(sh.end) {
		// (Its whole time is skipped when the clocks go forward that day.)
		return shift{}, i18n.New("shift %s-%s is empty: the clocks skip that time that day", in.Start, in.End)
	}
	return sh, nil
}

// shiftError is a shift refused for one of its times (the field: start,
// end, break_start or break_end).
type shiftError struct {
	field string
	why   i18n.Text
}

func (e *shiftError) Error() string { return e.why.String() }

// Unwrap returns why, for i18n.Of.
func (e *shiftError) Unwrap() error { return e.why }

// shiftField is the field err is about ("start" when it names none).
func shiftField(err error) string {
	if se := (*shiftError)(nil); errors.As(err, &se) {
		return se.field
	}
	return "start"
}

// EndClock is a stored shift's end as ShiftInput writes it: minutes after
// the midnight that starts the shift's day (past 24:00 when it ends the
// next day).
func (sh Shift) EndClock(loc *time.Location) Clock {
	end := sh.End.In(loc)
	days := DateOf(end).dbDate().Sub(sh.Date.dbDate()) / (24 * time.Hour)
	return Clock(int(days)*24*60 + end.Hour()*60 + end.Minute())
}

// SetShifts replaces a master's shifts on one salon-local day (an empty list
// makes it a day off). It refuses, changing nothing, when a booking that the
// old shifts covered would fall outside the new ones.
// Errors: ErrNotFound (master), ErrInvalid (times, overlaps),
// *LostBookingsError (ErrConflict: bookings left outside working hours).
func (s *Service) SetShifts(ctx context.Context, salonID, masterID int64, day Date, in []ShiftInput) error {
	return s.SetSchedule(ctx, salonID, masterID, []DaySchedule{{Date: day, Shifts: in}})
}

// DaySchedule is a master's shifts on one salon-local day (none: a day off).
type DaySchedule struct {
	Date   Date
	Shifts []ShiftInput
}

// MaxScheduleDays is the most days one schedule change may cover.
const MaxScheduleDays = 366

// SetSchedule replaces a master's shifts on each of the days, all or
// nothing: when a booking the old shifts covered would fall outside the new
// ones on any day, nothing changes and the error names every such booking.
// Admins and owners (see As). Errors: as SetShifts.
func (s *Service) SetSchedule(ctx context.Context, salonID, masterID int64, days []DaySchedule) error {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return err
	}
	resolved, err := resolveDays(salon, days)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := masterExists(ctx, tx, salonID, masterID); err != nil {
			return err
		}
		if err := lockMasters(ctx, tx, masterID); err != nil {
			return err
		}
		return replaceShifts(ctx, tx, salon, []int64{masterID}, days, resolved)
	})
}

// resolveDays checks days and resolves each day's shifts to instants.
func resolveDays(salon *Salon, days []DaySchedule) ([][]shift, error) {
	if len(days) > MaxScheduleDays {
		return nil, Invalid("days", "at most %d days at once", MaxScheduleDays)
	}
	loc := salon.Location()
	resolved := make([][]shift, len(days))
	seen := map[Date]bool{}
	for d, ds := range days {
		prefix := ""
		if len(days) > 1 {
			prefix = ds.Date.String() + " "
		}
		if ds.Date.IsZero() {
			return nil, Invalid("date", "required")
		}
		if seen[ds.Date] {
			return nil, Invalid(prefix+"date", "given twice")
		}
		seen[ds.Date] = true
		shifts := make([]shift, len(ds.Shifts))
		for i, x := range ds.Shifts {
			sh, err := x.instants(ds.Date, loc)
			switch {
			case err != nil && len(ds.Shifts) == 1:
				return nil, invalidBy(prefix+shiftField(err), err) // (the day's one shift: its time refused)
			case err != nil:
				return nil, invalidBy(fmt.Sprintf("%sshifts[%d]", prefix, i), err)
			}
			shifts[i] = sh
		}
		slices.SortFunc(shifts, func(a, b shift) int { return a.start.Compare(b.start) })
		for i := 1; i < len(shifts); i++ {
			if shifts[i].start.Before(shifts[i-1].end) {
				return nil, Invalid(prefix+"shifts", "shifts of one day must not overlap")
			}
		}
		resolved[d] = shifts
	}
	return resolved, nil
}

// replaceShifts replaces the masters' shifts on the days, all or nothing,
// in tx under the masters' locks (taken by the caller): first every
// booking the change would leave outside working hours, then the writes.
func replaceShifts(ctx context.Context, tx pgx.Tx, salon *Salon, masters []int64, days []DaySchedule, resolved [][]shift) error {
	var lost []LostBooking
	for _, masterID := range masters {
		for d, ds := range days {
			old, err := dayShifts(ctx, tx, masterID, ds.Date)
			if err != nil {
				return err
			}
			var le *LostBookingsError
			if err := checkStillCovered(ctx, tx, salon, masterID, old, resolved[d]); errors.As(err, &le) {
				lost = append(lost, le.Bookings...)
			} else if err != nil {
				return err
			}
		}
	}
	if len(lost) > 0 {
		return namedLost(ctx, tx, lost)
	}
	for _, masterID := range masters {
		for d, ds := range days {
			if _, err := tx.Exec(ctx, `DELETE FROM shifts WHERE master_id = $1 AND work_date = $2`, masterID, ds.Date.dbDate()); err != nil {
				return fmt.Errorf("set shifts: %w", err)
			}
			for _, sh := range resolved[d] {
				var bs, be *time.Time
				if !sh.breakStart.IsZero() {
					bs, be = &sh.breakStart, &sh.breakEnd
				}
				_, err := tx.Exec(ctx, `
					INSERT INTO shifts (salon_id, master_id, work_date, starts_at, ends_at, break_starts_at, break_ends_at)
					VALUES ($1, $2, $3, $4, $5, $6, $7)`, salon.ID, masterID, ds.Date.dbDate(), sh.start, sh.end, bs, be)
				if pgCode(err) == pgExclusionViolation {
					return Invalid("shifts", "%s: overlaps a shift of the day before or after", ds.Date.String())
				}
				if err != nil {
					return fmt.Errorf("set shifts: %w", err)
				}
			}
		}
	}
	return nil
}

// ApplyWeek sets a master's shifts on every day from first to last
// (inclusive) from a weekly template indexed by time.Weekday (an empty day
// is a day off), all or nothing, as SetSchedule.
func (s *Service) ApplyWeek(ctx context.Context, salonID, masterID int64, first, last Date, week [7][]ShiftInput) error {
	days, err := weekDays(first, last, week)
	if err != nil {
		return err
	}
	return s.SetSchedule(ctx, salonID, masterID, days)
}

// ApplyWeekToAll sets the shifts of every active master of the salon from
// one weekly template (the salon's hours, copied to each), all or nothing:
// when a booking of any master would fall outside, nothing changes and the
// error names every such booking. Admins and owners.
func (s *Service) ApplyWeekToAll(ctx context.Context, salonID int64, first, last Date, week [7][]ShiftInput) error {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return err
	}
	days, err := weekDays(first, last, week)
	if err != nil {
		return err
	}
	resolved, err := resolveDays(salon, days)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var masters []int64
		if err := eachRow(ctx, tx, func(r pgx.Row) error {
			var id int64
			err := r.Scan(&id)
			masters = append(masters, id)
			return err
		}, `SELECT id FROM masters WHERE salon_id = $1 AND active ORDER BY id`, salonID); err != nil {
			return fmt.Errorf("masters: %w", err)
		}
		if len(masters) == 0 {
			return nil
		}
		if err := lockManyMasters(ctx, tx, masters); err != nil {
			return fmt.Errorf("set shifts: %w", err)
		}
		return replaceShifts(ctx, tx, salon, masters, days, resolved)
	})
}

// weekDays lays a weekly template (indexed by time.Weekday) over the days
// from first to last, inclusive.
func weekDays(first, last Date, week [7][]ShiftInput) ([]DaySchedule, error) {
	if first.IsZero() || last.IsZero() || last.Before(first) {
		return nil, Invalid("to", "must not be before from")
	}
	var days []DaySchedule
	for d := first; !last.Before(d); d = d.AddDays(1) {
		if len(days) == MaxScheduleDays {
			return nil, Invalid("to", "at most %d days at once", MaxScheduleDays)
		}
		days = append(days, DaySchedule{Date: d, Shifts: week[d.dbDate().Weekday()]})
	}
	return days, nil
}

// checkStillCovered refuses a schedule change that would leave outside
// working hours an active booking the old shifts covered.
func checkStillCovered(ctx context.Context, q querier, salon *Salon, masterID int64, old, next []shift) error {
	if len(old) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, `
		SELECT id, starts_at, duration_min, processing_min, finish_min FROM bookings
		WHERE master_id = $1 AND status IN ('pending', 'confirmed') AND starts_at < $3
		  AND booking_slot_end(starts_at, duration_min + processing_min + finish_min) > $2
		ORDER BY starts_at`, masterID, old[0].start, old[len(old)-1].end)
	if err != nil {
		return fmt.Errorf("check bookings: %w", err)
	}
	bks, err := pgx.CollectRows(rows, scanWorkOf)
	if err != nil {
		return fmt.Errorf("check bookings: %w", err)
	}
	var lost []LostBooking
	for _, b := range bks {
		if b.coveredBy(old) && !b.coveredBy(next) {
			lost = append(lost, LostBooking{ID: b.id, StartsAt: b.start.In(salon.Location())})
		}
	}
	if len(lost) > 0 {
		return &LostBookingsError{Bookings: lost}
	}
	return nil
}

// workOf is a booking as a schedule change sees it: when its master works
// and its client stays.
type workOf struct {
	id, master int64
	start      time.Time
	t          timing
}

// scanWorkOf reads id, starts_at, duration_min, processing_min and
// finish_min (and master_id first, when the row has six columns).
func scanWorkOf(r pgx.CollectableRow) (workOf, error) {
	var b workOf
	var dur, proc, fin int
	dest := []any{&b.id, &b.start, &dur, &proc, &fin}
	if len(r.FieldDescriptions()) == 6 {
		dest = append([]any{&b.master}, dest...)
	}
	err := r.Scan(dest...)
	b.t = timing{dur: minutes(dur), processing: minutes(proc), finish: minutes(fin)}
	return b, err
}

// coveredBy reports whether the shifts hold the booking.
func (b workOf) coveredBy(shifts []shift) bool {
	return slices.ContainsFunc(shifts, func(sh shift) bool { return b.t.fitsIn(sh, b.start, 0) })
}

// LostBooking is a booking a schedule change would leave outside working hours.
type LostBooking struct {
	ID       int64
	StartsAt time.Time // in the salon's zone
	// Service and Client name it, for the staff who must move or cancel
	// it ("" where not read).
	Service, Client string
}

// namedLost is the refusal of a schedule change that would leave lost
// outside working hours, each named by its service and client (one read).
func namedLost(ctx context.Context, q querier, lost []LostBooking) error {
	ids := make([]int64, len(lost))
	for i, b := range lost {
		ids[i] = b.ID
	}
	rows, err := q.Query(ctx, `SELECT b.id, sv.name, COALESCE(NULLIF(b.contact_name, ''), c.name) FROM bookings b
		JOIN services sv ON sv.id = b.service_id JOIN clients c ON c.id = b.client_id WHERE b.id = ANY($1)`, ids)
	if err != nil {
		return fmt.Errorf("lost bookings: %w", err)
	}
	defer rows.Close()
	at := make(map[int64]int, len(lost))
	for i, b := range lost {
		at[b.ID] = i
	}
	for rows.Next() {
		var id int64
		var service, client string
		if err := rows.Scan(&id, &service, &client); err != nil {
			return fmt.Errorf("lost bookings: %w", err)
		}
		lost[at[id]].Service, lost[at[id]].Client = service, client
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("lost bookings: %w", err)
	}
	return &LostBookingsError{Bookings: lost}
}

// LostBookingsError refuses a schedule change that would leave active
// bookings outside working hours, and names them. It unwraps to ErrConflict.
type LostBookingsError struct {
	Bookings []LostBooking
}

func (e *LostBookingsError) Error() string {
	parts := make([]string, len(e.Bookings))
	for i, b := range e.Bookings {
		parts[i] = fmt.Sprintf("#%d at %s", b.ID, b.StartsAt.Format("2006-01-02 15:04"))
	}
	return "bookings would be outside working hours: " + strings.Join(parts, ", ")
}

// Unwrap returns ErrConflict.
func (e *LostBookingsError) Unwrap() error { return ErrConflict }

func dayShifts(ctx context.Context, q querier, masterID int64, day Date) ([]shift, error) {
	rows, err := q.Query(ctx, `
		SELECT starts_at, ends_at, break_starts_at, break_ends_at FROM shifts
		WHERE master_id = $1 AND work_date = $2 ORDER BY starts_at`, masterID, day.dbDate())
	if err != nil {
		return nil, fmt.Errorf("shifts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (shift, error) { return scanShift(r) })
	if err != nil {
		return nil, fmt.Errorf("shifts: %w", err)
	}
	return out, nil
}

// Shifts lists a master's shifts on days [from, from+days).
// Errors: ErrNotFound (salon or master).
func (s *Service) Shifts(ctx context.Context, salonID, masterID int64, from Date, days int) ([]Shift, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	if err := masterExists(ctx, s.pool, salonID, masterID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, master_id, work_date, starts_at, ends_at, break_starts_at, break_ends_at FROM shifts
		WHERE salon_id = $1 AND master_id = $2 AND work_date >= $3 AND work_date < $4
		ORDER BY starts_at`, salonID, masterID, from.dbDate(), from.AddDays(days).dbDate())
	if err != nil {
		return nil, fmt.Errorf("shifts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Shift, error) {
		var out Shift
		var d time.Time
		sh, err := scanShift(r, &out.ID, &out.MasterID, &d)
		out.Date, out.Start, out.End, out.BreakStart, out.BreakEnd = DateOf(d), sh.start, sh.end, sh.breakStart, sh.breakEnd
		return out, err
	})
	if err != nil {
		return nil, fmt.Errorf("shifts: %w", err)
	}
	return out, nil
}

// scanShift scans a row of lead columns followed by starts_at, ends_at,
// break_starts_at and break_ends_at.
func scanShift(row pgx.Row, lead ...any) (shift, error) {
	var sh shift
	var bs, be *time.Time
	err := row.Scan(append(lead, &sh.start, &sh.end, &bs, &be)...)
	if bs != nil && be != nil {
		sh.breakStart, sh.breakEnd = *bs, *be
	}
	return sh, err
}

// activeMaster checks that the master exists and is active (ErrConflict
// when not: a deactivated master gets no new links or feeds).
func activeMaster(ctx context.Context, q querier, salonID, masterID int64) error {
	var active bool
	// FOR SHARE: in a transaction, the master stays active until it ends
	// (a deactivation, which updates the row first, waits for it, then
	// removes what it made; or this waits and sees the master inactive).
	err := q.QueryRow(ctx, `SELECT active FROM masters WHERE salon_id = $1 AND id = $2 FOR SHARE`, salonID, masterID).Scan(&active)
	switch {
	case isNoRows(err):
		return fmt.Errorf("master %d: %w", masterID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("master %d: %w", masterID, err)
	case !active:
		return conflict("master %d is not active", masterID)
	}
	return nil
}

func masterExists(ctx context.Context, q querier, salonID, masterID int64) error {
	var ok bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM masters WHERE salon_id = $1 AND id = $2)`,
		salonID, masterID).Scan(&ok); err != nil {
		return fmt.Errorf("master %d: %w", masterID, err)
	}
	if !ok {
		return fmt.Errorf("master %d: %w", masterID, ErrNotFound)
	}
	return nil
}
