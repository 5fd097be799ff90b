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
	End      time.Time // when the client leaves: the service with this master, its processing and finish (buffer not included)
}

// SlotQuery asks for free starts.
type SlotQuery struct {
	SalonID   int64
	ServiceID int64
	MasterID  int64 // 0: any master who does the service
	From      Date  // first salon-local day
	Days      int   // number of days, 1..31; 0 means 1
	// Moving is the booking the client is moving (0: none): its own time
	// counts as free, so a move may overlap it, and its present start is
	// not offered. The caller must hold it (its manage token, its chat, the
	// salon); whether it may still be moved is the move's to say.
	Moving int64
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
	if err := mayRead(ctx, q.SalonID); err != nil {
		return nil, err
	}
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
	checkDays(fe, q.From, q.Days)
	if err := fe.err(); err != nil {
		return nil, err
	}
	// The salon, service and offers come from the cached catalogue: one
	// query for its version instead of three (slots are asked for often).
	c, err := s.currentCatalog(ctx, q.SalonID)
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
	mv, err := s.moving(ctx, q.SalonID, q.Moving)
	if err != nil {
		return nil, err
	}
	loc := salon.Location()
	w := window{from: q.From.Start(loc), to: q.From.AddDays(q.Days).Start(loc)}
	slots, busy, err := freeSlots(ctx, s.pool, &salon, &svc, offers, w, s.now(), mv.id, false)
	if err != nil {
		return nil, dbErr(err)
	}
	if mv.id != 0 { // (a search that moves nothing, the most, passes no slot twice)
		slots = slices.DeleteFunc(slots, func(sl Slot) bool { return mv.now(sl.Start, sl.MasterID) })
	}
	if q.MasterID != 0 {
		return slots, nil
	}
	return anyMaster(slots, busy, loc), nil
}

// movingVisit is a visit being moved, as it stands: its head's id, start
// and masters in visit order (none: nothing is being moved).
type movingVisit struct {
	id      int64
	start   time.Time
	masters []int64
}

// now reports whether a start with masters is where the visit already is.
func (m movingVisit) now(start time.Time, masters ...int64) bool {
	return m.id != 0 && start.Equal(m.start) && slices.Equal(masters, m.masters)
}

// moving reads the visit of booking id (0: none) in the salon for a slot
// search that moves it; a caller who does not hold it gets ErrNotFound,
// as for a booking that does not exist.
func (s *Service) moving(ctx context.Context, salonID, id int64) (movingVisit, error) {
	if id == 0 {
		return movingVisit{}, nil
	}
	caller, err := s.asked(ctx)
	if err != nil {
		return movingVisit{}, err
	}
	b, g, err := readBooking(ctx, s.pool, caller, salonID, id, "")
	if err == nil && !b.Head() {
		b, g, err = readBooking(ctx, s.pool, caller, salonID, b.VisitID, "")
	}
	if err != nil {
		return movingVisit{}, dbErr(err)
	}
	if !caller.may(b, g) {
		return movingVisit{}, fmt.Errorf("booking %d: %w", id, ErrNotFound)
	}
	segs, err := visitSegments(ctx, s.pool, b, "")
	if err != nil {
		return movingVisit{}, dbErr(err)
	}
	out := movingVisit{id: b.ID, start: b.StartsAt}
	for _, sg := range segs {
		out.masters = append(out.masters, sg.MasterID)
	}
	return out, nil
}

// checkDays checks a slot search's first day and number of days.
func checkDays(fe fieldErrors, from Date, days int) {
	if from.IsZero() {
		fe.add("date", "required")
	}
	if days < 1 || days > MaxSlotDays {
		fe.add("days", "must be between 1 and %d", MaxSlotDays)
	}
}

