package booking_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"salon/booking"
	"salon/booking/bookingtest"
)

// modelSegment is the in-memory model's view of an active booking (a
// segment of a visit): its master's busy intervals.
type modelSegment struct {
	master int64
	busy   [][2]time.Time
}

// calendarModel is the reference the database is checked against: the
// active visits (by head id) and their segments, with overlap decided by
// interval arithmetic.
type calendarModel map[int64][]modelSegment

// overlaps reports whether any busy interval of segs meets one of
// another visit than except (or one of segs itself).
func (m calendarModel) overlaps(segs []modelSegment, except int64) bool {
	meets := func(a, b modelSegment) bool {
		if a.master != b.master {
			return false
		}
		for _, x := range a.busy {
			for _, y := range b.busy {
				if x[0].Before(y[1]) && y[0].Before(x[1]) {
					return true
				}
			}
		}
		return false
	}
	for i, a := range segs {
		for _, b := range segs[i+1:] {
			if meets(a, b) {
				return true
			}
		}
		for id, v := range m {
			if id == except {
				continue
			}
			for _, b := range v {
				if meets(a, b) {
					return true
				}
			}
		}
	}
	return false
}

// intervals lists the model's busy intervals, sorted, as text.
func (m calendarModel) intervals() []string {
	var out []string
	for _, v := range m {
		for _, sg := range v {
			for _, iv := range sg.busy {
				out = append(out, fmt.Sprintf("m%d %s-%s", sg.master, iv[0].UTC().Format("15:04"), iv[1].UTC().Format("15:04")))
			}
		}
	}
	slices.Sort(out)
	return out
}

// modelService is a service as the model knows it.
type modelService struct {
	sv                           *booking.SalonService
	dur, buf, processing, finish time.Duration
}

// place is the model's own placement of a visit from start: each segment
// after the one before (its client gone and its master's buffer passed),
// with its busy intervals; and whether it fits the day's shift.
func (ms modelService) busy(start time.Time) [][2]time.Time {
	if ms.finish == 0 {
		return [][2]time.Time{{start, start.Add(ms.dur + ms.buf)}}
	}
	fin := start.Add(ms.dur + ms.processing)
	return [][2]time.Time{{start, start.Add(ms.dur + min(ms.buf, ms.processing))}, {fin, fin.Add(ms.finish + ms.buf)}}
}

