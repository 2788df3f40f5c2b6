package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// searchIndexesVersion is PostgreSQL's migration 00004, the indexes of
// issue 17 (SQLite's 00004 is a .sql file: it builds its indexes in a
// transaction like any other migration).
const searchIndexesVersion = 4

// ConcurrentIndexFrom is the number of pets from which migration 00004
// builds its indexes with CREATE INDEX CONCURRENTLY.
//
// A concurrent build does not block writes to pets, but it runs outside a
// transaction and waits, twice, for every transaction open in the database
// (any schema) to end: on a shared database that is seconds per index.
// A plain build blocks writes to pets meanwhile, which on fewer pets than
// this takes milliseconds, and it runs in one transaction, so a failure
// leaves nothing half-built. A new database, a test's schema or a small
// shop take the plain way; a large catalog the concurrent one.
const ConcurrentIndexFrom = 10_000

// searchIndexesMigration is PostgreSQL's migration 00004. goose runs it
// outside a transaction (RunDB) so that it may build concurrently.
func searchIndexesMigration() *goose.Migration {
	return goose.NewGoMigration(searchIndexesVersion,
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
			return buildIndexes(ctx, db, searchIndexesUp)
		}},
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
			return buildIndexes(ctx, db, searchIndexesDown)
		}},
	)
}

// searchIndexesUp are the statements of the migration, with CONCURRENTLY
// written {c}: reads whose cost does not grow with the catalog (issue 17).
// Each index is dropped first: a concurrent build that fails leaves an
// invalid index behind, and goose runs the migration again on the next
// start.
var searchIndexesUp = []string{
	// pg_trgm lives in public, named in full: tests run with search_path
	// set to a schema of their own that is dropped afterwards, and the
	// extension belongs to the database, not to one schema.
	`CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`,
	// "name contains q" (name_key LIKE '%q%') for q of three characters or more.
	`DROP INDEX {c} IF EXISTS pets_name_trgm`,
	`CREATE INDEX {c} pets_name_trgm ON pets USING gin (name_key public.gin_trgm_ops)`,
	// Filtered lists walk these in id order and stop after a page.
	`DROP INDEX {c} IF EXISTS pets_status_id`,
	`CREATE INDEX {c} pets_status_id ON pets (status, id) WHERE deleted_at IS NULL`,
	`DROP INDEX {c} IF EXISTS pets_category_id`,
	`CREATE INDEX {c} pets_category_id ON pets (category_id, id)`,
	`DROP INDEX {c} IF EXISTS pets_category_status_id`,
	`CREATE INDEX {c} pets_category_status_id ON pets (category_id, status, id) WHERE deleted_at IS NULL`,
	// pets_category_id serves everything pets_category did.
	`DROP INDEX {c} IF EXISTS pets_category`,
}

var searchIndexesDown = []string{
	`CREATE INDEX {c} IF NOT EXISTS pets_category ON pets (category_id)`,
	`DROP INDEX {c} IF EXISTS pets_category_status_id`,
	`DROP INDEX {c} IF EXISTS pets_category_id`,
	`DROP INDEX {c} IF EXISTS pets_status_id`,
	`DROP INDEX {c} IF EXISTS pets_name_trgm`,
}

// buildIndexes runs stmts: one at a time with CONCURRENTLY when pets holds
// ConcurrentIndexFrom pets or more, else in one transaction without.
func buildIndexes(ctx context.Context, db *sql.DB, stmts []string) error {
	var n int
	// Counting stops at the threshold, so a large catalog costs no full count.
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM pets LIMIT $1) AS p`, ConcurrentIndexFrom).Scan(&n)
	if err != nil {
		return fmt.Errorf("count pets: %w", err)
	}
	if n >= ConcurrentIndexFrom {
		for _, st := range stmts {
			if _, err := db.ExecContext(ctx, strings.ReplaceAll(st, "{c}", "CONCURRENTLY")); err != nil {
				return err
			}
		}
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it only reports sql.ErrTxDone
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, strings.ReplaceAll(st, "{c} ", "")); err != nil {
			return err
		}
	}
	return tx.Commit()
}
