package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
	"salon/booking/mail"
	"salon/booking/psp"
	"salon/booking/sms"
	"salon/bot"
	"salon/internal/courier"
	"salon/widget"
)

// platform is everything a running server is: the booking service, its
// background jobs (River), the Telegram bot when configured, and HTTP.
type platform struct {
	svc  *booking.Service
	jobs *river.Client[pgx.Tx]
	bot  *bot.Bot
	srv  *server
	log  *slog.Logger
	// outbox: messages of an unconfigured channel go to the development
	// outbox page (salon dev).
	outbox bool
}

// newPlatform wires the parts in the order they depend on each other: the
// notifiers first (they need nothing), then the service, then the front
// ends and the workers that take the service.
func newPlatform(pool *pgxpool.Pool, getenv env, ln net.Listener, log *slog.Logger) (*platform, error) {
	public := orDefault(getenv("SALON_PUBLIC_URL"), "http://"+ln.Addr().String())
	provider, err := paymentProvider(getenv, pool, public)
	if err != nil {
		return nil, err
	}
	reconcile := booking.DefaultReconcileEvery
	if v := getenv("SALON_PAYMENT_RECONCILE_EVERY"); v != "" {
		if reconcile, err = time.ParseDuration(v); err != nil || reconcile < time.Minute {
			return nil, usagef("SALON_PAYMENT_RECONCILE_EVERY must be a duration of a minute or more, like 1h, not %q", v)
		}
	}
	metrics := newBookingMetrics()
	opts := []booking.Option{booking.WithLogger(log), booking.WithPayments(psp.Measured(provider)), booking.WithObserver(metrics.observe)}
	switch v := getenv("YOOKASSA_RECEIPTS"); v {
	case "on":
		opts = append(opts, booking.WithReceipts())
	case "", "off":
	default:
		return nil, usagef("YOOKASSA_RECEIPTS must be on or off, not %q", v)
	}
	// Telegram's notices are written to the bot's outbox (in the database)
	// by whichever replica runs the job, with a bot or without; a replica
	// with a bot sends them, once.
	opts = append(opts, booking.WithNotifier(booking.ChannelTelegram, bot.Notifier{}))
	couriers, outboxes, err := messageCouriers(getenv, public, log)
	if err != nil {
		return nil, err
	}
	opts = append(opts, couriers...)
	opts = append(opts, booking.WithMessageObserver(metrics.observeMessage))
	token := getenv("TELEGRAM_BOT_TOKEN")
	p := &platform{log: log, svc: booking.New(pool, opts...), outbox: len(outboxes) > 0}
	if sb, ok := provider.(*psp.Sandbox); ok {
		sb.Notify = widget.SandboxNotifier(p.svc)
	}
	if token != "" {
		b, err := bot.New(p.svc, bot.Config{Token: token, APIURL: orDefault(getenv("TELEGRAM_API_URL"), bot.DefaultAPIURL),
			WebhookSecret: getenv("TELEGRAM_WEBHOOK_SECRET"), PublicURL: public, Log: log})
		if err != nil {
			return nil, err
		}
		p.bot = b
	}
	workers := river.NewWorkers()
	booking.AddWorkers(workers, p.svc)
	jobs, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:       map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:      workers,
		PeriodicJobs: booking.PeriodicJobs(reconcile),
		Logger:       slog.New(quiet{log.Handler()}),
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	p.jobs = jobs
	p.srv = newServer(pool, p.svc, log, getenv("SALON_METRICS_ADDR"))
	p.srv.outbox = func(id int64) (string, bool) {
		for _, x := range outboxes {
			if t, ok := x.Text(id); ok {
				return t, true
			}
		}
		return "", false
	}
	p.srv.outboxExtra = func() []booking.Message {
		var out []booking.Message
		for _, x := range outboxes {
			out = append(out, x.Extra()...)
		}
		return out
	}
	p.srv.reg.MustRegister(metrics.collectors()...)
	p.srv.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "salon_payments_down",
		Help: "1 while this replica found the payment provider not answering (new deposit bookings follow the salon's fallback), else 0."},
		func() float64 {
			if p.svc.PaymentsDown() {
				return 1
			}
			return 0
		}))
	if err := p.srv.mount(withDefault(getenv, "SALON_PUBLIC_URL", public), p.bot); err != nil {
		return nil, err
	}
	return p, nil
}

