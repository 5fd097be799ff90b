package booking

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A visit is several services booked as one: an ordered list of segments,
// each a bookings row (the first is the visit's head; the others name it in
// visit_of). It is booked, moved, cancelled, paid and told as one: every
// segment or none. Segments follow one another (each after the one before
// has ended for the client and its master's buffer has passed), but a
// service the salon does at once with the one before it (a pair of
// service_parallel) starts with it, by another master.

// MaxVisitItems is the most services one visit holds.
const MaxVisitItems = 5

// VisitItem is one service asked for in a visit.
type VisitItem struct {
	ServiceID int64
	MasterID  int64 // 0: any master who does the service
}

// Segment is one service of a visit as placed.
type Segment struct {
	ServiceID, MasterID int64
	// Start and End are the client's time in this service (processing
	// and finish included).
	Start, End time.Time
	// ProcessingStart and ProcessingEnd are when the master is free for
	// others meanwhile (zero when never).
	ProcessingStart, ProcessingEnd time.Time
}

// VisitSlot is a free start for a whole visit: its segments, in visit
// order, with the masters the salon gives it.
type VisitSlot struct {
	Start, End time.Time
	Segments   []Segment
}

// at reports whether the slot places each segment where segs (a visit's,
// in visit order) are.
func (v VisitSlot) at(segs []Booking) bool {
	if len(v.Segments) != len(segs) {
		return false
	}
	for i, sg := range v.Segments {
		if sg.MasterID != segs[i].MasterID || !sg.Start.Equal(segs[i].StartsAt) {
			return false
		}
	}
	return true
}

// items are the slot's services with their masters, in visit order.
func (v VisitSlot) items() []VisitItem {
	out := make([]VisitItem, len(v.Segments))
	for i, sg := range v.Segments {
		out[i] = VisitItem{ServiceID: sg.ServiceID, MasterID: sg.MasterID}
	}
	return out
}

// Masters returns the segments' masters, in visit order.
func (v VisitSlot) Masters() []int64 {
	out := make([]int64, len(v.Segments))
	for i, sg := range v.Segments {
		out[i] = sg.MasterID
	}
	return out
}

// VisitSlotQuery asks for free starts of a whole visit.
type VisitSlotQuery struct {
	SalonID int64
	Items   []VisitItem
	From    Date  // first salon-local day
	Days    int   // 1..31; 0 means 1
	Moving  int64 // the visit being moved, as in SlotQuery
}

// SegmentsOf returns the segments of a visit as booked: b's Segments, or b
// alone when they were not read.
func SegmentsOf(b *Booking) []Segment {
	list := b.Segments
	if len(list) == 0 {
		list = []Booking{*b}
	}
	out := make([]Segment, len(list))
	for i := range list {
		sg := &list[i]
		p := sg.terms().gap(sg.StartsAt)
		out[i] = Segment{ServiceID: sg.ServiceID, MasterID: sg.MasterID, Start: sg.StartsAt, End: sg.EndsAt(),
			ProcessingStart: p.start, ProcessingEnd: p.end}
	}
	return out
}

// VisitPrice is the price of the visit b heads: its segments' prices
// (b's own when they were not read).
func VisitPrice(b *Booking) Money {
	if len(b.Segments) == 0 {
		return b.Price
	}
	var sum Money
	for i := range b.Segments {
		sum += b.Segments[i].Price
	}
	return sum
}

// VisitEnd is when the client leaves the visit b heads.
func VisitEnd(b *Booking) time.Time {
	end := b.EndsAt()
	for i := range b.Segments {
		end = laterOf(end, b.Segments[i].EndsAt())
	}
	return end
}

// checkItems checks a visit's items against the catalogue: 1 to
// MaxVisitItems, each an active service, each named master one who does it.
func checkItems(c *catalog, items []VisitItem) error {
	fe := fieldErrors{}
	switch {
	case len(items) == 0:
		fe.add("items", "required")
	case len(items) > MaxVisitItems:
		fe.add("items", "at most %d services in one visit", MaxVisitItems)
	}
	if err := fe.err(); err != nil {
		return err
	}
	for i, it := range items {
		f := fmt.Sprintf("items[%d].", i)
		svc, ok := c.services[it.ServiceID]
		switch {
		case it.ServiceID <= 0:
			fe.add(f+"service_id", "required")
		case !ok || !svc.Active:
			return unknown(f+"service_id", "no such service")
		case it.MasterID < 0:
			fe.add(f+"master_id", "must be positive")
		case it.MasterID > 0 && !c.masters[it.MasterID]:
			return unknown(f+"master_id", "no such master")
		case it.MasterID > 0:
			if _, ok := c.offers[[2]int64{it.MasterID, it.ServiceID}]; !ok {
				fe.add(f+"master_id", "this master does not do this service")
			}
		case len(c.offersFor(it.ServiceID, 0)) == 0:
			fe.add(f+"service_id", "no master does this service")
		}
	}
	return fe.err()
}

// visitMasters returns every master the items may take.
func visitMasters(c *catalog, items []VisitItem) []int64 {
	var ids []int64
	for _, it := range items {
		for _, o := range c.offersFor(it.ServiceID, it.MasterID) {
			ids = append(ids, o.masterID)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(ids)))
}

// placed is one segment of a planned visit.
type placed struct {
	serviceID, master int64
	start             time.Time
	t                 timing
	price             Money
	durationMin       int
}

// planner places visits on the masters' calendars as read (shifts and busy
// intervals by master).
type planner struct {
	c      *catalog
	shifts map[int64][]shift
	busy   map[int64][]interval
	// client: the first start on its master's grid.
	client bool
	load   map[masterDay]time.Duration
	budget int
}

type masterDay struct {
	master int64
	day    Date
}