// TestCalendarMatchesModel runs random sequences of booking, cancelling and
// moving bookings and visits (services with buffers and with processing
// time among them) against the database and the model: every refusal must
// have had a real overlap (or a visit running past the shift), every
// acceptance none, and the database's busy intervals must always equal the
// model's (so it never holds an overlap).
func TestCalendarMatchesModel(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{})
	var services []modelService
	for i, c := range []struct{ dur, buf, proc, fin int }{{30, 0, 0, 0}, {45, 15, 0, 0}, {60, 0, 0, 0}, {90, 15, 0, 0},
		{45, 0, 30, 15}, {30, 15, 45, 0}, {30, 10, 20, 15}} {
		sv := e.Service(t, salon, booking.SalonService{Name: fmt.Sprint("S", i), DurationMin: c.dur, BufferMin: c.buf,
			ProcessingMin: c.proc, FinishMin: c.fin})
		services = append(services, modelService{sv, time.Duration(c.dur) * time.Minute, time.Duration(c.buf) * time.Minute,
			time.Duration(c.proc) * time.Minute, time.Duration(c.fin) * time.Minute})
	}
	svs := make([]*booking.SalonService, len(services))
	for i := range services {
		svs[i] = services[i].sv
	}
	day := testDay
	var masters []*booking.Master
	for range 2 {
		m := e.Master(t, salon, svs...)
		e.Shift(t, salon, m, day, 1, "10:00", "14:00")
		masters = append(masters, m)
	}
	opens, closes := bookingtest.At(salon, day, "10:00"), bookingtest.At(salon, day, "14:00")

	// plan places a visit of (master, service) pairs from start as the
	// core must, and says whether it fits the shift (the buffer may run
	// past its end; the client may not).
	plan := func(ms []*booking.Master, ss []modelService, start time.Time) ([]modelSegment, bool) {
		var out []modelSegment
		fits := true
		at := start
		for i, sv := range ss {
			b := sv.busy(at)
			out = append(out, modelSegment{ms[i].ID, b})
			work := []time.Time{at.Add(sv.dur)}
			if sv.finish > 0 {
				work = append(work, b[1][0].Add(sv.finish))
			}
			clientEnd := at.Add(sv.dur + sv.processing + sv.finish)
			if slices.ContainsFunc(work, func(t time.Time) bool { return t.After(closes) }) || clientEnd.After(closes) {
				fits = false
			}
			at = clientEnd
			if last := b[len(b)-1][1]; last.After(at) {
				at = last
			}
		}
		return out, fits
	}
	drawStart := func(rt *rapid.T) time.Time {
		return opens.Add(time.Duration(rapid.IntRange(0, 15).Draw(rt, "slot")) * 15 * time.Minute)
	}

	rapid.Check(t, func(rt *rapid.T) {
		if _, err := e.Pool.Exec(ctx, `TRUNCATE booking_events, booking_reminders, bookings CASCADE`); err != nil {
			rt.Fatal(err)
		}
		model := calendarModel{}
		visits := map[int64][]modelService{}
		visitMasters := map[int64][]*booking.Master{}
		// try books or moves a visit and checks the answer against the model.
		try := func(rt *rapid.T, what string, id int64, ms []*booking.Master, ss []modelService, start time.Time, do func() (*booking.Booking, error)) {
			segs, fits := plan(ms, ss, start)
			free := !model.overlaps(segs, id)
			b, err := do()
			switch {
			case err == nil && fits && free:
				if id == 0 {
					id = b.ID
				}
				model[id], visits[id], visitMasters[id] = segs, ss, ms
			case errors.Is(err, booking.ErrSlotTaken) && fits && !free:
			case errors.Is(err, booking.ErrInvalid) && !fits:
			default:
				rt.Fatalf("%s %d at %s: %v; model says fits=%v free=%v", what, len(ss), start.Format("15:04"), err, fits, free)
			}
		}
		items := func(ms []*booking.Master, ss []modelService) []booking.VisitItem {
			out := make([]booking.VisitItem, len(ss))
			for i := range ss {
				out[i] = booking.VisitItem{ServiceID: ss[i].sv.ID, MasterID: ms[i].ID}
			}
			return out
		}
		rt.Repeat(map[string]func(*rapid.T){
			"book": func(rt *rapid.T) {
				m, sv, start := rapid.SampledFrom(masters).Draw(rt, "master"), rapid.SampledFrom(services).Draw(rt, "service"), drawStart(rt)
				ms, ss := []*booking.Master{m}, []modelService{sv}
				try(rt, "book", 0, ms, ss, start, func() (*booking.Booking, error) {
					return e.Svc.Book(ctx, booking.BookRequest{SalonID: salon.ID, ServiceID: sv.sv.ID, MasterID: m.ID, StartsAt: start,
						Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
				})
			},
			"visit": func(rt *rapid.T) {
				n := rapid.IntRange(2, 3).Draw(rt, "segments")
				ms := make([]*booking.Master, n)
				ss := make([]modelService, n)
				for i := range n {
					ms[i], ss[i] = rapid.SampledFrom(masters).Draw(rt, "master"), rapid.SampledFrom(services).Draw(rt, "service")
				}
				start := drawStart(rt)
				try(rt, "visit", 0, ms, ss, start, func() (*booking.Booking, error) {
					return e.Svc.Book(ctx, booking.BookRequest{SalonID: salon.ID, Items: items(ms, ss), StartsAt: start,
						Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
				})
			},
			"cancel": func(rt *rapid.T) {
				if len(model) == 0 {
					return // nothing to cancel yet
				}
				id := rapid.SampledFrom(slices.Sorted(maps.Keys(model))).Draw(rt, "booking")
				if _, err := e.Svc.Cancel(ctx, booking.CancelRequest{SalonID: salon.ID, BookingID: id}); err != nil {
					rt.Fatalf("cancel %d: %v", id, err)
				}
				delete(model, id)
			},
			"reschedule": func(rt *rapid.T) {
				if len(model) == 0 {
					return // nothing to move yet
				}
				id := rapid.SampledFrom(slices.Sorted(maps.Keys(model))).Draw(rt, "booking")
				ss, ms := visits[id], slices.Clone(visitMasters[id])
				start := drawStart(rt)
				r := booking.RescheduleRequest{SalonID: salon.ID, BookingID: id, StartsAt: start}
				if len(ss) == 1 {
					ms[0] = rapid.SampledFrom(masters).Draw(rt, "master")
					r.MasterID = ms[0].ID
				} else if rapid.Bool().Draw(rt, "new masters") {
					for i := range ms {
						ms[i] = rapid.SampledFrom(masters).Draw(rt, "master")
					}
					r.Items = items(ms, ss)
				}
				try(rt, "move", id, ms, ss, start, func() (*booking.Booking, error) { return e.Svc.Reschedule(ctx, r) })
			},
			"": func(rt *rapid.T) {
				rows, err := e.Pool.Query(ctx, `SELECT master_id, starts_at, duration_min, buffer_min, processing_min, finish_min
					FROM bookings WHERE status IN ('pending', 'confirmed')`)
				if err != nil {
					rt.Fatal(err)
				}
				db := calendarModel{}
				var n int64
				for rows.Next() {
					var m int64
					var start time.Time
					var dur, buf, proc, fin int
					if err := rows.Scan(&m, &start, &dur, &buf, &proc, &fin); err != nil {
						rt.Fatal(err)
					}
					mins := func(v int) time.Duration { return time.Duration(v) * time.Minute }
					n++
					db[n] = []modelSegment{{m, modelService{dur: mins(dur), buf: mins(buf), processing: mins(proc), finish: mins(fin)}.busy(start)}}
				}
				if rows.Err() != nil {
					rt.Fatal(rows.Err())
				}
				if got, want := db.intervals(), model.intervals(); !slices.Equal(got, want) {
					rt.Fatalf("database %v != model %v", got, want)
				}
				var busy []string
				rows, err = e.Pool.Query(ctx, `SELECT master_id, starts_at, booking_slot_end(starts_at, duration_min) FROM master_busy`)
				if err != nil {
					rt.Fatal(err)
				}
				for rows.Next() {
					var m int64
					var s, e time.Time
					if err := rows.Scan(&m, &s, &e); err != nil {
						rt.Fatal(err)
					}
					busy = append(busy, fmt.Sprintf("m%d %s-%s", m, s.UTC().Format("15:04"), e.UTC().Format("15:04")))
				}
				slices.Sort(busy)
				if want := model.intervals(); !slices.Equal(busy, want) {
					rt.Fatalf("master_busy %v != model %v", busy, want)
				}
			},
		})
	})
}
