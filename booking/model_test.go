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

// modelBooking is the in-memory model's view of an active booking.
type modelBooking struct {
	master     int64
	start, end time.Time // occupied interval: service plus buffer
}

// calendarModel is the reference the database is checked against: a plain
// list of active bookings, with overlap decided by interval arithmetic.
type calendarModel map[int64]modelBooking

func (m calendarModel) overlaps(master int64, start, end time.Time, except int64) bool {
	for id, b := range m {
		if id != except && b.master == master && start.Before(b.end) && b.start.Before(end) {
			return true
		}
	}
	return false
}

// TestCalendarMatchesModel runs random sequences of book, cancel and
// reschedule against the database and the model: every refusal must have
// had a real overlap, every acceptance none, and the database's active
// bookings must always equal the model's (so it never holds an overlap).
func TestCalendarMatchesModel(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{})
	var services []*booking.SalonService
	for i, c := range []struct{ dur, buf int }{{30, 0}, {45, 15}, {60, 0}, {90, 15}} {
		services = append(services, e.Service(t, salon, booking.SalonService{Name: fmt.Sprint("S", i), DurationMin: c.dur, BufferMin: c.buf}))
	}
	day := testDay
	var masters []*booking.Master
	for range 2 {
		m := e.Master(t, salon, services...)
		e.Shift(t, salon, m, day, 1, "10:00", "14:00")
		masters = append(masters, m)
	}
	opens, closes := bookingtest.At(salon, day, "10:00"), bookingtest.At(salon, day, "14:00")

	// drawSlot picks a master, a service and a start on the 15-minute grid
	// where the service fits the shift (the buffer may run past its end).
	drawSlot := func(rt *rapid.T) (*booking.Master, *booking.SalonService, time.Time) {
		m := rapid.SampledFrom(masters).Draw(rt, "master")
		sv := rapid.SampledFrom(services).Draw(rt, "service")
		last := int(closes.Sub(opens).Minutes()-float64(sv.DurationMin)) / 15
		start := opens.Add(time.Duration(rapid.IntRange(0, last).Draw(rt, "slot")) * 15 * time.Minute)
		return m, sv, start
	}
	occupied := func(sv *booking.SalonService, start time.Time) time.Time {
		return start.Add(time.Duration(sv.DurationMin+sv.BufferMin) * time.Minute)
	}

	rapid.Check(t, func(rt *rapid.T) {
		if _, err := e.Pool.Exec(ctx, `TRUNCATE booking_events, booking_reminders, bookings CASCADE`); err != nil {
			rt.Fatal(err)
		}
		model := calendarModel{}
		services := map[int64]*booking.SalonService{}
		rt.Repeat(map[string]func(*rapid.T){
			"book": func(rt *rapid.T) {
				m, sv, start := drawSlot(rt)
				want := !model.overlaps(m.ID, start, occupied(sv, start), 0)
				b, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: start,
					Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
				switch {
				case err == nil && want:
					model[b.ID] = modelBooking{m.ID, start, occupied(sv, start)}
					services[b.ID] = sv
				case errors.Is(err, booking.ErrSlotTaken) && !want:
				default:
					rt.Fatalf("book master %d %s at %s: %v; model says free=%v", m.ID, sv.Name, start.Format("15:04"), err, want)
				}
			},
			"cancel": func(rt *rapid.T) {
				if len(model) == 0 {
					return // nothing to cancel yet
				}
				id := rapid.SampledFrom(slices.Sorted(maps.Keys(model))).Draw(rt, "booking")
				if _, err := e.Svc.Cancel(booking.As(ctx, booking.BySystem()), booking.CancelRequest{SalonID: salon.ID, BookingID: id}); err != nil {
					rt.Fatalf("cancel %d: %v", id, err)
				}
				delete(model, id)
			},
			"reschedule": func(rt *rapid.T) {
				if len(model) == 0 {
					return // nothing to move yet
				}
				id := rapid.SampledFrom(slices.Sorted(maps.Keys(model))).Draw(rt, "booking")
				sv := services[id]
				m := rapid.SampledFrom(masters).Draw(rt, "master")
				last := int(closes.Sub(opens).Minutes()-float64(sv.DurationMin)) / 15
				start := opens.Add(time.Duration(rapid.IntRange(0, last).Draw(rt, "slot")) * 15 * time.Minute)
				want := !model.overlaps(m.ID, start, occupied(sv, start), id)
				_, err := e.Svc.Reschedule(booking.As(ctx, booking.BySystem()), booking.RescheduleRequest{SalonID: salon.ID, BookingID: id, StartsAt: start,
					MasterID: m.ID})
				switch {
				case err == nil && want:
					model[id] = modelBooking{m.ID, start, occupied(sv, start)}
				case errors.Is(err, booking.ErrSlotTaken) && !want:
				default:
					rt.Fatalf("move %d to master %d at %s: %v; model says free=%v", id, m.ID, start.Format("15:04"), err, want)
				}
			},
			"": func(rt *rapid.T) {
				rows, err := e.Pool.Query(ctx, `SELECT id, master_id, starts_at, booking_slot_end(starts_at, duration_min + buffer_min)
					FROM bookings WHERE status IN ('pending', 'confirmed')`)
				if err != nil {
					rt.Fatal(err)
				}
				db := calendarModel{}
				for rows.Next() {
					var id int64
					var b modelBooking
					if err := rows.Scan(&id, &b.master, &b.start, &b.end); err != nil {
						rt.Fatal(err)
					}
					db[id] = b
				}
				if rows.Err() != nil {
					rt.Fatal(rows.Err())
				}
				if !maps.EqualFunc(db, model, func(a, b modelBooking) bool {
					return a.master == b.master && a.start.Equal(b.start) && a.end.Equal(b.end)
				}) {
					rt.Fatalf("database %v != model %v", db, model)
				}
				for id, b := range db {
					if db.overlaps(b.master, b.start, b.end, id) {
						rt.Fatalf("database holds an overlap at booking %d", id)
					}
				}
			},
		})
	})
}
