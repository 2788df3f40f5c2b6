package db_test

import (
	"context"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestConsoleQueries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("CountDashboard", func(t *testing.T) {
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
		t.Run("FindLowStock", func(t *testing.T) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Cats")
			MustCreatePet(t, ctx, s, c.ID, "Plenty", 10)
			two := MustCreatePet(t, ctx, s, c.ID, "Two", 2)
			one := MustCreatePet(t, ctx, s, c.ID, "One", 1)
			MustCreatePet(t, ctx, s, c.ID, "None", 0)
			pets, err := s.FindLowStock(ctx, 2, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(pets) != 2 || pets[0].ID != one.ID || pets[1].ID != two.ID {
				t.Fatalf("low stock = %+v, want One then Two", pets)
			}
			if pets[0].CategoryName != "Cats" || pets[0].Stock != 1 {
				t.Errorf("pet = %+v", pets[0])
			}
			other := MustCreateCategory(t, ctx, s, "Empty")
			counts, err := s.CountPetsByCategory(ctx)
			if err != nil || counts[c.ID] != 4 || counts[other.ID] != 0 {
				t.Errorf("pets by category = %v, %v; want 4 cats, no empties", counts, err)
			}
		})
		t.Run("FindConsoleOrders", func(t *testing.T) {
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
			all, more, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{})
			if err != nil || more {
				t.Fatalf("find = %v, more %v", err, more)
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
			open, _, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Complete: ptr(false), PetID: p.ID})
			if err != nil || len(open) != 1 || open[0].ID != o1.ID {
				t.Fatalf("open orders of Tweety = %v, %v", ids(open), err)
			}
			page, more, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Limit: 1, BeforeID: o3.ID})
			if err != nil || !more || len(page) != 1 || page[0].ID != o2.ID {
				t.Fatalf("page = %v, more %v, %v", ids(page), more, err)
			}
			one, err := s.FindConsoleOrder(ctx, o2.ID)
			if err != nil || one.PetName != "Polly" || one.Quantity != 2 {
				t.Fatalf("order = %+v, %v", one, err)
			}
			_, err = s.FindConsoleOrder(ctx, o4.ID)
			wantCode(t, err, db.ENotFound)
		})
	})
}
