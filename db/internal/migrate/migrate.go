// Package migrate is the plumbing under the store's migrations: goose over
// the embedded folder of one dialect, PostgreSQL's migration 00004 (Go: it
// picks a plain or a concurrent index build), and the advisory lock under
// which instances started together take turns. The migrations themselves
// are the store's (db/migrations).
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// postgres is PostgreSQL's dialect as the store names it, and the folder
// of its migrations; SQLite's is "sqlite".
const postgres = "postgres"

// provider is goose over the migrations of dialect in root, which holds
// one folder per dialect, named as the dialect.
func provider(db *sql.DB, dialect string, root fs.FS, opts ...goose.ProviderOption) (*goose.Provider, error) {
	sub, err := fs.Sub(root, dialect)
	if err != nil {
		return nil, err
	}
	d := goose.DialectSQLite3
	if dialect == postgres {
		d = goose.DialectPostgres
		opts = append(opts, goose.WithGoMigrations(searchIndexesMigration()))
	}
	return goose.NewProvider(d, db, sub, opts...)
}

// Up applies every pending migration of dialect in root to db. On
// PostgreSQL it holds an advisory lock meanwhile, so that instances
// started together take turns rather than fail on each other's half-made
// tables.
func Up(ctx context.Context, db *sql.DB, dialect string, root fs.FS) error {
	var opts []goose.ProviderOption
	if dialect == postgres {
		locker, err := schemaLocker(ctx, db)
		if err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := provider(db, dialect, root, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// UpTo applies the migrations up to version, without the lock: for tests
// that start from an older schema.
func UpTo(ctx context.Context, db *sql.DB, dialect string, root fs.FS, version int64) error {
	p, err := provider(db, dialect, root)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// schemaLocker is a PostgreSQL advisory lock for migrating the current
// schema, waited for a second at a time for up to five minutes. Its id
// names the schema: migrations of different schemas (each test has its
// own) do not wait for each other.
func schemaLocker(ctx context.Context, db *sql.DB) (lock.SessionLocker, error) {
	var schema string
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		return nil, fmt.Errorf("current schema: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte("petstore migrations " + schema))
	return lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
}
