package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"petstore/db/internal/migrate"
	"petstore/db/riverdb"
)

// migrations are the schema's migrations, one folder per dialect, named
// as the dialects are (goose, numbered, append-only).
//
//go:embed migrations
var migrations embed.FS

// migrationsFS is the folder of migrations that holds the dialects' own.
func migrationsFS() (fs.FS, error) { return fs.Sub(migrations, "migrations") }

// Migrate applies every pending migration, River's (the job queue,
// db/riverdb) first, then ours. River's come first because migration 00008
// made triggers that named river_job, and River's SQLite migrations rebuild
// river_job under another name, which SQLite would carry into a trigger
// made before them; 00016 dropped those triggers. On PostgreSQL it holds an
// advisory lock meanwhile, so that instances started together take turns
// rather than fail on each other's half-made tables.
func (s *Store) Migrate(ctx context.Context) error {
	if err := riverdb.Migrate(ctx, s.dialect, s.db.DB); err != nil {
		return err
	}
	root, err := migrationsFS()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return migrate.Up(ctx, s.db.DB, s.dialect, root)
}

// AdoptCurrency records the store's currency on the orders placed before
// orders recorded one (migration 00006): they cost 0.00, in the currency
// the shop runs in. It runs at every start and touches only such orders.
// The partial index orders_no_currency keeps that a lookup of nothing.
func (s *Store) AdoptCurrency(ctx context.Context) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `UPDATE orders SET currency = $1 WHERE currency IS NULL`, s.Currency); err != nil {
		return fmt.Errorf("adopt currency: %w", err)
	}
	return tx.Commit()
}
