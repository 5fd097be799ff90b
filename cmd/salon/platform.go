package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
	"salon/bot"
)

// platform is everything a running server is: the booking service, its
// background jobs (River), the Telegram bot when configured, and HTTP.
type platform struct {
	svc  *booking.Service
	jobs *river.Client[pgx.Tx]
	bot  *bot.Bot
	srv  *server
	log  *slog.Logger
}

func newPlatform(pool *pgxpool.Pool, getenv env, ln net.Listener, log *slog.Logger) (*platform, error) {
	p := &platform{log: log, svc: booking.New(pool, booking.WithLogger(log))}
	workers := river.NewWorkers()
	booking.AddWorkers(workers, p.svc)
	if token := getenv("TELEGRAM_BOT_TOKEN"); token != "" {
		public := orDefault(getenv("SALON_PUBLIC_URL"), "http://"+ln.Addr().String())
		b, err := bot.New(p.svc, bot.Config{Token: token, APIURL: orDefault(getenv("TELEGRAM_API_URL"), bot.DefaultAPIURL),
			WebhookSecret: getenv("TELEGRAM_WEBHOOK_SECRET"), PublicURL: public, Log: log})
		if err != nil {
			return nil, err
		}
		bot.AddWorkers(workers, b)
		p.bot = b
	}
	jobs, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:       map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:      workers,
		PeriodicJobs: booking.PeriodicJobs(),
		Logger:       slog.New(quiet{log.Handler()}),
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	p.jobs = jobs
	if p.bot != nil {
		p.svc.UseJobs(jobs) // notifications and reminders go to Telegram
	}
	p.srv = newServer(pool, p.svc, log)
	if err := p.srv.mount(getenv, p.bot); err != nil {
		return nil, err
	}
	return p, nil
}

// run serves until ctx is done, then stops everything in order.
func (p *platform) run(ctx context.Context, ln net.Listener) error {
	if err := p.jobs.Start(ctx); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if p.bot != nil {
		wg.Go(func() {
			if err := p.bot.Run(ctx); err != nil {
				p.log.Error("bot stopped", "err", err)
			}
		})
	}
	err := p.srv.serve(ctx, ln)
	cancel()
	wg.Wait()
	stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if serr := p.jobs.Stop(stopCtx); serr != nil && err == nil {
		err = fmt.Errorf("jobs: %w", serr)
	}
	return err
}

// quiet passes on River's warnings and errors, not its routine info.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}

func (q quiet) WithAttrs(a []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(a)} }
func (q quiet) WithGroup(g string) slog.Handler      { return quiet{q.Handler.WithGroup(g)} }

// withDefault is getenv with a default for one variable.
func withDefault(getenv env, key, def string) env {
	return func(k string) string {
		if v := getenv(k); v != "" || k != key {
			return v
		}
		return def
	}
}
