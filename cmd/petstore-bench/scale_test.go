package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestScaleReadsVary checks that no scale row asks the same query twice
// within more requests than the server remembers answers for, so that
// every request runs its query (issue 44): the API keeps up to 16,384
// answers in 8 MiB, a page of 20 seeded pets takes about 4 KiB of it; the
// storefront keeps 1,024 pages.
func TestScaleReadsVary(t *testing.T) {
	c := scaleCatalog{cat: 5, last: 10_000}
	for _, r := range scaleReads {
		window := 3000 // pages: at most about 2,000 fit
		if strings.Contains(r.Name, "miss") {
			window = 16384 + 1 // small answers: the entry cap binds
		}
		seen := map[string]int{}
		for i := range window {
			p := r.Path(i, c)
			if j, ok := seen[p]; ok {
				t.Fatalf("%s: request %d asks %s again, as request %d did", r.Name, i, p, j)
			}
			seen[p] = i
		}
	}
}

// TestScaleSearchHitPages checks that the search hit row asks, past its
// cursor, for pets whose names hold the term: the page is full at every
// size of 10,000 pets or more.
func TestScaleSearchHitPages(t *testing.T) {
	for i := range 20_000 {
		q, after := searchHit(i)
		for id := after + 1; id <= after+20; id++ {
			if name := "bench pet " + strconv.FormatInt(id, 10); id > 9999 || !strings.Contains(name, strings.ToLower(q)) {
				t.Fatalf("request %d: q=%q past %d: pet %d does not match", i, q, after, id)
			}
		}
	}
}

// TestScaleSearchFirstPage checks that the first-page search row's terms
// name pets NN, NN0–NN9 and NN00–NN08 first: the same page at every size.
func TestScaleSearchFirstPage(t *testing.T) {
	for i := range 20_000 {
		q := strings.ToLower(searchFirstPage(i))
		nn := q[len(q)-2:]
		var page []string
		for id := 1; id <= 9999 && len(page) < 20; id++ {
			if strings.Contains("bench pet "+strconv.Itoa(id), q) {
				page = append(page, strconv.Itoa(id))
			}
		}
		if len(page) != 20 || page[0] != nn || page[1] != nn+"0" || page[19] != nn+"08" {
			t.Fatalf("request %d: q=%q: first page %v", i, q, page)
		}
	}
}
