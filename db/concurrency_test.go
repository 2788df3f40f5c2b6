package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// run starts n goroutines at once and waits for all of them.
func run(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// codes counts results by error code ("" for success) and keeps one
// error of each code to show.
type codes struct {
	mu     sync.Mutex
	n      map[string]int
	sample map[string]error
}

func (c *codes) add(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n, c.sample = map[string]int{}, map[string]error{}
	}
	code := db.ErrorCode(err)
	c.n[code]++
	if c.sample[code] == nil {
		c.sample[code] = err
	}
}

// wantOnly fails when a code other than the allowed ones occurred.
func (c *codes) wantOnly(t *testing.T, allowed ...string) {
	t.Helper()
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for code, n := range c.n {
		if !ok[code] {
			t.Errorf("%d results with code %q (e.g. %v), want only %q", n, code, c.sample[code], allowed)
		}
	}
}

func TestConcurrentOrdersNeverOversell(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 25)
		var got codes
		run(200, func(int) {
			_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
			got.add(err)
		})
		got.wantOnly(t, "", db.EInsufficientStock, db.EPetNotAvailable)
		if ok := got.n[""]; ok != 25 {
			t.Fatalf("accepted orders: got %d, want 25 (%v)", ok, got.n)
		}
		if refused := got.n[db.EInsufficientStock] + got.n[db.EPetNotAvailable]; refused != 175 {
			t.Fatalf("refused orders: got %d, want 175", refused)
		}
		wantRule(t, ctx, s, p.ID, db.StatusPending, 0)
		if n := countOpenOrders(t, ctx, s, p.ID); n != 25 {
			t.Fatalf("open orders: got %d, want 25", n)
		}
		replayStock(t, ctx, s, p.ID)
	})
}

func TestConcurrentCancelCompletePlace(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 30)
		orders := make([]*db.Order, 30)
		run(30, func(i int) {
			o, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
			if err != nil {
				t.Errorf("place order %d: %v", i, err)
			}
			orders[i] = o
		})
		if t.Failed() {
			t.FailNow()
		}
		wantRule(t, ctx, s, p.ID, db.StatusPending, 0)

		// Ten cancels, ten completes and twenty new orders at once. Only
		// the cancelled units can be ordered again.
		var cancels, completes, places codes
		run(40, func(i int) {
			switch {
			case i < 10:
				cancels.add(s.CancelOrder(ctx, orders[i].ID, nil))
			case i < 20:
				_, err := s.UpdateOrder(ctx, orders[i].ID, db.OrderUpdate{Complete: ptr(true)})
				completes.add(err)
			default:
				_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
				places.add(err)
			}
		})
		cancels.wantOnly(t, "")
		completes.wantOnly(t, "")
		places.wantOnly(t, "", db.EInsufficientStock, db.EPetNotAvailable)
		placed := int64(places.n[""])
		if placed > 10 {
			t.Fatalf("new orders accepted: got %d, want at most the 10 cancelled units", placed)
		}
		stock, openOrders := 10-placed, int(10+placed)
		wantRule(t, ctx, s, p.ID, derivedStatus(stock, openOrders), stock)
		if n := countOpenOrders(t, ctx, s, p.ID); n != openOrders {
			t.Fatalf("open orders: got %d, want %d", n, openOrders)
		}
		if ids := orderIDs(t, ctx, s, db.OrderFilter{PetID: p.ID, Complete: ptr(false)}); len(ids) != openOrders {
			t.Fatalf("listed open orders: got %d, want %d", len(ids), openOrders)
		}

		// Completing every open order while staff empty the stock must end
		// sold, whichever transaction commits last.
		openIDs := orderIDs(t, ctx, s, db.OrderFilter{PetID: p.ID, Complete: ptr(false)})
		var last codes
		run(len(openIDs)+5, func(i int) {
			if i < len(openIDs) {
				_, err := s.UpdateOrder(ctx, openIDs[i], db.OrderUpdate{Complete: ptr(true)})
				last.add(err)
				return
			}
			_, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: ptr(int64(0))})
			last.add(err)
		})
		last.wantOnly(t, "")
		wantRule(t, ctx, s, p.ID, db.StatusSold, 0)
		replayStock(t, ctx, s, p.ID)
	})
}

