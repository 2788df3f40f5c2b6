package db_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// ev is an expected event: its type and the resource its data must equal.
type ev struct {
	Type string
	Data any
}

// wantOrderEvents expects, after id, the inventory.updated of the order's
// pet and then the order's own event, as every order change that moves
// stock or status writes them.
func wantOrderEvents(t *testing.T, ctx context.Context, s *db.Store, after int64, item db.InventoryItem, typ string, order any) {
	t.Helper()
	wantEvents(t, ctx, s, after, ev{db.EventInventoryUpdated, item}, ev{typ, order})
}

// lastEvent is the newest event id, for "what happened after here".
func lastEvent(t *testing.T, ctx context.Context, s *db.Store) int64 {
	t.Helper()
	id, err := s.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wantEvents compares the events after id with want: types in order, data
// as JSON values (field order and spacing do not matter), time pinned.
func wantEvents(t *testing.T, ctx context.Context, s *db.Store, after int64, want ...ev) {
	t.Helper()
	evs, err := s.EventsAfter(ctx, after, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got, exp []ev
	for _, e := range evs {
		var data any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("event %d data %q: %v", e.ID, e.Data, err)
		}
		got = append(got, ev{e.Type, data})
		if now := s.Now(); !e.CreatedAt.Equal(now) {
			t.Errorf("event %d createdAt: got %v, want %v", e.ID, e.CreatedAt, now)
		}
	}
	for _, w := range want {
		b, err := json.Marshal(w.Data)
		if err != nil {
			t.Fatal(err)
		}
		var data any
		_ = json.Unmarshal(b, &data)
		exp = append(exp, ev{w.Type, data})
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Fatalf("events after %d (-want +got):\n%s", after, diff)
	}
}

// eventStore opens a store with a pinned clock (every event is written at
// its time), a category and a pet of stock 3.
func eventStore(t *testing.T, open dbtest.Open) (*db.Store, *db.Pet) {
	t.Helper()
	ctx := context.Background()
	s := open(t)
	pinClock(t, s, dbtest.Present(t))
	c := MustCreateCategory(t, ctx, s, "Dogs")
	return s, MustCreatePet(t, ctx, s, c.ID, "Rex", 3)
}

// mustFind reads one resource by id with find, or fails the test.
func mustFind[T any](t *testing.T, ctx context.Context, find func(context.Context, int64) (T, error), id int64) T {
	t.Helper()
	v, err := find(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OKPetCreated", func(t *testing.T) {
			s, rex := eventStore(t, open)
			before := lastEvent(t, ctx, s)
			p, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Tom"), CategoryID: &rex.CategoryID, Status: ptr(db.StatusSold)})
			if err != nil {
				t.Fatal(err)
			}
			wantEvents(t, ctx, s, before, ev{db.EventPetCreated, mustFind(t, ctx, s.FindPetByID, p.ID)})
		})
		t.Run("OKInventoryUpdated", func(t *testing.T) {
			s, p := eventStore(t, open)
			before := lastEvent(t, ctx, s)
			setStock(t, ctx, s, p.ID, 9)
			wantEvents(t, ctx, s, before, ev{db.EventInventoryUpdated, mustFind(t, ctx, s.FindInventoryItem, p.ID)})
		})
		t.Run("OKOrderCreated", func(t *testing.T) {
			s, p := eventStore(t, open)
			before := lastEvent(t, ctx, s)
			_, ship := shipDate(t)
			o, err := s.PlaceOrder(ctx, db.Owner{ShopperID: "b"}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(2)), ShipDate: &ship})
			if err != nil {
				t.Fatal(err)
			}
			shown, err := s.FindOrderByID(ctx, o.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantOrderEvents(t, ctx, s, before, db.InventoryItem{PetID: p.ID, Quantity: 1, Status: db.StatusAvailable}, db.EventOrderCreated, shown)
		})
		t.Run("OKOrderCompleted", func(t *testing.T) {
			s, p := eventStore(t, open)
			a := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			b := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
			before := lastEvent(t, ctx, s)
			complete(t, ctx, s, a.ID)
			a.Complete = true
			wantEvents(t, ctx, s, before, ev{db.EventOrderCompleted, a})
			// The last open order of an empty pet sells it.
			before = lastEvent(t, ctx, s)
			complete(t, ctx, s, b.ID)
			b.Complete = true
			wantOrderEvents(t, ctx, s, before, db.InventoryItem{PetID: p.ID, Quantity: 0, Status: db.StatusSold}, db.EventOrderCompleted, b)
		})
		t.Run("OKOrderUpdated", func(t *testing.T) {
			s, p := eventStore(t, open)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			before := lastEvent(t, ctx, s)
			_, ship := shipDate(t)
			if _, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{ShipDate: &ship}); err != nil {
				t.Fatal(err)
			}
			shown, _ := s.FindOrderByID(ctx, o.ID, nil)
			wantEvents(t, ctx, s, before, ev{db.EventOrderUpdated, shown})
		})
		t.Run("OKOrderCancelled", func(t *testing.T) {
			s, p := eventStore(t, open)
			o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 3)
			before := lastEvent(t, ctx, s)
			if err := s.CancelOrder(ctx, o.ID, nil); err != nil {
				t.Fatal(err)
			}
			wantOrderEvents(t, ctx, s, before, db.InventoryItem{PetID: p.ID, Quantity: 3, Status: db.StatusAvailable}, db.EventOrderCancelled, o)
		})
		t.Run("OKPetUpdated", func(t *testing.T) {
			s, p := eventStore(t, open)
			before := lastEvent(t, ctx, s)
			p.Name = "Rexy"
			if _, err := setStatus(ctx, s, p, nil); err != nil {
				t.Fatal(err)
			}
			wantEvents(t, ctx, s, before, ev{db.EventPetUpdated, mustFind(t, ctx, s.FindPetByID, p.ID)})
			// A status set by hand that empties the stock also updates the inventory.
			before = lastEvent(t, ctx, s)
			if _, err := setStatus(ctx, s, p, ptr(db.StatusSold)); err != nil {
				t.Fatal(err)
			}
			wantEvents(t, ctx, s, before,
				ev{db.EventInventoryUpdated, mustFind(t, ctx, s.FindInventoryItem, p.ID)},
				ev{db.EventPetUpdated, mustFind(t, ctx, s.FindPetByID, p.ID)})
		})
		t.Run("OKPetDeleted", func(t *testing.T) {
			s, p := eventStore(t, open)
			before := lastEvent(t, ctx, s)
			if err := s.DeletePet(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			wantEvents(t, ctx, s, before, ev{db.EventPetDeleted, map[string]int64{"id": p.ID}})
		})
		t.Run("ErrRolledBackWritesNoEvent", func(t *testing.T) {
			s, p := eventStore(t, open)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 1) // an open order blocks sold and delete
			done := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
			complete(t, ctx, s, done.ID)
			var calls int
			s.OnEvent(func() { calls++ })
			before := lastEvent(t, ctx, s)
			one, nine := int64(1), int64(9)
			fails := map[string]func() error{
				"checkout": func() error {
					_, err := s.PlaceCheckout(ctx, "shopper", 1000, buyer, []db.NewOrder{{PetID: &p.ID, Quantity: &one}, {PetID: &p.ID, Quantity: &nine}})
					return err
				},
				"order": func() error {
					_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: &nine})
					return err
				},
				"toPending":  func() error { _, err := setStatus(ctx, s, p, ptr(db.StatusPending)); return err },
				"toSold":     func() error { _, err := setStatus(ctx, s, p, ptr(db.StatusSold)); return err },
				"deletePet":  func() error { return s.DeletePet(ctx, p.ID) },
				"cancelDone": func() error { return s.CancelOrder(ctx, done.ID, nil) },
				"reopen":     func() error { _, err := s.UpdateOrder(ctx, done.ID, db.OrderUpdate{Complete: ptr(false)}); return err },
			}
			for name, fn := range fails {
				if err := fn(); err == nil {
					t.Fatalf("%s: succeeded, want a refusal", name)
				}
				if got := lastEvent(t, ctx, s); got != before {
					t.Fatalf("%s: last event id got %d, want %d (nothing written)", name, got, before)
				}
			}
			if calls != 0 {
				t.Fatalf("hook calls after refused changes: got %d, want 0", calls)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 1)
		})
		t.Run("OKOnEventAfterCommit", func(t *testing.T) {
			s, p := eventStore(t, open)
			var mu sync.Mutex
			var seen []int64 // the newest event id another connection saw in each call
			s.OnEvent(func() {
				id, err := s.LastEventID(ctx)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				seen = append(seen, id)
				mu.Unlock()
			})
			setStock(t, ctx, s, p.ID, 5)
			afterStock := lastEvent(t, ctx, s)
			mustOrder(t, ctx, s, db.Owner{}, p.ID, 1) // two events, one transaction
			afterOrder := lastEvent(t, ctx, s)
			MustCreateCategory(t, ctx, s, "Cats") // no event
			if _, _, err := s.CreateAPIKey(ctx, newKey("k", db.RoleCustomer, db.PlanFree)); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]int64{afterStock, afterOrder}, seen); diff != "" {
				t.Fatalf("ids visible in the hook, one call per transaction (-want +got):\n%s", diff)
			}
		})
	})
}