// maxPlanSteps bounds the search for one start's masters (the choices of
// "any master" tried): a start that needs more is not offered.
const maxPlanSteps = 200

// place returns the visit's segments from at, or nil when the items do not
// fit there: each in its master's working hours, clear of the masters'
// busy time and of each other. A segment with "any master" takes, among
// those free, the master of the segment before it, else the one least
// booked that day; when a later segment then fits nowhere, the others
// are tried.
func (p *planner) place(items []VisitItem, at time.Time) []placed {
	p.budget = maxPlanSteps
	out := make([]placed, 0, len(items))
	if p.next(items, at, &out) {
		return out
	}
	return nil
}

func (p *planner) next(items []VisitItem, at time.Time, out *[]placed) bool {
	i := len(*out)
	if i == len(items) {
		return true
	}
	if p.budget <= 0 {
		return false
	}
	p.budget--
	start, together := at, false
	var prev *placed
	if i > 0 {
		prev = &(*out)[i-1]
		together = p.c.together(items[i-1].ServiceID, items[i].ServiceID)
		if together {
			start = prev.start // with the one before, by another master
		} else {
			start = time.Time{}
			for j := i - 1; j >= 0 && (*out)[j].start.Equal(prev.start); j-- {
				start = laterOf(start, (*out)[j].t.next((*out)[j].start))
			}
		}
	}
	svc := p.c.services[items[i].ServiceID]
	var step time.Duration
	if i == 0 && p.client {
		step = minutes(p.c.salon.SlotStepMin)
	}
	for _, o := range p.candidates(items[i], prev, together, start) {
		t := svc.timing(o.durationMin)
		if !slices.ContainsFunc(p.shifts[o.masterID], func(sh shift) bool { return t.fitsIn(sh, start, step) }) ||
			!t.free(p.busy[o.masterID], start) || clashes(*out, o.masterID, t, start) {
			continue
		}
		*out = append(*out, placed{serviceID: svc.ID, master: o.masterID, start: start, t: t, price: o.price, durationMin: o.durationMin})
		if p.next(items, at, out) {
			return true
		}
		*out = (*out)[:i]
	}
	return false
}

// candidates returns the masters an item may take, in the order tried.
func (p *planner) candidates(it VisitItem, prev *placed, together bool, at time.Time) []offerTerms {
	offers := p.c.offersFor(it.ServiceID, it.MasterID)
	if it.MasterID != 0 || len(offers) < 2 {
		return offers
	}
	day := DateOf(at.In(p.c.salon.Location()))
	slices.SortStableFunc(offers, func(a, b offerTerms) int {
		if prev != nil && !together && (a.masterID == prev.master) != (b.masterID == prev.master) {
			if a.masterID == prev.master {
				return -1
			}
			return 1
		}
		return cmp.Compare(p.loadOf(a.masterID, day), p.loadOf(b.masterID, day))
	})
	return offers
}

// loadOf is how much of the day the master is booked.
func (p *planner) loadOf(m int64, d Date) time.Duration {
	k := masterDay{m, d}
	if v, ok := p.load[k]; ok {
		return v
	}
	if p.load == nil {
		p.load = map[masterDay]time.Duration{}
	}
	loc := p.c.salon.Location()
	var sum time.Duration
	for _, b := range p.busy[m] {
		if DateOf(b.start.In(loc)) == d {
			sum += b.end.Sub(b.start)
		}
	}
	p.load[k] = sum
	return sum
}

// clashes reports whether a segment of master m at start would overlap
// the master's segments already placed in the visit.
func clashes(done []placed, m int64, t timing, start time.Time) bool {
	for _, d := range done {
		if d.master != m {
			continue
		}
		for _, a := range d.t.busy(d.start) {
			for _, b := range t.busy(start) {
				if a.overlaps(b) {
					return true
				}
			}
		}
	}
	return false
}

// slot is the visit slot of a plan.
func slotOf(plan []placed) VisitSlot {
	v := VisitSlot{Start: plan[0].start, Segments: make([]Segment, len(plan))}
	for i, pl := range plan {
		g := pl.t.gap(pl.start)
		v.Segments[i] = Segment{ServiceID: pl.serviceID, MasterID: pl.master, Start: pl.start, End: pl.t.end(pl.start),
			ProcessingStart: g.start, ProcessingEnd: g.end}
		v.End = laterOf(v.End, v.Segments[i].End)
	}
	return v
}

// slots returns the visit's free starts in w, by time: the starts the
// first item's masters offer (on their grid, after the notice, within the
// horizon) where the whole visit fits.
func (p *planner) slots(items []VisitItem, w window, now time.Time) []VisitSlot {
	svc := p.c.services[items[0].ServiceID]
	var starts []time.Time
	for _, o := range p.c.offersFor(items[0].ServiceID, items[0].MasterID) {
		r := rules(&p.c.salon, &svc, o, now)
		starts = append(starts, freeStarts(p.shifts[o.masterID], p.busy[o.masterID], r, w)...)
	}
	slices.SortFunc(starts, time.Time.Compare)
	starts = slices.Compact(starts)
	var out []VisitSlot
	for _, t := range starts {
		if plan := p.place(items, t); plan != nil {
			out = append(out, slotOf(plan))
		}
	}
	return out
}

// readPlanner reads the masters' shifts and busy time around w into a
// planner (the visit exclude, when not 0, counts as free: it is the one
// being moved).
func readPlanner(ctx context.Context, q querier, c *catalog, masters []int64, w window, exclude int64, client bool) (*planner, error) {
	shifts, err := loadShifts(ctx, q, c.salon.ID, masters, w.from.Add(-24*time.Hour), w.to.Add(24*time.Hour))
	if err != nil {
		return nil, err
	}
	busy, err := loadBusy(ctx, q, c.salon.ID, masters, interval{w.from.Add(-24 * time.Hour), w.to.Add(48 * time.Hour)}, exclude)
	if err != nil {
		return nil, err
	}
	return &planner{c: c, shifts: shifts, busy: busy, client: client}, nil
}