// anyMaster keeps one slot per start: the master the salon gives a client
// who chose "any master", the one with the least booked time that day
// (ties: the lowest id), so work spreads over the team. slots are sorted by
// start, then master.
func anyMaster(slots []Slot, busy map[int64][]interval, loc *time.Location) []Slot {
	type key struct {
		master int64
		day    Date
	}
	load := map[key]time.Duration{}
	loadOf := func(m int64, d Date) time.Duration {
		k := key{m, d}
		if v, ok := load[k]; ok {
			return v
		}
		var sum time.Duration
		for _, b := range busy[m] {
			if DateOf(b.start.In(loc)) == d {
				sum += b.end.Sub(b.start)
			}
		}
		load[k] = sum
		return sum
	}
	var out []Slot
	for i := 0; i < len(slots); {
		j, best := i, slots[i]
		day := DateOf(best.Start.In(loc))
		for ; j < len(slots) && slots[j].Start.Equal(best.Start); j++ {
			if loadOf(slots[j].MasterID, day) < loadOf(best.MasterID, day) {
				best = slots[j]
			}
		}
		out = append(out, best)
		i = j
	}
	return out
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

// timing is a service's terms of time with one master: the master works
// dur, keeps buffer free after it, and, for a service with processing
// time, is free for processing while the client stays, then works finish.
type timing struct {
	dur, buffer, processing, finish time.Duration
}

// busy returns the master's busy intervals for a start at: the service and
// its buffer (before a finish, no longer than the processing), then the
// finish and the buffer again. The schema's master_busy rows are the same.
func (t timing) busy(at time.Time) []interval {
	if t.finish == 0 {
		return []interval{{at, at.Add(t.dur + t.buffer)}}
	}
	fin := at.Add(t.dur + t.processing)
	return []interval{{at, at.Add(t.dur + min(t.buffer, t.processing))}, {fin, fin.Add(t.finish + t.buffer)}}
}

// gap returns the part of the client's stay when the master is free
// (zero when there is none).
func (t timing) gap(at time.Time) interval {
	from, to := at.Add(t.dur+min(t.buffer, t.processing)), at.Add(t.dur+t.processing)
	if !from.Before(to) {
		return interval{}
	}
	return interval{from, to}
}

// end is when the client leaves.
func (t timing) end(at time.Time) time.Time { return at.Add(t.dur + t.processing + t.finish) }

// next is when a visit's next segment may start: the client has left this
// one and its master's buffer has passed.
func (t timing) next(at time.Time) time.Time {
	b := t.busy(at)
	return laterOf(t.end(at), b[len(b)-1].end)
}

// fitsIn reports whether a start at lies in the shift: the master's work
// inside its working intervals (the service on its interval's grid when
// step > 0) and the client's stay inside the shift.
func (t timing) fitsIn(sh shift, at time.Time, step time.Duration) bool {
	if !sh.fits(at, t.dur, step) {
		return false
	}
	if t.processing == 0 {
		return true
	}
	return !t.end(at).After(sh.end) && (t.finish == 0 || sh.fits(at.Add(t.dur+t.processing), t.finish, 0))
}

// free reports whether a start at keeps the master's busy intervals clear
// of busy (sorted by start).
func (t timing) free(busy []interval, at time.Time) bool {
	for _, iv := range t.busy(at) {
		if !unoccupied(busy, iv) {
			return false
		}
	}
	return true
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// slotRules are what a start must satisfy besides fitting a shift.
type slotRules struct {
	timing
	step     time.Duration
	earliest time.Time // now plus the minimum notice
	latest   time.Time // the horizon: starts must be before it
}

// forStaff is r for staff when staff is true: any start from now on (not
// the client's notice, nor the horizon).
func (r slotRules) forStaff(staff bool, now time.Time) slotRules {
	if staff {
		r.earliest, r.latest = now, now.AddDate(100, 0, 0)
	}
	return r
}

// freeStarts returns the starts in w that the shifts offer on their grid and
// that keep the master's busy intervals clear of busy (sorted by start).
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
				if (r.processing > 0 && !r.fitsIn(sh, t, 0)) || !r.free(busy, t) {
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
		timing:   svc.timing(o.durationMin),
		step:     time.Duration(salon.SlotStepMin) * time.Minute,
		earliest: now.Add(time.Duration(salon.MinNoticeMin) * time.Minute),
		latest:   salon.Today(now).AddDays(salon.HorizonDays).Start(loc),
	}
}

// freeSlots computes the free slots of the offered masters in w, treating the
// booking exclude (when not 0) as free: it is the one being moved; staff's
// past the clients' notice and horizon. It also returns the masters' busy
// intervals it read.
func freeSlots(ctx context.Context, q querier, salon *Salon, svc *SalonService, offers []offerTerms,
	w window, now time.Time, exclude int64, staff bool) ([]Slot, map[int64][]interval, error) {
	if len(offers) == 0 {
		return nil, nil, nil
	}
	ids := make([]int64, len(offers))
	for i, o := range offers {
		ids[i] = o.masterID
	}
	// A shift that starts before the window can offer starts inside it, and a
	// booking that starts before it can reach into it.
	shifts, err := loadShifts(ctx, q, salon.ID, ids, w.from.Add(-24*time.Hour), w.to)
	if err != nil {
		return nil, nil, err
	}
	busy, err := loadBusy(ctx, q, salon.ID, ids, interval{w.from, w.to.Add(24 * time.Hour)}, exclude)
	if err != nil {
		return nil, nil, err
	}
	var out []Slot
	for _, o := range offers {
		r := rules(salon, svc, o, now).forStaff(staff, now)
		for _, t := range freeStarts(shifts[o.masterID], busy[o.masterID], r, w) {
			out = append(out, Slot{MasterID: o.masterID, Start: t, End: r.end(t)})
		}
	}
	slices.SortFunc(out, func(a, b Slot) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.MasterID, b.MasterID))
	})
	return out, busy, nil
}

