package db_test

import (
	"context"
	"encoding/json"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestOrderCreatedEventIsTheOrder: the data of order.created is, byte for
// byte, json.Marshal of the order as FindOrderByID then reads it — price
// snapshot and buyer included — for a lone API order (on PostgreSQL the
// one-statement path, which fills in the holes of the JSON made in Go) and for a storefront
// checkout of several lines with a buyer whose details need escaping.
func TestOrderCreatedEventIsTheOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, rex := eventStore(t, open)
		setStock(t, ctx, s, rex.ID, 2000)
		price := "1234567.05"
		if _, err := s.UpdatePet(ctx, rex.ID, db.NewPet{Name: &rex.Name, CategoryID: &rex.CategoryID, Price: &price}); err != nil {
			t.Fatal(err)
		}
		tom := MustCreatePet(t, ctx, s, rex.CategoryID, "Tom", 5) // free: 0.00

		// wantEventsAreOrders checks the order.created events after id
		// against the orders, in order.
		wantEventsAreOrders := func(t *testing.T, after int64, orders ...*db.Order) {
			t.Helper()
			evs, err := s.EventsAfter(ctx, after, 100)
			if err != nil {
				t.Fatal(err)
			}
			var created []db.Event
			for _, e := range evs {
				if e.Type == db.EventOrderCreated {
					created = append(created, e)
				}
			}
			if len(created) != len(orders) {
				t.Fatalf("order.created events = %d, want %d", len(created), len(orders))
			}
			for i, o := range orders {
				stored, err := s.FindOrderByID(ctx, o.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				want, err := json.Marshal(stored)
				if err != nil {
					t.Fatal(err)
				}
				if got := string(created[i].Data); got != string(want) {
					t.Errorf("order.created of order %d:\n got %s\nwant %s", o.ID, got, want)
				}
				placed, _ := json.Marshal(o)
				if string(placed) != string(want) {
					t.Errorf("order %d as placed:\n got %s\nwant %s (as stored)", o.ID, placed, want)
				}
			}
		}

		t.Run("OKAPIOrder", func(t *testing.T) {
			before := lastEvent(t, ctx, s)
			_, ship := shipDate(t)
			k, _, err := s.CreateAPIKey(ctx, newKey("k", db.RoleCustomer, db.PlanFree))
			if err != nil {
				t.Fatal(err)
			}
			o, err := s.PlaceOrder(ctx, db.Owner{APIKeyID: k.ID}, db.NewOrder{PetID: &rex.ID, Quantity: ptr(int64(1000)), ShipDate: &ship})
			if err != nil {
				t.Fatal(err)
			}
			if o.UnitPrice != 123456705 || o.Total != 123456705000 || o.Currency != "EUR" || o.Customer != nil {
				t.Errorf("order = %+v, want 1234567.05 EUR × 1000 and no customer", o)
			}
			wantEventsAreOrders(t, before, o)
		})
		t.Run("OKFreeAPIOrder", func(t *testing.T) {
			before := lastEvent(t, ctx, s)
			o := mustOrder(t, ctx, s, db.Owner{ShopperID: "b"}, tom.ID, 1)
			wantEventsAreOrders(t, before, o)
		})
		t.Run("OKCheckoutWithCustomer", func(t *testing.T) {
			before := lastEvent(t, ctx, s)
			one, two := int64(1), int64(2)
			c, err := s.PlaceCheckout(ctx, "shopper-1", 10, db.NewCheckout{
				Name: `  Zoë "<Ada>" & Co,"unitPrice":  `, Email: "Zoe+pets@Example.com", Phone: "+44 (20) 7946-0000",
			}, []db.NewOrder{{PetID: &rex.ID, Quantity: &two}, {PetID: &tom.ID, Quantity: &one}})
			if err != nil {
				t.Fatal(err)
			}
			want := db.Customer{Name: `Zoë "<Ada>" & Co,"unitPrice":`, Email: "Zoe+pets@Example.com", Phone: "+44 (20) 7946-0000"}
			if len(c.Orders) != 2 || c.Orders[0].Customer == nil || *c.Orders[0].Customer != want {
				t.Fatalf("checkout orders = %+v, want two with customer %+v", c.Orders, want)
			}
			wantEventsAreOrders(t, before, c.Orders...)
		})
		t.Run("OKCheckoutWithoutPhone", func(t *testing.T) {
			before := lastEvent(t, ctx, s)
			one := int64(1)
			c, err := s.PlaceCheckout(ctx, "shopper-2", 10, db.NewCheckout{Name: "Ada", Email: "ada@example.com"},
				[]db.NewOrder{{PetID: &rex.ID, Quantity: &one}})
			if err != nil {
				t.Fatal(err)
			}
			wantEventsAreOrders(t, before, c.Orders...)
		})
	})
}
