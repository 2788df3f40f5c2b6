package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestOrderBatchRefusesOnlyItself places one batch (group commit) whose
// orders the rule answers differently: two orders for one pet's last two
// units (the first placed, the second, for two, refused: as two
// transactions would), an
// order for a sold pet and one for a pet that does not exist. The refused
// ones leave nothing; the placed ones share the batch's commit time, and
// each has its own events and price snapshot.
func TestOrderBatchRefusesOnlyItself(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		last := MustCreatePet(t, ctx, s, c.ID, "Last", 2)
		sold := MustCreatePet(t, ctx, s, c.ID, "Sold", 0)
		many := MustCreatePet(t, ctx, s, c.ID, "Many", 5)
		before := lastEvent(t, ctx, s)
		orders, errs := s.PlaceLoneOrdersTogether(ctx, db.Owner{}, []db.NewOrder{
			{PetID: &last.ID, Quantity: ptr(int64(1))},
			{PetID: &sold.ID, Quantity: ptr(int64(1))},
			{PetID: &last.ID, Quantity: ptr(int64(2))},
			{PetID: ptr(int64(999_999)), Quantity: ptr(int64(1))},
			{PetID: &many.ID, Quantity: ptr(int64(2))},
		})
		for i, want := range []string{"", db.EPetNotAvailable, db.EInsufficientStock, db.EValidationFailed, ""} {
			if got := db.ErrorCode(errs[i]); got != want || (want == "") != (errs[i] == nil) {
				t.Errorf("order %d: error %v (code %q), want code %q", i, errs[i], got, want)
			}
		}
		if orders[0].ID == 0 || orders[4].ID == 0 || !orders[0].CreatedAt.Equal(orders[4].CreatedAt) {
			t.Errorf("placed orders %+v and %+v: want ids and one commit time", orders[0], orders[4])
		}
		if orders[4].UnitPrice != many.Price || orders[4].Total != many.Price.Times(2) {
			t.Errorf("order of 2 of %q: unit price %v total %v, want the pet's %v", many.Name, orders[4].UnitPrice, orders[4].Total, many.Price)
		}
		wantState(t, ctx, s, last.ID, db.StatusAvailable, 1)
		wantState(t, ctx, s, many.ID, db.StatusAvailable, 3)
		if n := countOpenOrders(t, ctx, s, last.ID); n != 1 {
			t.Errorf("pet %q: %d open orders, want 1", last.Name, n)
		}
		if got := eventsSince(t, ctx, s, before); got != 4 {
			t.Errorf("the batch wrote %d events, want 4 (stock and order of each placed order)", got)
		}
	})
}

// TestOrderBatchFaultFailsOnlyItsOrder makes one order of a batch fail
// with an error that is not the rule's (a fault after its writes): the
// batch's transaction is rolled back whole, and every other order of it
// is placed again on its own, so only that order fails and nothing of it
// stays.
func TestOrderBatchFaultFailsOnlyItsOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Cats")
		a := MustCreatePet(t, ctx, s, c.ID, "A", 3)
		bad := MustCreatePet(t, ctx, s, c.ID, "Bad", 3)
		z := MustCreatePet(t, ctx, s, c.ID, "Z", 3)
		s.FailLoneOrdersOf(bad.ID)
		before := lastEvent(t, ctx, s)
		orders, errs := s.PlaceLoneOrdersTogether(ctx, db.Owner{}, []db.NewOrder{
			{PetID: &z.ID, Quantity: ptr(int64(1))},
			{PetID: &bad.ID, Quantity: ptr(int64(1))},
			{PetID: &a.ID, Quantity: ptr(int64(2))},
		})
		if errs[0] != nil || errs[2] != nil || db.ErrorCode(errs[1]) != db.EInternal {
			t.Fatalf("errors %v: want the faulty order's alone, and not a rule's", errs)
		}
		wantState(t, ctx, s, z.ID, db.StatusAvailable, 2)
		wantState(t, ctx, s, bad.ID, db.StatusAvailable, 3)
		wantState(t, ctx, s, a.ID, db.StatusAvailable, 1)
		if n := countOpenOrders(t, ctx, s, bad.ID); n != 0 {
			t.Errorf("the failed order left %d orders", n)
		}
		for _, i := range []int{0, 2} {
			if got, err := s.FindOrderByID(ctx, orders[i].ID, nil); err != nil || got.PetID != orders[i].PetID {
				t.Errorf("order %d (id %d): %+v, %v", i, orders[i].ID, got, err)
			}
		}
		if got := eventsSince(t, ctx, s, before); got != 4 {
			t.Errorf("%d events, want 4 (two orders placed)", got)
		}
	})
}