// MaxAlternatives is how many alternatives a refused booking offers.
const MaxAlternatives = 6

// alternatives returns up to MaxAlternatives free starts near at for a
// request the calendar refused: first the same master's nearest starts,
// before and after at; then other masters who do the service free at
// exactly at; then other masters' nearest starts. It searches a week
// around at, and the whole bookable window when that finds fewer than
// three. It runs after the refused transaction ended, from a fresh
// snapshot, holding no lock: alternatives are advice (the constraint
// decides), and the losers of one slot share one search.
func (s *Service) alternatives(ctx context.Context, salonID, serviceID, masterID int64, at, now time.Time, exclude int64, staff bool) ([]Slot, error) {
	key := fmt.Sprintf("%d/%d/%d/%d/%d/%v", salonID, serviceID, masterID, at.Unix(), exclude, staff)
	v, err, _ := s.alts.Do(key, func() (any, error) {
		// Shared by every loser waiting on this key: one caller's
		// deadline must not end the others' search.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.lockWait)
		defer cancel()
		return s.searchAlternatives(sctx, s.pool, salonID, serviceID, masterID, at, now, exclude, staff)
	})
	if err != nil {
		return nil, dbErr(err)
	}
	return slices.Clone(v.([]Slot)), nil
}

// searchAlternatives finds the alternatives to at, reading through q (the
// pool; a dry run's transaction, which sees its own rehearsed writes). A
// client's are within the client's notice and horizon; staff's (staff
// book past both) are any free start from now, within two weeks of at.
func (s *Service) searchAlternatives(ctx context.Context, q querier, salonID, serviceID, masterID int64, at, now time.Time, exclude int64,
	staff bool) ([]Slot, error) {
	c, err := s.currentCatalog(ctx, salonID)
	if err != nil {
		return nil, err
	}
	svc, ok := c.services[serviceID]
	if !ok {
		return nil, nil
	}
	offers := c.offersFor(serviceID, 0)
	r := rules(&c.salon, &svc, offerTerms{}, now)
	bookable := window{from: r.earliest, to: r.latest}
	if staff {
		bookable = window{from: at.Add(-14 * 24 * time.Hour), to: at.Add(14 * 24 * time.Hour)}
		if bookable.from.Before(now) {
			bookable.from = now
		}
	}
	near := window{from: at.Add(-84 * time.Hour), to: at.Add(84 * time.Hour)}
	for _, w := range []window{near.clip(bookable), bookable} {
		alts, err := s.alternativesIn(ctx, q, &c.salon, &svc, offers, masterID, at, now, exclude, w, staff)
		if err != nil || len(alts) >= 3 || w == bookable {
			return alts, err
		}
	}
	return nil, nil
}

// clip returns w cut to the bounds of o.
func (w window) clip(o window) window {
	if w.from.Before(o.from) {
		w.from = o.from
	}
	if w.to.After(o.to) {
		w.to = o.to
	}
	return w
}

