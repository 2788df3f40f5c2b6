package api_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web"
)

// TestStoreOrdersAPI covers /store/orders on both databases: ownership, the
// store rules of SPEC §5 and every error the SPEC lists.
func TestStoreOrdersAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 5).ID
		tom := a.SeedPet("Tom", 0).ID   // sold
		solo := a.SeedPet("Solo", 1).ID // becomes pending
		pendOrder := a.PlaceOrder(t, a.Other, map[string]any{"petId": solo, "quantity": 1})
		a.WantStock(t, solo, 0, "pending")

		t.Run("POST answers the order", func(t *testing.T) {
			ship := a.ShipDate(9)
			sent := ship.In(time.FixedZone("", 2*60*60)).Format(time.RFC3339) // answered in UTC
			r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: a.Customer,
				Body: map[string]any{"petId": rex, "quantity": 2, "shipDate": sent}}).Want(t, 201)
			var got map[string]any
			r.Decode(t, &got)
			want := map[string]any{"id": got["id"], "petId": float64(rex), "quantity": float64(2), "shipDate": handlerstest.JSONTime(ship), "complete": false,
				"unitPrice": "0.00", "total": "0.00", "currency": "EUR"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
		mine := a.OrderIDs(t, a.Customer, "/api/store/orders")
		if len(mine) != 1 {
			t.Fatalf("customer's orders = %v, want one", mine)
		}
		o1 := mine[0]
		o2 := a.PlaceOrder(t, a.Other, map[string]any{"petId": rex, "quantity": 1})
		o3 := a.PlaceOrder(t, a.Staff, map[string]any{"petId": rex, "quantity": 1})
		a.WantStock(t, rex, 1, "available")

		lists := []struct {
			name, key, query string
			want             []int64
		}{
			{"customer sees own", a.Customer, "", []int64{o1}},
			{"other sees own", a.Other, "", []int64{pendOrder, o2}},
			{"staff sees all", a.Staff, "", []int64{pendOrder, o1, o2, o3}},
			{"petId", a.Staff, "?petId=" + handlerstest.Itoa(rex), []int64{o1, o2, o3}},
			{"petId of another pet", a.Staff, "?petId=" + handlerstest.Itoa(tom), []int64{}},
			{"open", a.Staff, "?complete=false", []int64{pendOrder, o1, o2, o3}},
			{"complete", a.Staff, "?complete=true", []int64{}},
			{"customer's open", a.Customer, "?complete=false&petId=" + handlerstest.Itoa(rex), []int64{o1}},
			{"paged", a.Staff, "?limit=2&cursor=" + web.EncodeCursor(pendOrder), []int64{o1, o2}},
		}
		for _, l := range lists {
			t.Run("list "+l.name, func(t *testing.T) {
				if diff := cmp.Diff(l.want, a.OrderIDs(t, l.key, "/api/store/orders"+l.query)); diff != "" {
					t.Errorf("GET /api/store/orders%s (-want +got):\n%s", l.query, diff)
				}
			})
		}

		order := func(pet any, qty any, extra ...any) map[string]any {
			m := map[string]any{"petId": pet, "quantity": qty}
			for i := 0; i+1 < len(extra); i += 2 {
				m[extra[i].(string)] = extra[i+1]
			}
			return m
		}
		p1, p2, p3 := "/api/store/orders/"+handlerstest.Itoa(o1), "/api/store/orders/"+handlerstest.Itoa(o2), "/api/store/orders/"+handlerstest.Itoa(o3)
		run(t, a, []apiCase{
			{"more than in stock", "POST", "/api/store/orders", a.Customer, order(rex, 2), 409, "insufficient_stock", ""},
			{"sold pet", "POST", "/api/store/orders", a.Customer, order(tom, 1), 409, "pet_not_available", ""},
			{"pending pet", "POST", "/api/store/orders", a.Customer, order(solo, 1), 409, "pet_not_available", ""},
			{"quantity 0", "POST", "/api/store/orders", a.Customer, order(rex, 0), 422, "validation_failed", "quantity"},
			{"quantity 1001", "POST", "/api/store/orders", a.Customer, order(rex, 1001), 422, "validation_failed", "quantity"},
			{"bad shipDate", "POST", "/api/store/orders", a.Customer, order(rex, 1, "shipDate", "tomorrow"), 422, "validation_failed", "shipDate"},
			{"complete true", "POST", "/api/store/orders", a.Customer, order(rex, 1, "complete", true), 422, "validation_failed", "complete"},
			{"unknown pet", "POST", "/api/store/orders", a.Customer, order(999999, 1), 422, "validation_failed", "petId"},
			{"no petId", "POST", "/api/store/orders", a.Customer, map[string]any{"quantity": 1}, 422, "validation_failed", "petId"},
			{"no quantity", "POST", "/api/store/orders", a.Customer, map[string]any{"petId": rex}, 422, "validation_failed", "quantity"},
			{"quantity as string", "POST", "/api/store/orders", a.Customer, order(rex, "1"), 400, "bad_request", "quantity"},
			{"anonymous POST", "POST", "/api/store/orders", "", order(rex, 1), 401, "unauthorized", ""},
			{"anonymous list", "GET", "/api/store/orders", "", nil, 401, "unauthorized", ""},
			{"bad complete filter", "GET", "/api/store/orders?complete=maybe", a.Staff, nil, 400, "bad_request", "complete"},
			{"bad petId filter", "GET", "/api/store/orders?petId=0", a.Staff, nil, 400, "bad_request", "petId"},
			{"own order", "GET", p1, a.Customer, nil, 200, "", ""},
			{"another's order", "GET", p2, a.Customer, nil, 404, "not_found", ""},
			{"staff reads any", "GET", p2, a.Staff, nil, 200, "", ""},
			{"unknown order", "GET", "/api/store/orders/999999", a.Staff, nil, 404, "not_found", ""},
			{"cancel another's", "DELETE", p2, a.Customer, nil, 404, "not_found", ""},
			{"customer PATCH", "PATCH", p1, a.Customer, map[string]any{"complete": true}, 403, "forbidden", ""},
			{"complete", "PATCH", p1, a.Staff, map[string]any{"complete": true}, 200, "", ""},
			{"complete again", "PATCH", p1, a.Staff, map[string]any{"complete": true}, 200, "", ""},
			{"un-complete", "PATCH", p1, a.Staff, map[string]any{"complete": false}, 409, "order_complete", ""},
			{"cancel complete", "DELETE", p1, a.Customer, nil, 409, "order_complete", ""},
			{"set shipDate", "PATCH", p2, a.Staff, map[string]any{"shipDate": handlerstest.JSONTime(a.ShipDate(31))}, 200, "", ""},
			{"empty PATCH", "PATCH", p2, a.Staff, map[string]any{}, 422, "validation_failed", ""},
			{"bad shipDate PATCH", "PATCH", p2, a.Staff, map[string]any{"shipDate": a.ShipDate(31).Format("02/01/2006")}, 422, "validation_failed", "shipDate"},
			{"PATCH unknown", "PATCH", "/api/store/orders/999999", a.Staff, map[string]any{"complete": true}, 404, "not_found", ""},
			{"owner cancels", "DELETE", p2, a.Other, nil, 204, "", ""},
			{"cancelled is gone", "GET", p2, a.Staff, nil, 404, "not_found", ""},
			{"cancel twice", "DELETE", p2, a.Other, nil, 404, "not_found", ""},
			{"PATCH cancelled", "PATCH", p2, a.Staff, map[string]any{"complete": true}, 404, "not_found", ""},
			{"staff cancels any", "DELETE", p3, a.Staff, nil, 204, "", ""},
			{"staff cancels a pending pet's order", "DELETE", "/api/store/orders/" + handlerstest.Itoa(pendOrder), a.Staff, nil, 204, "", ""},
		})
		t.Run("state after the rules", func(t *testing.T) {
			a.WantStock(t, rex, 3, "available")  // 5 − 2 − 1 − 1, + 1 + 1 back
			a.WantStock(t, solo, 1, "available") // cancelled: stock back
			a.WantStock(t, tom, 0, "sold")
			var got db.Order
			a.GetJSON(t, a.Customer, p1, &got)
			if !got.Complete || got.Quantity != 2 {
				t.Errorf("order 1 = %+v, want complete with quantity 2", got)
			}
			if diff := cmp.Diff([]int64{o1}, a.OrderIDs(t, a.Staff, "/api/store/orders")); diff != "" {
				t.Errorf("staff list after cancels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int64{o1}, a.OrderIDs(t, a.Staff, "/api/store/orders?complete=true")); diff != "" {
				t.Errorf("complete orders (-want +got):\n%s", diff)
			}
		})
		t.Run("completing the last open order sells the pet", func(t *testing.T) {
			id := a.PlaceOrder(t, a.Customer, map[string]any{"petId": solo, "quantity": 1})
			a.WantStock(t, solo, 0, "pending")
			ship := handlerstest.JSONTime(a.ShipDate(10))
			r := a.Do(handlerstest.Req{Method: "PATCH", Path: "/api/store/orders/" + handlerstest.Itoa(id), Key: a.Staff, Body: map[string]any{"complete": true, "shipDate": ship}}).Want(t, 200)
			var got map[string]any
			r.Decode(t, &got)
			want := map[string]any{"id": float64(id), "petId": float64(solo), "quantity": float64(1), "shipDate": ship, "complete": true,
				"unitPrice": "0.00", "total": "0.00", "currency": "EUR"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("completed order (-want +got):\n%s", diff)
			}
			a.WantStock(t, solo, 0, "sold")
		})
	})
}

