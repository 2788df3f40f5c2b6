package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestCatalogAPI covers GET/POST /pets, PUT/DELETE /pets/{id} and the
// category operations on both databases.
func TestCatalogAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		dogs := a.Create(t, "/api/categories", map[string]any{"name": "Dogs", "description": "Loyal"})
		cats := a.Create(t, "/api/categories", map[string]any{"name": "Cats"})
		rex := a.Create(t, "/api/pets", map[string]any{"name": "Rex", "categoryId": dogs})
		tom := a.Create(t, "/api/pets", map[string]any{"name": "Tom", "categoryId": cats, "status": "sold"})
		junior := a.Create(t, "/api/pets", map[string]any{"name": "T-REX Junior", "categoryId": dogs})
		felix := a.Create(t, "/api/pets", map[string]any{"name": "Felix", "categoryId": cats})

		t.Run("created pets have defaults", func(t *testing.T) {
			var got db.Pet
			a.GetJSON(t, a.Customer, "/api/pets/"+handlerstest.Itoa(rex), &got)
			if diff := cmp.Diff(db.Pet{ID: rex, Name: "Rex", CategoryID: dogs, Status: "available", Currency: "EUR", Photos: db.Photos{}}, got); diff != "" {
				t.Errorf("GET rex (-want +got):\n%s", diff)
			}
			a.WantStock(t, rex, 1, "available")
			a.WantStock(t, tom, 0, "sold")
		})

		hundred := make([]string, 100)
		for i := range hundred {
			hundred[i] = handlerstest.Itoa(int64(1000 + i))
		}
		hundred[0] = handlerstest.Itoa(felix)
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
			{"category", "categoryId=" + handlerstest.Itoa(cats), []string{"Tom", "Felix"}},
			{"category and status", "categoryId=" + handlerstest.Itoa(cats) + "&status=available", []string{"Felix"}},
			{"unknown category", "categoryId=999999", []string{}},
			{"q lower", "q=rex", []string{"Rex", "T-REX Junior"}},
			{"q upper", "q=REX", []string{"Rex", "T-REX Junior"}},
			{"q middle", "q=uni", []string{"T-REX Junior"}},
			{"q wildcard is literal", "q=%25", []string{}},
			{"q underscore is literal", "q=_", []string{}},
			{"ids", "ids=" + handlerstest.Itoa(felix) + "," + handlerstest.Itoa(rex), []string{"Rex", "Felix"}},
			{"100 ids", "ids=" + strings.Join(hundred, ","), []string{"Felix"}},
			{"ids and q", "ids=" + handlerstest.Itoa(rex) + "," + handlerstest.Itoa(junior) + "&q=junior", []string{"T-REX Junior"}},
		}
		for _, f := range filters {
			t.Run("filter "+f.name, func(t *testing.T) {
				if diff := cmp.Diff(f.want, a.PetNames(t, "/api/pets?"+f.query)); diff != "" {
					t.Errorf("GET /api/pets?%s (-want +got):\n%s", f.query, diff)
				}
			})
		}

		// Pend is pending (its one unit is ordered); Busy has an open order
		// and stock left; Gone's only order is complete.
		pend := a.Create(t, "/api/pets", map[string]any{"name": "Pend", "categoryId": dogs})
		busy := a.Create(t, "/api/pets", map[string]any{"name": "Busy", "categoryId": dogs})
		gone := a.Create(t, "/api/pets", map[string]any{"name": "Gone", "categoryId": cats})
		a.Do(handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(busy), Key: a.Staff, Body: map[string]any{"quantity": 2}}).Want(t, 200)
		a.Create(t, "/api/store/orders", map[string]any{"petId": pend, "quantity": 1})
		a.Create(t, "/api/store/orders", map[string]any{"petId": busy, "quantity": 1})
		goneOrder := a.Create(t, "/api/store/orders", map[string]any{"petId": gone, "quantity": 1})
		a.Do(handlerstest.Req{Method: "PATCH", Path: "/api/store/orders/" + handlerstest.Itoa(goneOrder), Key: a.Staff, Body: map[string]any{"complete": true}}).Want(t, 200)
		a.WantStock(t, pend, 0, "pending")

		rexPath, pendPath, busyPath, gonePath := "/api/pets/"+handlerstest.Itoa(rex), "/api/pets/"+handlerstest.Itoa(pend), "/api/pets/"+handlerstest.Itoa(busy), "/api/pets/"+handlerstest.Itoa(gone)
		pet := func(name string, cat int64, status ...string) map[string]any {
			m := map[string]any{"name": name, "categoryId": cat}
			if len(status) > 0 {
				m["status"] = status[0]
			}
			return m
		}
		run(t, a, []apiCase{
			{"POST pending", "POST", "/api/pets", a.Staff, pet("P", dogs, "pending"), 422, "validation_failed", "status"},
			{"POST unknown category", "POST", "/api/pets", a.Staff, pet("P", 999999), 422, "validation_failed", "categoryId"},
			{"POST without name", "POST", "/api/pets", a.Staff, map[string]any{"categoryId": dogs}, 422, "validation_failed", "name"},
			{"POST blank name", "POST", "/api/pets", a.Staff, pet("   ", dogs), 422, "validation_failed", "name"},
			{"POST long name", "POST", "/api/pets", a.Staff, pet(strings.Repeat("x", 101), dogs), 422, "validation_failed", "name"},
			{"POST control character", "POST", "/api/pets", a.Staff, pet("a\u0007b", dogs), 422, "validation_failed", "name"},
			{"POST wrong type", "POST", "/api/pets", a.Staff, `{"name":"P","categoryId":"1"}`, 400, "bad_request", "categoryId"},
			{"PUT full replace", "PUT", rexPath, a.Staff, pet("Rex II", cats), 200, "", ""},
			{"PUT same status", "PUT", rexPath, a.Staff, pet("Rex", dogs, "available"), 200, "", ""},
			{"PUT available to sold", "PUT", rexPath, a.Staff, pet("Rex", dogs, "sold"), 200, "", ""},
			{"PUT sold to pending", "PUT", rexPath, a.Staff, pet("Rex", dogs, "pending"), 409, "invalid_transition", ""},
			{"PUT sold to available", "PUT", rexPath, a.Staff, pet("Rex", dogs, "available"), 200, "", ""},
			{"PUT available to pending", "PUT", rexPath, a.Staff, pet("Rex", dogs, "pending"), 409, "invalid_transition", ""},
			{"PUT pending to available", "PUT", pendPath, a.Staff, pet("Pend", dogs, "available"), 409, "invalid_transition", ""},
			{"PUT pending to sold", "PUT", pendPath, a.Staff, pet("Pend", dogs, "sold"), 409, "invalid_transition", ""},
			{"PUT pending kept", "PUT", pendPath, a.Staff, pet("Pend", dogs), 200, "", ""},
			{"PUT sold with open orders", "PUT", busyPath, a.Staff, pet("Busy", dogs, "sold"), 409, "pet_has_open_orders", ""},
			{"PUT unknown category", "PUT", rexPath, a.Staff, pet("Rex", 999999), 422, "validation_failed", "categoryId"},
			{"PUT missing category", "PUT", rexPath, a.Staff, map[string]any{"name": "Rex"}, 422, "validation_failed", "categoryId"},
			{"PUT unknown pet", "PUT", "/api/pets/999999", a.Staff, pet("X", dogs), 404, "not_found", ""},
			{"PUT bad id", "PUT", "/api/pets/x", a.Staff, pet("X", dogs), 400, "bad_request", "petId"},
			{"DELETE with open orders", "DELETE", busyPath, a.Staff, nil, 409, "pet_has_open_orders", ""},
			{"DELETE", "DELETE", gonePath, a.Staff, nil, 204, "", ""},
			{"DELETE again", "DELETE", gonePath, a.Staff, nil, 404, "not_found", ""},
			{"GET deleted", "GET", gonePath, a.Customer, nil, 404, "not_found", ""},
			{"PUT deleted", "PUT", gonePath, a.Staff, pet("Gone", cats), 404, "not_found", ""},
			{"inventory of deleted", "GET", "/api/store/inventory/" + handlerstest.Itoa(gone), a.Customer, nil, 404, "not_found", ""},
			{"set inventory of deleted", "PUT", "/api/store/inventory/" + handlerstest.Itoa(gone), a.Staff, map[string]any{"quantity": 3}, 404, "not_found", ""},
			{"order deleted pet", "POST", "/api/store/orders", a.Customer, map[string]any{"petId": gone, "quantity": 1}, 422, "validation_failed", "petId"},
			{"its order stays", "GET", "/api/store/orders/" + handlerstest.Itoa(goneOrder), a.Staff, nil, 200, "", ""},
			{"101 ids", "GET", "/api/pets?ids=" + strings.Join(hundred, ",") + ",7", a.Customer, nil, 400, "bad_request", "ids"},
			{"bad ids", "GET", "/api/pets?ids=1,x", a.Customer, nil, 400, "bad_request", "ids"},
			{"bad categoryId", "GET", "/api/pets?categoryId=x", a.Customer, nil, 400, "bad_request", "categoryId"},
		})
		t.Run("state after the rules", func(t *testing.T) {
			a.WantStock(t, rex, 1, "available")
			a.WantStock(t, pend, 0, "pending")
			a.WantStock(t, busy, 1, "available")
			var got db.Pet
			a.GetJSON(t, a.Customer, rexPath, &got)
			if diff := cmp.Diff(db.Pet{ID: rex, Name: "Rex", CategoryID: dogs, Status: "available", Currency: "EUR", Photos: db.Photos{}}, got); diff != "" {
				t.Errorf("rex (-want +got):\n%s", diff)
			}
		})
		t.Run("deleted pet is in no list", func(t *testing.T) {
			for _, path := range []string{"/api/pets", "/api/pets?ids=" + handlerstest.Itoa(gone), "/api/pets?q=gone", "/api/pets?categoryId=" + handlerstest.Itoa(cats)} {
				for _, n := range a.PetNames(t, path) {
					if n == "Gone" {
						t.Errorf("%s lists the deleted pet", path)
					}
				}
			}
			var items []db.InventoryItem
			a.GetJSON(t, a.Staff, "/api/store/inventory?limit=100", &items)
			for _, it := range items {
				if it.PetID == gone {
					t.Errorf("inventory lists the deleted pet: %+v", it)
				}
			}
			var orders []db.Order
			a.GetJSON(t, a.Staff, "/api/store/orders?petId="+handlerstest.Itoa(gone), &orders)
			if len(orders) != 1 || orders[0].ID != goneOrder || !orders[0].Complete {
				t.Errorf("orders of the deleted pet = %+v, want its complete order %d", orders, goneOrder)
			}
		})
		testCategories(t, a, dogs, cats)
	})
}