// alternativesIn picks the alternatives from the free starts in w.
func (s *Service) alternativesIn(ctx context.Context, q querier, salon *Salon, svc *SalonService, offers []offerTerms,
	masterID int64, at, now time.Time, exclude int64, w window, staff bool) ([]Slot, error) {
	if !w.from.Before(w.to) {
		return nil, nil
	}
	all, busy, err := freeSlots(ctx, q, salon, svc, offers, w, now, exclude, staff)
	if err != nil {
		return nil, err
	}
	var same, exact, others []Slot
	for _, sl := range all {
		switch {
		case sl.MasterID == masterID && !sl.Start.Equal(at):
			same = append(same, sl)
		case sl.MasterID != masterID && sl.Start.Equal(at):
			exact = append(exact, sl)
		case sl.MasterID != masterID:
			others = append(others, sl)
		}
	}
	exact = append(exact, offGrid(ctx, q, salon, svc, offers, masterID, at, now, exact, busy, staff)...)
	nearest := func(list []Slot) {
		slices.SortStableFunc(list, func(a, b Slot) int {
			return cmp.Or(cmp.Compare(absDur(a.Start.Sub(at)), absDur(b.Start.Sub(at))), a.Start.Compare(b.Start))
		})
	}
	nearest(same)
	nearest(others)
	slices.SortFunc(exact, func(a, b Slot) int { return cmp.Compare(a.MasterID, b.MasterID) })
	// Same master first (up to four, leaving room for two others at the
	// same time), then the others at that time, then whatever is nearest.
	nExact := min(len(exact), 2)
	nSame := min(len(same), MaxAlternatives-nExact)
	out := slices.Clone(same[:nSame])
	slices.SortFunc(out, func(a, b Slot) int { return a.Start.Compare(b.Start) })
	out = append(out, exact[:min(len(exact), MaxAlternatives-len(out))]...)
	for _, sl := range others {
		if len(out) >= MaxAlternatives {
			break
		}
		out = append(out, sl)
	}
	return out, nil
}

// offGrid returns the other masters free at exactly at whose grid does not
// include at (their shift may start at another minute), from the busy
// intervals already read and their shifts at that time.
func offGrid(ctx context.Context, q querier, salon *Salon, svc *SalonService, offers []offerTerms,
	masterID int64, at, now time.Time, found []Slot, busy map[int64][]interval, staff bool) []Slot {
	var ids []int64
	terms := map[int64]offerTerms{}
	for _, o := range offers {
		if o.masterID != masterID && !slices.ContainsFunc(found, func(s Slot) bool { return s.MasterID == o.masterID }) {
			ids = append(ids, o.masterID)
			terms[o.masterID] = o
		}
	}
	if len(ids) == 0 {
		return nil
	}
	shifts, err := loadShifts(ctx, q, salon.ID, ids, at, at.Add(time.Minute))
	if err != nil {
		return nil // advice: an error here only means fewer choices
	}
	var out []Slot
	for _, id := range ids {
		r := rules(salon, svc, terms[id], now).forStaff(staff, now)
		if at.Before(r.earliest) || !at.Before(r.latest) {
			continue
		}
		if !slices.ContainsFunc(shifts[id], func(sh shift) bool { return r.fitsIn(sh, at, 0) }) || !r.free(busy[id], at) {
			continue
		}
		out = append(out, Slot{MasterID: id, Start: at, End: r.end(at)})
	}
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
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

// loadBusy returns the busy intervals (work plus buffer; a processing gap
// is free) of the masters' active bookings that overlap iv, by master,
// sorted by start, treating the visit exclude (when not 0) as free.
func loadBusy(ctx context.Context, q querier, salonID int64, masterIDs []int64, iv interval, exclude int64) (map[int64][]interval, error) {
	rows, err := q.Query(ctx, `
		SELECT master_id, starts_at, booking_slot_end(starts_at, duration_min)
		FROM master_busy
		WHERE salon_id = $1 AND master_id = ANY ($2)
		  AND tstzrange(starts_at, booking_slot_end(starts_at, duration_min)) && tstzrange($3, $4)
		  AND ($5::bigint = 0 OR booking_id NOT IN (SELECT id FROM bookings WHERE id = $5 OR visit_of = $5))
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