// TestStoreInventoryAPI covers /store/inventory on both databases.
func TestStoreInventoryAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 3).ID
		tom := a.SeedPet("Tom", 0).ID
		busy := a.SeedPet("Busy", 2).ID
		a.PlaceOrder(t, a.Customer, map[string]any{"petId": busy, "quantity": 1})

		items := []struct {
			name, query string
			want        []db.InventoryItem
		}{
			{"all", "", []db.InventoryItem{{PetID: rex, Quantity: 3, Status: "available"}, {PetID: tom, Quantity: 0, Status: "sold"}, {PetID: busy, Quantity: 1, Status: "available"}}},
			{"available", "?status=available", []db.InventoryItem{{PetID: rex, Quantity: 3, Status: "available"}, {PetID: busy, Quantity: 1, Status: "available"}}},
			{"sold or pending", "?status=sold&status=pending", []db.InventoryItem{{PetID: tom, Quantity: 0, Status: "sold"}}},
			{"paged", "?limit=1&status=available&cursor=" + web.EncodeCursor(rex), []db.InventoryItem{{PetID: busy, Quantity: 1, Status: "available"}}},
		}
		for _, tc := range items {
			t.Run("list "+tc.name, func(t *testing.T) {
				var got []db.InventoryItem
				a.GetJSON(t, a.Customer, "/api/store/inventory"+tc.query, &got)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("GET /api/store/inventory%s (-want +got):\n%s", tc.query, diff)
				}
			})
		}
		puts := []struct {
			pet, quantity int64
			wantStatus    string
		}{
			{busy, 0, "pending"}, // an order is open
			{busy, 4, "available"},
			{rex, 0, "sold"},
			{rex, 1_000_000, "available"},
			{tom, 2, "available"},
		}
		for _, p := range puts {
			t.Run("PUT derives "+p.wantStatus, func(t *testing.T) {
				r := a.Do(handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(p.pet), Key: a.Staff,
					Body: map[string]any{"quantity": p.quantity}}).Want(t, 200)
				var got db.InventoryItem
				r.Decode(t, &got)
				want := db.InventoryItem{PetID: p.pet, Quantity: p.quantity, Status: p.wantStatus}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("PUT answer (-want +got):\n%s", diff)
				}
				a.WantStock(t, p.pet, p.quantity, p.wantStatus)
			})
		}
		rexPath := "/api/store/inventory/" + handlerstest.Itoa(rex)
		run(t, a, []apiCase{
			{"GET one as customer", "GET", rexPath, a.Customer, nil, 200, "", ""},
			{"GET unknown", "GET", "/api/store/inventory/999999", a.Customer, nil, 404, "not_found", ""},
			{"GET bad id", "GET", "/api/store/inventory/0", a.Customer, nil, 400, "bad_request", "petId"},
			{"PUT negative", "PUT", rexPath, a.Staff, map[string]any{"quantity": -1}, 422, "validation_failed", "quantity"},
			{"PUT over a million", "PUT", rexPath, a.Staff, map[string]any{"quantity": 1_000_001}, 422, "validation_failed", "quantity"},
			{"PUT without quantity", "PUT", rexPath, a.Staff, map[string]any{}, 422, "validation_failed", "quantity"},
			{"PUT quantity as string", "PUT", rexPath, a.Staff, map[string]any{"quantity": "5"}, 400, "bad_request", "quantity"},
			{"PUT unknown pet", "PUT", "/api/store/inventory/999999", a.Staff, map[string]any{"quantity": 1}, 404, "not_found", ""},
			{"PUT as customer", "PUT", rexPath, a.Customer, map[string]any{"quantity": 9}, 403, "forbidden", ""},
			{"list bad status", "GET", "/api/store/inventory?status=lost", a.Customer, nil, 400, "bad_request", "status"},
			{"list anonymous", "GET", "/api/store/inventory", "", nil, 401, "unauthorized", ""},
			{"GET anonymous", "GET", rexPath, "", nil, 401, "unauthorized", ""},
		})
		a.WantStock(t, rex, 1_000_000, "available") // the refused PUTs changed nothing
	})
}

// TestStoreOrdersParallel places 100 orders of 1 at once through the HTTP
// stack against a stock of 10: exactly 10 succeed, on both databases.
func TestStoreOrdersParallel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 10).ID
		const n = 100
		statuses := make([]int, n)
		codes := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: a.Customer, Body: map[string]any{"petId": pet, "quantity": 1}})
				statuses[i] = r.Status
				if r.Status != 201 {
					var p handlerstest.Problem
					_ = json.Unmarshal(r.Body, &p)
					codes[i] = p.Code
				}
			}()
		}
		wg.Wait()
		got := map[int]int{}
		for i, s := range statuses {
			got[s]++
			if s == 409 && codes[i] != "pet_not_available" && codes[i] != "insufficient_stock" {
				t.Errorf("409 with code %q", codes[i])
			}
		}
		if diff := cmp.Diff(map[int]int{201: 10, 409: 90}, got); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		a.WantStock(t, pet, 0, "pending")
		if ids := a.OrderIDs(t, a.Staff, "/api/store/orders?limit=100&petId="+handlerstest.Itoa(pet)); len(ids) != 10 {
			t.Errorf("orders of the pet = %d, want 10", len(ids))
		}
	})
}
