package db_test

import (
	"context"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestCatalogVersionGrowsWithEveryCatalogWrite: every write that can change
// a catalog or inventory body (a pet's fields, its category's name, stock,
// an order's stock and status change, a delete) moves the counter, and
// reads alone never do.
func TestCatalogVersionGrowsWithEveryCatalogWrite(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 5)
		version := func() int64 {
			t.Helper()
			v, err := s.CatalogVersion(ctx)
			if err != nil {
				t.Fatalf("catalog version: %v", err)
			}
			return v
		}
		last := version()
		step := func(name string, write func() error) {
			t.Helper()
			if err := write(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if v := version(); v <= last {
				t.Fatalf("after %s: version = %d, want more than %d", name, v, last)
			} else {
				last = v
			}
		}
		if _, _, err := s.FindPets(ctx, db.PetFilter{}); err != nil {
			t.Fatalf("find pets: %v", err)
		}
		if v := version(); v != last {
			t.Fatalf("a read moved the version: %d, want %d", v, last)
		}

		step("category rename", func() error {
			_, err := s.UpdateCategory(ctx, p.CategoryID, db.NewCategory{Name: ptr("Hounds")})
			return err
		})
		step("pet update", func() error {
			_, err := s.UpdatePet(ctx, p.ID, db.NewPet{Name: ptr("Max"), CategoryID: &p.CategoryID})
			return err
		})
		step("stock change", func() error {
			_, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: ptr(int64(3))})
			return err
		})
		var o *db.Order
		step("order placed", func() error {
			var err error
			o, err = s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
			return err
		})
		step("order cancelled", func() error { return s.CancelOrder(ctx, o.ID, nil) })
		step("new category", func() error {
			_, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr("Cats")})
			return err
		})
		step("pet deleted", func() error { return s.DeletePet(ctx, p.ID) })
	})
}
