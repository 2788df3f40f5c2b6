package db_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestValueDependentListsUnpreparedOnPostgres: on PostgreSQL a list whose
// best plan depends on its status or category is not kept as a prepared
// statement, whose generic plan would guess those values; the plain first
// page and pages past a cursor are (TestCursorPagePlan). SQLite plans the
// same whatever the values, and keeps them all.
func TestValueDependentListsUnpreparedOnPostgres(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		p := MustCreatePet(t, ctx, s, c.ID, "Rex", 1)
		filters := []db.PetFilter{
			{Statuses: []string{db.StatusSold}},
			{Statuses: []string{db.StatusPending, db.StatusSold}},
			{CategoryID: c.ID},
			{Page: db.Page{AfterID: p.ID}},
		}
		for _, f := range filters {
			if _, _, err := s.FindPets(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []db.InventoryFilter{{Statuses: []string{db.StatusSold}}, {Page: db.Page{AfterID: p.ID}}} {
			if _, _, err := s.FindInventory(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.FindPets(ctx, db.PetFilter{}); err != nil {
			t.Fatal(err)
		}
		var plain, cursor, dependent int
		for _, q := range s.CachedQueries() {
			switch {
			case strings.Contains(q, "p.status = $") || strings.Contains(q, "p.category_id = $"):
				dependent++
			case strings.Contains(q, "p.id > $"):
				cursor++
			case strings.Contains(q, "FROM pets p") && strings.Contains(q, "ORDER BY p.id LIMIT"):
				plain++
			}
		}
		wantDependent := 4
		if s.Dialect() == db.DialectPostgres {
			wantDependent = 0
		}
		if dependent != wantDependent || cursor != 2 || plain != 1 {
			t.Errorf("cached list statements: %d value-dependent, %d past a cursor, %d plain; want %d, 2 and 1", dependent, cursor, plain, wantDependent)
		}
	})
}

// TestCursorPagePlan: on PostgreSQL the cached statement of a page past a
// cursor, planned generically (as PostgreSQL does for a prepared statement
// after five runs), reads about a page of inventory wherever the cursor
// is, for pets and for the inventory list: not every row before it.
func TestCursorPagePlan(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Postgres(t)
	c := MustCreateCategory(t, ctx, s, "Dogs")
	var ids []int64
	for i := range 300 {
		ids = append(ids, MustCreatePet(t, ctx, s, c.ID, "Pet "+strconv.Itoa(i), 1).ID)
	}
	after := ids[250]
	if _, _, err := s.FindPets(ctx, db.PetFilter{Page: db.Page{AfterID: after}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.FindInventory(ctx, db.InventoryFilter{Page: db.Page{AfterID: after}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	conn, err := s.DB().Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, q := range s.CachedQueries() {
		if !strings.Contains(q, "p.id > $") {
			continue
		}
		name := "cursor_page_" + strconv.Itoa(i)
		params := strings.Count(q, "$")
		if _, err := conn.ExecContext(ctx, "PREPARE "+name+" AS "+q); err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		args := strings.TrimSuffix(strings.Repeat(strconv.FormatInt(after, 10)+",", params), ",")
		var plan []byte
		if err := conn.GetContext(ctx, &plan, "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "+name+"("+args+")"); err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		if read := rowsRead(t, plan, "inventory"); read > 2*db.DefaultLimit {
			t.Errorf("the generic plan of %q read %d inventory rows for a page past pet 251 of 300:\n%s", q, read, plan)
		}
		checked++
	}
	if checked != 2 {
		t.Fatalf("%d cached cursor statements checked, want 2 (pets and inventory)", checked)
	}
}

// rowsRead sums the rows the scans of table returned in an EXPLAIN
// (ANALYZE, FORMAT JSON) plan.
func rowsRead(t *testing.T, plan []byte, table string) int {
	t.Helper()
	var doc []struct{ Plan planNode }
	if err := json.Unmarshal(plan, &doc); err != nil || len(doc) != 1 {
		t.Fatalf("read plan: %v: %s", err, plan)
	}
	var sum func(n planNode) int
	sum = func(n planNode) int {
		total := 0
		if n.Relation == table {
			total += n.ActualRows * max(n.ActualLoops, 1)
		}
		for _, c := range n.Plans {
			total += sum(c)
		}
		return total
	}
	return sum(doc[0].Plan)
}

// planNode is one node of a JSON plan.
type planNode struct {
	Relation    string     `json:"Relation Name"`
	ActualRows  int        `json:"Actual Rows"`
	ActualLoops int        `json:"Actual Loops"`
	Plans       []planNode `json:"Plans"`
}
