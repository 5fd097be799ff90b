package booking_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// The reminder sweep's query costs the same whatever the salons' history:
// the buffers it touches (PostgreSQL's own count, not a timing) to find the
// same 60 due reminders among 5,000 bookings and among 5,000,000 (of 20
// salons, most of them past, a client for every five; half the salons
// send SMS, so their clients' phones are read, and Telegram runs) differ
// by at most a half. SALON_SCALE_BOOKINGS
// sets the larger count (CI runs 5,000,000).
func TestReminderSweepCostIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("a scale test")
	}
	big := 5_000_000
	if v := os.Getenv("SALON_SCALE_BOOKINGS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		big = n
	}
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	var salons []*booking.Salon
	var services, masters []int64
	for range 20 {
		s := e.Salon(t, booking.Salon{})
		sv := e.Service(t, s, booking.SalonService{DurationMin: 30})
		m := e.Master(t, s, sv)
		salons, services, masters = append(salons, s), append(services, sv.ID), append(masters, m.ID)
		if len(salons)%2 == 0 { // half the salons send SMS reminders: their clients' phones are read
			if _, err := e.Svc.UpdateMessageSettings(ctx, s.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00",
				ReminderOffsets: []time.Duration{24 * time.Hour, 2 * time.Hour}, SMSKinds: []booking.MessageKind{booking.KindReminder}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := e.Clock.Now()
	// The due reminders: three bookings of each salon tomorrow (its default
	// offsets, 24 h and 2 h, make the day-before one due within the
	// planning window).
	for i, s := range salons {
		for k := range 3 {
			if _, err := e.Svc.Book(ctx, booking.BookRequest{SalonID: s.ID, ServiceID: services[i], MasterID: masters[i],
				StartsAt: now.Add(20*time.Hour + time.Duration(k)*time.Hour), Source: booking.SourceImport,
				Client: booking.ClientInput{Name: "Due", Phone: bookingtest.Phone()}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// History: completed bookings before now, spread over the salons.
	history := func(n int) {
		t.Helper()
		conn, err := e.Pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		// A bulk load, as a restore would: without the audit trigger and
		// key checks per row.
		if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(context.Background(), `SET session_replication_role = DEFAULT`) //nolint:errcheck
		var have int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM bookings`).Scan(&have); err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, 0, 20)
		for _, s := range salons {
			ids = append(ids, s.ID)
		}
		// A client comes five times: a client record for every five
		// bookings, theirs.
		var firstClient int64
		if err := conn.QueryRow(ctx, `
			WITH c AS (
			    INSERT INTO clients (salon_id, name, phone)
			    SELECT s.salon, 'Past', '+7906' || lpad(g::text, 7, '0')
			    FROM generate_series($2::bigint / 5, ($2::bigint + $3::bigint) / 5 - 1) g
			    JOIN unnest($1::bigint[]) WITH ORDINALITY AS s(salon, k) ON s.k = g % 20 + 1
			    RETURNING id)
			SELECT min(id) FROM c`, ids, have, n).Scan(&firstClient); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `
			INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source, price)
			SELECT s.salon, s.master, s.service, $7::bigint + (g - $5::bigint) / 5,
			       $4::timestamptz - (g / 20 + 1) * interval '30 minutes', 30, 'completed', 'import', 0
			FROM generate_series($5::bigint, $6::bigint) g
			JOIN unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS s(salon, master, service, k) ON s.k = g % 20 + 1`,
			ids, masters, services, now, have, have+n-1, firstClient); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `VACUUM ANALYZE bookings, clients`); err != nil {
			t.Fatal(err)
		}
	}
	// cost runs the query 15 times and returns the median execution time,
	// the buffers of the plan, those spent on bookings (the table and its
	// indexes), and the rows.
	cost := func() (time.Duration, int, int, int) {
		t.Helper()
		var times []time.Duration
		var blocks, onBookings, rows int
		for range 15 {
			var plan []map[string]any
			if err := e.Pool.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+booking.DueSQL, now, 13*time.Hour, 20000, true, true).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			times = append(times, time.Duration(plan[0]["Execution Time"].(float64)*float64(time.Millisecond)))
			top := plan[0]["Plan"].(map[string]any)
			buffers := func(n map[string]any) int {
				return int(n["Shared Hit Blocks"].(float64) + n["Shared Read Blocks"].(float64))
			}
			blocks, rows, onBookings = buffers(top), int(top["Actual Rows"].(float64)), 0
			var walk func(n map[string]any)
			walk = func(n map[string]any) {
				if n["Relation Name"] == "bookings" {
					onBookings += buffers(n) // its index scans are counted in it
				}
				if kids, ok := n["Plans"].([]any); ok {
					for _, k := range kids {
						walk(k.(map[string]any))
					}
				}
			}
			walk(top)
		}
		slices.Sort(times)
		return times[len(times)/2], blocks, onBookings, rows
	}
	history(5000 - 60)
	smallT, smallB, smallOn, due := cost()
	if due != 60 {
		t.Fatalf("%d due, want 60", due)
	}
	began := time.Now()
	history(big - 5000)
	loaded := time.Since(began)
	largeT, largeB, largeOn, due2 := cost()
	if due2 != 60 {
		t.Fatalf("%d due among %d, want 60", due2, big)
	}
	ratio := largeT.Seconds() / smallT.Seconds()
	t.Logf("the sweep's query for 60 due: %v (median of 15), %d buffers, %d of them on bookings, among 5,000 bookings; "+
		"%v, %d buffers, %d on bookings, among %d (time x%.2f); the history loaded in %v",
		smallT, smallB, smallOn, largeT, largeB, largeOn, big, ratio, loaded.Round(time.Second))
	if ratio > 1.5 {
		t.Errorf("the sweep takes x%.2f as long with %d bookings", ratio, big)
	}
	// It reads the window's bookings only: a few pages, however long the
	// history.
	if largeOn > 3*max(smallOn, 4) {
		t.Errorf("the sweep read %d buffers of bookings among %d, %d among 5,000", largeOn, big, smallOn)
	}
}
