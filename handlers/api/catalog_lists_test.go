package api_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestCatalogPaging follows Link rel="next" through pets, categories and
// inventory on both databases.
func TestCatalogPaging(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		var ids []int64
		var cat int64
		for _, n := range []string{"A", "B", "C", "D", "E", "F"} {
			p := a.SeedPet(n, 1)
			ids, cat = append(ids, p.ID), p.CategoryID
		}
		a.Do(handlerstest.Req{Method: "PUT", Path: "/api/pets/" + handlerstest.Itoa(ids[4]), Key: a.Staff,
			Body: map[string]any{"name": "E", "categoryId": cat, "status": "sold"}}).Want(t, 200)
		cases := []struct {
			name, path, idField string
			want                [][]int64
		}{
			{"pets by 2", "/api/pets?limit=2", "id", [][]int64{ids[0:2], ids[2:4], ids[4:6]}},
			{"pets by 4", "/api/pets?limit=4", "id", [][]int64{ids[0:4], ids[4:6]}},
			{"exactly full last page", "/api/pets?limit=3", "id", [][]int64{ids[0:3], ids[3:6]}},
			{"one page", "/api/pets?limit=6", "id", [][]int64{ids}},
			{"default limit", "/api/pets", "id", [][]int64{ids}},
			{"filter kept in links", "/api/pets?status=available&limit=2", "id", [][]int64{ids[0:2], {ids[2], ids[3]}, {ids[5]}}},
			{"exactly full filtered", "/api/pets?limit=1&status=sold", "id", [][]int64{{ids[4]}}},
			{"inventory", "/api/store/inventory?limit=4", "petId", [][]int64{ids[0:4], ids[4:6]}},
			{"empty", "/api/pets?status=pending&limit=1", "id", [][]int64{{}}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if diff := cmp.Diff(tc.want, a.Pages(t, tc.path, tc.idField)); diff != "" {
					t.Errorf("pages of %s (-want +got):\n%s", tc.path, diff)
				}
			})
		}
		t.Run("next link keeps the filters", func(t *testing.T) {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets?status=available&limit=2&q=", Key: a.Customer}).Want(t, 200)
			next := handlerstest.NextLink(r)
			if !strings.HasPrefix(next, "/api/pets?") || !strings.Contains(next, "status=available") || !strings.Contains(next, "limit=2") || !strings.Contains(next, "cursor=") {
				t.Errorf("next = %q, want /api/pets with cursor, limit=2 and status=available", next)
			}
		})
	})
}

// TestCatalogRoles shows customers may only read the catalog and
// anonymous callers may do nothing with it.
func TestCatalogRoles(t *testing.T) {
	a := handlerstest.New(t)
	p := a.SeedPet("Rex", 1)
	pet, cat := "/api/pets/"+handlerstest.Itoa(p.ID), "/api/categories/"+handlerstest.Itoa(p.CategoryID)
	body := map[string]any{"name": "X", "categoryId": p.CategoryID}
	cases := []apiCase{
		{"customer lists pets", "GET", "/api/pets", a.Customer, nil, 200, "", ""},
		{"customer gets a pet", "GET", pet, a.Customer, nil, 200, "", ""},
		{"customer lists categories", "GET", "/api/categories", a.Customer, nil, 200, "", ""},
		{"customer gets a category", "GET", cat, a.Customer, nil, 200, "", ""},
	}
	for _, w := range []struct{ method, path string }{{"POST", "/api/pets"}, {"PUT", pet}, {"DELETE", pet},
		{"POST", "/api/categories"}, {"PUT", cat}, {"DELETE", cat}} {
		var b any
		if w.method != "DELETE" {
			b = body
		}
		cases = append(cases, apiCase{"customer " + w.method + " " + w.path, w.method, w.path, a.Customer, b, 403, "forbidden", ""})
	}
	for _, w := range []struct{ method, path string }{{"GET", "/api/pets"}, {"GET", pet}, {"POST", "/api/pets"}, {"PUT", pet},
		{"DELETE", pet}, {"GET", "/api/categories"}, {"GET", cat}, {"POST", "/api/categories"}, {"PUT", cat}, {"DELETE", cat}} {
		var b any
		if w.method == "POST" || w.method == "PUT" {
			b = body
		}
		cases = append(cases, apiCase{"anonymous " + w.method + " " + w.path, w.method, w.path, "", b, 401, "unauthorized", ""})
	}
	run(t, a, cases)
	// Nothing the refused requests asked for happened.
	a.WantStock(t, p.ID, 1, "available")
	if got := a.PetNames(t, "/api/pets"); !cmp.Equal(got, []string{"Rex"}) {
		t.Errorf("pets = %v, want [Rex]", got)
	}
}

// TestCatalogParallel creates one category name many times at once: one
// 201, the rest 409 category_exists, never a 500, on both databases (on
// PostgreSQL the unique index, not the check, stops the late ones).
func TestCatalogParallel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		var others []int64 // each renamed by one request of a round
		for i := range 5 {
			others = append(others, a.Create(t, "/api/categories", map[string]any{"name": "Other " + handlerstest.Itoa(int64(i))}))
		}
		for round := range 4 {
			name := "Dogs " + handlerstest.Itoa(int64(round))
			var mu sync.Mutex
			got := map[string]int{}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					var r *handlerstest.Response
					if i%4 == 0 { // renames race the creations
						r = a.Do(handlerstest.Req{Method: "PUT", Path: "/api/categories/" + handlerstest.Itoa(others[i/4]), Key: a.Staff, Body: map[string]any{"name": name}})
					} else {
						r = a.Do(handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: map[string]any{"name": name}})
					}
					outcome := handlerstest.Itoa(int64(r.Status))
					if r.Status >= 400 {
						var p handlerstest.Problem
						_ = json.Unmarshal(r.Body, &p)
						outcome += " " + p.Code
					}
					mu.Lock()
					got[outcome]++
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			if won := got["200"] + got["201"]; won != 1 || got["409 category_exists"] != 19 {
				t.Errorf("round %d: outcomes %v, want one success and 19 × 409 category_exists", round, got)
			}
			for i, id := range others {
				a.Do(handlerstest.Req{Method: "PUT", Path: "/api/categories/" + handlerstest.Itoa(id), Key: a.Staff, Body: map[string]any{"name": "Other " + handlerstest.Itoa(int64(i))}}).Want(t, 200)
			}
			var cats []map[string]any
			a.GetJSON(t, a.Customer, "/api/categories?limit=100", &cats)
			n := 0
			for _, c := range cats {
				if strings.EqualFold(c["name"].(string), name) {
					n++
				}
			}
			if n != 0 && got["201"] != 1 || n > 1 {
				t.Errorf("round %d: %d categories named %q", round, n, name)
			}
		}
	})
}
