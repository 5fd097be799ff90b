package booking_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// visitFixture adds to the usual world a 20-minute beard trim (masters 0
// and 1) and a colour with processing time (masters 0 and 2): 60 minutes of
// work, 30 of processing while the master is free, 20 of finish.
type visitFixture struct {
	*fixture
	beard, colour *booking.SalonService
}

func setupVisits(t *testing.T, opts ...booking.Option) *visitFixture {
	t.Helper()
	f := &visitFixture{fixture: setup(t, opts...)}
	ctx := bookingtest.System()
	f.beard = f.Service(t, f.salon, booking.SalonService{Name: "Beard", DurationMin: 20, Price: 50000})
	f.colour = f.Service(t, f.salon, booking.SalonService{Name: "Colour", DurationMin: 60, ProcessingMin: 30, FinishMin: 20,
		Price: 400000})
	for i, svcs := range [][]*booking.SalonService{{f.svc, f.beard, f.colour}, {f.svc, f.beard}, {f.svc, f.colour}} {
		offers := make([]booking.Offer, len(svcs))
		for j, sv := range svcs {
			offers[j] = booking.Offer{ServiceID: sv.ID}
		}
		if err := f.Svc.SetOffers(ctx, f.salon.ID, f.masters[i].ID, offers); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// visit is a widget request for a visit of items at hh:mm.
func (f *visitFixture) visit(hhmm string, items ...booking.VisitItem) booking.BookRequest {
	return booking.BookRequest{SalonID: f.salon.ID, Items: items, StartsAt: f.at(hhmm),
		Client: booking.ClientInput{Name: "Client", Phone: bookingtest.Phone()}}
}

func item(sv *booking.SalonService, m *booking.Master) booking.VisitItem {
	it := booking.VisitItem{ServiceID: sv.ID}
	if m != nil {
		it.MasterID = m.ID
	}
	return it
}

// segmentsOf reads a visit's rows from the database: master, start, end
// (the client's), status, in visit order.
func segmentsOf(t *testing.T, f *visitFixture, visitID int64) []string {
	t.Helper()
	rows, err := f.Pool.Query(context.Background(), `SELECT master_id, starts_at, booking_slot_end(starts_at, duration_min + processing_min + finish_min), status
		FROM bookings WHERE visit_id = $1 ORDER BY id`, visitID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m int64
		var s, e time.Time
		var st string
		if err := rows.Scan(&m, &s, &e, &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("m%d %s-%s %s", f.masterIndex(m), f.clock(s), f.clock(e), st))
	}
	return out
}

func (f *fixture) masterIndex(id int64) int {
	return slices.IndexFunc(f.masters, func(m *booking.Master) bool { return m.ID == id })
}

func (f *fixture) clock(t time.Time) string { return t.In(f.salon.Location()).Format("15:04") }

func TestAVisitIsBookedWhole(t *testing.T) {
	f := setupVisits(t)
	b := f.mustBook(t, f.visit("10:00", item(f.svc, f.masters[0]), item(f.beard, nil)))
	if b.VisitID != b.ID || len(b.Segments) != 2 || b.ManageToken == "" {
		t.Fatalf("booked %+v: want the head of a visit of 2 with a manage token", b)
	}
	// "Any master" for the beard: the master of the haircut goes on.
	want := []string{"m0 10:00-11:00 confirmed", "m0 11:00-11:20 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	if got := booking.VisitEnd(b); !got.Equal(f.at("11:20")) {
		t.Errorf("visit ends %s, want 11:20", f.clock(got))
	}
	// The segments are one visit to every call: cancelling the second
	// cancels both.
	if _, err := f.Svc.Cancel(bookingtest.System(), booking.CancelRequest{BookingID: b.Segments[1].ID}); err != nil {
		t.Fatal(err)
	}
	want = []string{"m0 10:00-11:00 cancelled", "m0 11:00-11:20 cancelled"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after cancel %v, want %v", got, want)
	}
	assertNoOverlap(t, f.Pool)
}

func TestAVisitIsAllOrNothing(t *testing.T) {
	f := setupVisits(t)
	// Master 1 is taken at 11:00, where the visit's second segment would go.
	f.mustBook(t, f.req(f.masters[1], "11:00"))
	var before int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	_, err := f.Svc.Book(web(), f.visit("10:00", item(f.svc, f.masters[1]), item(f.beard, f.masters[1])))
	var st *booking.SlotTakenError
	if !errors.As(err, &st) {
		t.Fatalf("booked: %v; want slot taken", err)
	}
	var after int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("%d bookings rows written by a refused visit", after-before)
	}
	if len(st.Visits) < 3 {
		t.Fatalf("%d whole-visit alternatives: %+v", len(st.Visits), st.Visits)
	}
	if m := st.Visits[0].Masters(); m[0] != f.masters[1].ID || m[1] != f.masters[1].ID {
		t.Errorf("first alternative %v is not with the same masters", m)
	}
	for _, v := range st.Visits {
		if len(v.Segments) != 2 {
			t.Fatalf("alternative %+v is not a whole visit", v)
		}
		assertVisitFree(t, f, v)
	}
}

// assertVisitFree proves every segment of v free: the visit's busy
// intervals inserted into master_busy by hand (the constraint judges) and
// rolled back.
func assertVisitFree(t *testing.T, f *visitFixture, v booking.VisitSlot) {
	t.Helper()
	ctx := context.Background()
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	for i, sg := range v.Segments {
		if _, err := tx.Exec(ctx, `INSERT INTO master_busy (booking_id, part, salon_id, master_id, starts_at, duration_min)
			VALUES ($1, 0, $2, $3, $4, $5)`, -1-i, f.salon.ID, sg.MasterID, sg.Start, workMin(sg)); err != nil {
			t.Fatalf("alternative %s segment %d is not free: %v", f.clock(v.Start), i, err)
		}
	}
}

// workMin is how long the master of a segment without processing works.
func workMin(sg booking.Segment) int {
	if !sg.ProcessingStart.IsZero() {
		return int(sg.ProcessingStart.Sub(sg.Start).Minutes())
	}
	return int(sg.End.Sub(sg.Start).Minutes())
}

func TestAProcessingGapIsFreeTime(t *testing.T) {
	f := setupVisits(t)
	m := f.masters[0]
	colour := f.mustBook(t, booking.BookRequest{SalonID: f.salon.ID, ServiceID: f.colour.ID, MasterID: m.ID,
		StartsAt: f.at("10:00"), Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
	if got := f.clock(colour.EndsAt()); got != "11:50" {
		t.Fatalf("the colour ends %s for the client, want 11:50", got)
	}
	if s, e := colour.Processing(); f.clock(s) != "11:00" || f.clock(e) != "11:30" {
		t.Fatalf("processing %s-%s, want 11:00-11:30", f.clock(s), f.clock(e))
	}
	beard := func(hhmm string) booking.BookRequest {
		return booking.BookRequest{SalonID: f.salon.ID, ServiceID: f.beard.ID, MasterID: m.ID, StartsAt: f.at(hhmm),
			Client: booking.ClientInput{Name: "B", Phone: bookingtest.Phone()}}
	}
	// Not a minute outside the gap: 10:59 overlaps the colour's work, 11:11
	// its finish (staff may book off the grid).
	for _, hhmm := range []string{"10:41", "10:59", "11:11", "11:29", "11:49"} {
		if _, err := f.Svc.Book(booking.As(context.Background(), f.admin(1)), beard(hhmm)); !errors.Is(err, booking.ErrSlotTaken) {
			t.Errorf("a beard trim at %s: %v; want slot taken", hhmm, err)
		}
	}
	// The database itself refuses a raw insert into the finish (the
	// constraint of master_busy, which the bookings' triggers keep), and
	// takes one into the gap.
	for hhmm, ok := range map[string]bool{"11:35": false, "11:05": true} {
		_, err := f.Pool.Exec(context.Background(), `INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at,
			duration_min, status, source) VALUES ($1, $2, $3, $4, $5, 20, 'confirmed', 'panel')`,
			f.salon.ID, m.ID, f.beard.ID, colour.ClientID, f.at(hhmm))
		if ok != (err == nil) {
			t.Fatalf("a raw insert at %s: %v", hhmm, err)
		}
		if err == nil {
			if _, err := f.Pool.Exec(context.Background(), `DELETE FROM bookings WHERE starts_at = $1 AND master_id = $2`, f.at(hhmm), m.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The slots offer the gap.
	slots, err := f.Svc.Slots(web(), booking.SlotQuery{SalonID: f.salon.ID, ServiceID: f.beard.ID, MasterID: m.ID, From: f.day})
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, s := range slots {
		if s.Start.Before(f.at("12:00")) {
			starts = append(starts, f.clock(s.Start))
		}
	}
	if want := []string{"11:00"}; !slices.Equal(starts, want) {
		t.Fatalf("beard starts before noon %v, want %v", starts, want)
	}
	// Under a race: 20 clients for the gap's one beard trim, 20 for times
	// just outside it.
	var reqs []booking.BookRequest
	for i := range 40 {
		hhmm := "11:00"
		if i%2 == 1 {
			hhmm = []string{"10:45", "10:50", "11:15", "11:40"}[i/2%4]
		}
		reqs = append(reqs, beard(hhmm))
	}
	errs := race(len(reqs), func(i int) error {
		_, err := f.Svc.Book(booking.As(context.Background(), f.admin(1)), reqs[i])
		return err
	})
	ok, taken, other := count(errs)
	if ok != 1 || taken != len(reqs)-1 || len(other) > 0 {
		t.Fatalf("ok=%d taken=%d other=%v; want 1 booked in the gap", ok, taken, other)
	}
	for i, err := range errs {
		if err == nil && !reqs[i].StartsAt.Equal(f.at("11:00")) {
			t.Fatalf("booked at %s, outside the gap", f.clock(reqs[i].StartsAt))
		}
	}
	assertNoOverlap(t, f.Pool)
}

func TestServicesDoneTogether(t *testing.T) {
	f := setupVisits(t)
	if err := f.Svc.SetTogether(bookingtest.System(), f.salon.ID, f.svc.ID, []int64{f.beard.ID}); err != nil {
		t.Fatal(err)
	}
	b := f.mustBook(t, f.visit("10:00", item(f.svc, f.masters[0]), item(f.beard, nil)))
	// At once, so by another master.
	want := []string{"m0 10:00-11:00 confirmed", "m1 10:00-10:20 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	// The same master for both at once is no visit.
	_, err := f.Svc.Book(web(), f.visit("14:00", item(f.svc, f.masters[0]), item(f.beard, f.masters[0])))
	if !errors.Is(err, booking.ErrInvalid) && !errors.Is(err, booking.ErrSlotTaken) {
		t.Fatalf("one master for two services at once: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "does not work") { // (they work: they cannot do both at once)
		t.Errorf("one master for two services at once is refused for the hours: %v", err)
	}
	assertNoOverlap(t, f.Pool)
}

func TestAVisitAcrossABreakAndADSTChange(t *testing.T) {
	f := setupVisits(t)
	ctx := bookingtest.System()
	m := f.masters[0]
	// A break 12:00-12:30: the colour's processing may span it, its work
	// may not.
	day := f.day.AddDays(1)
	clock := func(s string) booking.Clock {
		c, err := booking.ParseClock(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := f.Svc.SetShifts(ctx, f.salon.ID, m.ID, day, []booking.ShiftInput{{Start: clock("10:00"), End: clock("20:00"),
		BreakStart: clock("12:00"), BreakEnd: clock("12:30")}}); err != nil {
		t.Fatal(err)
	}
	at := func(hhmm string) time.Time { return bookingtest.At(f.salon, day, hhmm) }
	r := f.visit("11:00", item(f.colour, m), item(f.beard, m))
	r.StartsAt = at("11:00") // work 11:00-12:00, processing 12:00-12:30 over the break, finish 12:30-12:50, beard 12:50
	b := f.mustBook(t, r)
	if got := f.clock(b.Segments[1].StartsAt); got != "12:50" {
		t.Fatalf("the beard after the colour starts %s, want 12:50", got)
	}
	r.StartsAt = at("11:30") // work 11:30-12:30: into the break
	r.Client.Phone = bookingtest.Phone()
	if _, err := f.Svc.Book(web(), r); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("a colour worked into the break: %v", err)
	}

	// A zone with a DST change: Europe/Berlin on 2026-03-29, 02:00 -> 03:00.
	berlin := f.Salon(t, booking.Salon{Timezone: "Europe/Berlin"})
	cut := f.Service(t, berlin, booking.SalonService{Name: "Cut", DurationMin: 60})
	trim := f.Service(t, berlin, booking.SalonService{Name: "Trim", DurationMin: 30})
	bm := f.Master(t, berlin, cut, trim)
	dst := booking.Date{Year: 2026, Month: 3, Day: 29}
	f.Shift(t, berlin, bm, dst, 1, "00:00", "06:00")
	f.Clock.Set(time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC))
	start := bookingtest.At(berlin, dst, "01:30") // CET
	vb, err := f.Svc.Book(web(), booking.BookRequest{SalonID: berlin.ID, StartsAt: start,
		Items:  []booking.VisitItem{{ServiceID: cut.ID, MasterID: bm.ID}, {ServiceID: trim.ID}},
		Client: booking.ClientInput{Name: "D", Phone: "+4915112345678"}})
	if err != nil {
		t.Fatal(err)
	}
	// 01:30 CET + 60 min = 03:30 CEST: the trim starts then, 60 real minutes later.
	second := vb.Segments[1].StartsAt
	if got := second.In(berlin.Location()).Format("15:04 MST"); got != "03:30 CEST" || second.Sub(start) != time.Hour {
		t.Fatalf("the trim starts %s (%s after), want 03:30 CEST, an hour after", got, second.Sub(start))
	}
	assertNoOverlap(t, f.Pool)
}

func TestVisitSlots(t *testing.T) {
	f := setupVisits(t)
	m := f.masters[0]
	// Master 0 is busy 11:00-12:00: a haircut then a beard with master 0
	// cannot start at 10:00 (the beard would fall at 11:00), nor 10:30.
	f.mustBook(t, f.req(m, "11:00"))
	slots, err := f.Svc.VisitSlots(web(), booking.VisitSlotQuery{SalonID: f.salon.ID, From: f.day,
		Items: []booking.VisitItem{item(f.svc, m), item(f.beard, m)}})
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, v := range slots {
		starts = append(starts, f.clock(v.Start))
		if len(v.Segments) != 2 || !v.Segments[1].Start.Equal(v.Segments[0].End) || !v.End.Equal(v.Segments[1].End) {
			t.Fatalf("slot %+v: the beard does not follow the haircut", v)
		}
		assertVisitFree(t, f, v)
	}
	if slices.Contains(starts, "10:00") || slices.Contains(starts, "10:30") || !slices.Contains(starts, "12:00") {
		t.Fatalf("starts %v: want 12:00, not 10:00 or 10:30", starts)
	}
	// With any master for the beard, 10:00 is offered: master 1 does it.
	slots, err = f.Svc.VisitSlots(web(), booking.VisitSlotQuery{SalonID: f.salon.ID, From: f.day,
		Items: []booking.VisitItem{item(f.svc, m), item(f.beard, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) == 0 || f.clock(slots[0].Start) != "10:00" || slots[0].Segments[1].MasterID != f.masters[1].ID {
		t.Fatalf("first slot %+v: want 10:00 with master 1 for the beard", slots[0])
	}
}

// TestVisitRace releases 200 visit requests at once: 2 or 3 segments,
// overlapping on 3 masters, some with "any master". No master is booked
// twice, no visit is half booked, and every loser gets at least 3 free
// whole-visit alternatives.
func TestVisitRace(t *testing.T) {
	f := setupVisits(t)
	for _, m := range f.masters { // room for the losers' alternatives
		f.Shift(t, f.salon, m, f.day.AddDays(1), 3, "10:00", "20:00")
	}
	rng := rand.New(rand.NewPCG(7, 19))
	var starts []string
	for h := 10; h < 16; h++ { // (the longest visit, from 15:30, ends 19:20)
		starts = append(starts, fmt.Sprintf("%d:00", h), fmt.Sprintf("%d:30", h))
	}
	reqs := make([]booking.BookRequest, 200)
	for i := range reqs {
		pick := func(sv *booking.SalonService, idx ...int) booking.VisitItem {
			if rng.IntN(3) == 0 {
				return item(sv, nil)
			}
			return item(sv, f.masters[idx[rng.IntN(len(idx))]])
		}
		items := []booking.VisitItem{pick(f.svc, 0, 1, 2), pick(f.beard, 0, 1)}
		if rng.IntN(2) == 0 {
			items = append(items, pick(f.colour, 0, 2))
		}
		reqs[i] = f.visit(starts[rng.IntN(len(starts))], items...)
	}
	type result struct {
		b   *booking.Booking
		err error
	}
	results := make([]result, len(reqs))
	bookingtest.Race(len(reqs), func(i int) {
		b, err := f.Svc.Book(web(), reqs[i])
		results[i] = result{b, err}
	})
	booked := 0
	for i, r := range results {
		var st *booking.SlotTakenError
		switch {
		case r.err == nil:
			booked++
			if len(r.b.Segments) != len(reqs[i].Items) {
				t.Fatalf("request %d: %d segments for %d items", i, len(r.b.Segments), len(reqs[i].Items))
			}
		case errors.As(r.err, &st):
			if len(st.Visits) < 3 {
				t.Fatalf("request %d: %d alternatives", i, len(st.Visits))
			}
			for _, v := range st.Visits {
				if len(v.Segments) != len(reqs[i].Items) {
					t.Fatalf("request %d: alternative %+v is not the whole visit", i, v)
				}
			}
		default:
			t.Fatalf("request %d: %v", i, r.err)
		}
	}
	if booked == 0 {
		t.Fatal("nothing booked")
	}
	assertNoOverlap(t, f.Pool)
	// No partial visits: each visit has all its segments, all alike.
	var partial int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM (
		SELECT visit_id FROM bookings GROUP BY visit_id HAVING count(DISTINCT status) > 1) x`).Scan(&partial); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE status = 'confirmed'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	want := 0
	for i, r := range results {
		if r.err == nil {
			want += len(reqs[i].Items)
		}
	}
	if partial != 0 || rows != want {
		t.Fatalf("%d visits with mixed segments; %d segment rows for %d booked visits' %d segments", partial, rows, booked, want)
	}
	// A loser asking again is refused again, and its alternatives are free.
	for i, r := range results {
		if r.err == nil {
			continue
		}
		again := reqs[i]
		again.Client.Phone = bookingtest.Phone()
		_, err := f.Svc.Book(web(), again)
		var st *booking.SlotTakenError
		if !errors.As(err, &st) || len(st.Visits) < 3 {
			t.Fatalf("request %d again: %v", i, err)
		}
		for _, v := range st.Visits {
			assertVisitFree(t, f, v)
		}
		break
	}
	t.Logf("%d of %d visits booked", booked, len(reqs))
}

func TestAVisitMovesWhole(t *testing.T) {
	f := setupVisits(t)
	ctx := booking.As(context.Background(), f.admin(1))
	b := f.mustBook(t, f.visit("10:00", item(f.svc, f.masters[0]), item(f.beard, f.masters[0])))
	// Half an hour later: the haircut moves into the beard's old time.
	moved, err := f.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.Segments[1].ID, StartsAt: f.at("10:30")})
	if err != nil {
		t.Fatal(err)
	}
	if moved.ID != b.ID || len(moved.Segments) != 2 {
		t.Fatalf("moved %+v: want the visit's head with its 2 segments", moved)
	}
	want := []string{"m0 10:30-11:30 confirmed", "m0 11:30-11:50 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after the move %v, want %v", got, want)
	}
	// To other masters.
	if _, err := f.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, StartsAt: f.at("14:00"),
		Items: []booking.VisitItem{item(f.svc, f.masters[1]), item(f.beard, f.masters[1])}}); err != nil {
		t.Fatal(err)
	}
	want = []string{"m1 14:00-15:00 confirmed", "m1 15:00-15:20 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after the move %v, want %v", got, want)
	}
	// Where the second segment is taken, the visit keeps its time.
	f.mustBook(t, f.req(f.masters[1], "17:00"))
	_, err = f.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, StartsAt: f.at("16:00")})
	var st *booking.SlotTakenError
	if !errors.As(err, &st) || len(st.Visits) < 3 {
		t.Fatalf("a move onto a taken time: %v; want slot taken with 3 whole-visit alternatives", err)
	}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after a refused move %v, want %v", got, want)
	}
	// Another set of services is not a move.
	_, err = f.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, StartsAt: f.at("12:00"),
		Items: []booking.VisitItem{item(f.beard, nil), item(f.svc, nil)}})
	if !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("a move to other services: %v", err)
	}
	assertNoOverlap(t, f.Pool)
}

func TestAVisitIsToldAsOne(t *testing.T) {
	f := setupVisits(t)
	b := f.mustBook(t, f.visit("10:00", item(f.svc, f.masters[0]), item(f.colour, f.masters[2]), item(f.beard, f.masters[0])))
	for _, id := range []int64{b.ID, b.Segments[1].ID} {
		v, err := f.Svc.BookingView(bookingtest.System(), f.salon.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s + %s + %s", f.svc.Name, f.colour.Name, f.beard.Name)
		if v.ServiceName != want || v.MasterName != f.masters[0].Name+", "+f.masters[2].Name || len(v.Segments) != 3 {
			t.Fatalf("view of %d: %q by %q (%d segments), want %q by both masters", id, v.ServiceName, v.MasterName, len(v.Segments), want)
		}
	}
	// One notification for the visit, not one per segment.
	var jobs int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM booking_outbox WHERE booking_id IN (SELECT id FROM bookings WHERE visit_id = $1)`,
		b.ID).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs > 1 {
		t.Fatalf("%d outbox rows for one visit", jobs)
	}
}

// TestAVisitsDepositsAreOnePayment: a visit of two services with deposits
// is held whole until its one payment of both deposits; the provider
// captures their sum; the payment confirms every segment; cancelling
// refunds the sum and frees every segment.
func TestAVisitsDepositsAreOnePayment(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	second := w.Service(t, w.salon, booking.SalonService{Name: "Gloss", DurationMin: 30, Price: 200000, Deposit: 50000})
	if err := w.Svc.SetOffers(ctx, w.salon.ID, w.master.ID, []booking.Offer{{ServiceID: w.svc.ID}, {ServiceID: second.ID}}); err != nil {
		t.Fatal(err)
	}
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		Items:    []booking.VisitItem{{ServiceID: w.svc.ID, MasterID: w.master.ID}, {ServiceID: second.ID}},
		StartsAt: bookingtest.At(w.salon, w.day, "11:00"), Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != booking.StatusPending || b.Deposit != 150000 {
		t.Fatalf("visit %s with deposit %s, want pending with 1500", b.Status, b.Deposit)
	}
	if n := w.count(`SELECT count(*) FROM bookings WHERE visit_id = $1 AND status = 'pending' AND hold_expires_at IS NOT NULL`, b.ID); n != 2 {
		t.Fatalf("%d segments held, want 2", n)
	}
	p := w.start(b)
	if p.Amount != 150000 || !w.fake.Pay(p.ExternalID) {
		t.Fatalf("payment of %s, want the two deposits' 1500", p.Amount)
	}
	if _, err := w.Svc.CheckPayment(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if n := w.count(`SELECT count(*) FROM bookings WHERE visit_id = $1 AND status = 'confirmed'`, b.ID); n != 2 {
		t.Fatalf("%d segments confirmed by the payment, want 2", n)
	}
	if captured, _ := w.fake.Totals(); captured != 150000 {
		t.Fatalf("the provider captured %d, want 150000", captured)
	}
	// Each segment's page (the panel cancels the whole visit from any)
	// says what cancelling does to the visit's deposit.
	var segs []int64
	if err := w.Pool.QueryRow(ctx, `SELECT array_agg(id ORDER BY id) FROM bookings WHERE visit_id = $1`, b.ID).Scan(&segs); err != nil {
		t.Fatal(err)
	}
	for _, id := range segs {
		if v, err := w.Svc.BookingView(ctx, w.salon.ID, id); err != nil || v.Prepaid != 150000 || v.CancelKeepsPrepaid {
			t.Errorf("segment %d: prepaid %v, kept %v (%v), want 1500 refunded", id, v.Prepaid, v.CancelKeepsPrepaid, err)
		}
	}
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	w.sweep(3)
	w.fake.SettleRefunds()
	w.sweep(3)
	if _, refunded := w.fake.Totals(); refunded != 150000 {
		t.Fatalf("the provider refunded %d, want 150000", refunded)
	}
	if n := w.count(`SELECT count(*) FROM master_busy WHERE booking_id IN (SELECT id FROM bookings WHERE visit_id = $1)`, b.ID); n != 0 {
		t.Fatalf("%d busy intervals left of a cancelled visit", n)
	}
}

// TestAVisitsHoldExpiresWhole: an unpaid visit's hold ends for every
// segment at once.
func TestAVisitsHoldExpiresWhole(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	second := w.Service(t, w.salon, booking.SalonService{Name: "Gloss", DurationMin: 30, Price: 200000})
	if err := w.Svc.SetOffers(ctx, w.salon.ID, w.master.ID, []booking.Offer{{ServiceID: w.svc.ID}, {ServiceID: second.ID}}); err != nil {
		t.Fatal(err)
	}
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		Items:    []booking.VisitItem{{ServiceID: second.ID, MasterID: w.master.ID}, {ServiceID: w.svc.ID}},
		StartsAt: bookingtest.At(w.salon, w.day, "11:00"), Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
	if err != nil || b.Status != booking.StatusPending {
		t.Fatalf("visit: %v %+v", err, b)
	}
	w.Clock.Advance(16 * time.Minute)
	if n, err := w.Svc.ExpireHolds(ctx); err != nil || n != 1 {
		t.Fatalf("expired %d visits (%v), want 1", n, err)
	}
	if n := w.count(`SELECT count(*) FROM bookings WHERE visit_id = $1 AND status = 'cancelled'`, b.ID); n != 2 {
		t.Fatalf("%d segments cancelled, want 2", n)
	}
}

func TestOneSegmentMovesWhenTheVisitStaysWhole(t *testing.T) {
	f := setupVisits(t)
	staff := booking.As(context.Background(), f.admin(1))
	b := f.mustBook(t, f.visit("10:00", item(f.svc, f.masters[0]), item(f.beard, f.masters[0])))
	beard := b.Segments[1].ID
	if _, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: beard, Segment: true, StartsAt: f.at("11:30"),
		MasterID: f.masters[1].ID}); err != nil {
		t.Fatal(err)
	}
	want := []string{"m0 10:00-11:00 confirmed", "m1 11:30-11:50 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after moving the beard %v, want %v", got, want)
	}
	// Into the haircut: refused, nothing moves.
	if _, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: beard, Segment: true, StartsAt: f.at("10:30")}); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("the beard into the haircut: %v", err)
	}
	// The haircut later, up to the beard.
	if _, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: b.ID, Segment: true, StartsAt: f.at("10:30")}); err != nil {
		t.Fatal(err)
	}
	want = []string{"m0 10:30-11:30 confirmed", "m1 11:30-11:50 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after moving the haircut %v, want %v", got, want)
	}
	// Onto another booking: taken, with alternatives for that service.
	f.mustBook(t, booking.BookRequest{SalonID: f.salon.ID, ServiceID: f.beard.ID, MasterID: f.masters[0].ID, StartsAt: f.at("12:00"),
		Client: booking.ClientInput{Name: "X", Phone: bookingtest.Phone()}})
	_, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: beard, Segment: true, StartsAt: f.at("12:00"), MasterID: f.masters[0].ID})
	var st *booking.SlotTakenError
	if !errors.As(err, &st) || len(st.Alternatives) == 0 {
		t.Fatalf("onto a taken time: %v", err)
	}
	// Clients move a visit whole.
	if _, err := f.Svc.Reschedule(web(), booking.RescheduleRequest{BookingID: beard, Segment: true, StartsAt: f.at("13:00")}); !errors.Is(err, booking.ErrForbidden) {
		t.Fatalf("a client moving one segment: %v", err)
	}
	assertNoOverlap(t, f.Pool)
}

