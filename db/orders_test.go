package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// orderIDs lists the ids of the orders f selects, paging through all of them.
func orderIDs(t *testing.T, ctx context.Context, s *db.Store, f db.OrderFilter) []int64 {
	t.Helper()
	ids := []int64{}
	for {
		os, more, err := s.FindOrders(ctx, f)
		if err != nil {
			t.Fatalf("find orders %+v: %v", f, err)
		}
		for _, o := range os {
			ids = append(ids, o.ID)
		}
		if !more {
			return ids
		}
		f.AfterID = os[len(os)-1].ID
	}
}

// orderRows counts every row of the orders table, cancelled ones included.
func orderRows(t *testing.T, ctx context.Context, s *db.Store) int {
	t.Helper()
	var n int
	if err := s.DB().GetContext(ctx, &n, `SELECT count(*) FROM orders`); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOrderOwnership(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		p := MustCreatePet(t, ctx, s, c.ID, "Rex", 10)
		keyA, keyB := mustAPIKey(t, ctx, s, "a"), mustAPIKey(t, ctx, s, "b")
		ownerA, ownerB := db.Owner{APIKeyID: keyA.ID}, db.Owner{APIKeyID: keyB.ID}
		shopper := db.Owner{ShopperID: "browser-1"}
		a := mustOrder(t, ctx, s, ownerA, p.ID, 1)
		b := mustOrder(t, ctx, s, ownerB, p.ID, 1)
		sh := mustOrder(t, ctx, s, shopper, p.ID, 1)

		t.Run("OK", func(t *testing.T) {
			for name, tc := range map[string]struct {
				owner *db.Owner
				want  []int64
			}{
				"keyA":         {&ownerA, []int64{a.ID}},
				"keyB":         {&ownerB, []int64{b.ID}},
				"shopper":      {&shopper, []int64{sh.ID}},
				"otherShopper": {&db.Owner{ShopperID: "browser-2"}, []int64{}},
				"staff":        {nil, []int64{a.ID, b.ID, sh.ID}},
			} {
				if diff := cmp.Diff(tc.want, orderIDs(t, ctx, s, db.OrderFilter{Owner: tc.owner})); diff != "" {
					t.Errorf("%s: orders (-want +got):\n%s", name, diff)
				}
			}
			got, err := s.FindOrderByID(ctx, a.ID, &ownerA)
			if err != nil || got.ID != a.ID {
				t.Fatalf("own order = %+v, %v", got, err)
			}
			if _, err := s.FindOrderByID(ctx, sh.ID, nil); err != nil {
				t.Fatalf("staff reads a shopper's order: %v", err)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			for name, tc := range map[string]struct {
				id    int64
				owner db.Owner
			}{
				"otherKey":         {a.ID, ownerB},
				"shopperReadsKey":  {a.ID, shopper},
				"keyReadsShopper":  {sh.ID, ownerA},
				"otherShopper":     {sh.ID, db.Owner{ShopperID: "browser-2"}},
				"noSuchOrderOwner": {4242, ownerA},
			} {
				_, err := s.FindOrderByID(ctx, tc.id, &tc.owner)
				if db.ErrorCode(err) != db.ENotFound {
					t.Errorf("%s: find: got %q (%v), want not_found", name, db.ErrorCode(err), err)
				}
				if err := s.CancelOrder(ctx, tc.id, &tc.owner); db.ErrorCode(err) != db.ENotFound {
					t.Errorf("%s: cancel: got %q (%v), want not_found", name, db.ErrorCode(err), err)
				}
			}
			// Nothing was cancelled by the refused attempts.
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 7)
			if diff := cmp.Diff([]int64{a.ID, b.ID, sh.ID}, orderIDs(t, ctx, s, db.OrderFilter{})); diff != "" {
				t.Fatalf("orders (-want +got):\n%s", diff)
			}
		})
		t.Run("OKOwnerCancels", func(t *testing.T) {
			if err := s.CancelOrder(ctx, a.ID, &ownerA); err != nil {
				t.Fatal(err)
			}
			if err := s.CancelOrder(ctx, sh.ID, &shopper); err != nil {
				t.Fatal(err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 9)
		})
	})
}

