package migrations

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// riverVersion is the goose version of the migration that creates River's
// tables (durable background jobs). It runs River's own migrations, each in
// its own transaction (some cannot share one), so goose runs it outside one.
const riverVersion = 3

func riverMigration() *goose.Migration {
	return goose.NewGoMigration(riverVersion,
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return migrateRiver(ctx, db, rivermigrate.DirectionUp) }},
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return migrateRiver(ctx, db, rivermigrate.DirectionDown) }},
	)
}

func migrateRiver(ctx context.Context, db *sql.DB, dir rivermigrate.Direction) error {
	m, err := rivermigrate.New(riverdatabasesql.New(db), nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	opts := &rivermigrate.MigrateOpts{}
	if dir == rivermigrate.DirectionDown {
		opts.TargetVersion = -1 // remove River's schema entirely
	}
	if _, err := m.Migrate(ctx, dir, opts); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}

// RiverVersions lists River's migration versions this binary applies, for
// fingerprints of the schema.
func RiverVersions() []int {
	m, err := rivermigrate.New(riverdatabasesql.New(nil), nil)
	if err != nil {
		return nil
	}
	var out []int
	for _, v := range m.AllVersions() {
		out = append(out, v.Version)
	}
	return out
}
