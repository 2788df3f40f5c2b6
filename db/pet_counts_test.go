package db_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// wantCountsMatchScan checks the counts the console reads from pet_counts
// against counting every live pet.
func wantCountsMatchScan(tb testing.TB, ctx context.Context, s *db.Store) {
	tb.Helper()
	var rows []struct {
		CategoryID int64  `db:"category_id"`
		Status     string `db:"status"`
		N          int    `db:"n"`
	}
	if err := s.DB().SelectContext(ctx, &rows, `SELECT category_id, status, count(*) AS n
		FROM pets WHERE deleted_at IS NULL GROUP BY category_id, status`); err != nil {
		tb.Fatal(err)
	}
	byCategory := map[int64]int{}
	byStatus := map[string]int{db.StatusAvailable: 0, db.StatusPending: 0, db.StatusSold: 0}
	for _, r := range rows {
		byCategory[r.CategoryID] += r.N
		byStatus[r.Status] += r.N
	}
	got, err := s.CountPetsByCategory(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if diff := cmp.Diff(byCategory, got); diff != "" {
		tb.Errorf("pets by category (-scan +counts):\n%s", diff)
	}
	d, err := s.CountDashboard(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if diff := cmp.Diff(byStatus, d.Pets); diff != "" {
		tb.Errorf("pets by status (-scan +counts):\n%s", diff)
	}
}

// TestPetCountsFollowEveryWrite: the counts stay those of a full count
// through creates, renames, moves between categories, status changes by
// hand, by stock and by orders, deletions, and a rolled-back write.
func TestPetCountsFollowEveryWrite(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		dogs := MustCreateCategory(t, ctx, s, "Dogs")
		cats := MustCreateCategory(t, ctx, s, "Cats")
		rex := MustCreatePet(t, ctx, s, dogs.ID, "Rex", 3)
		fido := MustCreatePet(t, ctx, s, dogs.ID, "Fido", 1)
		tom := MustCreatePet(t, ctx, s, cats.ID, "Tom", 0)
		gone := MustCreatePet(t, ctx, s, cats.ID, "Gone", 1)
		wantCountsMatchScan(t, ctx, s)

		// A rename alone, then a move with a status change in one update.
		if _, err := s.UpdatePet(ctx, rex.ID, db.NewPet{Name: ptr("Rexy"), CategoryID: &dogs.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdatePet(ctx, rex.ID, db.NewPet{Name: ptr("Rexy"), CategoryID: &cats.ID, Status: ptr(db.StatusSold)}); err != nil {
			t.Fatal(err)
		}
		wantCountsMatchScan(t, ctx, s)

		o := mustOrder(t, ctx, s, db.Owner{ShopperID: "s1"}, fido.ID, 1) // Fido → pending
		wantCountsMatchScan(t, ctx, s)
		if err := s.CancelOrder(ctx, o.ID, nil); err != nil { // back to available
			t.Fatal(err)
		}
		o = mustOrder(t, ctx, s, db.Owner{ShopperID: "s1"}, fido.ID, 1)
		if _, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)}); err != nil { // sold
			t.Fatal(err)
		}
		if _, err := s.SetInventory(ctx, tom.ID, db.InventoryUpdate{Quantity: ptr(int64(4))}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeletePet(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		wantCountsMatchScan(t, ctx, s)

		// Refused writes change nothing.
		if _, err := s.UpdatePet(ctx, tom.ID, db.NewPet{Name: ptr("Tom"), CategoryID: ptr(int64(999))}); err == nil {
			t.Fatal("update to a missing category: want an error")
		}
		wantCountsMatchScan(t, ctx, s)
	})
}

// TestPetCountsUnderConcurrentOrders: orders placed and cancelled at once
// on many pets (PostgreSQL writes the counts at commit, in slots) neither
// fail nor lose a count.
func TestPetCountsUnderConcurrentOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		var pets []*db.Pet
		for range 16 {
			pets = append(pets, MustCreatePet(t, ctx, s, c.ID, "Rex", 1))
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(pets))
		for i, p := range pets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					o, err := s.PlaceOrder(ctx, db.Owner{ShopperID: "s1"}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
					if err != nil {
						errs <- err
						return
					}
					if i%2 == 0 {
						err = s.CancelOrder(ctx, o.ID, nil)
					} else {
						_, err = s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)})
						if err == nil {
							_, err = s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: ptr(int64(1))})
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		wantCountsMatchScan(t, ctx, s)
	})
}
