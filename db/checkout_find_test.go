package db_test

import (
	"context"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// FindCheckout (the storefront's order lookup) and FindCheckoutByID read a
// checkout with its open and complete orders; a cancelled order drops out.
func TestFindCheckout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 5)
		tom := MustCreatePet(t, ctx, s, c.ID, "Tom", 5)
		line := func(petID, qty int64) db.NewOrder { return db.NewOrder{PetID: &petID, Quantity: &qty} }
		in := db.NewCheckout{Name: "Ada Lovelace", Email: "Ada@Example.com", Phone: "+44 20 7946 0000"}
		placed, err := s.PlaceCheckout(ctx, "alice", 10, in, []db.NewOrder{line(rex.ID, 2), line(tom.ID, 1)})
		if err != nil {
			t.Fatal(err)
		}
		bob := db.NewCheckout{Name: "Bob", Email: "bob@example.com"}
		other, err := s.PlaceCheckout(ctx, "bob", 10, bob, []db.NewOrder{line(rex.ID, 1)})
		if err != nil {
			t.Fatal(err)
		}

		t.Run("OK", func(t *testing.T) {
			for _, email := range []string{"Ada@Example.com", "ada@example.com", "  ADA@EXAMPLE.COM "} {
				got, err := s.FindCheckout(ctx, placed.ID, email)
				if err != nil {
					t.Fatalf("email %q: %v", email, err)
				}
				if got.ShopperID != "alice" || got.Name != "Ada Lovelace" || got.Phone != in.Phone || len(got.Orders) != 2 {
					t.Fatalf("email %q: checkout = %+v", email, got)
				}
			}
			byID, err := s.FindCheckoutByID(ctx, placed.ID)
			if err != nil {
				t.Fatal(err)
			}
			if byID.ShopperID != "alice" || byID.Email != "Ada@Example.com" || len(byID.Orders) != 2 || byID.Total() != placed.Total() {
				t.Fatalf("by id = %+v", byID)
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			_, wrongEmail := s.FindCheckout(ctx, placed.ID, "eve@example.com")
			_, otherEmail := s.FindCheckout(ctx, placed.ID, bob.Email)
			_, noSuchNumber := s.FindCheckout(ctx, other.ID+100, in.Email)
			_, empty := s.FindCheckout(ctx, placed.ID, "")
			// Text PostgreSQL cannot hold is not found, not a failure.
			_, nul := s.FindCheckout(ctx, placed.ID, "ada@example.com\x00")
			_, notUTF8 := s.FindCheckout(ctx, placed.ID, "ada\xff@example.com")
			_, long := s.FindCheckout(ctx, placed.ID, strings.Repeat("a", 300)+"@example.com")
			for _, err := range []error{otherEmail, noSuchNumber, empty, nul, notUTF8, long} {
				wantCode(t, err, db.ENotFound)
				if err.Error() != wrongEmail.Error() {
					t.Fatalf("answers differ: %q and %q", err, wrongEmail)
				}
			}
			_, err := s.FindCheckoutByID(ctx, other.ID+100)
			wantCode(t, err, db.ENotFound)
			_, err = s.FindCheckoutByID(ctx, 0)
			wantCode(t, err, db.ENotFound)
		})

		t.Run("the proven checkout's orders, and only those, can be cancelled", func(t *testing.T) {
			proven := &db.Owner{CheckoutID: placed.ID}
			wantCode(t, s.CancelOrder(ctx, other.Orders[0].ID, proven), db.ENotFound)
			if err := s.CancelOrder(ctx, placed.Orders[0].ID, proven); err != nil {
				t.Fatal(err)
			}
			got, err := s.FindCheckoutByID(ctx, placed.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Orders) != 1 || got.Orders[0].ID != placed.Orders[1].ID || got.Total() != placed.Orders[1].Total {
				t.Fatalf("after the cancel: %+v", got.Orders)
			}
		})
	})
}
