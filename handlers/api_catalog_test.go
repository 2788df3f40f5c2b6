package handlers_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// apiCase is one exchange of a scenario table; the cases of a table run in
// order, each seeing what the earlier ones did.
type apiCase struct {
	name       string
	method     string
	path       string
	key        string
	body       any
	wantStatus int
	wantCode   string // the Error's code; "" on success
	wantField  string // the first details field, when the error names one
}

// run sends every case and checks its status, code and details.
func (a *testApp) run(t *testing.T, cases []apiCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(req{method: tc.method, path: tc.path, key: tc.key, body: tc.body})
			if tc.wantCode == "" {
				r.want(t, tc.wantStatus)
			} else {
				r.want(t, tc.wantStatus, tc.wantCode)
			}
			if tc.wantField != "" {
				p := r.problem(t)
				if len(p.Details) == 0 || p.Details[0].Field != tc.wantField {
					t.Errorf("details = %+v, want the first naming %q", p.Details, tc.wantField)
				}
			}
		})
	}
}

// create POSTs body as staff, wants 201 with Location naming the new
// resource, and returns its id.
func (a *testApp) create(t *testing.T, path string, body any) int64 {
	t.Helper()
	r := a.do(req{method: "POST", path: path, key: a.staff, body: body}).want(t, 201)
	var out struct {
		ID int64 `json:"id"`
	}
	r.decode(t, &out)
	if got, want := r.Header.Get("Location"), path+"/"+itoa(out.ID); out.ID < 1 || got != want {
		t.Fatalf("Location = %q (id %d), want %q", got, out.ID, want)
	}
	return out.ID
}

// getJSON GETs path with key, wants 200 and decodes the body into v.
func (a *testApp) getJSON(t *testing.T, key, path string, v any) *response {
	t.Helper()
	r := a.do(req{method: "GET", path: path, key: key}).want(t, 200)
	r.decode(t, v)
	return r
}

// stock reads a pet's inventory entry through the API.
func (a *testApp) stock(t *testing.T, petID int64) db.InventoryItem {
	t.Helper()
	var it db.InventoryItem
	a.getJSON(t, a.staff, "/api/store/inventory/"+itoa(petID), &it)
	return it
}

// wantStock fails unless the pet's inventory entry is quantity and status.
func (a *testApp) wantStock(t *testing.T, petID, quantity int64, status string) {
	t.Helper()
	want := db.InventoryItem{PetID: petID, Quantity: quantity, Status: status}
	if diff := cmp.Diff(want, a.stock(t, petID)); diff != "" {
		t.Errorf("inventory of pet %d (-want +got):\n%s", petID, diff)
	}
}

// petNames lists the names of the pets at path, in order.
func (a *testApp) petNames(t *testing.T, path string) []string {
	t.Helper()
	var pets []db.Pet
	a.getJSON(t, a.customer, path, &pets)
	names := []string{}
	for _, p := range pets {
		names = append(names, p.Name)
	}
	return names
}

var nextRel = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// nextLink is the target of the response's Link rel="next", "" without one.
func nextLink(r *response) string {
	for _, v := range r.Header.Values("Link") {
		if m := nextRel.FindStringSubmatch(v); m != nil {
			return m[1]
		}
	}
	return ""
}

// pages follows Link rel="next" from path to the end and returns each
// page's values of the id field (id, or petId for inventory).
func (a *testApp) pages(t *testing.T, path, idField string) [][]int64 {
	t.Helper()
	var out [][]int64
	for path != "" {
		if len(out) > 50 {
			t.Fatalf("more than 50 pages; last link %s", path)
		}
		var rows []map[string]any
		r := a.getJSON(t, a.staff, path, &rows)
		page := []int64{}
		for _, row := range rows {
			page = append(page, int64(row[idField].(float64)))
		}
		out = append(out, page)
		path = nextLink(r)
		if path != "" && !strings.HasPrefix(path, "/api/") {
			t.Fatalf("next link %q is not an API path", path)
		}
	}
	return out
}

