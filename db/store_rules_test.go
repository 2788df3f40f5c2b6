package db_test

import (
	"context"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// The tests of this file walk SPEC §5's table row by row. After every rule
// they check status and stock together and that the status still follows
// from stock and open orders.

func complete(t *testing.T, ctx context.Context, s *db.Store, orderID int64) {
	t.Helper()
	o, err := s.UpdateOrder(ctx, orderID, db.OrderUpdate{Complete: ptr(true)})
	if err != nil {
		t.Fatalf("complete order %d: %v", orderID, err)
	}
	if !o.Complete {
		t.Fatalf("order %d after completing: complete = false", orderID)
	}
}

func setStock(t *testing.T, ctx context.Context, s *db.Store, petID, n int64) *db.InventoryItem {
	t.Helper()
	it, err := s.SetInventory(ctx, petID, db.InventoryUpdate{Quantity: &n})
	if err != nil {
		t.Fatalf("set stock of %d to %d: %v", petID, n, err)
	}
	return it
}

func TestRuleOrderPlaced(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OK", func(t *testing.T) {
			s, p := storeWithPet(t, open, 5)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
			if o.Quantity != 2 || o.PetID != p.ID || o.Complete {
				t.Fatalf("order = %+v, want 2 of pet %d, open", o, p.ID)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 3)
		})
		t.Run("OKLastUnitsMakePending", func(t *testing.T) {
			s, p := storeWithPet(t, open, 3)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 3)
			wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
		})
		for name, tc := range map[string]struct {
			stock, ordered int64 // the pet's stock, then all of it ordered or not
			status         string
		}{
			"ErrPetNotAvailablePending": {1, 1, db.StatusPending},
			"ErrPetNotAvailableSold":    {0, 0, db.StatusSold},
		} {
			t.Run(name, func(t *testing.T) {
				s, p := storeWithPet(t, open, tc.stock)
				if tc.ordered > 0 {
					mustOrder(t, ctx, s, db.Owner{}, p.ID, tc.ordered)
				}
				wantRule(t, ctx, s, p.ID, tc.status, 0)
				_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
				wantCode(t, err, db.EPetNotAvailable)
				wantRule(t, ctx, s, p.ID, tc.status, 0)
			})
		}
		t.Run("ErrInsufficientStock", func(t *testing.T) {
			s, p := storeWithPet(t, open, 2)
			_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(3))})
			wantCode(t, err, db.EInsufficientStock)
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 2)
			if n := countOpenOrders(t, ctx, s, p.ID); n != 0 {
				t.Fatalf("open orders after a refused order: got %d, want 0", n)
			}
		})
	})
}

func TestRuleOrderCancelled(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OK", func(t *testing.T) {
			s, p := storeWithPet(t, open, 5)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
			if err := s.CancelOrder(ctx, o.ID, nil); err != nil {
				t.Fatal(err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 5)
		})
		t.Run("OKPendingBecomesAvailable", func(t *testing.T) {
			s, p := storeWithPet(t, open, 4)
			a := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 3)
			wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
			if err := s.CancelOrder(ctx, a.ID, nil); err != nil {
				t.Fatal(err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 1)
		})
		t.Run("OKSoldByHandThenCancelled", func(t *testing.T) {
			// Stock set to 0 by hand with an open order: pending; the
			// cancel returns the order's units.
			s, p := storeWithPet(t, open, 3)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
			setStock(t, ctx, s, p.ID, 0)
			wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
			if err := s.CancelOrder(ctx, o.ID, nil); err != nil {
				t.Fatal(err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 2)
		})
	})
}

