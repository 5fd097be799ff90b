package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"salon/migrations"
)

// openPool connects to url and checks the connection.
func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	// Server-side backstops behind the requests' own deadlines: no
	// statement runs longer than this, and a transaction a crashed client
	// left open does not hold its locks for long. (The core bounds its own
	// lock waits per transaction.)
	for k, v := range map[string]string{"statement_timeout": "30s", "idle_in_transaction_session_timeout": "60s"} {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// requireDatabase opens DATABASE_URL, which commands other than dev need.
func requireDatabase(ctx context.Context, getenv env) (*pgxpool.Pool, error) {
	url := getenv("DATABASE_URL")
	if url == "" {
		return nil, fmt.Errorf("DATABASE_URL is not set (for a local database run 'salon dev')")
	}
	return openPool(ctx, url)
}

// openCurrent opens DATABASE_URL and checks that its schema is current.
func openCurrent(ctx context.Context, getenv env) (*pgxpool.Pool, error) {
	pool, err := requireDatabase(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if err := requireCurrentSchema(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// requireCurrentSchema refuses to run against a database whose migrations
// are behind the binary's.
func requireCurrentSchema(ctx context.Context, pool *pgxpool.Pool) error {
	pending, err := migrations.Pending(ctx, pool)
	if err != nil {
		return err
	}
	if pending {
		return fmt.Errorf("the database schema is behind this binary: run 'salon migrate up' first")
	}
	return nil
}

// ensureDatabase creates database name on the server of adminURL when missing.
func ensureDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
