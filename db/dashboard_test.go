package db_test

import (
	"context"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestCountDashboard(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		a := MustCreatePet(t, ctx, s, c.ID, "Rex", 3)
		b := MustCreatePet(t, ctx, s, c.ID, "Fido", 1)
		MustCreatePet(t, ctx, s, c.ID, "Old", 0) // sold
		gone := MustCreatePet(t, ctx, s, c.ID, "Gone", 1)
		if err := s.DeletePet(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		o := mustOrder(t, ctx, s, db.Owner{ShopperID: "s1"}, b.ID, 1) // Fido → pending
		mustOrder(t, ctx, s, db.Owner{ShopperID: "s1"}, a.ID, 1)
		if _, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		// Completing Fido's only order sells it; one open order remains.
		role, plan := db.RoleCustomer, db.PlanFree
		k, _, err := s.CreateAPIKey(ctx, db.NewAPIKey{Name: ptr("k1"), Role: &role, Plan: &plan})
		if err != nil {
			t.Fatal(err)
		}
		k2, _, err := s.CreateAPIKey(ctx, db.NewAPIKey{Name: ptr("k2"), Role: &role, Plan: &plan})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeAPIKey(ctx, k2.ID); err != nil {
			t.Fatal(err)
		}
		now := s.Now()
		if err := s.CreateBan(ctx, k.Subject(), now, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateBan(ctx, "ip:192.0.2.1", now, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		d, err := s.CountDashboard(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := db.Dashboard{OpenOrders: 1, CompleteOrders: 1, ActiveKeys: 1, RevokedKeys: 1, ActiveBans: 2, BannedKeys: 1}
		if d.OpenOrders != want.OpenOrders || d.CompleteOrders != want.CompleteOrders || d.ActiveKeys != want.ActiveKeys ||
			d.RevokedKeys != want.RevokedKeys || d.ActiveBans != want.ActiveBans || d.BannedKeys != want.BannedKeys {
			t.Errorf("counts = %+v, want %+v", d, want)
		}
		if got := d.Pets; got[db.StatusAvailable] != 1 || got[db.StatusSold] != 2 || got[db.StatusPending] != 0 {
			t.Errorf("pets by status = %v, want available 1, sold 2, pending 0", got)
		}
	})
}