func TestOrderFilters(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 10)
		tom := MustCreatePet(t, ctx, s, c.ID, "Tom", 10)
		r1 := mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		r2 := mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		t1 := mustOrder(t, ctx, s, db.Owner{}, tom.ID, 1)
		t2 := mustOrder(t, ctx, s, db.Owner{}, tom.ID, 1)
		complete(t, ctx, s, r2.ID)
		complete(t, ctx, s, t1.ID)
		for name, tc := range map[string]struct {
			f    db.OrderFilter
			want []int64
		}{
			"all":          {db.OrderFilter{}, []int64{r1.ID, r2.ID, t1.ID, t2.ID}},
			"complete":     {db.OrderFilter{Complete: ptr(true)}, []int64{r2.ID, t1.ID}},
			"open":         {db.OrderFilter{Complete: ptr(false)}, []int64{r1.ID, t2.ID}},
			"pet":          {db.OrderFilter{PetID: tom.ID}, []int64{t1.ID, t2.ID}},
			"petAndOpen":   {db.OrderFilter{PetID: rex.ID, Complete: ptr(false)}, []int64{r1.ID}},
			"unknownPet":   {db.OrderFilter{PetID: 4242}, []int64{}},
			"pagedByTwo":   {db.OrderFilter{Page: db.Page{Limit: 2}}, []int64{r1.ID, r2.ID, t1.ID, t2.ID}},
			"afterSecond":  {db.OrderFilter{Page: db.Page{AfterID: r2.ID}}, []int64{t1.ID, t2.ID}},
			"completeFlag": {db.OrderFilter{Complete: ptr(true), PetID: rex.ID}, []int64{r2.ID}},
		} {
			if diff := cmp.Diff(tc.want, orderIDs(t, ctx, s, tc.f)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		}
		page, more, err := s.FindOrders(ctx, db.OrderFilter{Page: db.Page{Limit: 2, AfterID: r2.ID}})
		if err != nil || len(page) != 2 || more {
			t.Fatalf("exactly full last page: got %d rows, more=%v (%v), want 2, false", len(page), more, err)
		}
	})
}

func TestOrderCancelledIsHidden(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		p := MustCreatePet(t, ctx, s, c.ID, "Rex", 3)
		o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
		if err := s.CancelOrder(ctx, o.ID, nil); err != nil {
			t.Fatal(err)
		}
		_, err := s.FindOrderByID(ctx, o.ID, nil)
		wantCode(t, err, db.ENotFound)
		if ids := orderIDs(t, ctx, s, db.OrderFilter{}); len(ids) != 0 {
			t.Fatalf("listed after cancel: got %v, want none", ids)
		}
		wantCode(t, s.CancelOrder(ctx, o.ID, nil), db.ENotFound)
		_, err = s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)})
		wantCode(t, err, db.ENotFound)
		// Cancelling twice must not return the stock twice.
		wantRule(t, ctx, s, p.ID, db.StatusAvailable, 3)
		var state string
		if err := s.DB().GetContext(ctx, &state, `SELECT state FROM orders WHERE id = $1`, o.ID); err != nil {
			t.Fatalf("cancelled order row is gone: %v", err)
		}
		if state != db.OrderCancelled {
			t.Fatalf("kept row state: got %q, want %q", state, db.OrderCancelled)
		}
	})
}

func TestUpdateOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		setup := func(t *testing.T) (*db.Store, *db.Pet, *db.Order) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Dogs")
			p := MustCreatePet(t, ctx, s, c.ID, "Rex", 5)
			return s, p, mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
		}
		t.Run("OK", func(t *testing.T) {
			s, p, o := setup(t)
			// Sent with an offset, kept as the same instant.
			ship, _ := shipDate(t)
			sent := ship.In(time.FixedZone("", 2*60*60)).Format(time.RFC3339)
			got, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{ShipDate: &sent})
			if err != nil {
				t.Fatal(err)
			}
			want := &db.Order{ID: o.ID, PetID: p.ID, Quantity: 2, ShipDate: &ship, State: db.OrderOpen}
			opt := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".CreatedAt" }, cmp.Ignore())
			if diff := cmp.Diff(want, got, opt); diff != "" {
				t.Fatalf("ship date set (-want +got):\n%s", diff)
			}
			got, err = s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)})
			if err != nil {
				t.Fatal(err)
			}
			want.Complete, want.State = true, db.OrderComplete
			if diff := cmp.Diff(want, got, opt); diff != "" {
				t.Fatalf("completed (-want +got):\n%s", diff)
			}
			read, err := s.FindOrderByID(ctx, o.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, read, opt); diff != "" {
				t.Fatalf("read back (-want +got):\n%s", diff)
			}
			// Completing again is no change.
			if _, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)}); err != nil {
				t.Fatalf("complete twice: %v", err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 3)
		})
		t.Run("OKOpenStaysOpen", func(t *testing.T) {
			s, _, o := setup(t)
			got, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(false)})
			if err != nil || got.Complete {
				t.Fatalf("complete:false on an open order = %+v, %v", got, err)
			}
		})
		t.Run("ErrOrderComplete", func(t *testing.T) {
			s, p, o := setup(t)
			complete(t, ctx, s, o.ID)
			_, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(false)})
			wantCode(t, err, db.EOrderComplete)
			wantCode(t, s.CancelOrder(ctx, o.ID, nil), db.EOrderComplete)
			got, err := s.FindOrderByID(ctx, o.ID, nil)
			if err != nil || !got.Complete {
				t.Fatalf("after refused reopen and cancel = %+v, %v, want complete", got, err)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 3)
		})
		t.Run("ErrValidationFailed", func(t *testing.T) {
			s, _, o := setup(t)
			_, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{})
			wantField(t, err, "complete")
			_, err = s.UpdateOrder(ctx, o.ID, db.OrderUpdate{ShipDate: ptr("tomorrow")})
			wantField(t, err, "shipDate")
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			s, _, _ := setup(t)
			_, err := s.UpdateOrder(ctx, 4242, db.OrderUpdate{Complete: ptr(true)})
			wantCode(t, err, db.ENotFound)
		})
	})
}

func TestPlaceOrderValidation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		p := MustCreatePet(t, ctx, s, c.ID, "Rex", 2000)
		one := ptr(int64(1))
		ship, sent := shipDate(t)
		for name, tc := range map[string]struct {
			in    db.NewOrder
			field string
		}{
			"quantityZero":    {db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(0))}, "quantity"},
			"quantity1001":    {db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1001))}, "quantity"},
			"quantityMissing": {db.NewOrder{PetID: &p.ID}, "quantity"},
			"petIDMissing":    {db.NewOrder{Quantity: one}, "petId"},
			"petIDZero":       {db.NewOrder{PetID: ptr(int64(0)), Quantity: one}, "petId"},
			"petUnknown":      {db.NewOrder{PetID: ptr(int64(4242)), Quantity: one}, "petId"},
			"shipDateBad":     {db.NewOrder{PetID: &p.ID, Quantity: one, ShipDate: ptr(ship.Format(time.DateOnly))}, "shipDate"},
			"completeTrue":    {db.NewOrder{PetID: &p.ID, Quantity: one, Complete: ptr(true)}, "complete"},
			"idGiven":         {db.NewOrder{PetID: &p.ID, Quantity: one, ID: ptr(int64(7))}, "id"},
		} {
			t.Run("ErrValidationFailed/"+name, func(t *testing.T) {
				_, err := s.PlaceOrder(ctx, db.Owner{}, tc.in)
				wantField(t, err, tc.field)
			})
		}
		wantRule(t, ctx, s, p.ID, db.StatusAvailable, 2000)
		if n := orderRows(t, ctx, s); n != 0 {
			t.Fatalf("order rows after refused orders: got %d, want 0", n)
		}
		t.Run("OK", func(t *testing.T) {
			o, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1000)),
				Complete: ptr(false), ShipDate: &sent})
			if err != nil {
				t.Fatal(err)
			}
			if o.Quantity != 1000 || o.ShipDate == nil || !o.ShipDate.Equal(ship) {
				t.Fatalf("order = %+v, want 1000 shipping %v", o, ship)
			}
			wantRule(t, ctx, s, p.ID, db.StatusAvailable, 1000)
		})
	})
}

func TestPlaceOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		setup := func(t *testing.T) (*db.Store, *db.Pet, *db.Pet) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Dogs")
			return s, MustCreatePet(t, ctx, s, c.ID, "Rex", 5), MustCreatePet(t, ctx, s, c.ID, "Tom", 3)
		}
		line := func(petID, qty int64) db.NewOrder { return db.NewOrder{PetID: &petID, Quantity: &qty} }
		t.Run("OK", func(t *testing.T) {
			s, rex, tom := setup(t)
			os, err := s.PlaceOrders(ctx, db.Owner{ShopperID: "b"}, []db.NewOrder{line(rex.ID, 2), line(tom.ID, 3)})
			if err != nil {
				t.Fatal(err)
			}
			if len(os) != 2 || os[0].PetID != rex.ID || os[1].PetID != tom.ID {
				t.Fatalf("orders = %+v, want one per line in order", os)
			}
			wantRule(t, ctx, s, rex.ID, db.StatusAvailable, 3)
			wantRule(t, ctx, s, tom.ID, db.StatusPending, 0)
		})
		for name, tc := range map[string]struct {
			second db.NewOrder
			code   string
		}{
			"ErrInsufficientStock": {line(0, 4), db.EInsufficientStock},
			"ErrSamePetTwice":      {line(-1, 4), db.EInsufficientStock},
			"ErrPetNotAvailable":   {line(0, 1), db.EPetNotAvailable},
			"ErrValidationFailed":  {db.NewOrder{Quantity: ptr(int64(1))}, db.EValidationFailed},
			"ErrUnknownPet":        {line(4242, 1), db.EValidationFailed},
		} {
			t.Run(name, func(t *testing.T) {
				s, rex, tom := setup(t)
				second := tc.second
				switch {
				case second.PetID != nil && *second.PetID == 0:
					second.PetID = &tom.ID
				case second.PetID != nil && *second.PetID == -1:
					second.PetID = &rex.ID // 2 + 4 > 5 on the same pet
				}
				if name == "ErrPetNotAvailable" {
					mustOrder(t, ctx, s, db.Owner{}, tom.ID, 3)
				}
				events, _ := s.LastEventID(ctx)
				rows := orderRows(t, ctx, s)
				_, err := s.PlaceOrders(ctx, db.Owner{ShopperID: "b"}, []db.NewOrder{line(rex.ID, 2), second})
				var le *db.LineError
				if !errors.As(err, &le) {
					t.Fatalf("error = %T %v, want *db.LineError", err, err)
				}
				if le.Line != 1 {
					t.Fatalf("failed line: got %d, want 1", le.Line)
				}
				wantCode(t, err, tc.code)
				wantRule(t, ctx, s, rex.ID, db.StatusAvailable, 5)
				if got := orderRows(t, ctx, s); got != rows {
					t.Fatalf("order rows: got %d, want %d", got, rows)
				}
				if ids := orderIDs(t, ctx, s, db.OrderFilter{Owner: &db.Owner{ShopperID: "b"}}); len(ids) != 0 {
					t.Fatalf("visible orders of the failed checkout: got %v, want none", ids)
				}
				if got, _ := s.LastEventID(ctx); got != events {
					t.Fatalf("last event id: got %d, want %d (no events of a rolled-back checkout)", got, events)
				}
			})
		}
	})
}
