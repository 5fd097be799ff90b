package bot_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/bot"
	"salon/bot/tgtest"
)

var loadUsers = flag.Int("bot.users", 100, "simulated users in BenchmarkBotDialogs")

// BenchmarkBotDialogs is the bot's load test: -bot.users users (100 by
// default; the figure is 1000) each complete a booking dialog
// against the fake Bot API at once, with Telegram's real limits on the
// sender. It reports the handler's p50 and p99 (the time to handle one
// update, sending excluded), and the most messages the fake server saw
// within any second, to one chat and overall (limits: 1 and 30).
//
//	go test ./bot -run '^$' -bench BotDialogs -benchtime 1x -bot.users 1000 -timeout 30m
func BenchmarkBotDialogs(b *testing.B) {
	for range b.N {
		runDialogs(b, *loadUsers)
	}
}

func runDialogs(b *testing.B, users int) {
	e := bookingtest.New(b, booking.WithNotifier(booking.ChannelTelegram, bot.Notifier{}))
	ctx := bookingtest.System()
	salon := e.Salon(b, booking.Salon{Slug: "studio", Name: "Studio", HorizonDays: 60})
	svc := e.Service(b, salon, booking.SalonService{Name: "Haircut", DurationMin: 30})
	const masters = 40
	var ms []*booking.Master
	for i := range masters {
		m, err := e.Svc.CreateMaster(ctx, salon.ID, booking.Master{Name: fmt.Sprintf("M%02d", i)}, booking.Offer{ServiceID: svc.ID})
		if err != nil {
			b.Fatal(err)
		}
		e.Shift(b, salon, m, testDay, 1, "08:00", "22:00")
		ms = append(ms, m)
	}
	tg := tgtest.NewServer(b)
	bt, err := bot.New(e.Svc, bot.Config{Token: tg.Token, APIURL: tg.URL, PollTimeout: time.Second,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}) // Telegram's limits: the defaults
	if err != nil {
		b.Fatal(err)
	}
	workers := river.NewWorkers()
	booking.AddWorkers(workers, e.Svc)
	jobs, err := river.NewClient(riverpgxv5.New(e.Pool), &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Workers: workers, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if err := jobs.Start(runCtx); err != nil {
		b.Fatal(err)
	}
	go bt.Run(runCtx) //nolint:errcheck
	// A running server's pool is warm: open the connections before the
	// burst, so the figures are the handler's and not connection set-up's.
	var conns []*pgxpool.Conn
	for range 32 {
		c, err := e.Pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}

	const wait = 10 * time.Minute
	start := time.Now()
	errs := make(chan error, users)
	var wg sync.WaitGroup
	for i := range users {
		wg.Go(func() {
			u := tg.NewUser(fmt.Sprintf("User%d", i), "en")
			m := ms[i%masters]
			slot := (i / masters) % 28 // 28 half-hours a day per master: distinct for up to 1120 users
			hhmm := time.Date(2000, 1, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(slot) * 30 * time.Minute).Format("15:04")
			step := func(f func() error) {
				if err := f(); err != nil {
					errs <- err
					panic(err)
				}
			}
			defer func() { _ = recover() }()
			tap := func(label string) func() error {
				return func() error {
					if err := u.WaitButton(label, wait); err != nil {
						return err
					}
					_, err := u.Tap(label)
					return err
				}
			}
			u.Send("/start studio")
			step(tap("Haircut"))
			step(tap(m.Name))
			step(tap("Tue 3 Mar"))
			step(tap(hhmm))
			step(func() error { _, err := u.WaitText("share your phone", wait); return err })
			u.Send(fmt.Sprintf("+7999%07d", i))
			step(tap("Confirm"))
			step(func() error { _, err := u.WaitText("You are booked", wait); return err })
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var booked int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE status = 'confirmed'`).Scan(&booked); err != nil || booked != users {
		b.Fatalf("%d bookings for %d users (%v)", booked, users, err)
	}
	turns := bt.TurnDurations()
	pct := func(p float64) float64 { return float64(turns[int(p*float64(len(turns)-1))].Microseconds()) / 1000 }
	perChat, overall := tgtest.MaxPerWindow(tg.Calls(), time.Second)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(users), "users")
	b.ReportMetric(float64(len(turns)), "turns")
	b.ReportMetric(pct(0.50), "handler-p50-ms")
	b.ReportMetric(pct(0.99), "handler-p99-ms")
	b.ReportMetric(float64(perChat), "max-msgs/s/chat")
	b.ReportMetric(float64(overall), "max-msgs/s")
	b.ReportMetric(elapsed.Seconds(), "s")
	if perChat > 1 || overall > 30 {
		b.Fatalf("Telegram's limits exceeded: %d messages to one chat, %d overall, within a second", perChat, overall)
	}
}
