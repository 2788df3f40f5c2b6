package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestPlaceOrderValidation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 2000)
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

// TestPlaceCheckoutLines: a checkout's lines are placed together or not
// at all, and a refused line is named.
func TestPlaceCheckoutLines(t *testing.T) {
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
			co, err := s.PlaceCheckout(ctx, "b", 1000, buyer, []db.NewOrder{line(rex.ID, 2), line(tom.ID, 3)})
			if err != nil {
				t.Fatal(err)
			}
			os := co.Orders
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
				_, err := s.PlaceCheckout(ctx, "b", 1000, buyer, []db.NewOrder{line(rex.ID, 2), second})
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

// A checkout of nothing is refused, not placed as an empty success (the
// storefront refused an empty cart before the store did).
func TestPlaceCheckoutErrNoLines(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		for name, place := range map[string]func() ([]*db.Order, error){
			"PlaceCheckout": func() ([]*db.Order, error) {
				c, err := s.PlaceCheckout(ctx, "b", 10, buyer, []db.NewOrder{})
				if c != nil {
					return c.Orders, err
				}
				return nil, err
			},
		} {
			os, err := place()
			if db.ErrorCode(err) != db.EValidationFailed || os != nil {
				t.Errorf("%s: got %v, %q (%v), want validation_failed", name, os, db.ErrorCode(err), err)
			}
			var le *db.LineError
			if errors.As(err, &le) {
				t.Errorf("%s: error names line %d of none", name, le.Line)
			}
		}
		if got := orderRows(t, ctx, s); got != 0 {
			t.Fatalf("order rows: got %d, want 0", got)
		}
		if got, _ := s.LastEventID(ctx); got != 0 {
			t.Fatalf("last event id: got %d, want 0", got)
		}
	})
}

// openUnits sums a shopper's open units straight from the table, so the
// check does not trust the store's own query.
func openUnits(tb testing.TB, ctx context.Context, s *db.Store, shopper string) int64 {
	tb.Helper()
	var n int64
	err := s.DB().GetContext(ctx, &n, `SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE shopper_id = $1 AND state = 'open'`, shopper)
	if err != nil {
		tb.Fatalf("open units of %s: %v", shopper, err)
	}
	return n
}

func TestPlaceCheckoutCap(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 50)
		tom := MustCreatePet(t, ctx, s, c.ID, "Tom", 50)
		line := func(petID, qty int64) db.NewOrder { return db.NewOrder{PetID: &petID, Quantity: &qty} }
		checkout := func(shopper string, lines ...db.NewOrder) error {
			_, err := s.PlaceCheckout(ctx, shopper, 10, buyer, lines)
			return err
		}

		if err := checkout("alice", line(rex.ID, 4), line(tom.ID, 3)); err != nil {
			t.Fatalf("7 of 10: %v", err)
		}
		// 7 + 2 + 2 > 10: refused whole, the fitting line included.
		events, _ := s.LastEventID(ctx)
		err := checkout("alice", line(rex.ID, 2), line(tom.ID, 2))
		wantCode(t, err, db.ETooManyOpenUnits)
		if got := openUnits(t, ctx, s, "alice"); got != 7 {
			t.Fatalf("open units after the refusal = %d, want 7", got)
		}
		wantState(t, ctx, s, rex.ID, db.StatusAvailable, 46)
		wantState(t, ctx, s, tom.ID, db.StatusAvailable, 47)
		if got, _ := s.LastEventID(ctx); got != events {
			t.Fatalf("events of a refused checkout were written")
		}
		// Exactly up to the cap is fine; one more is not.
		if err := checkout("alice", line(tom.ID, 3)); err != nil {
			t.Fatalf("10 of 10: %v", err)
		}
		wantCode(t, checkout("alice", line(rex.ID, 1)), db.ETooManyOpenUnits)
		// The cap is per shopper: another browser, and the API, are not held to it.
		if err := checkout("bob", line(rex.ID, 10)); err != nil {
			t.Fatalf("another shopper: %v", err)
		}
		if _, err := s.PlaceOrder(ctx, db.Owner{APIKeyID: 0}, line(rex.ID, 20)); err != nil {
			t.Fatalf("an order without a shopper: %v", err)
		}
		// Cancelled and complete orders hold nothing.
		os := orderIDs(t, ctx, s, db.OrderFilter{Owner: &db.Owner{ShopperID: "alice"}})
		if err := s.CancelOrder(ctx, os[0], &db.Owner{ShopperID: "alice"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateOrder(ctx, os[1], db.OrderUpdate{Complete: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if err := checkout("alice", line(rex.ID, 7)); err != nil {
			t.Fatalf("after a cancel and a completion (4 + 3 freed): %v", err)
		}
		if got := openUnits(t, ctx, s, "alice"); got != 10 {
			t.Fatalf("open units = %d, want 10", got)
		}
		// A line's own validation still comes first.
		_, err = s.PlaceCheckout(ctx, "carol", 10, buyer, []db.NewOrder{line(rex.ID, 1001)})
		wantCode(t, err, db.EValidationFailed)
	})
}

// Two or more checkouts of one shopper at once must not both fit under the
// cap: each sees the other's units, or waits for them.
func TestPlaceCheckoutCapConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		pets := []*db.Pet{
			MustCreatePet(t, ctx, s, c.ID, "Rex", 100),
			MustCreatePet(t, ctx, s, c.ID, "Tom", 100),
			MustCreatePet(t, ctx, s, c.ID, "Kit", 100),
		}
		var got codes
		// 12 checkouts of 3 units (1 of each pet, in rotating order, so
		// the pets' locks are wanted in every order): only 3 fit under 10.
		run(12, func(i int) {
			lines := make([]db.NewOrder, 3)
			for j := range lines {
				p := pets[(i+j)%3]
				lines[j] = db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))}
			}
			_, err := s.PlaceCheckout(ctx, "mallory", 10, buyer, lines)
			got.add(err)
		})
		got.wantOnly(t, "", db.ETooManyOpenUnits)
		if got.n[""] != 3 || got.n[db.ETooManyOpenUnits] != 9 {
			t.Fatalf("outcomes = %v, want 3 placed and 9 refused", got.n)
		}
		if units := openUnits(t, ctx, s, "mallory"); units != 9 {
			t.Fatalf("open units = %d, want 9 (never past the cap, nothing partial)", units)
		}
		for _, p := range pets {
			wantState(t, ctx, s, p.ID, db.StatusAvailable, 97)
		}
	})
}

// buyer is a valid storefront buyer, for tests about something else.
var buyer = db.NewCheckout{Name: "Ada Lovelace", Email: "ada@example.com"}