func TestRuleOrderCompleted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OKSold", func(t *testing.T) {
			s, p := storeWithPet(t, open, 2)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
			wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
			complete(t, ctx, s, o.ID)
			wantRule(t, ctx, s, p.ID, db.StatusSold, 0)
		})
		t.Run("OKOtherOpenStaysPending", func(t *testing.T) {
			s, p := storeWithPet(t, open, 2)
			a := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			b := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			complete(t, ctx, s, a.ID)
			wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
			complete(t, ctx, s, b.ID)
			wantRule(t, ctx, s, p.ID, db.StatusSold, 0)
		})
		t.Run("OKStockStaysAvailable", func(t *testing.T) {
			s, p := storeWithPet(t, open, 3)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			complete(t, ctx, s, o.ID)
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 2)
		})
	})
}

func TestRuleInventorySet(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OKPositiveFromSold", func(t *testing.T) {
			s, p := storeWithPet(t, open, 0)
			it := setStock(t, ctx, s, p.ID, 7)
			if it.Status != db.StatusAvailable || it.Quantity != 7 {
				t.Fatalf("returned item = %+v, want available/7", it)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 7)
		})
		t.Run("OKPositiveFromPending", func(t *testing.T) {
			s, p := storeWithPet(t, open, 1)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			setStock(t, ctx, s, p.ID, 4)
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 4)
		})
		t.Run("OKZeroWithOpenOrdersIsPending", func(t *testing.T) {
			s, p := storeWithPet(t, open, 5)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			it := setStock(t, ctx, s, p.ID, 0)
			if it.Status != db.StatusPending || it.Quantity != 0 {
				t.Fatalf("returned item = %+v, want pending/0", it)
			}
			wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
		})
		t.Run("OKZeroWithoutOpenOrdersIsSold", func(t *testing.T) {
			s, p := storeWithPet(t, open, 5)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			complete(t, ctx, s, o.ID)
			setStock(t, ctx, s, p.ID, 0)
			wantRule(t, ctx, s, p.ID, db.StatusSold, 0)
		})
		t.Run("ErrValidationFailed", func(t *testing.T) {
			s, p := storeWithPet(t, open, 5)
			for _, q := range []*int64{nil, ptr(int64(-1)), ptr(int64(db.MaxInventoryQuantity + 1))} {
				_, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: q})
				wantField(t, err, "quantity")
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 5)
			setStock(t, ctx, s, p.ID, db.MaxInventoryQuantity)
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, db.MaxInventoryQuantity)
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			s, _ := storeWithPet(t, open, 5)
			_, err := s.SetInventory(ctx, 4242, db.InventoryUpdate{Quantity: ptr(int64(1))})
			wantCode(t, err, db.ENotFound)
		})
	})
}

// setStatus sends a full replace of the pet with the given status (nil: none).
func setStatus(ctx context.Context, s *db.Store, p *db.Pet, status *string) (*db.Pet, error) {
	return s.UpdatePet(ctx, p.ID, db.NewPet{Name: ptr(p.Name), CategoryID: ptr(p.CategoryID), Status: status})
}

