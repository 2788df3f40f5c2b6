package db_test

import (
	"context"
	"fmt"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestConcurrentDeleteAndOrder races an order against the pet's deletion
// and against staff selling it: the order must see the pet as the other
// transaction left it, never the state its own statement started from. An
// order that read the pet unlocked would be placed on a deleted or sold pet.
func TestConcurrentDeleteAndOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		for round := range 15 {
			p := MustCreatePet(t, ctx, s, c.ID, fmt.Sprint("Rex ", round), 5)
			var del, sell, order codes
			run(3, func(i int) {
				switch i {
				case 0:
					del.add(s.DeletePet(ctx, p.ID))
				case 1:
					_, err := s.UpdatePet(ctx, p.ID, db.NewPet{Name: &p.Name, CategoryID: &c.ID, Status: ptr(db.StatusSold)})
					sell.add(err)
				default:
					_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
					order.add(err)
				}
			})
			del.wantOnly(t, "", db.EPetHasOpenOrders)
			sell.wantOnly(t, "", db.EPetHasOpenOrders, db.ENotFound)
			order.wantOnly(t, "", db.EValidationFailed, db.EPetNotAvailable)
			placed := order.n[""] == 1
			if placed && (del.n[""] == 1 || sell.n[""] == 1) {
				t.Fatalf("round %d: an order was placed and the pet was also deleted (%v) or sold (%v)", round, del.n, sell.n)
			}
			if del.n[""] == 0 {
				wantInvariant(t, ctx, s, p.ID)
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	})
}