func TestConcurrentRestocks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 20)
		pre := make([]*db.Order, 10)
		for i := range pre {
			pre[i] = mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
		}
		var places, others codes
		run(70, func(i int) {
			switch {
			case i < 5:
				others.add(s.CancelOrder(ctx, pre[i].ID, nil))
			case i < 10:
				_, err := s.UpdateOrder(ctx, pre[i].ID, db.OrderUpdate{Complete: ptr(true)})
				others.add(err)
			case i < 20:
				_, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: ptr(int64(i % 4))})
				others.add(err)
			default:
				_, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1 + i%2))})
				places.add(err)
			}
		})
		others.wantOnly(t, "")
		places.wantOnly(t, "", db.EInsufficientStock, db.EPetNotAvailable)
		wantInvariant(t, ctx, s, p.ID)
		if got, want := countOpenOrders(t, ctx, s, p.ID), places.n[""]; got != want {
			t.Fatalf("open orders: got %d, want the %d accepted (the 10 earlier ones were cancelled or completed)", got, want)
		}
		replayStock(t, ctx, s, p.ID)
	})
}

// TestConcurrentCheckouts places multi-line orders naming the same pets in
// opposite orders while staff restock them: every checkout must either
// succeed or fail with a store rule, never with a deadlock.
func TestConcurrentCheckouts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		a := MustCreatePet(t, ctx, s, c.ID, "Rex", 1000)
		b := MustCreatePet(t, ctx, s, c.ID, "Tom", 1000)
		line := func(petID int64) db.NewOrder { return db.NewOrder{PetID: &petID, Quantity: ptr(int64(1))} }
		var got codes
		run(40, func(i int) {
			var err error
			switch i % 4 {
			case 0:
				_, err = s.PlaceCheckout(ctx, fmt.Sprint("shopper-", i), 10, buyer, []db.NewOrder{line(a.ID), line(b.ID)})
			case 1:
				_, err = s.PlaceCheckout(ctx, fmt.Sprint("shopper-", i), 10, buyer, []db.NewOrder{line(b.ID), line(a.ID)})
			case 2:
				_, err = s.SetInventory(ctx, a.ID, db.InventoryUpdate{Quantity: ptr(int64(1000))})
			default:
				_, err = s.SetInventory(ctx, b.ID, db.InventoryUpdate{Quantity: ptr(int64(1000))})
			}
			got.add(err)
		})
		got.wantOnly(t, "")
		if n := countOpenOrders(t, ctx, s, a.ID); n != 20 {
			t.Fatalf("open orders of pet a: got %d, want 20", n)
		}
		wantInvariant(t, ctx, s, a.ID)
		wantInvariant(t, ctx, s, b.ID)
		replayStock(t, ctx, s, a.ID)
		replayStock(t, ctx, s, b.ID)
	})
}

// replayStock walks the outbox in id order and checks that every stock
// change of the pet follows from the one committed before it: an order takes
// its quantity, a cancel returns it. A transaction's events are contiguous
// (SQLite has one writer; PostgreSQL holds an advisory lock until commit),
// and order.created and order.cancelled always follow their own
// inventory.updated, so the event after an inventory.updated names its
// cause. Anything else (a restock, a completion, a status set by hand) may
// set any value. A lost update (two transactions starting from the same
// stock) breaks the chain. The last inventory.updated must equal the
// inventory now.
func replayStock(t *testing.T, ctx context.Context, s *db.Store, petID int64) {
	t.Helper()
	var evs []db.Event
	for after := int64(0); ; {
		page, err := s.EventsAfter(ctx, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		evs = append(evs, page...)
		after = page[len(page)-1].ID
	}
	var stock int64 = -1
	var last db.InventoryItem
	for i, ev := range evs {
		if ev.Type != db.EventInventoryUpdated {
			continue
		}
		var it db.InventoryItem
		if err := json.Unmarshal(ev.Data, &it); err != nil {
			t.Fatalf("event %d: %v", ev.ID, err)
		}
		if it.PetID != petID {
			continue
		}
		var o db.Order
		cause := ""
		if i+1 < len(evs) {
			cause = evs[i+1].Type
			_ = json.Unmarshal(evs[i+1].Data, &o)
		}
		want := it.Quantity // a restock may set anything
		switch {
		case stock < 0:
		case cause == db.EventOrderCreated && o.PetID == petID:
			want = stock - o.Quantity
		case cause == db.EventOrderCancelled && o.PetID == petID:
			want = stock + o.Quantity
		}
		if it.Quantity != want {
			t.Fatalf("event %d (%s): stock %d after %d, want %d: a lost update", ev.ID, cause, it.Quantity, stock, want)
		}
		stock, last = it.Quantity, it
	}
	now, err := s.FindInventoryItem(ctx, petID)
	if err != nil {
		t.Fatal(err)
	}
	if *now != last {
		t.Fatalf("inventory now %+v, last inventory.updated %+v", *now, last)
	}
}