func TestEventsAfter(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		if id := lastEvent(t, ctx, s); id != 0 {
			t.Fatalf("last event id of an empty store: got %d, want 0", id)
		}
		if evs, err := s.EventsAfter(ctx, 0, 10); err != nil || len(evs) != 0 {
			t.Fatalf("events of an empty store: got %d (%v), want 0", len(evs), err)
		}
		c := MustCreateCategory(t, ctx, s, "Dogs")
		p := MustCreatePet(t, ctx, s, c.ID, "Rex", 1) // pet.created
		for n := int64(2); n <= 5; n++ {
			setStock(t, ctx, s, p.ID, n) // inventory.updated ×4
		}
		var ids []int64
		var quantities []int64
		for after := int64(0); ; {
			page, err := s.EventsAfter(ctx, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 2 {
				t.Fatalf("page of limit 2: got %d events", len(page))
			}
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				if e.ID <= after {
					t.Fatalf("event %d after %d: ids must increase", e.ID, after)
				}
				ids = append(ids, e.ID)
				var it db.InventoryItem
				if e.Type == db.EventInventoryUpdated && json.Unmarshal(e.Data, &it) == nil {
					quantities = append(quantities, it.Quantity)
				}
				after = e.ID
			}
		}
		if len(ids) != 5 {
			t.Fatalf("events: got %d (%v), want 5", len(ids), ids)
		}
		if diff := cmp.Diff([]int64{2, 3, 4, 5}, quantities); diff != "" {
			t.Fatalf("inventory events in order (-want +got):\n%s", diff)
		}
		if got := lastEvent(t, ctx, s); got != ids[len(ids)-1] {
			t.Fatalf("last event id: got %d, want %d", got, ids[len(ids)-1])
		}
		rest, err := s.EventsAfter(ctx, ids[2], 100)
		if err != nil || len(rest) != 2 || rest[0].ID != ids[3] {
			t.Fatalf("resume after %d: got %d events (%v), want ids %v", ids[2], len(rest), err, ids[3:])
		}
	})
}