// TestAMoveIsNotOfferedWhereItIs: a move onto a taken time, of a booking,
// of one service of a visit or of a whole visit, offers alternatives
// around it, but never where it is now (its search counts its own time as
// free); a move of a visit to where it is changes nothing and records no
// move.
func TestAMoveIsNotOfferedWhereItIs(t *testing.T) {
	f := setupVisits(t)
	staff := booking.As(context.Background(), f.admin(1))
	m, n := f.masters[0], f.masters[1]
	single := f.mustBook(t, f.req(m, "14:00"))
	f.mustBook(t, f.req(m, "15:00")) // (taken: the booking's move goes there)
	visit := f.mustBook(t, f.visit("12:00", item(f.svc, n), item(f.beard, n)))
	f.mustBook(t, f.req(n, "13:30")) // (taken: the visit's moves go there)
	taken := func(what string, r booking.RescheduleRequest, at func(booking.Slot) bool, visitAt func(booking.VisitSlot) bool) {
		t.Helper()
		_, err := f.Svc.Reschedule(staff, r)
		var st *booking.SlotTakenError
		if !errors.As(err, &st) || len(st.Alternatives)+len(st.Visits) == 0 {
			t.Fatalf("%s onto a taken time: %v", what, err)
		}
		for _, sl := range st.Alternatives {
			if at(sl) {
				t.Errorf("%s: offered where it is, %v with master %d", what, sl.Start, sl.MasterID)
			}
		}
		for _, v := range st.Visits {
			if visitAt(v) {
				t.Errorf("%s: offered where it is, %v", what, v.Start)
			}
		}
	}
	never := func(booking.VisitSlot) bool { return false }
	taken("a booking", booking.RescheduleRequest{BookingID: single.ID, StartsAt: f.at("15:00"), MasterID: m.ID},
		func(sl booking.Slot) bool { return sl.MasterID == m.ID && sl.Start.Equal(f.at("14:00")) }, never)
	taken("the beard alone", booking.RescheduleRequest{BookingID: visit.Segments[1].ID, Segment: true, StartsAt: f.at("13:30"), MasterID: n.ID},
		func(sl booking.Slot) bool { return sl.MasterID == n.ID && sl.Start.Equal(f.at("13:00")) }, never)
	taken("the visit", booking.RescheduleRequest{BookingID: visit.ID, StartsAt: f.at("13:30"),
		Items: []booking.VisitItem{item(f.svc, n), item(f.beard, n)}}, func(booking.Slot) bool { return false },
		func(v booking.VisitSlot) bool {
			return v.Start.Equal(f.at("12:00")) && v.Segments[0].MasterID == n.ID && v.Segments[1].MasterID == n.ID
		})
	// Moved to where it is: nothing recorded, nobody told.
	if _, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: visit.ID, StartsAt: f.at("12:00"),
		Items: []booking.VisitItem{item(f.svc, n), item(f.beard, n)}}); err != nil {
		t.Fatal(err)
	}
	var moves int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM booking_events WHERE booking_id = $1 AND action = 'rescheduled'`,
		visit.ID).Scan(&moves); err != nil || moves != 0 {
		t.Errorf("a move of the visit to where it is recorded %d moves (%v)", moves, err)
	}
}

// TestAVisitOutsideTheHoursNamesTheService: a visit whose later service
// would fall after its master's day is refused naming that service.
func TestAVisitOutsideTheHoursNamesTheService(t *testing.T) {
	f := setupVisits(t)
	staff := booking.As(context.Background(), f.admin(1))
	m := f.masters[0]
	visit := f.mustBook(t, f.visit("12:00", item(f.svc, m), item(f.beard, m)))
	_, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: visit.ID, StartsAt: f.at("19:00"),
		Items: []booking.VisitItem{item(f.svc, m), item(f.beard, m)}})
	var ve *booking.ValidationError
	if !errors.As(err, &ve) || ve.Fields["starts_at"].In("en") != "Beard: the master does not work at that time" {
		t.Fatalf("the visit moved to 19:00 (its beard at 20:00, after the day): %v", err)
	}
}

// TestAServiceMovedAloneKeepsItsPlaceInTheVisit: one service of a visit
// moves only within the visit's order, and not a day away (no more than
// 12 hours from the others), and the alternatives of a taken time offer
// only such places: the first service ends before the next starts, the
// last starts after the one before it.
func TestAServiceMovedAloneKeepsItsPlaceInTheVisit(t *testing.T) {
	f := setupVisits(t)
	staff := booking.As(context.Background(), f.admin(1))
	m := f.masters[0]
	visit := f.mustBook(t, f.visit("12:00", item(f.svc, m), item(f.beard, m))) // 12:00-13:00, 13:00-13:20
	f.mustBook(t, f.req(m, "10:30"))
	f.mustBook(t, f.req(m, "14:00"))
	cut, beard := visit.Segments[0], visit.Segments[1]
	f.Shift(t, f.salon, m, f.day.AddDays(-1), 1, "10:00", "20:00") // (the master works the day before)
	_, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: cut.ID, Segment: true,
		StartsAt: bookingtest.At(f.salon, f.day.AddDays(-1), "12:00")})
	var ve *booking.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Fields["starts_at"].In("en"), "too far from the visit's other services") {
		t.Fatalf("the haircut to the day before: %v", err)
	}
	for _, c := range []struct {
		what string
		id   int64
		to   string
		fits func(booking.Slot) bool
	}{
		{"the haircut", cut.ID, "10:30", func(sl booking.Slot) bool { return !sl.End.After(beard.StartsAt) }},
		{"the beard", beard.ID, "14:00", func(sl booking.Slot) bool { return !sl.Start.Before(cut.EndsAt()) }},
	} {
		_, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: c.id, Segment: true, StartsAt: f.at(c.to), MasterID: m.ID})
		var st *booking.SlotTakenError
		if !errors.As(err, &st) || len(st.Alternatives) == 0 {
			t.Fatalf("%s onto a taken time: %v", c.what, err)
		}
		for _, sl := range st.Alternatives {
			if day := booking.DateOf(sl.Start.In(f.salon.Location())); day != f.day || !c.fits(sl) {
				t.Errorf("%s: offered %v-%v with master %d, out of its place in the visit", c.what, sl.Start, sl.End, sl.MasterID)
			}
		}
	}
}

// TestAServiceDoneTogetherMovesAlone: in a visit of a cut and a beard done
// together (two masters at once), then a colour, a service moved alone
// keeps the visit as the planner makes it: the colour not before both
// are done; the cut to another master at its time, the beard within the
// cut, both allowed.
func TestAServiceDoneTogetherMovesAlone(t *testing.T) {
	f := setupVisits(t)
	if err := f.Svc.SetTogether(bookingtest.System(), f.salon.ID, f.svc.ID, []int64{f.beard.ID}); err != nil {
		t.Fatal(err)
	}
	staff := booking.As(context.Background(), f.admin(1))
	b := f.mustBook(t, f.visit("10:00", item(f.svc, f.masters[0]), item(f.beard, f.masters[1]), item(f.colour, f.masters[2])))
	want := []string{"m0 10:00-11:00 confirmed", "m1 10:00-10:20 confirmed", "m2 11:00-12:50 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	move := func(i int, hhmm string, m *booking.Master) error {
		_, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{BookingID: b.Segments[i].ID, Segment: true, StartsAt: f.at(hhmm), MasterID: m.ID})
		return err
	}
	if err := move(2, "10:30", f.masters[2]); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("the colour while the cut runs: %v", err)
	}
	if err := move(0, "10:00", f.masters[2]); err != nil {
		t.Fatalf("the cut to another master at its time: %v", err)
	}
	if err := move(1, "10:15", f.masters[1]); err != nil {
		t.Fatalf("the beard later within the cut: %v", err)
	}
	want = []string{"m2 10:00-11:00 confirmed", "m1 10:15-10:35 confirmed", "m2 11:00-12:50 confirmed"}
	if got := segmentsOf(t, f, b.ID); !slices.Equal(got, want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	assertNoOverlap(t, f.Pool)
}