// VisitSlots returns the free starts of a whole visit, ordered by time:
// for each start, the segments with the masters the salon gives it (a
// named master, or, for "any master", the one who did the segment before,
// else the least booked that day). The same rules as Slots hold for the
// visit's start; every segment lies in its master's working hours, clear
// of busy time (a processing gap is free).
// Errors: ErrNotFound (salon), ErrInvalid (fields; unknown services or
// masters also unwrap to ErrNotFound).
func (s *Service) VisitSlots(ctx context.Context, q VisitSlotQuery) ([]VisitSlot, error) {
	if err := mayRead(ctx, q.SalonID); err != nil {
		return nil, err
	}
	if q.Days == 0 {
		q.Days = 1
	}
	fe := fieldErrors{}
	checkDays(fe, q.From, q.Days)
	if err := fe.err(); err != nil {
		return nil, err
	}
	c, err := s.currentCatalog(ctx, q.SalonID)
	if err != nil {
		return nil, err
	}
	if err := checkItems(c, q.Items); err != nil {
		return nil, err
	}
	mv, err := s.moving(ctx, q.SalonID, q.Moving)
	if err != nil {
		return nil, err
	}
	loc := c.salon.Location()
	w := window{from: q.From.Start(loc), to: q.From.AddDays(q.Days).Start(loc)}
	p, err := readPlanner(ctx, s.pool, c, visitMasters(c, q.Items), w, mv.id, true)
	if err != nil {
		return nil, dbErr(err)
	}
	out := p.slots(q.Items, w, s.now())
	if mv.id != 0 {
		out = slices.DeleteFunc(out, func(v VisitSlot) bool { return mv.now(v.Start, v.Masters()...) })
	}
	return out, nil
}

