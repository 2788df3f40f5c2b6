package db_test

import (
	"context"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

func ptr[T any](v T) *T { return &v }

// MustCreateCategory adds a category or fails the test.
func MustCreateCategory(tb testing.TB, ctx context.Context, s *db.Store, name string) *db.Category {
	tb.Helper()
	c, err := s.CreateCategory(ctx, db.NewCategory{Name: &name})
	if err != nil {
		tb.Fatalf("create category %q: %v", name, err)
	}
	return c
}

// MustCreatePet adds a pet with the given stock or fails the test.
func MustCreatePet(tb testing.TB, ctx context.Context, s *db.Store, catID int64, name string, stock int64) *db.Pet {
	tb.Helper()
	p, err := s.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		tb.Fatalf("create pet %q: %v", name, err)
	}
	if stock != 1 {
		if _, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			tb.Fatalf("set stock of %q: %v", name, err)
		}
	}
	p, err = s.FindPetByID(ctx, p.ID)
	if err != nil {
		tb.Fatalf("find pet: %v", err)
	}
	return p
}

func mustOrder(tb testing.TB, ctx context.Context, s *db.Store, owner db.Owner, petID, qty int64) *db.Order {
	tb.Helper()
	o, err := s.PlaceOrder(ctx, owner, db.NewOrder{PetID: &petID, Quantity: &qty})
	if err != nil {
		tb.Fatalf("place order: %v", err)
	}
	return o
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := db.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// petState reads a pet's status and stock.
func petState(tb testing.TB, ctx context.Context, s *db.Store, id int64) (string, int64) {
	tb.Helper()
	it, err := s.FindInventoryItem(ctx, id)
	if err != nil {
		tb.Fatalf("inventory of %d: %v", id, err)
	}
	p, err := s.FindPetByID(ctx, id)
	if err != nil {
		tb.Fatalf("pet %d: %v", id, err)
	}
	if p.Status != it.Status || p.Stock != it.Quantity {
		tb.Fatalf("pet and inventory disagree: %+v vs %+v", p, it)
	}
	return it.Status, it.Quantity
}

func wantState(tb testing.TB, ctx context.Context, s *db.Store, id int64, status string, stock int64) {
	tb.Helper()
	gotStatus, gotStock := petState(tb, ctx, s, id)
	if gotStatus != status || gotStock != stock {
		tb.Fatalf("pet %d: got %s/%d, want %s/%d", id, gotStatus, gotStock, status, stock)
	}
}

var _ dbtest.Open = dbtest.SQLite