// TestOrderBatchAuditsEachOrder places one batch of orders from several
// requests, some by staff keys (their contexts carry an origin): each
// placed staff order gets its audit entry with its own request's origin,
// whatever the batch's first order was; a customer's order and a refused
// one get none.
func TestOrderBatchAuditsEachOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 5)
		staff := func(id int64, name string) context.Context {
			return db.WithOrigin(ctx, db.Origin{Actor: db.KeyActor(id, name), RequestID: "req-" + name, IP: "192.0.2.1"})
		}
		ctxs := []context.Context{ctx, staff(1, "ann"), staff(2, "bob"), staff(3, "cy")}
		orders, errs := s.PlaceLoneOrdersFrom(ctxs, db.Owner{}, []db.NewOrder{
			{PetID: &rex.ID, Quantity: ptr(int64(1))},
			{PetID: &rex.ID, Quantity: ptr(int64(1))},
			{PetID: &rex.ID, Quantity: ptr(int64(100))},
			{PetID: &rex.ID, Quantity: ptr(int64(2))},
		})
		if errs[0] != nil || errs[1] != nil || db.ErrorCode(errs[2]) != db.EInsufficientStock || errs[3] != nil {
			t.Fatalf("errors %v: want the third order's insufficient_stock alone", errs)
		}
		es, _ := mustFindAudit(t, s, db.AuditFilter{Action: db.AuditOrderCreate}, db.Page{})
		got := map[string]string{}
		for _, e := range es {
			got[e.Target.ID] = e.Actor.Name + " " + e.RequestID
		}
		want := map[string]string{
			strconv.FormatInt(orders[1].ID, 10): "ann req-ann",
			strconv.FormatInt(orders[3].ID, 10): "cy req-cy",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("order.create entries by order = %v, want %v", got, want)
		}
	})
}

// TestGroupCommitNoOversell places 1,200 orders from 32 goroutines through
// two stores on one database (two instances), for 20 pets with 60 units
// each, some sold out from the start: no pet sells more than it had, every
// placed order is a row as answered with its two events, every refusal is
// the rule's, and the orders went in batches of more than one.
func TestGroupCommitNoOversell(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		a, b := dbtest.OpenURL(t, url), dbtest.OpenURL(t, url)
		c := MustCreateCategory(t, ctx, a, "Birds")
		const stock = 60
		var pets []*db.Pet
		for i := range 20 {
			pets = append(pets, MustCreatePet(t, ctx, a, c.ID, fmt.Sprint("Bird ", i), stock))
		}
		soldOut := MustCreatePet(t, ctx, a, c.ID, "Gone", 0)
		before := lastEvent(t, ctx, a)

		type answer struct {
			order *db.Order
			err   error
		}
		const workers, each = 32, 38
		answers := make([][]answer, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := []*db.Store{a, b}[w%2]
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for range each {
					pet := pets[rng.IntN(len(pets))].ID
					if rng.IntN(20) == 0 {
						pet = soldOut.ID
					}
					o, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &pet, Quantity: ptr(int64(1 + rng.IntN(2)))})
					if o == nil {
						o = &db.Order{PetID: pet}
					}
					answers[w] = append(answers[w], answer{o, err})
				}
			}()
		}
		wg.Wait()

		sold := map[int64]int64{}
		placed := map[int64]*db.Order{}
		refusals := map[string]int{}
		for _, as := range answers {
			for _, an := range as {
				switch code := db.ErrorCode(an.err); {
				case an.err == nil:
					sold[an.order.PetID] += an.order.Quantity
					placed[an.order.ID] = an.order
				case code == db.EInsufficientStock || code == db.EPetNotAvailable:
					refusals[code]++
				default:
					t.Fatalf("order of pet %d: %v", an.order.PetID, an.err)
				}
			}
		}
		for _, p := range pets {
			status, left := petState(t, ctx, a, p.ID)
			if left < 0 || left+sold[p.ID] != stock {
				t.Errorf("pet %d: %d left + %d sold, want %d", p.ID, left, sold[p.ID], stock)
			}
			if want := derivedStatus(left, countOpenOrders(t, ctx, a, p.ID)); status != want {
				t.Errorf("pet %d: %s with %d left, want %s", p.ID, status, left, want)
			}
		}
		if refusals[db.EPetNotAvailable] == 0 || refusals[db.EInsufficientStock] == 0 {
			t.Errorf("refusals %v: the sold-out pet and the pets sold out on the way should both refuse", refusals)
		}
		for id, o := range placed {
			got, err := a.FindOrderByID(ctx, id, nil)
			if err != nil || got.PetID != o.PetID || got.Quantity != o.Quantity || got.UnitPrice != o.UnitPrice {
				t.Fatalf("order %d answered %+v, stored %+v (%v)", id, o, got, err)
			}
		}
		created := map[int64]int{}
		var stockEvents int
		evs, err := a.EventsAfter(ctx, before, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			switch e.Type {
			case "order.created":
				var o struct{ ID int64 }
				if err := json.Unmarshal(e.Data, &o); err != nil {
					t.Fatal(err)
				}
				created[o.ID]++
			case "inventory.updated":
				stockEvents++
			}
		}
		if len(created) != len(placed) || stockEvents != len(placed) {
			t.Errorf("%d orders placed: %d order.created events for %d orders, %d inventory.updated", len(placed), sumCounts(created), len(created), stockEvents)
		}
		for id := range placed {
			if created[id] != 1 {
				t.Errorf("order %d: %d order.created events", id, created[id])
			}
		}
		var batches, batched int64
		for _, s := range []*db.Store{a, b} {
			n, m := s.OrderBatches()
			batches, batched = batches+n, batched+m
		}
		if batched != workers*each || batches >= batched {
			t.Errorf("%d orders in %d batches: want all %d orders, in batches of more than one", batched, batches, workers*each)
		}
		t.Logf("%d orders placed, refusals %v, %d batches", len(placed), refusals, batches)
	})
}

// eventsSince counts the events after id.
func eventsSince(t *testing.T, ctx context.Context, s *db.Store, after int64) int {
	t.Helper()
	evs, err := s.EventsAfter(ctx, after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

func sumCounts(m map[int64]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