// visitAlternatives returns up to MaxAlternatives whole-visit starts near
// at for a visit the calendar refused: first with the masters it asked for
// (those of masters, when given, for the items with "any master"), the
// nearest before and after at; then with any masters at exactly at; then
// with any masters, the nearest. Like alternatives, it searches a week
// around at, then the whole bookable window, after every lock is released.
func (s *Service) visitAlternatives(ctx context.Context, salonID int64, items []VisitItem, masters []int64, at, now time.Time,
	exclude int64) ([]VisitSlot, error) {
	var key strings.Builder
	fmt.Fprintf(&key, "visit/%d/%d/%d", salonID, at.Unix(), exclude)
	for i, it := range items {
		fmt.Fprintf(&key, "/%d:%d", it.ServiceID, it.MasterID)
		if i < len(masters) {
			fmt.Fprintf(&key, "=%d", masters[i])
		}
	}
	v, err, _ := s.alts.Do(key.String(), func() (any, error) {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.lockWait)
		defer cancel()
		c, err := s.currentCatalog(sctx, salonID)
		if err != nil {
			return nil, err
		}
		if checkItems(c, items) != nil {
			return []VisitSlot(nil), nil
		}
		same := slices.Clone(items)
		for i := range same {
			if same[i].MasterID == 0 && i < len(masters) {
				same[i].MasterID = masters[i]
			}
		}
		anyOf := slices.Clone(items)
		for i := range anyOf {
			anyOf[i].MasterID = 0
		}
		r := rules(&c.salon, &SalonService{}, offerTerms{}, now)
		bookable := window{from: r.earliest, to: r.latest}
		near := window{from: at.Add(-84 * time.Hour), to: at.Add(84 * time.Hour)}
		var out []VisitSlot
		for _, w := range []window{near.clip(bookable), bookable} {
			if !w.from.Before(w.to) {
				continue
			}
			p, err := readPlanner(sctx, s.pool, c, visitMasters(c, anyOf), w, exclude, true)
			if err != nil {
				return nil, err
			}
			out = pickVisitAlternatives(p.slots(same, w, now), p.slots(anyOf, w, now), at)
			if len(out) >= 3 {
				break
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, dbErr(err)
	}
	return slices.Clone(v.([]VisitSlot)), nil
}

// pickVisitAlternatives picks from the visit's free starts with its own
// masters (same) and with any (others): up to four of the first, nearest
// at, then others at exactly at, then the nearest others.
func pickVisitAlternatives(same, others []VisitSlot, at time.Time) []VisitSlot {
	nearest := func(list []VisitSlot) {
		slices.SortStableFunc(list, func(a, b VisitSlot) int {
			return cmp.Or(cmp.Compare(absDur(a.Start.Sub(at)), absDur(b.Start.Sub(at))), a.Start.Compare(b.Start))
		})
	}
	same = slices.DeleteFunc(same, func(v VisitSlot) bool { return v.Start.Equal(at) })
	nearest(same)
	nearest(others)
	var exact []VisitSlot
	for _, v := range others {
		if v.Start.Equal(at) {
			exact = append(exact, v)
		}
	}
	nExact := min(len(exact), 2)
	out := slices.Clone(same[:min(len(same), MaxAlternatives-nExact)])
	slices.SortFunc(out, func(a, b VisitSlot) int { return a.Start.Compare(b.Start) })
	seen := func(v VisitSlot) bool {
		return slices.ContainsFunc(out, func(o VisitSlot) bool {
			return o.Start.Equal(v.Start) && slices.Equal(o.Masters(), v.Masters())
		})
	}
	for _, list := range [][]VisitSlot{exact, others} {
		for _, v := range list {
			if len(out) >= MaxAlternatives {
				return out
			}
			if !seen(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// visitSegments reads the segments of b's visit, head first (lock: "" or
// a locking clause).
func visitSegments(ctx context.Context, q querier, b *Booking, lock string) ([]Booking, error) {
	rows, err := q.Query(ctx, `SELECT `+bookingColumns+` FROM bookings
		WHERE salon_id = $1 AND (id = $2 OR visit_of = $2) ORDER BY id `+lock, b.SalonID, b.visit())
	if err != nil {
		return nil, fmt.Errorf("visit %d: %w", b.visit(), err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Booking, error) {
		sg, err := scanBooking(r)
		if err != nil {
			return Booking{}, err
		}
		return *sg, nil
	})
	if err != nil {
		return nil, fmt.Errorf("visit %d: %w", b.visit(), err)
	}
	return list, nil
}

// visitMastersOf returns the masters of b's visit as stored.
func visitMastersOf(ctx context.Context, q querier, b *Booking) ([]int64, error) {
	var ids []int64
	if err := q.QueryRow(ctx, `SELECT array_agg(DISTINCT master_id) FROM bookings WHERE salon_id = $1 AND (id = $2 OR visit_of = $2)`,
		b.SalonID, b.visit()).Scan(&ids); err != nil {
		return nil, fmt.Errorf("visit %d: %w", b.visit(), err)
	}
	return ids, nil
}

// bookVisit books r's visit (Book with Items): every segment or none. The
// segments are placed from a fresh snapshot (the masters the items leave
// open chosen as VisitSlots would), then every master of the visit is
// locked at once, in ascending order; under the locks the placement is
// checked again as the calendar now is, and every segment is inserted in
// one statement under one savepoint. The exclusion constraints refuse a
// segment that overlaps anything: the whole visit is undone, and, when the
// items left a master open, placed again from a new snapshot (twice at
// most); else the whole-visit alternatives are computed after the locks
// are released.
func (s *Service) bookVisit(ctx context.Context, r *BookRequest, now time.Time) (*Booking, error) {
	c, err := s.currentCatalog(ctx, r.SalonID)
	if err != nil {
		return nil, err
	}
	if err := checkItems(c, r.Items); err != nil {
		return nil, err
	}
	if r.Source == SourceImport {
		return nil, Invalid("items", "visits are not imported")
	}
	client := r.caller.client()
	if err := checkStart(c, r.StartsAt, now, client); err != nil {
		return nil, err
	}
	// With every master named, the visit is placed under their locks
	// only; with "any master" somewhere, first from a snapshot, to know
	// whose locks to take.
	open := slices.ContainsFunc(r.Items, func(it VisitItem) bool { return it.MasterID == 0 })
	items := r.Items
	for attempt := 0; ; attempt++ {
		if open {
			plan, err := s.planVisit(ctx, c, r.Items, r.StartsAt, client)
			if err != nil {
				return nil, err
			}
			if plan == nil {
				break
			}
			items = slotOf(plan).items()
		}
		b, err := s.insertVisit(ctx, r, c, items, now)
		if errors.Is(err, errTaken) && open && attempt < 2 {
			continue
		}
		if errors.Is(err, errTaken) {
			break
		}
		if err != nil {
			return nil, dbErr(err)
		}
		s.wakeMessages()
		return b, nil
	}
	// The same masters first: those named, and those last chosen for
	// "any master".
	masters := make([]int64, len(items))
	for i, it := range items {
		masters[i] = it.MasterID
	}
	alts, err := s.visitAlternatives(ctx, r.SalonID, r.Items, masters, r.StartsAt, now, 0)
	if err != nil {
		return nil, err
	}
	return nil, &SlotTakenError{Visits: append([]VisitSlot{}, alts...)}
}

// planVisit places items at start from a fresh snapshot. It returns nil
// when the time is taken, and ErrInvalid when the visit does not fit the
// masters' working hours (or, for clients, the offered times) there at all.
func (s *Service) planVisit(ctx context.Context, c *catalog, items []VisitItem, at time.Time, client bool) ([]placed, error) {
	p, err := readPlanner(ctx, s.pool, c, visitMasters(c, items), window{at, at.Add(time.Minute)}, 0, client)
	if err != nil {
		return nil, dbErr(err)
	}
	return p.placeOrExplain(items, at)
}

// insertVisit books the visit of items (every master named) in one
// transaction (see bookVisit): errTaken when a master's time is taken.
func (s *Service) insertVisit(ctx context.Context, r *BookRequest, c *catalog, fixed []VisitItem, now time.Time) (*Booking, error) {
	masters := visitMasters(c, fixed)
	var out *Booking
	var refused error // (a phone miss, its count committed)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out, refused = nil, nil
		var claim *keyClaim
		var version int64
		batch := &pgx.Batch{}
		wait := max(s.lockWait.Milliseconds(), 1) // (as txOnce set it: after the gates, what is left of it)
		if g, ok := tx.(*gatedTx); ok {
			wait = lockTimeout(g.passed.deadline)
		}
		if r.IdempotencyKey != "" {
			claim = queueClaim(batch, r.SalonID, "book", r.IdempotencyKey, r.fingerprint(), wait)
		}
		var known bool // (a client's try of a balance's code)
		if r.PayWith != nil && r.PayWith.Code != "" && r.caller.client() {
			// A client's try of a code: the code's lock, before the
			// masters' (codeLockKey); then whether it is a balance's.
			hash := tokenHash(r.PayWith.Code)
			batch.Queue(`SELECT EXISTS (SELECT 1 FROM balances WHERE salon_id = $2 AND code_hash = $3)
				FROM (SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0)) AS c) cl WHERE cl.c IS NOT NULL`,
				codeLockKey(hash), r.SalonID, hash).QueryRow(func(row pgx.Row) error { return row.Scan(&known) })
		}
		start := time.Now()
		batch.Queue(`SELECT catalog_version FROM salons WHERE id = $1`, r.SalonID).QueryRow(func(row pgx.Row) error { return row.Scan(&version) })
		err := tx.SendBatch(ctx, batch).Close()
		switch {
		case pgCode(err) == pgLockNotAvailable && claim != nil && !claim.reached:
			return ErrInProgress
		case err != nil:
			return fmt.Errorf("book visit: %w", err)
		case claim != nil && !claim.claimed:
			out, err = s.replay(ctx, tx, claim, r.SalonID)
			return err
		}
		if known {
			// It keeps its turn among the code's tries: it waits for its
			// masters (within the same lock wait), and the balance's lock
			// is waited for at most the lock wait after them.
			err = waitMasters(ctx, tx, start.Add(time.Duration(wait)*time.Millisecond), wait, masters...)
		} else {
			err = lockMasters(ctx, tx, masters...)
		}
		if err != nil {
			return err
		}
		// Under the locks: the catalogue and the calendar as they are now.
		cat, err := s.catalogAt(ctx, tx, r.SalonID, version)
		if err != nil {
			return err
		}
		if err := checkItems(cat, fixed); err != nil {
			return err
		}
		p, err := readPlanner(ctx, tx, cat, masters, window{r.StartsAt, r.StartsAt.Add(time.Minute)}, 0, r.caller.client())
		if err != nil {
			return err
		}
		plan, err := p.placeOrExplain(fixed, r.StartsAt)
		if err != nil {
			return err
		}
		if plan == nil {
			return errTaken
		}
		head, rest := s.visitRows(r, cat, plan)
		var rsv *reservation
		if r.PayWith != nil {
			var miss *phoneMiss
			rsv, err = s.reserveVisit(ctx, tx, r, cat, plan)
			if errors.As(err, &miss) {
				// Counted under the code's lock, and committed alone.
				batch = &pgx.Batch{}
				c := queueMissCount(batch, miss, r.Client.Phone, claim)
				if err := tx.SendBatch(ctx, batch).Close(); err != nil {
					return fmt.Errorf("book visit: %w", err)
				}
				refused = c.refusal()
				return nil
			}
			if err != nil {
				return err
			}
			head.Deposit = max(head.Deposit-rsv.covers, 0) // (paid with the balance)
		}
		if err := s.awaitDeposit(head, r, &cat.salon, now); err != nil {
			return err
		}
		for i := range rest {
			rest[i].Status, rest[i].HoldExpiresAt = head.Status, head.HoldExpiresAt
		}
		token, salt := r.manageToken(claim)
		actor := r.caller.actor(head)
		var notify []byte
		if cat.chatClients || slices.ContainsFunc(masters, func(m int64) bool { return cat.linked[m] }) {
			if notify, err = json.Marshal(notifyArgs(head, EventCreated, actor, nil)); err != nil {
				return fmt.Errorf("book visit: %w", err)
			}
		}
		bc := &bookContext{salon: cat.salon, messages: &cat.messages}
		batch = &pgx.Batch{}
		batch.Queue(`SAVEPOINT book`)
		queueInsertBooking(batch, head, r.Client, clientRecord{}, r.caller.identity, token, actor, claim, salt, notify,
			len(s.confirmations(head, r.Client.Phone, bc)) > 0, rest, rsv)
		err = tx.SendBatch(ctx, batch).Close()
		if pgCode(err) == pgExclusionViolation {
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT book`); err != nil {
				return fmt.Errorf("book visit: %w", err)
			}
			return errTaken
		}
		if err != nil {
			return fmt.Errorf("book visit: %w", err)
		}
		head.UpdatedAt, head.ManageToken = head.CreatedAt, token
		head.PaidWith = rsv.paid()
		head.Segments = append([]Booking{*head}, rest...)
		for i := range head.Segments {
			head.Segments[i].Segments, head.Segments[i].ManageToken = nil, ""
			head.Segments[i].UpdatedAt = head.CreatedAt
		}
		out = head
		return nil
	})
	if err == nil && refused != nil {
		return nil, refused
	}
	return out, err
}

// reserveVisit decides what the visit of plan reserves of the balance
// r.PayWith names, its row locked (waiting at most the lock wait).
func (s *Service) reserveVisit(ctx context.Context, tx pgx.Tx, r *BookRequest, c *catalog, plan []placed) (*reservation, error) {
	batch := &pgx.Batch{}
	batch.Queue(`SELECT set_config('lock_timeout', $1::bigint::text, true)`, max(s.lockWait.Milliseconds(), 1))
	pay := payment{day: c.salon.Today(r.StartsAt), proven: r.Client.Verified}
	batch.Queue(`SELECT id FROM clients WHERE salon_id = $1 AND phone = $2`, r.SalonID, r.Client.Phone).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&pay.clientID); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	sp := queueSpendable(batch, r.SalonID, r.PayWith, r.caller, true)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("book visit: balance: %w", err)
	}
	for _, pl := range plan {
		pay.services = append(pay.services, pl.serviceID)
		pay.prices = append(pay.prices, pl.price)
		pay.deposits = append(pay.deposits, c.services[pl.serviceID].Deposit)
	}
	return sp.reserve(r.PayWith, r.caller, pay)
}

// visitRows are the bookings rows of a planned visit: its head, carrying
// the visit's whole deposit (one payment), and the other segments.
func (s *Service) visitRows(r *BookRequest, c *catalog, plan []placed) (*Booking, []Booking) {
	rows := make([]Booking, len(plan))
	var deposit Money
	for i, pl := range plan {
		svc := c.services[pl.serviceID]
		deposit += svc.Deposit
		rows[i] = Booking{SalonID: r.SalonID, MasterID: pl.master, ServiceID: pl.serviceID, StartsAt: pl.start,
			DurationMin: pl.durationMin, BufferMin: svc.BufferMin, ProcessingMin: svc.ProcessingMin, FinishMin: svc.FinishMin,
			Status: StatusConfirmed, Source: r.Source, Price: pl.price, ContactName: r.Client.Name,
			ContactEmail: r.Client.Email, Lang: r.Client.Lang}
		if r.caller.kind == callerIdentity {
			rows[i].Origin = r.caller.identity
		}
	}
	head := rows[0]
	head.Deposit, head.Notes = deposit, r.Notes
	return &head, rows[1:]
}

// errVisit says a booking to move is a visit of several segments: it
// moves as one (rescheduleVisit).
var errVisit = errors.New("a visit of several segments")

// errRelock says a move needs the locks of masters its transaction does
// not hold: it starts again, taking them with the others.
var errRelock = errors.New("more masters to lock")

// checkStart applies the rules of a visit's start at now: not in the past,
// and, for clients, after the minimum notice and within the horizon.
func checkStart(c *catalog, at, now time.Time, client bool) error {
	rl := rules(&c.salon, &SalonService{}, offerTerms{}, now)
	switch {
	case at.Before(now):
		return Invalid("starts_at", "is in the past")
	case client && at.Before(rl.earliest):
		return Invalid("starts_at", "too soon: book at least %d minutes ahead", c.salon.MinNoticeMin)
	case client && !at.Before(rl.latest):
		return Invalid("starts_at", "too far ahead: book within %d days", c.salon.HorizonDays)
	}
	return nil
}

// placeOrExplain places items at start, or says why not: nil with no
// error when the time is taken, ErrInvalid when the visit does not fit the
// masters' working hours (or, for clients, the offered times) there at all.
func (p *planner) placeOrExplain(items []VisitItem, at time.Time) ([]placed, error) {
	if plan := p.place(items, at); plan != nil {
		return plan, nil
	}
	busy, client := p.busy, p.client
	defer func() { p.busy, p.client = busy, client }()
	p.busy = nil
	if p.place(items, at) != nil {
		return nil, nil // taken
	}
	if p.client {
		p.client = false
		if p.place(items, at) != nil {
			return nil, Invalid("starts_at", "not one of the offered times")
		}
	}
	// Which service first finds its master not working, placed after
	// the ones before it.
	for k := range items {
		if k > 0 && p.c.together(items[k-1].ServiceID, items[k].ServiceID) {
			break // (it may fail for its master busy with the one before)
		}
		if p.place(items[:k+1], at) == nil {
			return nil, Invalid("starts_at", "%s: the master does not work at that time", p.c.services[items[k].ServiceID].Name)
		}
	}
	return nil, Invalid("starts_at", "outside the master's working hours")
}

// rescheduleVisit moves a visit whole (Reschedule of a visit): to
// r.StartsAt with its masters, or with r.Items' (the same services, in
// the same order). Every master of the visit, old and new, is locked at
// once in ascending order; the segments are placed under the locks (the
// visit's own old time counts as free) and moved in one statement under a
// savepoint. When the time is taken, the visit keeps its time and the
// error offers whole-visit alternatives.
func (s *Service) rescheduleVisit(ctx context.Context, caller Caller, r RescheduleRequest, now time.Time) (*Booking, error) {
	if r.MasterID != 0 {
		return nil, Invalid("master_id", "a visit moves with its items")
	}
	var out, old *Booking
	var items []VisitItem
	var masters, extra []int64
	var err error
	for attempt := 0; ; attempt++ {
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			out, masters = nil, nil
			b, salon, err := lockBooking(ctx, tx, caller, r.SalonID, r.BookingID, extra...)
			if err != nil {
				return err
			}
			old = b
			if err := mayChange(b, salon, caller, now); err != nil {
				return err
			}
			if err := notOffered(ctx, tx, r.BySalon); err != nil {
				return err
			}
			if items == nil {
				if items, err = moveItems(b, r.Items); err != nil {
					return err
				}
			}
			var version int64
			if err := tx.QueryRow(ctx, `SELECT catalog_version FROM salons WHERE id = $1`, b.SalonID).Scan(&version); err != nil {
				return fmt.Errorf("reschedule visit: %w", err)
			}
			c, err := s.catalogAt(ctx, tx, b.SalonID, version)
			if err != nil {
				return err
			}
			if err := checkItems(c, items); err != nil {
				return err
			}
			if err := checkStart(c, r.StartsAt, now, caller.client()); err != nil {
				return err
			}
			if err := paidUntil(ctx, tx, b, salon.Today(r.StartsAt)); err != nil {
				return err
			}
			p, err := readPlanner(ctx, tx, c, visitMasters(c, items), window{r.StartsAt, r.StartsAt.Add(time.Minute)}, b.ID, caller.client())
			if err != nil {
				return err
			}
			plan, err := p.placeOrExplain(items, r.StartsAt)
			if err != nil {
				return err
			}
			if plan == nil {
				return errTaken
			}
			if slotOf(plan).at(b.Segments) {
				out = b // (where it is: nothing to move, nor to tell)
				return nil
			}
			masters = slotOf(plan).Masters()
			held, err := visitMastersOf(ctx, tx, b)
			if err != nil {
				return err
			}
			for _, m := range masters {
				if !slices.Contains(held, m) && !slices.Contains(extra, m) {
					// Masters not locked: again, with them, and the
					// masters this placement chose.
					extra = masters
					for i := range items {
						items[i].MasterID = masters[i]
					}
					return errRelock
				}
			}
			out, err = s.moveSegments(ctx, tx, b, plan, caller.actor(b), &r, -1)
			return err
		})
		if !errors.Is(err, errRelock) || attempt >= 2 {
			break
		}
	}
	switch {
	case errors.Is(err, errRelock):
		return nil, conflict("the booking keeps changing under this request")
	case errors.Is(err, errTaken):
		alts, err := s.visitAlternatives(ctx, old.SalonID, items, masters, r.StartsAt, now, old.ID)
		if err != nil {
			return nil, err
		}
		// (Not where the visit is: the search counts its time as free.)
		alts = slices.DeleteFunc(append([]VisitSlot{}, alts...), func(v VisitSlot) bool { return v.at(old.Segments) })
		return nil, &SlotTakenError{Visits: alts}
	case err != nil:
		return nil, err
	}
	return out, nil
}

// moveItems are the items of a move of visit b: given, the same services
// in the same order; else the visit's own, with its masters.
func moveItems(b *Booking, given []VisitItem) ([]VisitItem, error) {
	items := make([]VisitItem, len(b.Segments))
	for i, sg := range b.Segments {
		items[i] = VisitItem{ServiceID: sg.ServiceID, MasterID: sg.MasterID}
	}
	if len(given) == 0 {
		return items, nil
	}
	if len(given) != len(items) {
		return nil, Invalid("items", "a move keeps the visit's services")
	}
	for i := range given {
		if given[i].ServiceID != items[i].ServiceID {
			return nil, Invalid("items", "a move keeps the visit's services")
		}
	}
	return slices.Clone(given), nil
}

// moveSegments moves visit b's segments to the plan's places in one
// statement, under a savepoint (errTaken when a constraint refuses it),
// recording the move on the head and telling who listens. alone is the
// index of the one segment moved by itself (its history and notice say
// where it was and which service it is), or -1 for the whole visit.
func (s *Service) moveSegments(ctx context.Context, tx pgx.Tx, b *Booking, plan []placed, actor Actor, r *RescheduleRequest, alone int) (*Booking, error) {
	bySalon := r.BySalon
	n := len(plan)
	ids, starts, ms, durs, prices := make([]int64, n), make([]time.Time, n), make([]int64, n), make([]int32, n), make([]Money, n)
	bufs, procs, fins := make([]int32, n), make([]int32, n), make([]int32, n)
	for i, pl := range plan {
		sg := b.Segments[i]
		ids[i], starts[i], ms[i], durs[i], prices[i] = sg.ID, pl.start, pl.master, int32(pl.durationMin), sg.Price
		// The terms the plan placed it with (the service's current ones).
		bufs[i], procs[i], fins[i] = int32(pl.t.buffer/time.Minute), int32(pl.t.processing/time.Minute), int32(pl.t.finish/time.Minute)
		if pl.master != sg.MasterID {
			// The new master's price (a certificate's visit spends no
			// more of it than that: the rest goes back when it is
			// settled; what it does not cover is paid at the salon); the
			// salon's own move keeps the client's, but for a lower one.
			prices[i] = pl.price
			if bySalon {
				prices[i] = min(pl.price, sg.Price)
			}
		}
	}
	from, to := b, plan[0]
	if alone >= 0 {
		from, to = &b.Segments[alone], plan[alone]
	}
	moved := movedDetails(from, to.start, to.master, r)
	if alone >= 0 {
		moved["service_id"] = from.ServiceID
	}
	details, _ := json.Marshal(actor.details(moved))
	if _, err := tx.Exec(ctx, `SAVEPOINT reschedule`); err != nil {
		return nil, fmt.Errorf("reschedule visit: %w", err)
	}
	rows, err := tx.Query(ctx, `
		WITH u AS (
		    UPDATE bookings b SET starts_at = x.s, master_id = x.m, duration_min = x.d, price = x.p, buffer_min = x.bf,
		           processing_min = x.pr, finish_min = x.f, updated_at = now()
		    FROM unnest($2::bigint[], $3::timestamptz[], $4::bigint[], $5::int[], $6::numeric[], $12::int[], $13::int[], $14::int[])
		         x (id, s, m, d, p, bf, pr, f)
		    WHERE b.salon_id = $1 AND b.id = x.id
		    RETURNING `+prefixed("b.", bookingColumns)+`
		), e AS (
		    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, channel, details)
		    VALUES ($1, $7, 'rescheduled', $8, $9, $10, $11)
		)
		SELECT * FROM u ORDER BY id`, b.SalonID, ids, starts, ms, durs, prices, b.ID, actor.Kind, actor.dbID(), actor.Channel, details,
		bufs, procs, fins)
	if err != nil {
		return nil, fmt.Errorf("reschedule visit: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Booking, error) {
		sg, err := scanBooking(r)
		if err != nil {
			return Booking{}, err
		}
		return *sg, nil
	})
	if pgCode(err) == pgExclusionViolation {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT reschedule`); err != nil {
			return nil, fmt.Errorf("reschedule visit: %w", err)
		}
		return nil, errTaken
	}
	if err != nil {
		return nil, fmt.Errorf("reschedule visit: %w", err)
	}
	if len(list) != n {
		return nil, fmt.Errorf("reschedule visit: %d of %d segments moved", len(list), n)
	}
	out := list[0]
	out.Segments = list
	notice := notifyArgs(&out, EventRescheduled, actor, from)
	notice.BySalon = bySalon
	if alone >= 0 {
		notice.Segment = from.ID
	}
	if err := s.enqueueNotice(ctx, tx, &out, notice, actor); err != nil {
		return nil, err
	}
	return &out, nil
}

// rescheduleSegment moves one segment of a visit (Reschedule with
// Segment): staff only. Every master of the visit and the new one are
// locked; the segment must fit its master's working hours at its new time
// and keep its place in the visit (after the segment before it has ended
// for the client and its buffer has passed, and so before the next, and
// no more than visitGapMax from them); the exclusion constraints decide
// the rest. Its alternatives when the time is taken keep that place too.
func (s *Service) rescheduleSegment(ctx context.Context, caller Caller, r RescheduleRequest, now time.Time) (*Booking, error) {
	if caller.client() {
		return nil, fmt.Errorf("clients move a visit whole: %w", ErrForbidden)
	}
	var out, moved *Booking
	var room segmentRoom
	var cat *catalog // (the alternatives' timings)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out, moved = nil, nil
		b, salon, err := lockBooking(ctx, tx, caller, r.SalonID, r.BookingID, r.MasterID)
		if err != nil {
			return err
		}
		if err := mayChange(b, salon, caller, now); err != nil {
			return err
		}
		if err := notOffered(ctx, tx, r.BySalon); err != nil {
			return err
		}
		i := slices.IndexFunc(b.Segments, func(sg Booking) bool { return sg.ID == r.BookingID })
		if i < 0 {
			return fmt.Errorf("booking %d: %w", r.BookingID, ErrNotFound)
		}
		sg := b.Segments[i]
		moved, room = &sg, roomOf(b, i)
		master := cmp.Or(r.MasterID, sg.MasterID)
		if master == sg.MasterID && r.StartsAt.Equal(sg.StartsAt) {
			out = b // (nothing to move, nor to tell)
			return nil
		}
		var version int64
		if err := tx.QueryRow(ctx, `SELECT catalog_version FROM salons WHERE id = $1`, b.SalonID).Scan(&version); err != nil {
			return fmt.Errorf("move segment: %w", err)
		}
		c, err := s.catalogAt(ctx, tx, b.SalonID, version)
		if err != nil {
			return err
		}
		cat = c
		if err := checkItems(c, []VisitItem{{ServiceID: sg.ServiceID, MasterID: master}}); err != nil {
			return err
		}
		if err := checkStart(c, r.StartsAt, now, false); err != nil {
			return err
		}
		o := c.offers[[2]int64{master, sg.ServiceID}]
		svc := c.services[sg.ServiceID]
		t := svc.timing(o.durationMin)
		p, err := readPlanner(ctx, tx, c, []int64{master}, window{r.StartsAt, r.StartsAt.Add(time.Minute)}, 0, false)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(p.shifts[master], func(sh shift) bool { return t.fitsIn(sh, r.StartsAt, 0) }) {
			return Invalid("starts_at", "outside the master's working hours")
		}
		if why := room.refuses(r.StartsAt, t.next(r.StartsAt)); why != "" {
			return Invalid("starts_at", why)
		}
		price := sg.Price
		if master != sg.MasterID {
			price = o.price
		}
		plan := make([]placed, len(b.Segments))
		for k, x := range b.Segments {
			plan[k] = placed{serviceID: x.ServiceID, master: x.MasterID, start: x.StartsAt, durationMin: x.DurationMin, price: x.Price,
				t: x.terms()}
		}
		plan[i] = placed{serviceID: sg.ServiceID, master: master, start: r.StartsAt, durationMin: o.durationMin, price: price, t: t}
		out, err = s.moveSegments(ctx, tx, b, plan, caller.actor(b), &r, i)
		return err
	})
	if errors.Is(err, errTaken) {
		alts, err := s.alternatives(ctx, moved.SalonID, moved.ServiceID, cmp.Or(r.MasterID, moved.MasterID), r.StartsAt, now, moved.ID, !caller.client())
		if err != nil {
			return nil, err
		}
		svc := cat.services[moved.ServiceID]
		alts = slices.DeleteFunc(notWhereItIs(alts, moved), func(sl Slot) bool {
			t := svc.timing(cat.offers[[2]int64{sl.MasterID, moved.ServiceID}].durationMin)
			return room.refuses(sl.Start, t.next(sl.Start)) != ""
		})
		return nil, &SlotTakenError{Alternatives: alts}
	}
	return out, err
}

// visitGapMax is the longest a client waits between two services of a
// visit that one of them moved alone leaves (longer: another visit, to be
// moved whole).
const visitGapMax = 12 * time.Hour

// segmentRoom is where a segment of a visit may move alone: from when the
// one before it lets it start, until the next starts (zero: no bound),
// and no further from them than visitGapMax.
type segmentRoom struct {
	from, until time.Time
}

// roomOf is the room segment i of visit b has, as the planner places a
// visit: after every service before it is done (but the ones done
// together with it, which start with it), before any after it starts (but
// those done with it).
func roomOf(b *Booking, i int) segmentRoom {
	var r segmentRoom
	sg := b.Segments[i]
	for j, x := range b.Segments {
		switch {
		case x.StartsAt.Equal(sg.StartsAt): // (itself, or done together with it)
		case j < i:
			r.from = laterOf(r.from, x.terms().next(x.StartsAt))
		case j > i && (r.until.IsZero() || x.StartsAt.Before(r.until)):
			r.until = x.StartsAt
		}
	}
	return r
}

// refuses says why a start, and when its master may start the next
// (next), do not fit the room ("": they fit).
func (r segmentRoom) refuses(start, next time.Time) string {
	switch {
	case start.Before(r.from):
		return "before the visit's previous service ends: move the whole visit"
	case !r.until.IsZero() && next.After(r.until):
		return "after the visit's next service starts: move the whole visit"
	case !r.from.IsZero() && start.Sub(r.from) > visitGapMax, !r.until.IsZero() && r.until.Sub(next) > visitGapMax:
		return "too far from the visit's other services: move the whole visit"
	}
	return ""
}