// TestCatalogAPI covers GET/POST /pets, PUT/DELETE /pets/{id} and the
// category operations on both databases.
func TestCatalogAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		dogs := a.create(t, "/api/categories", map[string]any{"name": "Dogs", "description": "Loyal"})
		cats := a.create(t, "/api/categories", map[string]any{"name": "Cats"})
		rex := a.create(t, "/api/pets", map[string]any{"name": "Rex", "categoryId": dogs})
		tom := a.create(t, "/api/pets", map[string]any{"name": "Tom", "categoryId": cats, "status": "sold"})
		junior := a.create(t, "/api/pets", map[string]any{"name": "T-REX Junior", "categoryId": dogs})
		felix := a.create(t, "/api/pets", map[string]any{"name": "Felix", "categoryId": cats})

		t.Run("created pets have defaults", func(t *testing.T) {
			var got db.Pet
			a.getJSON(t, a.customer, "/api/pets/"+itoa(rex), &got)
			if diff := cmp.Diff(db.Pet{ID: rex, Name: "Rex", CategoryID: dogs, Status: "available"}, got); diff != "" {
				t.Errorf("GET rex (-want +got):\n%s", diff)
			}
			a.wantStock(t, rex, 1, "available")
			a.wantStock(t, tom, 0, "sold")
		})

		hundred := make([]string, 100)
		for i := range hundred {
			hundred[i] = itoa(int64(1000 + i))
		}
		hundred[0] = itoa(felix)
		filters := []struct {
			name, query string
			want        []string
		}{
			{"all", "", []string{"Rex", "Tom", "T-REX Junior", "Felix"}},
			{"one status", "status=available", []string{"Rex", "T-REX Junior", "Felix"}},
			{"sold", "status=sold", []string{"Tom"}},
			{"repeated status", "status=sold&status=pending", []string{"Tom"}},
			{"both statuses", "status=available&status=sold", []string{"Rex", "Tom", "T-REX Junior", "Felix"}},
			{"no pending", "status=pending", []string{}},
			{"category", "categoryId=" + itoa(cats), []string{"Tom", "Felix"}},
			{"category and status", "categoryId=" + itoa(cats) + "&status=available", []string{"Felix"}},
			{"unknown category", "categoryId=999999", []string{}},
			{"q lower", "q=rex", []string{"Rex", "T-REX Junior"}},
			{"q upper", "q=REX", []string{"Rex", "T-REX Junior"}},
			{"q middle", "q=uni", []string{"T-REX Junior"}},
			{"q wildcard is literal", "q=%25", []string{}},
			{"q underscore is literal", "q=_", []string{}},
			{"ids", "ids=" + itoa(felix) + "," + itoa(rex), []string{"Rex", "Felix"}},
			{"100 ids", "ids=" + strings.Join(hundred, ","), []string{"Felix"}},
			{"ids and q", "ids=" + itoa(rex) + "," + itoa(junior) + "&q=junior", []string{"T-REX Junior"}},
		}
		for _, f := range filters {
			t.Run("filter "+f.name, func(t *testing.T) {
				if diff := cmp.Diff(f.want, a.petNames(t, "/api/pets?"+f.query)); diff != "" {
					t.Errorf("GET /api/pets?%s (-want +got):\n%s", f.query, diff)
				}
			})
		}

		// Pend is pending (its one unit is ordered); Busy has an open order
		// and stock left; Gone's only order is complete.
		pend := a.create(t, "/api/pets", map[string]any{"name": "Pend", "categoryId": dogs})
		busy := a.create(t, "/api/pets", map[string]any{"name": "Busy", "categoryId": dogs})
		gone := a.create(t, "/api/pets", map[string]any{"name": "Gone", "categoryId": cats})
		a.do(req{method: "PUT", path: "/api/store/inventory/" + itoa(busy), key: a.staff, body: map[string]any{"quantity": 2}}).want(t, 200)
		a.create(t, "/api/store/orders", map[string]any{"petId": pend, "quantity": 1})
		a.create(t, "/api/store/orders", map[string]any{"petId": busy, "quantity": 1})
		goneOrder := a.create(t, "/api/store/orders", map[string]any{"petId": gone, "quantity": 1})
		a.do(req{method: "PATCH", path: "/api/store/orders/" + itoa(goneOrder), key: a.staff, body: map[string]any{"complete": true}}).want(t, 200)
		a.wantStock(t, pend, 0, "pending")

		rexPath, pendPath, busyPath, gonePath := "/api/pets/"+itoa(rex), "/api/pets/"+itoa(pend), "/api/pets/"+itoa(busy), "/api/pets/"+itoa(gone)
		pet := func(name string, cat int64, status ...string) map[string]any {
			m := map[string]any{"name": name, "categoryId": cat}
			if len(status) > 0 {
				m["status"] = status[0]
			}
			return m
		}
		a.run(t, []apiCase{
			{"POST pending", "POST", "/api/pets", a.staff, pet("P", dogs, "pending"), 422, "validation_failed", "status"},
			{"POST unknown category", "POST", "/api/pets", a.staff, pet("P", 999999), 422, "validation_failed", "categoryId"},
			{"POST without name", "POST", "/api/pets", a.staff, map[string]any{"categoryId": dogs}, 422, "validation_failed", "name"},
			{"POST blank name", "POST", "/api/pets", a.staff, pet("   ", dogs), 422, "validation_failed", "name"},
			{"POST long name", "POST", "/api/pets", a.staff, pet(strings.Repeat("x", 101), dogs), 422, "validation_failed", "name"},
			{"POST control character", "POST", "/api/pets", a.staff, pet("a\u0007b", dogs), 422, "validation_failed", "name"},
			{"POST wrong type", "POST", "/api/pets", a.staff, `{"name":"P","categoryId":"1"}`, 400, "bad_request", "categoryId"},
			{"PUT full replace", "PUT", rexPath, a.staff, pet("Rex II", cats), 200, "", ""},
			{"PUT same status", "PUT", rexPath, a.staff, pet("Rex", dogs, "available"), 200, "", ""},
			{"PUT available to sold", "PUT", rexPath, a.staff, pet("Rex", dogs, "sold"), 200, "", ""},
			{"PUT sold to pending", "PUT", rexPath, a.staff, pet("Rex", dogs, "pending"), 409, "invalid_transition", ""},
			{"PUT sold to available", "PUT", rexPath, a.staff, pet("Rex", dogs, "available"), 200, "", ""},
			{"PUT available to pending", "PUT", rexPath, a.staff, pet("Rex", dogs, "pending"), 409, "invalid_transition", ""},
			{"PUT pending to available", "PUT", pendPath, a.staff, pet("Pend", dogs, "available"), 409, "invalid_transition", ""},
			{"PUT pending to sold", "PUT", pendPath, a.staff, pet("Pend", dogs, "sold"), 409, "invalid_transition", ""},
			{"PUT pending kept", "PUT", pendPath, a.staff, pet("Pend", dogs), 200, "", ""},
			{"PUT sold with open orders", "PUT", busyPath, a.staff, pet("Busy", dogs, "sold"), 409, "pet_has_open_orders", ""},
			{"PUT unknown category", "PUT", rexPath, a.staff, pet("Rex", 999999), 422, "validation_failed", "categoryId"},
			{"PUT missing category", "PUT", rexPath, a.staff, map[string]any{"name": "Rex"}, 422, "validation_failed", "categoryId"},
			{"PUT unknown pet", "PUT", "/api/pets/999999", a.staff, pet("X", dogs), 404, "not_found", ""},
			{"PUT bad id", "PUT", "/api/pets/x", a.staff, pet("X", dogs), 400, "bad_request", "petId"},
			{"DELETE with open orders", "DELETE", busyPath, a.staff, nil, 409, "pet_has_open_orders", ""},
			{"DELETE", "DELETE", gonePath, a.staff, nil, 204, "", ""},
			{"DELETE again", "DELETE", gonePath, a.staff, nil, 404, "not_found", ""},
			{"GET deleted", "GET", gonePath, a.customer, nil, 404, "not_found", ""},
			{"PUT deleted", "PUT", gonePath, a.staff, pet("Gone", cats), 404, "not_found", ""},
			{"inventory of deleted", "GET", "/api/store/inventory/" + itoa(gone), a.customer, nil, 404, "not_found", ""},
			{"set inventory of deleted", "PUT", "/api/store/inventory/" + itoa(gone), a.staff, map[string]any{"quantity": 3}, 404, "not_found", ""},
			{"order deleted pet", "POST", "/api/store/orders", a.customer, map[string]any{"petId": gone, "quantity": 1}, 422, "validation_failed", "petId"},
			{"its order stays", "GET", "/api/store/orders/" + itoa(goneOrder), a.staff, nil, 200, "", ""},
			{"101 ids", "GET", "/api/pets?ids=" + strings.Join(hundred, ",") + ",7", a.customer, nil, 400, "bad_request", "ids"},
			{"bad ids", "GET", "/api/pets?ids=1,x", a.customer, nil, 400, "bad_request", "ids"},
			{"bad categoryId", "GET", "/api/pets?categoryId=x", a.customer, nil, 400, "bad_request", "categoryId"},
		})
		t.Run("state after the rules", func(t *testing.T) {
			a.wantStock(t, rex, 1, "available")
			a.wantStock(t, pend, 0, "pending")
			a.wantStock(t, busy, 1, "available")
			var got db.Pet
			a.getJSON(t, a.customer, rexPath, &got)
			if diff := cmp.Diff(db.Pet{ID: rex, Name: "Rex", CategoryID: dogs, Status: "available"}, got); diff != "" {
				t.Errorf("rex (-want +got):\n%s", diff)
			}
		})
		t.Run("deleted pet is in no list", func(t *testing.T) {
			for _, path := range []string{"/api/pets", "/api/pets?ids=" + itoa(gone), "/api/pets?q=gone", "/api/pets?categoryId=" + itoa(cats)} {
				for _, n := range a.petNames(t, path) {
					if n == "Gone" {
						t.Errorf("%s lists the deleted pet", path)
					}
				}
			}
			var items []db.InventoryItem
			a.getJSON(t, a.staff, "/api/store/inventory?limit=100", &items)
			for _, it := range items {
				if it.PetID == gone {
					t.Errorf("inventory lists the deleted pet: %+v", it)
				}
			}
			var orders []db.Order
			a.getJSON(t, a.staff, "/api/store/orders?petId="+itoa(gone), &orders)
			if len(orders) != 1 || orders[0].ID != goneOrder || !orders[0].Complete {
				t.Errorf("orders of the deleted pet = %+v, want its complete order %d", orders, goneOrder)
			}
		})
		testCategories(t, a, dogs, cats)
	})
}

