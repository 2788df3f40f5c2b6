package db_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// searchPlanBuyers is how many storefront checkouts, each with one order,
// TestOrderSearchPlans seeds: more than the search's cap of matches
// (5,000), so some prefixes ("buyer", "buyer 1") match too many to read.
const searchPlanBuyers = 20_000

// orderSearches are what the plans and the soak test search for, over
// buyers seeded by seedSearchBuyers: every way a search reads.
var orderSearches = []string{
	"buyer",                 // every buyer: a walk newest first
	"buyer 1",               // 11,111 of 20,000, 111,111 of a million: a walk
	"buyer 12",              // 1,111 (111,111 at a million): read, or a walk
	"buyer 123",             // 111 (11,111 at a million): read, or a walk
	"Buyer 1234",            // a few names
	"buyer1234@example",     // an email's prefix
	"+49 30 1234",           // a phone's prefix
	"12345",                 // a number, and a phone's digits
	"#777",                  // a number alone
	"nobody",                // nothing at all
	"buyer 99999999999",     // nothing, on a common prefix
	"buyer 19999@example.c", // one email
}

// searchPlanPets is how many pets the orders of seedSearchBuyers are for.
const searchPlanPets = 20_000

// seedSearchBuyers adds n checkouts named "Buyer i", buyer<i>@example.com,
// phone "+49 30 <i>", each with one open order of one of searchPlanPets
// new pets, in three statements.
func seedSearchBuyers(t testing.TB, ctx context.Context, s *db.Store, n int) {
	t.Helper()
	c := MustCreateCategory(t, ctx, s, "Seeded")
	x := s.DB()
	series := `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $1) `
	if s.Dialect() == db.DialectPostgres {
		series = `WITH g(i) AS (SELECT generate_series(1, $1::int)) `
	}
	now := s.Now().UTC()
	mustExec(t, ctx, x, series+`INSERT INTO pets (id, name, name_key, category_id, status, price, created_at, updated_at)
		SELECT i, 'pet ' || i, 'pet ' || i, $2, 'available', 100, $3, $3 FROM g`, searchPlanPets, c.ID, now)
	mustExec(t, ctx, x, series+`INSERT INTO checkouts (id, shopper_id, name, email, email_key, phone, created_at, name_key, phone_key)
		SELECT i, 'seeded', 'Buyer ' || i, 'buyer' || i || '@example.com', 'buyer' || i || '@example.com',
			'+49 30 ' || i, $2, 'buyer ' || i, '4930' || i FROM g`, n, now)
	mustExec(t, ctx, x, series+`INSERT INTO orders (id, pet_id, quantity, state, created_at, updated_at, unit_price, currency, checkout_id, shopper_id)
		SELECT i, 1 + i % $2, 1, 'open', $3, $3, 100, 'EUR', i, 'seeded' FROM g`, n, searchPlanPets, now)
	if s.Dialect() == db.DialectPostgres {
		// What autovacuum does after such a load: statistics, and the
		// visibility map that lets the probe count from its index alone.
		// (SQLite's store never analyses.)
		mustExec(t, ctx, x, `VACUUM ANALYZE`)
	}
}

// tracedSearches runs every search of orderSearches and returns each
// statement it ran, with its arguments, and how long each search took.
func tracedSearches(t testing.TB, ctx context.Context, s *db.Store) ([]ranQuery, map[string]time.Duration) {
	t.Helper()
	var mu sync.Mutex
	var ran []ranQuery
	s.TraceQueries(func(query string, args []any) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, ranQuery{query, append([]any(nil), args...)})
	})
	defer s.TraceQueries(nil)
	took := map[string]time.Duration{}
	for _, q := range orderSearches {
		start := time.Now()
		if _, _, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: q, Limit: 100}); err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		took[q] = time.Since(start)
	}
	return ran, took
}

