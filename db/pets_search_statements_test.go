package db_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestFTSCover: SQLite's search asks FTS5 for the trigrams at characters
// 0, 3, 6, ... and the last, each once, not the phrase of every trigram:
// each term costs a lookup in every segment of the index (issue 44).
func TestFTSCover(t *testing.T) {
	for q, want := range map[string]string{
		"abc":          `"abc"`,
		"abcd":         `"abc" AND "bcd"`,
		"pet 12":       `"pet" AND " 12"`,
		"pet 1234":     `"pet" AND " 12" AND "234"`,
		"bench pet 12": `"ben" AND "ch " AND "pet" AND " 12"`,
		"aaaa":         `"aaa"`,
		`say "hi"`:     `"say" AND " ""h" AND "hi"""`,
		"日本の猫":         `"日本の" AND "本の猫"`,
	} {
		if got := db.FTSCover(q); got != want {
			t.Errorf("FTSCover(%q) = %s, want %s", q, got, want)
		}
	}
}

// TestSearchStatements (issue 44): what a search of three characters or
// more runs. On SQLite one prepared statement that checks name_key with
// instr(): a LIKE on a bound pattern would make SQLite prepare it again
// for every new pattern. On PostgreSQL a one-off statement, planned for
// its pattern.
func TestSearchStatements(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		var ids []int64
		for _, name := range []string{"Rex", "Rexford", "Max", "Big Rex"} {
			ids = append(ids, MustCreatePet(t, ctx, s, c.ID, name, 1).ID)
		}
		var mu sync.Mutex
		var ran []string
		s.TraceQueries(func(query string, _ []any) {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, query)
		})
		pets, more, err := s.FindPets(ctx, db.PetFilter{Query: "REX", Page: db.Page{Limit: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if len(pets) != 2 || pets[0].ID != ids[0] || pets[1].ID != ids[1] || !more || pets[0].Name != "Rex" || pets[0].CategoryName != "Dogs" {
			t.Fatalf("first page: %+v, more %v", pets, more)
		}
		cached := strings.Join(s.CachedQueries(), "\n")
		var search []string
		for _, q := range ran {
			if strings.Contains(q, "name_key") {
				search = append(search, q)
			}
		}
		if len(search) != 1 {
			t.Fatalf("ran %d statements on name_key, want 1: %q", len(search), search)
		}
		q := search[0]
		if s.Dialect() == db.DialectSQLite {
			if !strings.Contains(q, "pets_fts MATCH") || !strings.Contains(q, "instr(p.name_key, ") || strings.Contains(q, "LIKE") {
				t.Errorf("SQLite's search: %s", q)
			}
			if !strings.Contains(cached, q) {
				t.Errorf("SQLite's search is not a prepared statement: %s", q)
			}
			return
		}
		if !strings.Contains(q, "p.name_key LIKE $") || strings.Contains(cached, q) {
			t.Errorf("PostgreSQL's search should be one-off, on a LIKE pattern: %s", q)
		}
	})
}

// TestMergeSearchIndex: pets created one write at a time leave SQLite's
// search index in several segments; the housekeeping step merges them into
// one and the searches find what they found before. PostgreSQL has nothing
// to merge.
func TestMergeSearchIndex(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		for _, name := range []string{"Rex", "Rexford", "Max", "Big Rex"} {
			MustCreatePet(t, ctx, s, c.ID, name, 1)
		}
		search := func() [][]int64 {
			var out [][]int64
			for _, q := range []string{"rex", "ax", "big r", "zzz"} {
				out = append(out, searchAll(t, ctx, s, db.PetFilter{Query: q, Page: db.Page{Limit: 1}}))
			}
			return out
		}
		want := search()
		segments := func() int {
			var n int
			if err := s.DB().GetContext(ctx, &n, `SELECT count(DISTINCT segid) FROM pets_fts_idx`); err != nil {
				t.Fatal(err)
			}
			return n
		}
		sqlite := s.Dialect() == db.DialectSQLite
		if sqlite && segments() < 2 {
			t.Fatalf("%d segments before the merge, want several", segments())
		}
		steps, err := s.MergeSearchIndex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sqlite && (steps == 0 || segments() != 1) {
			t.Errorf("merge: %d steps, %d segments left; want some and 1", steps, segments())
		}
		if !sqlite && steps != 0 {
			t.Errorf("PostgreSQL merged %d steps, want none", steps)
		}
		if again, err := s.MergeSearchIndex(ctx); err != nil || again != 0 {
			t.Errorf("second merge: %d steps, %v; want none", again, err)
		}
		if diff := cmp.Diff(want, search()); diff != "" {
			t.Errorf("searches after the merge (-before +after):\n%s", diff)
		}
	})
}