// testCategories covers the category operations on a catalog where dogs
// and cats have pets.
func testCategories(t *testing.T, a *handlerstest.App, dogs, cats int64) {
	birds := a.Create(t, "/api/categories", map[string]any{"name": "Birds"})
	dogsPath, catsPath, birdsPath := "/api/categories/"+handlerstest.Itoa(dogs), "/api/categories/"+handlerstest.Itoa(cats), "/api/categories/"+handlerstest.Itoa(birds)
	t.Run("GET category", func(t *testing.T) {
		var got db.Category
		a.GetJSON(t, a.Customer, dogsPath, &got)
		if diff := cmp.Diff(db.Category{ID: dogs, Name: "Dogs", Description: handlerstest.Ptr("Loyal")}, got); diff != "" {
			t.Errorf("GET dogs (-want +got):\n%s", diff)
		}
	})
	run(t, a, []apiCase{
		{"POST same name", "POST", "/api/categories", a.Staff, map[string]any{"name": "Dogs"}, 409, "category_exists", ""},
		{"POST other case", "POST", "/api/categories", a.Staff, map[string]any{"name": "  dOGS "}, 409, "category_exists", ""},
		{"POST long description", "POST", "/api/categories", a.Staff, map[string]any{"name": "Fish", "description": strings.Repeat("d", 501)}, 422, "validation_failed", "description"},
		{"POST without name", "POST", "/api/categories", a.Staff, map[string]any{"description": "x"}, 422, "validation_failed", "name"},
		{"PUT to a taken name", "PUT", catsPath, a.Staff, map[string]any{"name": "DOGS"}, 409, "category_exists", ""},
		{"PUT own name recased", "PUT", dogsPath, a.Staff, map[string]any{"name": "dogs"}, 200, "", ""},
		{"PUT unknown", "PUT", "/api/categories/999999", a.Staff, map[string]any{"name": "X"}, 404, "not_found", ""},
		{"PUT blank", "PUT", birdsPath, a.Staff, map[string]any{"name": ""}, 422, "validation_failed", "name"},
		{"DELETE in use", "DELETE", dogsPath, a.Staff, nil, 409, "category_in_use", ""},
		{"DELETE", "DELETE", birdsPath, a.Staff, nil, 204, "", ""},
		{"GET deleted", "GET", birdsPath, a.Customer, nil, 404, "not_found", ""},
		{"PUT deleted", "PUT", birdsPath, a.Staff, map[string]any{"name": "Birds"}, 404, "not_found", ""},
		{"DELETE again", "DELETE", birdsPath, a.Staff, nil, 404, "not_found", ""},
		{"name free again", "POST", "/api/categories", a.Staff, map[string]any{"name": "birds"}, 201, "", ""},
		{"pet in deleted category", "POST", "/api/pets", a.Staff, map[string]any{"name": "Tweety", "categoryId": birds}, 422, "validation_failed", "categoryId"},
		{"GET unknown", "GET", "/api/categories/999999", a.Customer, nil, 404, "not_found", ""},
	})
	t.Run("PUT is a full replace", func(t *testing.T) {
		var got db.Category
		a.GetJSON(t, a.Customer, dogsPath, &got)
		if diff := cmp.Diff(db.Category{ID: dogs, Name: "dogs"}, got); diff != "" {
			t.Errorf("dogs after PUT without description (-want +got):\n%s", diff)
		}
	})
	t.Run("a category whose pets are deleted can go", func(t *testing.T) {
		tmp := a.Create(t, "/api/categories", map[string]any{"name": "Temp"})
		p := a.Create(t, "/api/pets", map[string]any{"name": "Temp pet", "categoryId": tmp})
		a.Do(handlerstest.Req{Method: "DELETE", Path: "/api/categories/" + handlerstest.Itoa(tmp), Key: a.Staff}).Want(t, 409, "category_in_use")
		a.Do(handlerstest.Req{Method: "DELETE", Path: "/api/pets/" + handlerstest.Itoa(p), Key: a.Staff}).Want(t, 204)
		a.Do(handlerstest.Req{Method: "DELETE", Path: "/api/categories/" + handlerstest.Itoa(tmp), Key: a.Staff}).Want(t, 204)
	})
	t.Run("categories are paged", func(t *testing.T) {
		var all []db.Category
		a.GetJSON(t, a.Customer, "/api/categories?limit=100", &all)
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
		if diff := cmp.Diff(want, a.Pages(t, "/api/categories?limit=2", "id")); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})
}
