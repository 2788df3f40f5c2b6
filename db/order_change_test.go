package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestUpdateOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		setup := func(t *testing.T) (*db.Store, *db.Pet, *db.Order) {
			s, p := storeWithPet(t, open, 5)
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
			want := &db.Order{ID: o.ID, PetID: p.ID, Quantity: 2, ShipDate: &ship, State: db.OrderOpen, Currency: db.DefaultCurrency}
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
