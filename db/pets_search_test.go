package db_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// searchCorpus is a fixed catalog of names with mixed case, accents,
// non-Latin scripts, LIKE wildcards and FTS5 query syntax.
var searchCorpus = []string{
	"Rex", "REXY the Great", "rex rex rex", "Big Rexford", "Éclair", "éclair au chocolat", "ECLAIR",
	"Zoë", "ZOË Kravitz", "Noël", "Ångström", "ångström jr", "Straße", "STRASSE", "İstanbul",
	"Ünal", "über cat", "Привет Кот", "привет", "日本の猫", "猫", "Tom_100%", "50% off", `back\slash`,
	`Say "hi"`, "a AND b", "NEAR(x y)", "x*y", "a", "ab", "abc", "Abcd", "bcd", "ÉÉÉ", "é", "ee",
}

// searchQueries cover 1- and 2-character queries (the walk without an
// index), longer ones (the trigram indexes), case and accent variants and
// text that means something to LIKE or to FTS5.
var searchQueries = []string{
	"a", "A", "é", "É", "e", "ë", "猫", "x", "%", "_", `\`, `"`, "*",
	"re", "RE", "ab", "ée", "日本", "ß", "ss", "r ", `" `,
	"rex", "REX", "Rex ", "rex rex", "éclair", "ÉCLAIR", "eclair", "zoë", "ZOË", "ström", "STRÖM",
	"straße", "strasse", "İst", "i̇st", "привет", "ПРИВЕТ", "日本の", "_100%", "0% ", `k\s`, `"hi"`,
	"and b", "near(", "x*y", "abc", "bcd", "éé", "zzz", "abcde",
}

// TestSearchMatchesScan compares every search over a fixed corpus with the
// plain scan it replaced: a folded name containing the folded query.
func TestSearchMatchesScan(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		dogs := MustCreateCategory(t, ctx, s, "Dogs")
		cats := MustCreateCategory(t, ctx, s, "Cats")
		names := map[int64]string{}
		var order []int64
		for i, name := range searchCorpus {
			cat := dogs.ID
			if i%2 == 1 {
				cat = cats.ID
			}
			p := MustCreatePet(t, ctx, s, cat, name, int64(i%3))
			names[p.ID] = name
			order = append(order, p.ID)
		}
		// A rename must move the pet in the index in the same transaction.
		renamed := order[0]
		if _, err := s.UpdatePet(ctx, renamed, db.NewPet{Name: ptr("Fido"), CategoryID: &dogs.ID}); err != nil {
			t.Fatal(err)
		}
		names[renamed] = "Fido"
		deleted := order[1]
		if err := s.DeletePet(ctx, deleted); err != nil {
			t.Fatal(err)
		}
		for _, q := range searchQueries {
			var want []int64
			for _, id := range order {
				if id != deleted && strings.Contains(strings.ToLower(names[id]), strings.ToLower(q)) {
					want = append(want, id)
				}
			}
			for _, limit := range []int{2, db.MaxLimit} {
				got := searchAll(t, ctx, s, db.PetFilter{Query: q, Page: db.Page{Limit: limit}})
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("q=%q limit %d (-scan +search):\n%s", q, limit, diff)
				}
			}
			// With status filters, which merge one walk per status.
			all := searchAll(t, ctx, s, db.PetFilter{Query: q, Statuses: []string{db.StatusSold, db.StatusAvailable}, Page: db.Page{Limit: 2}})
			if diff := cmp.Diff(want, all); diff != "" {
				t.Errorf("q=%q both statuses (-scan +search):\n%s", q, diff)
			}
		}
	})
}

// searchAll pages through every pet f finds and returns their ids.
func searchAll(tb testing.TB, ctx context.Context, s *db.Store, f db.PetFilter) []int64 {
	tb.Helper()
	var ids []int64
	for range 1000 {
		pets, more, err := s.FindPets(ctx, f)
		if err != nil {
			tb.Fatal(fmt.Sprintf("%+v", f), err)
		}
		for _, p := range pets {
			ids = append(ids, p.ID)
		}
		if !more {
			return ids
		}
		f.AfterID = pets[len(pets)-1].ID
	}
	tb.Fatal("more than 1000 pages")
	return nil
}
