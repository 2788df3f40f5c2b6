package db

import (
	"context"
	"errors"

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

// RenameCategoryThenRollBack renames category id and audits it in one
// transaction, then rolls the transaction back: for the test that shows an
// entry goes with its change.
func (s *Store) RenameCategoryThenRollBack(ctx context.Context, id int64, name string) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `UPDATE categories SET name = $1 WHERE id = $2`, name, id); err != nil {
		return err
	}
	ch := Changes{}
	ch.Set("name", "", name)
	return tx.audit(AuditCategoryUpdate, TargetID("category", id), ch)
}

// FailImportsAfter makes every import's transaction fail once it has
// written n rows or more (0: never), for the tests that show a failed
// import leaves nothing behind.
func (s *Store) FailImportsAfter(n int64) {
	if n == 0 {
		s.importFault = nil
		return
	}
	s.importFault = func(written int64) error {
		if written >= n {
			return errors.New("import fault injected by a test")
		}
		return nil
	}
}
