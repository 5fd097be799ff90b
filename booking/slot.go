package booking

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Slot is a free start for a service with a master.
type Slot struct {
	MasterID int64
	Start    time.Time
	End      time.Time // Start plus the service's duration with this master (buffer not included)
}

// SlotQuery asks for free starts.
type SlotQuery struct {
	SalonID   int64
	ServiceID int64
	MasterID  int64 // 0: any master who does the service
	From      Date  // first salon-local day
	Days      int   // number of days, 1..31; 0 means 1
}

// MaxSlotDays is the widest range Slots answers in one call.
const MaxSlotDays = 31

// Slots returns the free bookable starts, ordered by time then master: inside
// the masters' shifts and outside their breaks, on the salon's grid, clear of
// active bookings (with their buffers), no sooner than the salon's minimum
// notice and no further ahead than its horizon.
// Errors: ErrNotFound (salon), ErrInvalid (fields; unknown service or master
// ids also unwrap to ErrNotFound).
func (s *Service) Slots(ctx context.Context, q SlotQuery) ([]Slot, error) {
	if q.Days == 0 {
		q.Days = 1
	}
	fe := fieldErrors{}
	if q.ServiceID <= 0 {
		fe.add("service_id", "required")
	}
	if q.MasterID < 0 {
		fe.add("master_id", "must be positive")
	}
	if q.From.IsZero() {
		fe.add("date", "required")
	}
	if q.Days < 1 || q.Days > MaxSlotDays {
		fe.add("days", fmt.Sprintf("must be between 1 and %d", MaxSlotDays))
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	// The salon, service and offers come from the cached catalogue: one
	// query for its version instead of three (slots are asked for often).
	var version int64
	err := s.pool.QueryRow(ctx, `SELECT catalog_version FROM salons WHERE id = $1`, q.SalonID).Scan(&version)
	if isNoRows(err) {
		return nil, fmt.Errorf("salon %d: %w", q.SalonID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	c, err := s.catalogAt(ctx, s.pool, q.SalonID, version)
	if err != nil {
		return nil, err
	}
	salon, svc := c.salon, c.services[q.ServiceID]
	if !svc.Active {
		return nil, unknown("service_id", "no such service")
	}
	offers := c.offersFor(q.ServiceID, q.MasterID)
	if q.MasterID != 0 && len(offers) == 0 {
		return nil, unknown("master_id", "no such master for this service")
	}
	loc := salon.Location()
	w := window{from: q.From.Start(loc), to: q.From.AddDays(q.Days).Start(loc)}
	return freeSlots(ctx, s.pool, &salon, &svc, offers, w, s.now(), 0)
}

// window is a half-open range of start instants.
type window struct{ from, to time.Time }

// offerTerms is one master's terms for one service.
type offerTerms struct {
	masterID    int64
	durationMin int
	price       Money
}

// interval is a half-open time range.
type interval struct{ start, end time.Time }

func (i interval) overlaps(j interval) bool { return i.start.Before(j.end) && j.start.Before(i.end) }

// shift is one working interval of a master with an optional break.
type shift struct {
	start, end           time.Time
	breakStart, breakEnd time.Time // zero when there is no break
}

// work returns the shift's working intervals: the shift minus its break.
func (sh shift) work() []interval {
	if sh.breakStart.IsZero() || !sh.breakStart.Before(sh.breakEnd) {
		return []interval{{sh.start, sh.end}}
	}
	out := make([]interval, 0, 2)
	if sh.start.Before(sh.breakStart) {
		out = append(out, interval{sh.start, sh.breakStart})
	}
	if sh.breakEnd.Before(sh.end) {
		out = append(out, interval{sh.breakEnd, sh.end})
	}
	return out
}

// fits reports whether [t, t+dur) lies inside one working interval; with
// step > 0 t must also be on the interval's grid (its start plus k*step).
func (sh shift) fits(t time.Time, dur, step time.Duration) bool {
	for _, w := range sh.work() {
		if t.Before(w.start) || t.Add(dur).After(w.end) {
			continue
		}
		if step > 0 && t.Sub(w.start)%step != 0 {
			continue
		}
		return true
	}
	return false
}

// slotRules are what a start must satisfy besides fitting a shift.
type slotRules struct {
	dur, buffer, step time.Duration
	earliest          time.Time // now plus the minimum notice
	latest            time.Time // the horizon: starts must be before it
}

// freeStarts returns the starts in w that the shifts offer on their grid and
// that keep [start, start+dur+buffer) clear of busy. busy must be sorted by start.
func freeStarts(shifts []shift, busy []interval, r slotRules, w window) []time.Time {
	var out []time.Time
	for _, sh := range shifts {
		for _, wi := range sh.work() {
			for t := wi.start; !t.Add(r.dur).After(wi.end); t = t.Add(r.step) {
				if t.Before(w.from) || t.Before(r.earliest) {
					continue
				}
				if !t.Before(w.to) || !t.Before(r.latest) {
					break
				}
				if !unoccupied(busy, interval{t, t.Add(r.dur + r.buffer)}) {
					continue
				}
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return slices.Compact(out)
}

// unoccupied reports whether iv overlaps nothing in busy (sorted by start).
func unoccupied(busy []interval, iv interval) bool {
	for _, b := range busy {
		if !b.start.Before(iv.end) {
			return true
		}
		if b.overlaps(iv) {
			return false
		}
	}
	return true
}

// rules returns the slot rules for a salon, service and master terms at now.
func rules(salon *Salon, svc *SalonService, o offerTerms, now time.Time) slotRules {
	loc := salon.Location()
	return slotRules{
		dur:      time.Duration(o.durationMin) * time.Minute,
		buffer:   time.Duration(svc.BufferMin) * time.Minute,
		step:     time.Duration(salon.SlotStepMin) * time.Minute,
		earliest: now.Add(time.Duration(salon.MinNoticeMin) * time.Minute),
		latest:   salon.Today(now).AddDays(salon.HorizonDays).Start(loc),
	}
}

// freeSlots computes the free slots of the offered masters in w, treating the
// booking exclude (when not 0) as free: it is the one being moved.
func freeSlots(ctx context.Context, q querier, salon *Salon, svc *SalonService, offers []offerTerms,
	w window, now time.Time, exclude int64) ([]Slot, error) {
	if len(offers) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(offers))
	for i, o := range offers {
		ids[i] = o.masterID
	}
	// A shift that starts before the window can offer starts inside it, and a
	// booking that starts before it can reach into it.
	shifts, err := loadShifts(ctx, q, salon.ID, ids, w.from.Add(-24*time.Hour), w.to)
	if err != nil {
		return nil, err
	}
	busy, err := loadBusy(ctx, q, salon.ID, ids, interval{w.from, w.to.Add(24 * time.Hour)}, exclude)
	if err != nil {
		return nil, err
	}
	var out []Slot
	for _, o := range offers {
		r := rules(salon, svc, o, now)
		for _, t := range freeStarts(shifts[o.masterID], busy[o.masterID], r, w) {
			out = append(out, Slot{MasterID: o.masterID, Start: t, End: t.Add(r.dur)})
		}
	}
	slices.SortFunc(out, func(a, b Slot) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.MasterID, b.MasterID))
	})
	return out, nil
}

// MaxAlternatives is how many alternatives a refused booking offers.
const MaxAlternatives = 6

// alternatives returns up to MaxAlternatives free starts near at: first the
// same master's nearest starts before and after at (within a week), then
// other masters who do the service at exactly at. It runs inside the refused
// transaction, so it sees what the refusal saw.
func alternatives(ctx context.Context, q querier, salon *Salon, svc *SalonService, masterID int64,
	at, now time.Time, exclude int64) ([]Slot, error) {
	offers, err := loadOffers(ctx, q, salon.ID, svc.ID, 0)
	if err != nil {
		return nil, err
	}
	loc := salon.Location()
	day := DateOf(at.In(loc))
	w := window{from: day.Start(loc), to: day.AddDays(7).Start(loc)}
	all, err := freeSlots(ctx, q, salon, svc, offers, w, now, exclude)
	if err != nil {
		return nil, err
	}
	var same, others []Slot
	for _, sl := range all {
		switch {
		case sl.MasterID == masterID && !sl.Start.Equal(at):
			same = append(same, sl)
		case sl.MasterID != masterID && sl.Start.Equal(at):
			others = append(others, sl)
		}
	}
	// Other masters at the requested time may not be on the grid there (their
	// shift may start at another minute): offer them when the time fits.
	others, err = othersAt(ctx, q, salon, svc, offers, masterID, at, now, exclude, others)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(same, func(a, b Slot) int {
		return cmp.Compare(absDur(a.Start.Sub(at)), absDur(b.Start.Sub(at)))
	})
	nOthers := min(len(others), 2)
	nSame := min(len(same), MaxAlternatives-nOthers)
	nOthers = min(len(others), MaxAlternatives-nSame)
	out := slices.Clone(same[:nSame])
	slices.SortFunc(out, func(a, b Slot) int { return a.Start.Compare(b.Start) })
	return append(out, others[:nOthers]...), nil
}

// othersAt adds, to found, the other masters free at exactly at whose grid
// does not include at.
func othersAt(ctx context.Context, q querier, salon *Salon, svc *SalonService, offers []offerTerms,
	masterID int64, at, now time.Time, exclude int64, found []Slot) ([]Slot, error) {
	var ids []int64
	terms := map[int64]offerTerms{}
	for _, o := range offers {
		if o.masterID != masterID && !slices.ContainsFunc(found, func(s Slot) bool { return s.MasterID == o.masterID }) {
			ids = append(ids, o.masterID)
			terms[o.masterID] = o
		}
	}
	if len(ids) == 0 {
		return found, nil
	}
	shifts, err := loadShifts(ctx, q, salon.ID, ids, at, at.Add(time.Minute))
	if err != nil {
		return nil, err
	}
	busy, err := loadBusy(ctx, q, salon.ID, ids, interval{at.Add(-24 * time.Hour), at.Add(24 * time.Hour)}, exclude)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		r := rules(salon, svc, terms[id], now)
		if at.Before(r.earliest) || !at.Before(r.latest) {
			continue
		}
		if !slices.ContainsFunc(shifts[id], func(sh shift) bool { return sh.fits(at, r.dur, 0) }) {
			continue
		}
		if !unoccupied(busy[id], interval{at, at.Add(r.dur + r.buffer)}) {
			continue
		}
		found = append(found, Slot{MasterID: id, Start: at, End: at.Add(r.dur)})
	}
	slices.SortFunc(found, func(a, b Slot) int { return cmp.Compare(a.MasterID, b.MasterID) })
	return found, nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// loadOffers returns the active masters (or the one master, when masterID > 0)
// who do the service, with their duration and price for it.
func loadOffers(ctx context.Context, q querier, salonID, serviceID, masterID int64) ([]offerTerms, error) {
	rows, err := q.Query(ctx, `
		SELECT m.id, COALESCE(ms.duration_min, sv.duration_min), COALESCE(ms.price, sv.price)
		FROM master_services ms
		JOIN masters m ON m.id = ms.master_id AND m.salon_id = $1 AND m.active
		JOIN services sv ON sv.id = ms.service_id AND sv.salon_id = $1 AND sv.active
		WHERE ms.salon_id = $1 AND ms.service_id = $2 AND ($3 = 0 OR ms.master_id = $3)
		ORDER BY m.id`, salonID, serviceID, masterID)
	if err != nil {
		return nil, fmt.Errorf("offers: %w", err)
	}
	defer rows.Close()
	var out []offerTerms
	for rows.Next() {
		var o offerTerms
		if err := rows.Scan(&o.masterID, &o.durationMin, &o.price); err != nil {
			return nil, fmt.Errorf("offers: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("offers: %w", err)
	}
	return out, nil
}

// loadShifts returns the masters' shifts that overlap [from, to), by master, sorted.
func loadShifts(ctx context.Context, q querier, salonID int64, masterIDs []int64, from, to time.Time) (map[int64][]shift, error) {
	rows, err := q.Query(ctx, `
		SELECT master_id, starts_at, ends_at, break_starts_at, break_ends_at
		FROM shifts
		WHERE salon_id = $1 AND master_id = ANY ($2) AND ends_at > $3
		  AND starts_at < $4 AND starts_at > $3::timestamptz - interval '24 hours'
		ORDER BY master_id, starts_at`, salonID, masterIDs, from, to)
	if err != nil {
		return nil, fmt.Errorf("shifts: %w", err)
	}
	defer rows.Close()
	out := map[int64][]shift{}
	for rows.Next() {
		var id int64
		sh, err := scanShift(rows, &id)
		if err != nil {
			return nil, fmt.Errorf("shifts: %w", err)
		}
		out[id] = append(out[id], sh)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shifts: %w", err)
	}
	return out, nil
}

// loadBusy returns the occupied intervals (service plus buffer) of the
// masters' active bookings that overlap iv, by master, sorted by start.
func loadBusy(ctx context.Context, q querier, salonID int64, masterIDs []int64, iv interval, exclude int64) (map[int64][]interval, error) {
	rows, err := q.Query(ctx, `
		SELECT master_id, starts_at, booking_slot_end(starts_at, duration_min + buffer_min)
		FROM bookings
		WHERE salon_id = $1 AND master_id = ANY ($2) AND status IN ('pending', 'confirmed')
		  AND tstzrange(starts_at, booking_slot_end(starts_at, duration_min + buffer_min)) && tstzrange($3, $4)
		  AND id <> $5
		ORDER BY master_id, starts_at`, salonID, masterIDs, iv.start, iv.end, exclude)
	if err != nil {
		return nil, fmt.Errorf("busy: %w", err)
	}
	defer rows.Close()
	out := map[int64][]interval{}
	for rows.Next() {
		var id int64
		var b interval
		if err := rows.Scan(&id, &b.start, &b.end); err != nil {
			return nil, fmt.Errorf("busy: %w", err)
		}
		out[id] = append(out[id], b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("busy: %w", err)
	}
	return out, nil
}
