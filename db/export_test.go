package db

import (
	"context"
	"errors"
	"slices"

	"github.com/jmoiron/sqlx"

	"petstore/db/internal/migrate"
	"petstore/db/riverdb"
)

// MigrateUpTo applies the migrations up to version, for tests that start
// from an older schema: River's first, all of them, as Migrate does (our
// triggers name its tables).
func (s *Store) MigrateUpTo(ctx context.Context, version int64) error {
	if err := riverdb.Migrate(ctx, s.dialect, s.db.DB); err != nil {
		return err
	}
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
func (s *Store) PlaceLoneOrdersInGo() { s.placeIn = placeInGo }

// PlaceLoneOrdersTogether places orders, each a lone order of owner, in
// one batch (group commit) as if they had arrived while the batch before
// was placed, and returns each one's outcome.
func (s *Store) PlaceLoneOrdersTogether(ctx context.Context, owner Owner, orders []NewOrder) ([]*Order, []error) {
	ctxs := make([]context.Context, len(orders))
	for i := range ctxs {
		ctxs[i] = ctx
	}
	return s.PlaceLoneOrdersFrom(ctxs, owner, orders)
}

// PlaceLoneOrdersFrom is PlaceLoneOrdersTogether with a context of its own
// for each order, as each request has.
func (s *Store) PlaceLoneOrdersFrom(ctxs []context.Context, owner Owner, orders []NewOrder) ([]*Order, []error) {
	batch := make([]*queuedOrder, len(orders))
	placed := make([]*Order, len(orders))
	for i, in := range orders {
		ship, err := in.Validate()
		if err != nil {
			panic(err)
		}
		placed[i] = newOrder(*in.PetID, *in.Quantity, ship, s.Now().UTC(), s.Currency, nil)
		batch[i] = &queuedOrder{ctx: ctxs[i], order: placed[i], owner: owner, done: make(chan struct{})}
	}
	s.orders.run(slices.Clone(batch)) // in a copy: run reorders it
	errs := make([]error, len(orders))
	for i, q := range batch {
		errs[i] = q.err
	}
	return placed, errs
}

// FailLoneOrdersOf makes every batch that places a lone order of pet fail
// after placing it (0: none), for the tests that show such an order fails
// only itself.
func (s *Store) FailLoneOrdersOf(pet int64) {
	s.orderFault = nil
	if pet != 0 {
		s.orderFault = func(o *Order) error {
			if o.PetID == pet {
				return errors.New("order fault injected by a test")
			}
			return nil
		}
	}
}

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

// RunInTx runs fn in a write transaction under the store's retry rule for
// transient conflicts (inTx), for tests that force one.
func (s *Store) RunInTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	_, err := inTx(ctx, s, func(tx *Tx) (struct{}, error) { return struct{}{}, fn(tx.Tx) })
	return err
}

// SetOrderSearchCap makes an orders search walk orders newest first once
// its keys match more than n checkouts, for the tests of both ways.
func (s *Store) SetOrderSearchCap(n int) { s.orderSearchCap = n }

// SetOrderSearchWindow makes a search that matches many checkouts walk at
// most n orders for a page.
func (s *Store) SetOrderSearchWindow(n int64) { s.orderSearchWindow = n }

// FTSCover is the FTS5 query SQLite's name search asks for a folded q of
// three characters or more, for tests.
func FTSCover(q string) string { return ftsCover(q) }
