package db_test

import (
	"context"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestValueDependentListsUnpreparedOnPostgres: on PostgreSQL a list whose
// best plan depends on its status, category or cursor is not kept as a
// prepared statement, whose generic plan would guess those values; the
// plain first page is. SQLite plans the same whatever the values, and
// keeps them all.
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
		var plain, dependent int
		for _, q := range s.CachedQueries() {
			switch {
			case strings.Contains(q, "p.status = $") || strings.Contains(q, "p.category_id = $") || strings.Contains(q, "p.id > $"):
				dependent++
			case strings.Contains(q, "FROM pets p") && strings.Contains(q, "ORDER BY p.id LIMIT"):
				plain++
			}
		}
		wantDependent := 6
		if s.Dialect() == db.DialectPostgres {
			wantDependent = 0
		}
		if dependent != wantDependent || plain != 1 {
			t.Errorf("cached list statements: %d value-dependent, %d plain; want %d and 1", dependent, plain, wantDependent)
		}
	})
}
