package db

import (
	"context"

	"petstore/db/internal/migrate"
)

// MigrateUpTo applies the migrations up to version, for tests that start
// from an older schema.
func (s *Store) MigrateUpTo(ctx context.Context, version int64) error {
	root, err := migrationsFS()
	if err != nil {
		return err
	}
	return migrate.UpTo(ctx, s.db.DB, s.dialect, root, version)
}

// ConcurrentIndexFrom is the catalog size from which PostgreSQL's migration
// 00004 builds its indexes concurrently, for tests.
const ConcurrentIndexFrom = migrate.ConcurrentIndexFrom

// CachedQueries lists the texts of the cached prepared statements.
func (s *Store) CachedQueries() []string { return s.stmts.Queries() }

// PlaceLoneOrdersInGo makes the store place lone orders the way it places
// every other, in Go, instead of through PostgreSQL's one statement: for
// the test that compares the two.
func (s *Store) PlaceLoneOrdersInGo() { s.placeLone = nil }
