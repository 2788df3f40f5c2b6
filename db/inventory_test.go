package db_test

import (
	"context"
	"slices"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestFindLowStock(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Cats")
		MustCreatePet(t, ctx, s, c.ID, "Plenty", 10)
		two := MustCreatePet(t, ctx, s, c.ID, "Two", 2)
		one := MustCreatePet(t, ctx, s, c.ID, "One", 1)
		MustCreatePet(t, ctx, s, c.ID, "None", 0)
		pets, err := s.FindLowStock(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(pets) != 2 || pets[0].ID != one.ID || pets[1].ID != two.ID {
			t.Fatalf("low stock = %+v, want One then Two", pets)
		}
		if pets[0].CategoryName != "Cats" || pets[0].Stock != 1 {
			t.Errorf("pet = %+v", pets[0])
		}
	})
}

// TestLowStockFollowsEveryStockChange: low_stock (migration 00023) is kept
// by triggers, not by the store's code, so every way stock moves (an order,
// its cancellation, a count set by hand, a status set by hand, a delete,
// an import's bulk insert) must leave the dashboard's list equal to what
// inventory itself says.
func TestLowStockFollowsEveryStockChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Cats")
		a := MustCreatePet(t, ctx, s, c.ID, "Ada", 3)
		b := MustCreatePet(t, ctx, s, c.ID, "Bo", 5)
		d := MustCreatePet(t, ctx, s, c.ID, "Dot", 1)
		owner := db.Owner{APIKeyID: mustAPIKey(t, ctx, s, "buyer").ID}
		wantLow := func(step string, want ...int64) {
			t.Helper()
			pets, err := s.FindLowStock(ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, p := range pets {
				got = append(got, p.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after %s: low stock = %v, want %v", step, got, want)
			}
			var truth []int64
			if err := s.DB().SelectContext(ctx, &truth, `SELECT i.pet_id FROM inventory i JOIN pets p ON p.id = i.pet_id
				WHERE i.quantity BETWEEN 1 AND 2 AND p.deleted_at IS NULL AND p.status = 'available' ORDER BY i.quantity, i.pet_id`); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, truth) {
				t.Fatalf("after %s: low stock = %v, inventory says %v", step, got, truth)
			}
		}
		wantLow("creating", d.ID)
		first := mustOrder(t, ctx, s, owner, a.ID, 1) // 3 → 2
		wantLow("an order into low stock", d.ID, a.ID)
		mustOrder(t, ctx, s, owner, a.ID, 1) // 2 → 1
		wantLow("an order within low stock", a.ID, d.ID)
		mustOrder(t, ctx, s, owner, d.ID, 1) // 1 → 0: out of stock is not low
		wantLow("an order of the last unit", a.ID)
		if err := s.CancelOrder(ctx, first.ID, nil); err != nil {
			t.Fatal(err)
		}
		wantLow("a cancellation", a.ID) // 1 → 2
		if _, err := s.SetInventory(ctx, b.ID, db.InventoryUpdate{Quantity: ptr(int64(2))}); err != nil {
			t.Fatal(err)
		}
		wantLow("setting a count into low stock", a.ID, b.ID)
		if _, err := s.SetInventory(ctx, a.ID, db.InventoryUpdate{Quantity: ptr(int64(50))}); err != nil {
			t.Fatal(err)
		}
		wantLow("setting a count out of low stock", b.ID)
		mustExec(t, ctx, s.DB(), `INSERT INTO pets (name, name_key, category_id, status, price, created_at, updated_at)
			SELECT 'Bulk', 'bulk', $1, 'available', 100, created_at, updated_at FROM pets WHERE id = $2`, c.ID, b.ID)
		var bulk int64
		if err := s.DB().GetContext(ctx, &bulk, `SELECT max(id) FROM pets`); err != nil {
			t.Fatal(err)
		}
		mustExec(t, ctx, s.DB(), `INSERT INTO inventory (pet_id, quantity, updated_at) SELECT $1, 1, updated_at FROM inventory WHERE pet_id = $2`, bulk, b.ID)
		wantLow("a bulk insert", bulk, b.ID)
		mustExec(t, ctx, s.DB(), `DELETE FROM inventory WHERE pet_id = $1`, bulk)
		mustExec(t, ctx, s.DB(), `DELETE FROM pets WHERE id = $1`, bulk)
		wantLow("deleting a row", b.ID)
		if err := s.DeletePet(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		wantLow("a pet's soft delete")
	})
}

// TestStockUpdateIsHOT (PostgreSQL): an order of a pet in plenty changes
// inventory.quantity alone, and with no index on that column PostgreSQL
// writes it as a heap-only tuple update: no new entry in any index of
// inventory. The index the low-stock list used to read (00015) ended that,
// halving the raw order transaction's rate (issue 44).
func TestStockUpdateIsHOT(t *testing.T) {
	s := dbtest.Postgres(t)
	ctx := context.Background()
	c := MustCreateCategory(t, ctx, s, "Cats")
	p := MustCreatePet(t, ctx, s, c.ID, "Plenty", 1000)
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The view counts this backend's updates not yet reported, so the
	// test takes the difference.
	counts := func() (upd, hot int64) {
		if err := tx.QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'inventory'`).Scan(&upd, &hot); err != nil {
			t.Fatal(err)
		}
		return upd, hot
	}
	upd0, hot0 := counts()
	for range 3 {
		if _, err := tx.ExecContext(ctx, `UPDATE inventory SET quantity = quantity - 1 WHERE pet_id = $1`, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	upd, hot := counts()
	upd, hot = upd-upd0, hot-hot0
	if upd != 3 || hot != 3 {
		t.Fatalf("this transaction's updates of inventory: %d, of which HOT %d; want 3 and 3", upd, hot)
	}
}
