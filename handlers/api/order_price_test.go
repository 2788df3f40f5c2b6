package api_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// priceOf is what an Order's JSON says of its price and buyer.
func priceOf(order map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range []string{"unitPrice", "total", "currency", "customer"} {
		if v, ok := order[f]; ok {
			out[f] = v
		}
	}
	return out
}

// wantOrderPrice fails unless key reads order id at path with this price
// snapshot (and customer, when want has one).
func wantOrderPrice(t *testing.T, a *handlerstest.App, key string, id int64, want map[string]any) {
	t.Helper()
	var got map[string]any
	a.GetJSON(t, key, "/api/store/orders/"+handlerstest.Itoa(id), &got)
	if diff := cmp.Diff(want, priceOf(got)); diff != "" {
		t.Errorf("order %d (-want +got):\n%s", id, diff)
	}
}

func snapshot(unit, total string) map[string]any {
	return map[string]any{"unitPrice": unit, "total": total, "currency": "EUR"}
}

// TestOrderPriceSnapshot: an order records its pet's price when placed
// (SPEC §14): a later price change leaves it as it was, and a new order
// gets the new price; on both databases.
func TestOrderPriceSnapshot(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		dogs := a.Create(t, "/api/categories", map[string]any{"name": "Dogs"})
		rex := a.Create(t, "/api/pets", map[string]any{"name": "Rex", "categoryId": dogs, "price": "10.00"})
		a.Do(handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(rex), Key: a.Staff, Body: map[string]any{"quantity": 10}}).Want(t, 200)

		r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: a.Customer, Body: map[string]any{"petId": rex, "quantity": 3}}).Want(t, 201)
		var placed map[string]any
		r.Decode(t, &placed)
		if diff := cmp.Diff(snapshot("10.00", "30.00"), priceOf(placed)); diff != "" {
			t.Fatalf("placed order (-want +got):\n%s", diff)
		}
		old := int64(placed["id"].(float64))

		a.Do(handlerstest.Req{Method: "PUT", Path: "/api/pets/" + handlerstest.Itoa(rex), Key: a.Staff,
			Body: map[string]any{"name": "Rex", "categoryId": dogs, "price": "12.00"}}).Want(t, 200)
		wantOrderPrice(t, a, a.Customer, old, snapshot("10.00", "30.00"))
		wantOrderPrice(t, a, a.Staff, old, snapshot("10.00", "30.00"))

		newer := a.PlaceOrder(t, a.Other, map[string]any{"petId": rex, "quantity": 2})
		wantOrderPrice(t, a, a.Other, newer, snapshot("12.00", "24.00"))

		// Completing keeps the snapshot, and so does the list.
		a.Do(handlerstest.Req{Method: "PATCH", Path: "/api/store/orders/" + handlerstest.Itoa(old), Key: a.Staff, Body: map[string]any{"complete": true}}).Want(t, 200)
		var list []map[string]any
		a.GetJSON(t, a.Staff, "/api/store/orders?petId="+handlerstest.Itoa(rex), &list)
		var got []map[string]any
		for _, o := range list {
			got = append(got, priceOf(o))
		}
		if diff := cmp.Diff([]map[string]any{snapshot("10.00", "30.00"), snapshot("12.00", "24.00")}, got); diff != "" {
			t.Errorf("orders of rex (-want +got):\n%s", diff)
		}
	})
}

// TestStorefrontOrderInAPI: an order placed in the storefront shows staff
// its buyer (customer) and price, while no customer key sees it at all;
// on both databases.
func TestStorefrontOrderInAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		ctx := context.Background()
		pet := a.SeedPet("Rex", 5)
		price := "15.50"
		if _, err := a.Store.UpdatePet(ctx, pet.ID, db.NewPet{Name: &pet.Name, CategoryID: &pet.CategoryID, Price: &price}); err != nil {
			t.Fatal(err)
		}
		checkout := func(phone string, qty int64) int64 {
			c, err := a.Store.PlaceCheckout(ctx, "shopper-1", 10,
				db.NewCheckout{Name: "Ada Lovelace", Email: "ada@example.com", Phone: phone},
				[]db.NewOrder{{PetID: &pet.ID, Quantity: &qty}})
			if err != nil {
				t.Fatal(err)
			}
			return c.Orders[0].ID
		}
		shop := checkout("+44 20 7946 0000", 2)
		noPhone := checkout("", 1)
		apiOrder := a.PlaceOrder(t, a.Customer, map[string]any{"petId": pet.ID, "quantity": 1})

		t.Run("staff see the buyer", func(t *testing.T) {
			want := snapshot("15.50", "31.00")
			want["customer"] = map[string]any{"name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0000"}
			wantOrderPrice(t, a, a.Staff, shop, want)
			want = snapshot("15.50", "15.50")
			want["customer"] = map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"}
			wantOrderPrice(t, a, a.Staff, noPhone, want)
		})
		t.Run("an API order has no customer", func(t *testing.T) {
			wantOrderPrice(t, a, a.Staff, apiOrder, snapshot("15.50", "15.50"))
			wantOrderPrice(t, a, a.Customer, apiOrder, snapshot("15.50", "15.50"))
		})
		t.Run("the staff list shows the buyer", func(t *testing.T) {
			var list []map[string]any
			a.GetJSON(t, a.Staff, "/api/store/orders", &list)
			var buyers []any
			for _, o := range list {
				buyers = append(buyers, o["customer"])
			}
			ada := func(phone ...string) any {
				m := map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"}
				if len(phone) > 0 {
					m["phone"] = phone[0]
				}
				return m
			}
			if diff := cmp.Diff([]any{ada("+44 20 7946 0000"), ada(), nil}, buyers); diff != "" {
				t.Errorf("customers in the staff list (-want +got):\n%s", diff)
			}
		})
		t.Run("customer keys never see it", func(t *testing.T) {
			for _, key := range []string{a.Customer, a.Other} {
				for _, id := range []int64{shop, noPhone} {
					path := "/api/store/orders/" + handlerstest.Itoa(id)
					a.Do(handlerstest.Req{Method: "GET", Path: path, Key: key}).Want(t, 404, "not_found")
					a.Do(handlerstest.Req{Method: "DELETE", Path: path, Key: key}).Want(t, 404, "not_found")
				}
			}
			if diff := cmp.Diff([]int64{apiOrder}, a.OrderIDs(t, a.Customer, "/api/store/orders?petId="+handlerstest.Itoa(pet.ID))); diff != "" {
				t.Errorf("customer's list (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int64{}, a.OrderIDs(t, a.Other, "/api/store/orders")); diff != "" {
				t.Errorf("other customer's list (-want +got):\n%s", diff)
			}
			// The refused cancels left it as it was.
			wantOrderPrice(t, a, a.Staff, shop, map[string]any{"unitPrice": "15.50", "total": "31.00", "currency": "EUR",
				"customer": map[string]any{"name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0000"}})
		})
	})
}
