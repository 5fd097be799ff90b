package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"salon/booking"
	"salon/internal/demo"
	"salon/internal/pgcluster"
	"salon/migrations"
)

func cmdServe(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	if err := parseFlags(newFlagSet("serve"), args); err != nil {
		return err
	}
	if getenv("PAYMENT_PROVIDER") == "" {
		// The sandbox takes no money (its Pay button is this server's
		// own page): a production server never falls back to it.
		return errors.New("PAYMENT_PROVIDER must be set: yookassa, or sandbox for a demo where nobody pays")
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	pool, err := openCurrent(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	addr := orDefault(getenv("SALON_HTTP_ADDR"), ":8080")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	p, err := newPlatform(pool, getenv, ln, log)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "bot", p.bot != nil)
	return p.run(ctx, ln)
}

type devOptions struct {
	dir string // where the private cluster lives (./.salon)
}

func cmdDev(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer, opts devOptions) error {
	if err := parseFlags(newFlagSet("dev"), args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	url := getenv("DATABASE_URL")
	if url == "" {
		dir := filepath.Join(opts.dir, "pg")
		fmt.Fprintf(stdout, "Starting PostgreSQL in %s ...\n", dir)
		cluster, err := pgcluster.Start(ctx, pgcluster.Config{Dir: dir})
		if err != nil {
			return err
		}
		defer cluster.Stop() //nolint:errcheck // best effort on the way out
		if !cluster.Owned() {
			fmt.Fprintln(stdout, "(reusing the PostgreSQL server already running there)")
		}
		if err := ensureDatabase(ctx, cluster.ConnString("postgres"), "salon"); err != nil {
			return err
		}
		url = cluster.ConnString("salon")
	}
	pool, err := openPool(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrations.Up(ctx, pool); err != nil {
		return err
	}
	salon, err := demo.Seed(booking.As(ctx, booking.BySystem()), booking.New(pool), time.Now())
	if err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	addr := orDefault(getenv("SALON_HTTP_ADDR"), "127.0.0.1:8080")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (set SALON_HTTP_ADDR to another address)", addr, err)
	}
	base := orDefault(getenv("SALON_PUBLIC_URL"), "http://"+ln.Addr().String())
	fmt.Fprintf(stdout, `
Salon is running with demo data.
  widget:  %[1]s/w/%[2]s
  panel:   %[1]s/panel/   (login %[3]s, password %[4]s)
  API:     %[1]s/api/v1/salons/%[2]s
  health:  %[1]s/healthz
  database: DATABASE_URL='%[5]s'
            (set it for the other commands: salon init, import, admin ...)
Press Ctrl-C to stop.
`, base, salon.Slug, demo.Email, demo.Password, url)
	p, err := newPlatform(pool, withDefault(withDefault(withDefault(getenv, "SALON_PUBLIC_URL", base), "PAYMENT_PROVIDER", "sandbox"),
		"SALON_DEV_OUTBOX", "on"), ln, log)
	if err != nil {
		ln.Close()
		return err
	}
	if p.bot != nil {
		fmt.Fprintln(stdout, "  Telegram bot: on")
	}
	if p.outbox {
		fmt.Fprintf(stdout, "  messages: %s/dev/outbox   (e-mail and SMS without SALON_SMTP_URL or SMS_PROVIDER)\n", base)
	}
	return p.run(ctx, ln)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