// testCategories covers the category operations on a catalog where dogs
// and cats have pets.
func testCategories(t *testing.T, a *testApp, dogs, cats int64) {
	birds := a.create(t, "/api/categories", map[string]any{"name": "Birds"})
	dogsPath, catsPath, birdsPath := "/api/categories/"+itoa(dogs), "/api/categories/"+itoa(cats), "/api/categories/"+itoa(birds)
	t.Run("GET category", func(t *testing.T) {
		var got db.Category
		a.getJSON(t, a.customer, dogsPath, &got)
		if diff := cmp.Diff(db.Category{ID: dogs, Name: "Dogs", Description: ptr("Loyal")}, got); diff != "" {
			t.Errorf("GET dogs (-want +got):\n%s", diff)
		}
	})
	a.run(t, []apiCase{
		{"POST same name", "POST", "/api/categories", a.staff, map[string]any{"name": "Dogs"}, 409, "category_exists", ""},
		{"POST other case", "POST", "/api/categories", a.staff, map[string]any{"name": "  dOGS "}, 409, "category_exists", ""},
		{"POST long description", "POST", "/api/categories", a.staff, map[string]any{"name": "Fish", "description": strings.Repeat("d", 501)}, 422, "validation_failed", "description"},
		{"POST without name", "POST", "/api/categories", a.staff, map[string]any{"description": "x"}, 422, "validation_failed", "name"},
		{"PUT to a taken name", "PUT", catsPath, a.staff, map[string]any{"name": "DOGS"}, 409, "category_exists", ""},
		{"PUT own name recased", "PUT", dogsPath, a.staff, map[string]any{"name": "dogs"}, 200, "", ""},
		{"PUT unknown", "PUT", "/api/categories/999999", a.staff, map[string]any{"name": "X"}, 404, "not_found", ""},
		{"PUT blank", "PUT", birdsPath, a.staff, map[string]any{"name": ""}, 422, "validation_failed", "name"},
		{"DELETE in use", "DELETE", dogsPath, a.staff, nil, 409, "category_in_use", ""},
		{"DELETE", "DELETE", birdsPath, a.staff, nil, 204, "", ""},
		{"GET deleted", "GET", birdsPath, a.customer, nil, 404, "not_found", ""},
		{"PUT deleted", "PUT", birdsPath, a.staff, map[string]any{"name": "Birds"}, 404, "not_found", ""},
		{"DELETE again", "DELETE", birdsPath, a.staff, nil, 404, "not_found", ""},
		{"name free again", "POST", "/api/categories", a.staff, map[string]any{"name": "birds"}, 201, "", ""},
		{"pet in deleted category", "POST", "/api/pets", a.staff, map[string]any{"name": "Tweety", "categoryId": birds}, 422, "validation_failed", "categoryId"},
		{"GET unknown", "GET", "/api/categories/999999", a.customer, nil, 404, "not_found", ""},
	})
	t.Run("PUT is a full replace", func(t *testing.T) {
		var got db.Category
		a.getJSON(t, a.customer, dogsPath, &got)
		if diff := cmp.Diff(db.Category{ID: dogs, Name: "dogs"}, got); diff != "" {
			t.Errorf("dogs after PUT without description (-want +got):\n%s", diff)
		}
	})
	t.Run("a category whose pets are deleted can go", func(t *testing.T) {
		tmp := a.create(t, "/api/categories", map[string]any{"name": "Temp"})
		p := a.create(t, "/api/pets", map[string]any{"name": "Temp pet", "categoryId": tmp})
		a.do(req{method: "DELETE", path: "/api/categories/" + itoa(tmp), key: a.staff}).want(t, 409, "category_in_use")
		a.do(req{method: "DELETE", path: "/api/pets/" + itoa(p), key: a.staff}).want(t, 204)
		a.do(req{method: "DELETE", path: "/api/categories/" + itoa(tmp), key: a.staff}).want(t, 204)
	})
	t.Run("categories are paged", func(t *testing.T) {
		var all []db.Category
		a.getJSON(t, a.customer, "/api/categories?limit=100", &all)
		want := [][]int64{}
		for i := 0; i < len(all); i += 2 {
			page := []int64{all[i].ID}
			if i+1 < len(all) {
				page = append(page, all[i+1].ID)
			}
			want = append(want, page)
		}
		if len(all) != 3 {
			t.Fatalf("categories = %+v, want dogs, cats and the second birds", all)
		}
		if diff := cmp.Diff(want, a.pages(t, "/api/categories?limit=2", "id")); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})
}
