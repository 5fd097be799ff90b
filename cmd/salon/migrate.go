package main

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/stdlib"

	"salon/migrations"
)

func cmdMigrate(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	if len(args) != 1 || (args[0] != "up" && args[0] != "down" && args[0] != "status") {
		return usagef("usage: salon migrate up|down|status")
	}
	pool, err := requireDatabase(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := migrations.Provider(db)
	if err != nil {
		return err
	}
	switch args[0] {
	case "up":
		res, err := p.Up(ctx)
		for _, r := range res {
			fmt.Fprintf(stdout, "applied %s (%s)\n", r.Source.Path, r.Duration.Round(1e6))
		}
		if err != nil {
			return fmt.Errorf("migrate up: %w", err)
		}
		if len(res) == 0 {
			fmt.Fprintln(stdout, "already up to date")
		}
	case "down":
		r, err := p.Down(ctx)
		if err != nil {
			return fmt.Errorf("migrate down: %w", err)
		}
		fmt.Fprintf(stdout, "rolled back %s\n", r.Source.Path)
	case "status":
		st, err := p.Status(ctx)
		if err != nil {
			return fmt.Errorf("migrate status: %w", err)
		}
		for _, s := range st {
			applied := "pending"
			if !s.AppliedAt.IsZero() {
				applied = "applied " + s.AppliedAt.Format("2006-01-02 15:04:05")
			}
			name := s.Source.Path
			if name == "" {
				name = "(Go) River's job tables"
			}
			fmt.Fprintf(stdout, "%5d  %-30s %s\n", s.Source.Version, name, applied)
		}
	}
	return nil
}