func TestRuleStaffSetsStatus(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		for name, tc := range map[string]struct {
			stock     int64
			to        string
			wantStock int64
		}{
			"OKAvailableToSold": {4, db.StatusSold, 0},
			"OKSoldToAvailable": {0, db.StatusAvailable, 1},
		} {
			t.Run(name, func(t *testing.T) {
				s, p := storeWithPet(t, open, tc.stock)
				got, err := setStatus(ctx, s, p, ptr(tc.to))
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tc.to || got.Stock != tc.wantStock {
					t.Fatalf("returned pet = %s/%d, want %s/%d", got.Status, got.Stock, tc.to, tc.wantStock)
				}
				wantRule(t, ctx, s, p.ID, tc.to, tc.wantStock)
			})
		}
		t.Run("OKAvailableToSoldAfterCompletedOrders", func(t *testing.T) {
			s, p := storeWithPet(t, open, 4)
			complete(t, ctx, s, mustOrder(t, ctx, s, db.Owner{}, p.ID, 1).ID)
			if _, err := setStatus(ctx, s, p, ptr(db.StatusSold)); err != nil {
				t.Fatal(err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusSold, 0)
		})
		t.Run("ErrPetHasOpenOrders", func(t *testing.T) {
			s, p := storeWithPet(t, open, 4)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			_, err := setStatus(ctx, s, p, ptr(db.StatusSold))
			wantCode(t, err, db.EPetHasOpenOrders)
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 3)
		})
		t.Run("ErrInvalidTransition", func(t *testing.T) {
			for name, tc := range map[string]struct {
				stock   int64
				pending bool // order everything first
				to      string
			}{
				"availableToPending": {stock: 2, to: db.StatusPending},
				"soldToPending":      {stock: 0, to: db.StatusPending},
				"pendingToAvailable": {stock: 2, pending: true, to: db.StatusAvailable},
				"pendingToSold":      {stock: 2, pending: true, to: db.StatusSold},
			} {
				t.Run(name, func(t *testing.T) {
					s, p := storeWithPet(t, open, tc.stock)
					if tc.pending {
						mustOrder(t, ctx, s, db.Owner{}, p.ID, tc.stock)
					}
					status, stock := petState(t, ctx, s, p.ID)
					_, err := setStatus(ctx, s, p, ptr(tc.to))
					wantCode(t, err, db.EInvalidTransition)
					wantRule(t, ctx, s, p.ID, status, stock)
				})
			}
		})
		t.Run("OKNoStatusKeepsIt", func(t *testing.T) {
			for name, stock := range map[string]int64{"available": 3, "sold": 0} {
				t.Run(name, func(t *testing.T) {
					s, p := storeWithPet(t, open, stock)
					p.Name = "Renamed"
					got, err := setStatus(ctx, s, p, nil)
					if err != nil {
						t.Fatal(err)
					}
					if got.Name != "Renamed" || got.Status != name {
						t.Fatalf("returned pet = %q %s, want %q %s", got.Name, got.Status, "Renamed", name)
					}
					wantRule(t, ctx, s, p.ID, name, stock)
				})
			}
		})
		t.Run("OKSameStatusIsNoChange", func(t *testing.T) {
			for name, tc := range map[string]struct {
				stock   int64
				pending bool
			}{
				db.StatusAvailable: {stock: 3},
				db.StatusSold:      {stock: 0},
				db.StatusPending:   {stock: 2, pending: true},
			} {
				t.Run(name, func(t *testing.T) {
					s, p := storeWithPet(t, open, tc.stock)
					wantStock := tc.stock
					if tc.pending {
						mustOrder(t, ctx, s, db.Owner{}, p.ID, tc.stock)
						wantStock = 0
					}
					if _, err := setStatus(ctx, s, p, ptr(name)); err != nil {
						t.Fatalf("same status %s: %v", name, err)
					}
					wantRule(t, ctx, s, p.ID, name, wantStock)
				})
			}
		})
	})
}

func TestRulePetCreated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		for _, tc := range []struct {
			name   string
			status *string
			want   string
			stock  int64
		}{
			{"OKDefaultAvailable", nil, db.StatusAvailable, 1},
			{"OKAvailable", ptr(db.StatusAvailable), db.StatusAvailable, 1},
			{"OKSold", ptr(db.StatusSold), db.StatusSold, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := open(t)
				c := MustCreateCategory(t, ctx, s, "Dogs")
				p, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Status: tc.status})
				if err != nil {
					t.Fatal(err)
				}
				if p.Status != tc.want || p.Stock != tc.stock {
					t.Fatalf("returned pet = %s/%d, want %s/%d", p.Status, p.Stock, tc.want, tc.stock)
				}
				wantRule(t, ctx, s, p.ID, tc.want, tc.stock)
			})
		}
		t.Run("ErrValidationFailed", func(t *testing.T) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Dogs")
			_, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Status: ptr(db.StatusPending)})
			wantField(t, err, "status")
			ps, _, err := s.FindPets(ctx, db.PetFilter{})
			if err != nil || len(ps) != 0 {
				t.Fatalf("pets after a refused create: got %d (%v), want 0", len(ps), err)
			}
		})
	})
}
