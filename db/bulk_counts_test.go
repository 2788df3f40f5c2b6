package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"petstore/db"
	"petstore/db/dbtest"
)

// Bulk writes (issue 27, SPEC §18): the counters the triggers keep
// (catalog_changes, pet_counts) stay exact through statements of many rows,
// and on PostgreSQL they leave a bounded number of row versions however
// many rows a transaction writes.

// bulkPetsSQL inserts n copies of the template pet $1 (every column the
// store writes), spread over the categories $2 and $3, with one statement:
// PostgreSQL counts with generate_series, SQLite with a recursive CTE.
func bulkPetsSQL(dialect string, n int) string {
	series := fmt.Sprintf(`SELECT i FROM generate_series(1, %d) AS i`, n)
	with := ""
	if dialect == db.DialectSQLite {
		with = fmt.Sprintf(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %d) `, n)
		series = `SELECT i FROM seq`
	}
	return with + `INSERT INTO pets (name, name_key, category_id, status, price, description, breed, birth_date,
		created_at, updated_at)
	SELECT 'bulk ' || s.i, 'bulk ' || s.i, CASE WHEN s.i % 2 = 0 THEN CAST($2 AS BIGINT) ELSE CAST($3 AS BIGINT) END,
		CASE WHEN s.i % 3 = 0 THEN 'sold' ELSE 'available' END,
		p.price, p.description, p.breed, p.birth_date, p.created_at, p.updated_at
	FROM (` + series + `) AS s, pets AS p WHERE p.id = $1`
}

// catalogVersion reads the catalog counter afresh.
func catalogVersion(tb testing.TB, ctx context.Context, s *db.Store) int64 {
	tb.Helper()
	v, err := s.CatalogVersion(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// TestBulkWritesKeepCountsExact: a 100,000-row INSERT … SELECT, bulk moves
// between categories and statuses, bulk soft deletes and a bulk hard
// delete leave pet_counts equal to a full count and move the catalog
// counter; a rolled-back bulk insert and statements that change no row
// move nothing. It takes 10–20 s under -race (the rows below): counts
// that drift only show at volume, so the volume stays.
func TestBulkWritesKeepCountsExact(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		dogs := MustCreateCategory(t, ctx, s, "Dogs")
		cats := MustCreateCategory(t, ctx, s, "Cats")
		birds := MustCreateCategory(t, ctx, s, "Birds")
		tmpl := MustCreatePet(t, ctx, s, dogs.ID, "Template", 1)
		// 100,000 rows; 10,000 on SQLite under -race, whose pure-Go driver
		// the race detector slows about twentyfold (200 s for 100,000).
		rows := 100_000
		if raceDetector && s.Dialect() == db.DialectSQLite {
			rows = 10_000
		}
		insert := bulkPetsSQL(s.Dialect(), rows)

		v := catalogVersion(t, ctx, s)
		start := time.Now()
		if _, err := s.DB().ExecContext(ctx, s.DB().Rebind(insert), tmpl.ID, dogs.ID, cats.ID); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d pets in one INSERT … SELECT: %v", s.Dialect(), rows, time.Since(start))
		wantCountsMatchScan(t, ctx, s)
		if got := catalogVersion(t, ctx, s); got <= v {
			t.Fatalf("catalog version after bulk insert = %d, want more than %d", got, v)
		}

		// Rolled back: neither counter moves.
		v = catalogVersion(t, ctx, s)
		before, err := s.CountPetsByCategory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := s.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(insert), tmpl.ID, cats.ID, birds.ID); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		after, err := s.CountPetsByCategory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatalf("rolled-back insert moved the counts: %v, then %v", before, after)
		}
		if got := catalogVersion(t, ctx, s); got != v {
			t.Fatalf("rolled-back insert moved the catalog version: %d, want %d", got, v)
		}

		// Statements that match no row move nothing.
		mustExec(t, ctx, s.DB(), `UPDATE pets SET status = 'pending' WHERE id < 0`)
		mustExec(t, ctx, s.DB(), `DELETE FROM pets WHERE id < 0`)
		if got := catalogVersion(t, ctx, s); got != v {
			t.Fatalf("statements of no rows moved the catalog version: %d, want %d", got, v)
		}

		steps := []struct{ name, sql string }{
			{"move a third to Birds and pending", `UPDATE pets SET category_id = $1, status = 'pending' WHERE id % 3 = 0 AND id <> $2`},
			{"rename only (counts net zero)", `UPDATE pets SET name = name || '!' WHERE id % 4 = 0 AND id <> $2 AND $1 > 0`},
			{"status back and forth in one statement", `UPDATE pets SET status = CASE WHEN status = 'sold' THEN 'available' ELSE 'sold' END WHERE id % 5 = 0 AND id <> $2 AND $1 > 0`},
			{"soft delete a seventh", `UPDATE pets SET deleted_at = updated_at WHERE id % 7 = 0 AND id <> $2 AND $1 > 0`},
			{"restore some and move them", `UPDATE pets SET deleted_at = NULL, category_id = $1 WHERE id % 14 = 0 AND id <> $2`},
			{"hard delete live and deleted", `DELETE FROM pets WHERE id % 11 = 0 AND id <> $2 AND $1 > 0`},
		}
		for _, st := range steps {
			v := catalogVersion(t, ctx, s)
			mustExec(t, ctx, s.DB(), st.sql, birds.ID, tmpl.ID)
			wantCountsMatchScan(t, ctx, s)
			if got := catalogVersion(t, ctx, s); got <= v {
				t.Fatalf("%s: catalog version = %d, want more than %d", st.name, got, v)
			}
		}

		// Many statements in one transaction, some undoing others.
		v = catalogVersion(t, ctx, s)
		tx, err = s.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE pets SET status = CASE WHEN status = 'pending' THEN 'sold' ELSE 'pending' END
				WHERE id % 20 = ? AND id <> ?`), i, tmpl.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE pets SET category_id = ? WHERE id % 9 = 1 AND id <> ?`), dogs.ID, tmpl.ID); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		wantCountsMatchScan(t, ctx, s)
		if got := catalogVersion(t, ctx, s); got <= v {
			t.Fatalf("transaction of many statements: catalog version = %d, want more than %d", got, v)
		}
	})
}

// mustExec runs one statement written with $N placeholders.
func mustExec(tb testing.TB, ctx context.Context, x *sqlx.DB, query string, args ...any) {
	tb.Helper()
	if _, err := x.ExecContext(ctx, query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// TestCounterTablesStayBounded (PostgreSQL; issue 27): with autovacuum off,
// catalog_changes and pet_counts take the same room after 110,000 pets as
// after 10,000, written both as one INSERT … SELECT and as 1,000-row
// statements inside one transaction: a transaction leaves one version of
// its slot and of each count row it moved, not one per row, so the
// counter read every API request makes scans a bounded table.
func TestCounterTablesStayBounded(t *testing.T) {
	ctx := context.Background()
	s := dbtest.OpenURL(t, dbtest.PostgresURL(t))
	x := s.DB()
	for _, table := range []string{"catalog_changes", "pet_counts"} {
		mustExec(t, ctx, x, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`)
	}
	dogs := MustCreateCategory(t, ctx, s, "Dogs")
	cats := MustCreateCategory(t, ctx, s, "Cats")
	tmpl := MustCreatePet(t, ctx, s, dogs.ID, "Template", 1)
	write := func(oneStatement, statements int) {
		t.Helper()
		start := time.Now()
		mustExec(t, ctx, x, bulkPetsSQL(db.DialectPostgres, oneStatement), tmpl.ID, dogs.ID, cats.ID)
		tx, err := x.BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < statements; i++ {
			if _, err := tx.ExecContext(ctx, bulkPetsSQL(db.DialectPostgres, 1000), tmpl.ID, dogs.ID, cats.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d pets in one statement and %d×1,000 in one transaction: %v", oneStatement, statements, time.Since(start))
	}
	type sizes struct{ changes, counts int64 }
	measure := func() sizes {
		t.Helper()
		var z sizes
		if err := x.QueryRowContext(ctx, `SELECT pg_total_relation_size('catalog_changes'), pg_total_relation_size('pet_counts')`).
			Scan(&z.changes, &z.counts); err != nil {
			t.Fatal(err)
		}
		return z
	}

	write(5_000, 5) // 10,000
	small := measure()
	write(50_000, 50) // 110,000
	large := measure()
	t.Logf("catalog_changes %d then %d bytes, pet_counts %d then %d bytes", small.changes, large.changes, small.counts, large.counts)
	if large != small {
		t.Errorf("the counter tables grew with the rows written: %+v after 10,000 pets, %+v after 110,000", small, large)
	}
	wantCountsMatchScan(t, ctx, s)
}
