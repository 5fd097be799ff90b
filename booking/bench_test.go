package booking_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/courier"
)

// BenchmarkBook compares Book's throughput with a raw pgx loop doing only
// what the guarantee needs (advisory lock, savepoint, insert of a booking for
// an existing client), on the same database in the same run, 16 goroutines
// on 16 distinct masters each. Book runs twice: for returning clients (like
// the raw loop, which books existing clients) and with a new client for
// every booking. The phases are interleaved in rounds, rotating which goes
// first, so that the shared machine's noise falls on all of them; the
// figures are medians over the rounds of Book's throughput over the raw
// loop's: book/raw and book-newclient/raw.
//
//	go test ./booking -run '^$' -bench Book -benchtime 9x
func BenchmarkBook(b *testing.B) {
	const workers = 16
	const perWorker = 40 // bookings per worker per round and kind
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{HorizonDays: 366})
	svc := e.Service(b, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	days := (b.N*perWorker)/48 + 2
	newMasters := func() []*booking.Master { return e.RoundTheClock(b, salon, workers, testDay, days, svc) }
	rawMasters, bookMasters, newMasters2 := newMasters(), newMasters(), newMasters()
	first := testDay.Start(salon.Location())
	slotAt := func(n int) time.Time { return first.Add(time.Duration(n) * 30 * time.Minute) }
	// The raw loop books existing clients, one per worker (a single shared
	// client row would make the workers' foreign key checks contend).
	clientIDs := make([]int64, workers)
	for w := range clientIDs {
		if err := e.Pool.QueryRow(ctx, `INSERT INTO clients (salon_id, name, phone) VALUES ($1, 'raw', $2) RETURNING id`,
			salon.ID, fmt.Sprintf("+7902%07d", w)).Scan(&clientIDs[w]); err != nil {
			b.Fatal(err)
		}
	}
	// Production runs autovacuum; the test cluster does not, so gather the
	// statistics the planner would have.
	if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	// Book's clients: returning ones (one per worker, booked once before the
	// clock starts), and, in a third phase, a new client for every booking.
	phones := make([][]string, workers)
	for w := range phones {
		phones[w] = make([]string, b.N*perWorker)
		for i := range phones[w] {
			phones[w][i] = fmt.Sprintf("+7901%02d%05d", w, i)
		}
		if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: bookMasters[w].ID,
			StartsAt: slotAt(b.N*perWorker + 1), Client: booking.ClientInput{Name: "Regular", Phone: fmt.Sprintf("+7904%07d", w)}}); err != nil {
			b.Fatal(err)
		}
	}

	raw := func(round int) error {
		return parallel(workers, func(w int) error {
			for i := range perWorker {
				if err := rawBook(ctx, e.Pool, salon.ID, rawMasters[w].ID, svc.ID, clientIDs[w], slotAt(round*perWorker+i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	bookWith := func(masters []*booking.Master, phone func(w, n int) string) func(int) error {
		return func(round int) error {
			return parallel(workers, func(w int) error {
				for i := range perWorker {
					n := round*perWorker + i
					_, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: masters[w].ID,
						StartsAt: slotAt(n), Client: booking.ClientInput{Name: "Bench", Phone: phone(w, n)}})
					if err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	book := bookWith(bookMasters, func(w, _ int) string { return fmt.Sprintf("+7904%07d", w) })
	bookNew := bookWith(newMasters2, func(w, n int) string { return phones[w][n] })

	phases := []func(int) error{raw, book, bookNew}
	var total [3]time.Duration
	var ratios [2][]float64
	b.ResetTimer()
	for round := range b.N {
		var took [3]time.Duration
		for k := range phases { // rotate the order so drift falls on every phase
			p := (round + k) % len(phases)
			start := time.Now()
			if err := phases[p](round); err != nil {
				b.Fatal(err)
			}
			took[p] = time.Since(start)
			total[p] += took[p]
		}
		// Production statistics follow the data (autovacuum); the test
		// cluster runs without it, so refresh them between rounds, untimed.
		b.StopTimer()
		if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		// Same op count in each phase: the time ratio is the throughput ratio.
		ratios[0] = append(ratios[0], took[0].Seconds()/took[1].Seconds())
		ratios[1] = append(ratios[1], took[0].Seconds()/took[2].Seconds())
	}
	b.StopTimer()
	ops := float64(b.N * workers * perWorker)
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ops/total[0].Seconds(), "raw-ops/s")
	b.ReportMetric(ops/total[1].Seconds(), "book-ops/s")
	b.ReportMetric(median(ratios[0]), "book/raw")           // returning clients: the headline figure
	b.ReportMetric(median(ratios[1]), "book-newclient/raw") // a new client row with every booking
}

// packageWorkers is how many goroutines BenchmarkBookWithPackage books
// with at once (1: one booking's latency, no contention).
var packageWorkers = flag.Int("package.workers", 16, "BenchmarkBookWithPackage: goroutines booking at once")

// BenchmarkBookWithPackage compares Book paying with a package (by its
// code: the reservation in the booking's statement, the balance's row
// locked by its entry) with plain Book, for returning clients, 16
// goroutines (-package.workers) on 16 distinct masters each, phases
// interleaved in rounds as in BenchmarkBook. Each worker's client has a
// package per round, issued untimed. Reported: package/plain, the median
// over rounds of the throughput ratio (goal: at least 0.85).
//
//	go test ./booking -run '^$' -bench BookWithPackage -benchtime 9x [-package.workers 1]
func BenchmarkBookWithPackage(b *testing.B) {
	workers := *packageWorkers
	const perWorker = 40
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{HorizonDays: 366})
	svc := e.Service(b, salon, booking.SalonService{Name: "Cut", DurationMin: 30, Price: 150000})
	days := (b.N*perWorker)/48 + 2
	plainMasters := e.RoundTheClock(b, salon, workers, testDay, days, svc)
	paidMasters := e.RoundTheClock(b, salon, workers, testDay, days, svc)
	first := testDay.Start(salon.Location())
	slotAt := func(n int) time.Time { return first.Add(time.Duration(n) * 30 * time.Minute) }
	phone := func(w int) string { return fmt.Sprintf("+7905%07d", w) }
	for w := range workers {
		for _, m := range []*booking.Master{plainMasters[w], paidMasters[w]} {
			if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: m.ID,
				StartsAt: slotAt(b.N*perWorker + 1), Client: booking.ClientInput{Name: "Regular", Phone: phone(w)}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	codes := make([]string, workers)
	issue := func() {
		for w := range codes {
			p, err := e.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{svc.ID},
				Visits: perWorker, Client: booking.ClientInput{Name: "Regular", Phone: phone(w)}})
			if err != nil {
				b.Fatal(err)
			}
			codes[w] = p.Code
		}
		if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	bookWith := func(masters []*booking.Master, pay bool) func(int) error {
		return func(round int) error {
			return parallel(workers, func(w int) error {
				for i := range perWorker {
					r := booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: masters[w].ID,
						StartsAt: slotAt(round*perWorker + i), Client: booking.ClientInput{Name: "Bench", Phone: phone(w)}}
					if pay {
						r.PayWith = &booking.PayWith{Kind: booking.BalancePackage, Code: codes[w]}
					}
					if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), r); err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	phases := []func(int) error{bookWith(plainMasters, false), bookWith(paidMasters, true)}
	var ratios []float64
	b.ResetTimer()
	for round := range b.N {
		b.StopTimer()
		issue()
		b.StartTimer()
		var took [2]time.Duration
		for k := range phases {
			p := (round + k) % len(phases)
			start := time.Now()
			if err := phases[p](round); err != nil {
				b.Fatal(err)
			}
			took[p] = time.Since(start)
		}
		ratios = append(ratios, took[0].Seconds()/took[1].Seconds())
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "package/plain")
}

// rawBook is the baseline: the lock, the savepoint and the insert, nothing else.
func rawBook(ctx context.Context, pool *pgxpool.Pool, salonID, masterID, serviceID, clientID int64, at time.Time) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('booking-master:' || $1::bigint, 0))`, masterID); err != nil {
		return err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := sp.Exec(ctx, `INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source)
		VALUES ($1, $2, $3, $4, $5, 30, 'confirmed', 'widget')`, salonID, masterID, serviceID, clientID, at); err != nil {
		return err
	}
	if err := sp.Commit(ctx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// parallel runs fn(i) for i in [0, n) concurrently, released together, and
// returns the first error.
func parallel(n int, fn func(i int) error) error {
	errs := race(n, fn)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkConflictStorm measures how losing a race costs: 200 requests
// released at once for one slot (one wins, 199 are refused with
// alternatives) against 200 released at once for 200 different free slots,
// on the same database in the same run, rounds interleaved. Reported: the
// p99 latency of each phase and storm-p99/spread-p99, the median over
// rounds (goal: at most 2).
//
//	go test ./booking -run '^$' -bench ConflictStorm -benchtime 5x
func BenchmarkConflictStorm(b *testing.B) {
	const n = 200
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{HorizonDays: 366})
	svc := e.Service(b, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	days := 2*b.N + 2
	masters := e.RoundTheClock(b, salon, 20, testDay, days, svc)
	if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	first := testDay.Start(salon.Location())
	phone := func(round, i int) string { return fmt.Sprintf("+7906%03d%04d", round%1000, i) }
	// Every phase books on a day of its own, so the calendar does not fill.
	storm := func(round int) []time.Duration {
		at := first.Add(time.Duration(2*round)*24*time.Hour + 12*time.Hour)
		return timed(n, func(i int) error {
			_, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: masters[0].ID, StartsAt: at,
				Client: booking.ClientInput{Name: "Storm", Phone: phone(round, i)}})
			var st *booking.SlotTakenError
			if errors.As(err, &st) && len(st.Alternatives) > 0 {
				return nil
			}
			return err
		})
	}
	spread := func(round int) []time.Duration {
		day := first.Add(time.Duration(2*round+1) * 24 * time.Hour)
		return timed(n, func(i int) error {
			m := masters[i%len(masters)]
			at := day.Add(time.Duration(8*60+30*(i/len(masters))) * time.Minute)
			_, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: m.ID, StartsAt: at,
				Client: booking.ClientInput{Name: "Spread", Phone: phone(round, 5000+i)}})
			return err
		})
	}
	var ratios, stormP99, spreadP99 []float64
	b.ResetTimer()
	for round := range b.N {
		var s, p []time.Duration
		if round%2 == 0 {
			s, p = storm(round), spread(round)
		} else {
			p, s = spread(round), storm(round)
		}
		sp, pp := percentile(s, 0.99), percentile(p, 0.99)
		stormP99, spreadP99 = append(stormP99, sp.Seconds()), append(spreadP99, pp.Seconds())
		ratios = append(ratios, sp.Seconds()/pp.Seconds())
	}
	b.StopTimer()
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(stormP99)*1000, "storm-p99-ms")
	b.ReportMetric(median(spreadP99)*1000, "spread-p99-ms")
	b.ReportMetric(median(ratios), "storm/spread")
}

// timed runs fn(i) for i in [0, n) released at once and returns each
// call's latency; any error fails the benchmark's run.
func timed(n int, fn func(i int) error) []time.Duration {
	out := make([]time.Duration, n)
	errs := race(n, func(i int) error {
		start := time.Now()
		err := fn(i)
		out[i] = time.Since(start)
		return err
	})
	for _, err := range errs {
		if err != nil {
			panic(err)
		}
	}
	return out
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkBookWithMessages compares Book when the salon's clients hear by
// e-mail (each booking writes its confirmation's row of messages, in the
// same statement) with Book for a salon that sends nothing, on the same database in the same run, 16 goroutines on
// 16 masters each, rounds interleaved and rotated. Reported: the median
// over rounds of with/without (goal: at least 0.9).
//
//	go test ./booking -run '^$' -bench BookWithMessages -benchtime 9x
func BenchmarkBookWithMessages(b *testing.B) {
	const workers = 16
	const perWorker = 40
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	// The same core, one with an e-mail courier (it never runs: the
	// benchmark measures the booking, not the sending).
	mailing := booking.New(e.Pool, booking.WithClock(e.Clock.Now),
		booking.WithCourier(booking.ChannelEmail, &courier.Outbox{Channel: booking.ChannelEmail}, 0))
	quiet := e.Salon(b, booking.Salon{HorizonDays: 366})
	loud := e.Salon(b, booking.Salon{HorizonDays: 366})
	if _, err := e.Svc.UpdateMessageSettings(ctx, quiet.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00"}); err != nil {
		b.Fatal(err) // no e-mail, no SMS: nothing to tell
	}
	days := (b.N*perWorker)/48 + 2
	type side struct {
		svc     *booking.Service
		salon   *booking.Salon
		service *booking.SalonService
		masters []*booking.Master
	}
	sides := [2]side{{svc: e.Svc, salon: quiet}, {svc: mailing, salon: loud}}
	for i := range sides {
		sides[i].service = e.Service(b, sides[i].salon, booking.SalonService{Name: "Cut", DurationMin: 30})
		sides[i].masters = e.RoundTheClock(b, sides[i].salon, workers, testDay, days, sides[i].service)
	}
	if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	first := testDay.Start(quiet.Location())
	phase := func(s side, email string) func(int) error {
		return func(round int) error {
			return parallel(workers, func(w int) error {
				for i := range perWorker {
					n := round*perWorker + i
					_, err := s.svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: s.salon.ID, ServiceID: s.service.ID,
						MasterID: s.masters[w].ID, StartsAt: first.Add(time.Duration(n) * 30 * time.Minute),
						Client: booking.ClientInput{Name: "Bench", Phone: fmt.Sprintf("+7905%02d%05d", w, n%100000), Email: email}})
					if err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	phases := []func(int) error{phase(sides[0], ""), phase(sides[1], "bench@example.com")}
	var ratios []float64
	b.ResetTimer()
	for round := range b.N {
		var took [2]time.Duration
		for k := range phases {
			p := (round + k) % len(phases)
			start := time.Now()
			if err := phases[p](round); err != nil {
				b.Fatal(err)
			}
			took[p] = time.Since(start)
		}
		b.StopTimer()
		if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ratios = append(ratios, took[0].Seconds()/took[1].Seconds())
	}
	b.StopTimer()
	var queued int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM booking_outbox`).Scan(&queued); err != nil {
		b.Fatal(err)
	}
	if want := b.N * workers * perWorker; queued != want {
		b.Fatalf("%d confirmations queued, want %d (one per booking that e-mails)", queued, want)
	}
	slices.Sort(ratios)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "with/without")
}

// BenchmarkVisit compares booking a visit of three services (three
// masters, one after another) with booking the same three services as
// three Book calls, on the same database in the same run: 8 goroutines,
// each with masters of its own, phases interleaved in rounds, rotating
// which goes first. Reported: the median over rounds of the three Book
// calls' time over the visit's (goal: at least 0.8), and each phase's
// segments a second.
//
//	go test ./booking -run '^$' -bench 'Visit$' -benchtime 9x
func BenchmarkVisit(b *testing.B) {
	const workers = 8
	const perWorker = 20 // visits (and triples of bookings) per worker per round
	e := bookingtest.New(b)
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{HorizonDays: 366})
	var svcs [3]*booking.SalonService
	for i := range svcs {
		svcs[i] = e.Service(b, salon, booking.SalonService{Name: fmt.Sprint("S", i), DurationMin: 30})
	}
	days := (b.N*perWorker)/16 + 2
	masters := func() [][3]*booking.Master {
		out := make([][3]*booking.Master, workers)
		for w := range out {
			for i := range 3 {
				out[w][i] = e.RoundTheClock(b, salon, 1, testDay, days, svcs[i])[0]
			}
		}
		return out
	}
	visitMasters, bookMasters := masters(), masters()
	first := testDay.Start(salon.Location())
	// A visit takes 90 minutes: one every 90 minutes per worker.
	slotAt := func(n int) time.Time { return first.Add(time.Duration(n) * 90 * time.Minute) }
	phone := func(w int) string { return fmt.Sprintf("+7905%07d", w) }
	for w := range workers { // returning clients in both phases
		if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svcs[0].ID,
			MasterID: visitMasters[w][0].ID, StartsAt: slotAt(b.N*perWorker + 1), Client: booking.ClientInput{Name: "Regular", Phone: phone(w)}}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	visit := func(round int) error {
		return parallel(workers, func(w int) error {
			for i := range perWorker {
				items := make([]booking.VisitItem, 3)
				for k := range items {
					items[k] = booking.VisitItem{ServiceID: svcs[k].ID, MasterID: visitMasters[w][k].ID}
				}
				if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, Items: items,
					StartsAt: slotAt(round*perWorker + i), Client: booking.ClientInput{Name: "Bench", Phone: phone(w)}}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	three := func(round int) error {
		return parallel(workers, func(w int) error {
			for i := range perWorker {
				at := slotAt(round*perWorker + i)
				for k := range 3 {
					if _, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: salon.ID, ServiceID: svcs[k].ID,
						MasterID: bookMasters[w][k].ID, StartsAt: at.Add(time.Duration(k) * 30 * time.Minute),
						Client: booking.ClientInput{Name: "Bench", Phone: phone(w)}}); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	phases := []func(int) error{visit, three}
	var total [2]time.Duration
	var ratios []float64
	b.ResetTimer()
	for round := range b.N {
		var took [2]time.Duration
		for k := range phases {
			p := (round + k) % len(phases)
			start := time.Now()
			if err := phases[p](round); err != nil {
				b.Fatal(err)
			}
			took[p] = time.Since(start)
			total[p] += took[p]
		}
		b.StopTimer()
		if _, err := e.Pool.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ratios = append(ratios, took[1].Seconds()/took[0].Seconds())
	}
	b.StopTimer()
	segments := float64(b.N * workers * perWorker * 3)
	slices.Sort(ratios)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(segments/total[0].Seconds(), "visit-segments/s")
	b.ReportMetric(segments/total[1].Seconds(), "book-segments/s")
	b.ReportMetric(ratios[len(ratios)/2], "visit/3book")
}

// BenchmarkVisitSlots times the whole-visit slot search (three services,
// any master for each, one day) on two databases that differ only in how
// many bookings they hold besides that day's: 5,000 and 500,000. The two
// are timed one after the other in each round; reported: the median of
// big/small (goal: at most 1.5) and each one's median time.
//
//	go test ./booking -run '^$' -bench VisitSlots -benchtime 21x
func BenchmarkVisitSlots(b *testing.B) {
	type world struct {
		e     *bookingtest.Env
		q     booking.VisitSlotQuery
		salon *booking.Salon
	}
	build := func(filler int) world {
		e := bookingtest.New(b)
		ctx := bookingtest.System()
		salon := e.Salon(b, booking.Salon{HorizonDays: 366})
		var items []booking.VisitItem
		var svcs []*booking.SalonService
		for i, c := range []booking.SalonService{{DurationMin: 60}, {DurationMin: 30}, {DurationMin: 45, ProcessingMin: 30, FinishMin: 15}} {
			c.Name = fmt.Sprint("S", i)
			svcs = append(svcs, e.Service(b, salon, c))
			items = append(items, booking.VisitItem{ServiceID: svcs[i].ID})
		}
		day := testDay.AddDays(300)
		var ids []int64
		for range 6 {
			m := e.Master(b, salon, svcs...)
			e.Shift(b, salon, m, day, 1, "09:00", "21:00")
			ids = append(ids, m.ID)
		}
		var client int64
		if err := e.Pool.QueryRow(ctx, `INSERT INTO clients (salon_id, name, phone) VALUES ($1, 'x', '+79030000000') RETURNING id`,
			salon.ID).Scan(&client); err != nil {
			b.Fatal(err)
		}
		// The day itself: every master booked half an hour in every two.
		if _, err := e.Pool.Exec(ctx, `INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source)
			SELECT $1, m, $2, $3, $4::timestamptz + make_interval(mins => 120 * k + 30 * (m % 3)::int), 30, 'confirmed', 'panel'
			FROM unnest($5::bigint[]) m, generate_series(0, 5) k`, salon.ID, svcs[1].ID, client, bookingtest.At(salon, day, "09:00"), ids); err != nil {
			b.Fatal(err)
		}
		// The rest: every master's days before and after, 15 minutes apart.
		if _, err := e.Pool.Exec(ctx, `INSERT INTO bookings (salon_id, master_id, service_id, client_id, starts_at, duration_min, status, source)
			SELECT $1, ($5::bigint[])[1 + (n / 2) % 6], $2, $3,
			       CASE WHEN n % 2 = 0 THEN $4::timestamptz - interval '2 days' - make_interval(mins => 15 * (n / 12))
			            ELSE $4::timestamptz + interval '3 days' + make_interval(mins => 15 * (n / 12)) END,
			       15, 'confirmed', 'panel'
			FROM generate_series(0, $6 - 1) n`, salon.ID, svcs[1].ID, client, bookingtest.At(salon, day, "00:00"), ids, filler); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
		e.Clock.Set(bookingtest.At(salon, day, "00:00").Add(-48 * time.Hour))
		return world{e: e, salon: salon, q: booking.VisitSlotQuery{SalonID: salon.ID, Items: items, From: day}}
	}
	small, big := build(5_000), build(500_000)
	search := func(w world) time.Duration {
		start := time.Now()
		slots, err := w.e.Svc.VisitSlots(booking.As(context.Background(), booking.Visitor()), w.q)
		if err != nil || len(slots) == 0 {
			b.Fatalf("visit slots: %d, %v", len(slots), err)
		}
		return time.Since(start)
	}
	search(small) // warm the catalogues
	search(big)
	var ts, tb, ratios []float64
	b.ResetTimer()
	for i := range b.N {
		var s, g time.Duration
		if i%2 == 0 {
			s, g = search(small), search(big)
		} else {
			g, s = search(big), search(small)
		}
		ts, tb = append(ts, s.Seconds()), append(tb, g.Seconds())
		ratios = append(ratios, g.Seconds()/s.Seconds())
	}
	b.StopTimer()
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(ts)*1e3, "small-ms")
	b.ReportMetric(median(tb)*1e3, "big-ms")
	b.ReportMetric(median(ratios), "big/small")
}