// messageCouriers are the couriers of e-mail (SALON_SMTP_URL) and SMS
// (SMS_PROVIDER); with dev's SALON_DEV_OUTBOX=on, a channel left
// unconfigured goes to the development outbox page (through the outboxes
// returned). A channel without a courier carries nothing.
func messageCouriers(getenv env, public string, log *slog.Logger) ([]booking.Option, []*courier.Outbox, error) {
	var opts []booking.Option
	dev := getenv("SALON_DEV_OUTBOX") == "on"
	var outboxes []*courier.Outbox
	rateOf := func(key string, def int) (int, error) {
		v := getenv(key)
		if v == "" {
			return def, nil
		}
		r, err := strconv.Atoi(v)
		if err != nil || r <= 0 {
			return 0, usagef("%s must be a whole number of messages a second, like 10, not %q", key, v)
		}
		return r, nil
	}
	switch u := getenv("SALON_SMTP_URL"); {
	case u != "":
		sender, err := mail.New(u, getenv("SALON_MAIL_FROM"))
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		r, err := rateOf("SALON_MAIL_RATE", 10)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, booking.WithCourier(booking.ChannelEmail, &courier.Email{Mail: sender, Base: public}, r))
	case dev:
		x := &courier.Outbox{Base: public, Channel: booking.ChannelEmail}
		outboxes = append(outboxes, x)
		opts = append(opts, booking.WithCourier(booking.ChannelEmail, x, 0))
	}
	r, err := rateOf("SALON_SMS_RATE", 10)
	if err != nil {
		return nil, nil, err
	}
	switch name := getenv("SMS_PROVIDER"); name {
	case "smsru":
		id := getenv("SMSRU_API_ID")
		if id == "" {
			return nil, nil, usagef("SMS_PROVIDER=smsru needs SMSRU_API_ID")
		}
		p := &sms.SMSRU{APIID: id, BaseURL: orDefault(getenv("SMSRU_API_URL"), sms.DefaultSMSRUURL)}
		opts = append(opts, booking.WithCourier(booking.ChannelSMS, &courier.SMS{Provider: p, Base: public}, r))
	case "log":
		opts = append(opts, booking.WithCourier(booking.ChannelSMS, &courier.SMS{Provider: &sms.Log{Logger: log}, Base: public}, r))
	case "":
		if dev {
			x := &courier.Outbox{Base: public, Channel: booking.ChannelSMS}
			outboxes = append(outboxes, x)
			opts = append(opts, booking.WithCourier(booking.ChannelSMS, x, 0))
		}
	default:
		return nil, nil, usagef("SMS_PROVIDER must be smsru or log, not %q", name)
	}
	return opts, outboxes, nil
}

// paymentProvider is PAYMENT_PROVIDER's provider: the built-in sandbox, or
// YooKassa with its credentials (dev defaults to the sandbox; serve asks
// for one by name).
func paymentProvider(getenv env, pool *pgxpool.Pool, public string) (psp.Provider, error) {
	switch name := getenv("PAYMENT_PROVIDER"); name {
	case "sandbox":
		sb := &psp.Sandbox{Pool: pool, BaseURL: public}
		if v := getenv("SALON_SANDBOX_DELAY"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return nil, usagef("SALON_SANDBOX_DELAY must be a duration like 500ms, not %q", v)
			}
			sb.Delay = d
		}
		if v := getenv("SALON_SANDBOX_FAILURE_RATE"); v != "" {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || r > 1 {
				return nil, usagef("SALON_SANDBOX_FAILURE_RATE must be between 0 and 1, not %q", v)
			}
			sb.FailureRate = r
		}
		return sb, nil
	case "yookassa":
		shop, secret := getenv("YOOKASSA_SHOP_ID"), getenv("YOOKASSA_SECRET_KEY")
		if shop == "" || secret == "" {
			return nil, usagef("PAYMENT_PROVIDER=yookassa needs YOOKASSA_SHOP_ID and YOOKASSA_SECRET_KEY")
		}
		return &psp.YooKassa{BaseURL: orDefault(getenv("YOOKASSA_API_URL"), psp.DefaultYooKassaURL), ShopID: shop, Secret: secret}, nil
	default:
		return nil, usagef("PAYMENT_PROVIDER must be sandbox or yookassa, not %q", name)
	}
}

// messageEvery is how often a replica looks for messages that came due.
const messageEvery = 2 * time.Second

// stopTime bounds how long the background work (jobs, the bot's sender)
// may take to stop; it runs beside the HTTP drain, so a SIGTERM ends the
// process within about max(drainTime, stopTime).
const stopTime = 10 * time.Second

// run serves until ctx is done, then stops everything at once: HTTP drains
// its requests in flight, the bot finishes its turns and records the
// messages it was sending, the jobs finish (or are cancelled and retried
// later), each within its bound.
func (p *platform) run(ctx context.Context, ln net.Listener) error {
	if err := p.jobs.Start(ctx); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	botCtx, stopBot := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBot()
	var wg sync.WaitGroup
	if p.bot != nil {
		wg.Go(func() {
			if err := p.bot.Run(botCtx); err != nil {
				p.log.Error("bot stopped", "err", err)
			}
		})
	}
	// Every replica sends the messages that come due (each claimed by one).
	wg.Go(func() { _ = p.svc.RunMessages(booking.As(botCtx, booking.BySystem()), messageEvery) })
	errc := make(chan error, 1)
	go func() { errc <- p.srv.serve(ctx, ln) }()
	var err error
	select {
	case err = <-errc: // the listener failed
	case <-ctx.Done():
	}
	stopBot()
	wg.Go(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), stopTime)
		defer cancel()
		if serr := p.jobs.Stop(stopCtx); serr != nil {
			p.log.Warn("jobs did not stop in time; cancelling them (they will run again)", "err", serr)
			cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer ccancel()
			_ = p.jobs.StopAndCancel(cctx)
		}
	})
	if ctx.Err() != nil {
		err = <-errc // the HTTP drain
	}
	wg.Wait()
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
