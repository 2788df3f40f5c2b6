package db_test

import (
	"context"
	"testing"

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
		s, p := storeWithPet(t, open, 10)
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
		s, p := storeWithPet(t, open, 3)
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

func TestFindConsoleOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Birds")
		p := MustCreatePet(t, ctx, s, c.ID, "Tweety", 10)
		q := MustCreatePet(t, ctx, s, c.ID, "Polly", 10)
		role, plan := db.RoleCustomer, db.PlanFree
		k, _, err := s.CreateAPIKey(ctx, db.NewAPIKey{Name: ptr("partner"), Role: &role, Plan: &plan})
		if err != nil {
			t.Fatal(err)
		}
		o1 := mustOrder(t, ctx, s, db.Owner{APIKeyID: k.ID}, p.ID, 1)
		o2 := mustOrder(t, ctx, s, db.Owner{ShopperID: "browser"}, q.ID, 2)
		o3 := mustOrder(t, ctx, s, db.Owner{APIKeyID: k.ID}, p.ID, 1)
		o4 := mustOrder(t, ctx, s, db.Owner{APIKeyID: k.ID}, p.ID, 1)
		if err := s.CancelOrder(ctx, o4.ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateOrder(ctx, o3.ID, db.OrderUpdate{Complete: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		ids := func(os []*db.ConsoleOrder) []int64 {
			var out []int64
			for _, o := range os {
				out = append(out, o.ID)
			}
			return out
		}
		all, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{})
		if more := next != 0; err != nil || more {
			t.Fatalf("find = %v, next %d", err, next)
		}
		if got := ids(all); len(got) != 3 || got[0] != o3.ID || got[1] != o2.ID || got[2] != o1.ID {
			t.Fatalf("orders = %v, want newest first without the cancelled one", got)
		}
		if all[1].PetName != "Polly" || !all[1].Shop || all[1].KeyName != "" {
			t.Errorf("shop order = %+v", all[1])
		}
		if all[2].KeyName != "partner" || all[2].Shop || all[0].Complete != true {
			t.Errorf("key orders = %+v, %+v", all[2], all[0])
		}
		openOrders, _, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Complete: ptr(false), PetID: p.ID})
		if err != nil || len(openOrders) != 1 || openOrders[0].ID != o1.ID {
			t.Fatalf("open orders of Tweety = %v, %v", ids(openOrders), err)
		}
		page, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Limit: 1, BeforeID: o3.ID})
		if err != nil || next != o2.ID || len(page) != 1 || page[0].ID != o2.ID {
			t.Fatalf("page = %v, next %d, %v", ids(page), next, err)
		}
		// Paging one by one walks every order newest first; the last page
		// says no more, as does a page that is exactly full.
		var walked []int64
		for before := int64(0); ; {
			page, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Limit: 1, BeforeID: before})
			if err != nil || len(page) != 1 {
				t.Fatalf("page before %d = %v, %v", before, ids(page), err)
			}
			walked = append(walked, page[0].ID)
			if next == 0 {
				break
			}
			before = next
		}
		if diff := cmp.Diff(ids(all), walked); diff != "" {
			t.Fatalf("paged one by one (-want +got):\n%s", diff)
		}
		if full, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Limit: 3}); err != nil || next != 0 || len(full) != 3 {
			t.Fatalf("exactly full page = %v, next %d, %v", ids(full), next, err)
		}
		one, err := s.FindConsoleOrder(ctx, o2.ID)
		if err != nil || one.PetName != "Polly" || one.Quantity != 2 {
			t.Fatalf("order = %+v, %v", one, err)
		}
		_, err = s.FindConsoleOrder(ctx, o4.ID)
		wantCode(t, err, db.ENotFound)
	})
}