// TestOrderSearchPlans (SPEC §10; issue 42): every statement the orders
// search runs reads checkouts and orders by their indexes, on both
// databases: on SQLite no statement scans a table but the walk's one
// newest-first scan of orders by its primary key, which no sort follows
// (so it stops after a page); on PostgreSQL, run by EXPLAIN ANALYZE, no
// statement reads a table whole (fullReads) or more rows of it than the
// search's cap of matches allows.
func TestOrderSearchPlans(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		seedSearchBuyers(t, ctx, s, searchPlanBuyers)
		ran, took := tracedSearches(t, ctx, s)
		for _, q := range orderSearches {
			t.Logf("%-24q %v", q, took[q].Round(10*time.Microsecond))
		}
		walks := 0
		for _, r := range ran {
			if !strings.Contains(r.query, "checkouts") {
				continue
			}
			walk := strings.Contains(r.query, "EXISTS")
			if walk {
				walks++
			}
			if s.Dialect() == db.DialectSQLite {
				wantSQLitePlan(t, ctx, s, r, walk)
				continue
			}
			plan := explainCustom(t, ctx, s.DB(), r.query, r.args, true)
			bad := fullReads(plan)
			limit := 2_000 // a page of a walk, or the matches read
			if strings.Contains(r.query, "count(*)") {
				// The probe counts up to the cap for each key, under a
				// Limit: where most checkouts match, a sequential scan
				// stops there as soon as an index would.
				limit, bad = 3*5_001, nil
			}
			for table, n := range rowsReadByTable(plan) {
				if n > limit {
					bad = append(bad, fmt.Sprintf("%d rows of %s", n, table))
				}
			}
			if len(bad) > 0 {
				t.Errorf("the plan of\n\t%s\nfor %v reads %s:\n%s", r.query, r.args, strings.Join(bad, ", "), outline(plan))
			}
		}
		if walks == 0 {
			t.Errorf("no search walked orders newest first: the test seeds too few buyers")
		}
	})
}

// sqliteScan finds the scans of a table in SQLite's EXPLAIN QUERY PLAN:
// "SCAN o", "SCAN checkouts" (a search says SEARCH).
var sqliteScan = regexp.MustCompile(`^SCAN (\w+)`)

// sqliteNotATable are the scans that read no table: the one constant row,
// the probe's subqueries (m0, m1, m2), the page's ids (json_each).
var sqliteNotATable = regexp.MustCompile(`^(CONSTANT|m[0-9]|json_each)$`)

// wantSQLitePlan fails the test when SQLite's plan for r scans a table
// other than the walk's newest-first orders, or sorts that walk.
func wantSQLitePlan(t *testing.T, ctx context.Context, s *db.Store, r ranQuery, walk bool) {
	t.Helper()
	var rows []struct {
		ID, Parent, NotUsed int
		Detail              string
	}
	if err := s.DB().SelectContext(ctx, &rows, `EXPLAIN QUERY PLAN `+r.query, r.args...); err != nil {
		t.Fatalf("explain %s: %v", r.query, err)
	}
	var lines []string
	var bad []string
	for _, row := range rows {
		lines = append(lines, row.Detail)
		m := sqliteScan.FindStringSubmatch(row.Detail)
		switch {
		case m != nil && !(walk && m[1] == "o") && !sqliteNotATable.MatchString(m[1]):
			bad = append(bad, row.Detail)
		case walk && strings.Contains(row.Detail, "TEMP B-TREE FOR ORDER BY"):
			bad = append(bad, row.Detail+" (a walk must stop after its page)")
		}
	}
	if len(bad) > 0 {
		t.Errorf("SQLite's plan of\n\t%s\nfor %v: %s\n\t%s", r.query, r.args, strings.Join(bad, ", "), strings.Join(lines, "\n\t"))
	}
}

// searchSoakBuyers is the soak test's shop: a million checkouts and
// orders (SPEC §10: ≤ 50 ms a search at a million orders).
const searchSoakBuyers = 1_000_000

// TestOrderSearchAtAMillion is a measurement (make measure-search; both
// databases), not a test of any suite: with a million storefront orders
// it times each search of orderSearches answering its first page (100
// orders), the best of five runs, and reports each against SPEC §10's
// 50 ms. What makes the times hold, the plans, TestOrderSearchPlans
// checks in make test; it fails only when the seed or a search does. It
// seeds a million rows in four tables, about a minute a database.
func TestOrderSearchAtAMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a million orders")
	}
	dbtest.EachInTurn(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		start := time.Now()
		seedSearchBuyers(t, ctx, s, searchSoakBuyers)
		t.Logf("seeded %d checkouts and orders in %v", searchSoakBuyers, time.Since(start).Round(time.Second))
		best := map[string]time.Duration{}
		for range 5 {
			_, took := tracedSearches(t, ctx, s)
			for q, d := range took {
				if b, ok := best[q]; !ok || d < b {
					best[q] = d
				}
			}
		}
		for _, q := range orderSearches {
			verdict := "within 50 ms"
			if best[q] > 50*time.Millisecond {
				verdict = "MISSED 50 ms"
			}
			t.Logf("%-24q %10v  %s", q, best[q].Round(10*time.Microsecond), verdict)
		}
	})
}
