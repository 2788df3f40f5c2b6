package db_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// An order records its pet's price when placed; a later price change
// never alters it (SPEC §14).
func TestOrderPriceSnapshot(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		p, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Price: ptr("10")})
		if err != nil {
			t.Fatal(err)
		}
		stock := int64(20)
		if _, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			t.Fatal(err)
		}
		wantPrice := func(t *testing.T, o *db.Order, unit, total db.Money) {
			t.Helper()
			if o.UnitPrice != unit || o.Total != total || o.Currency != "EUR" {
				t.Fatalf("order %d: %s × %d = %s %s; want %s, %s EUR", o.ID, o.UnitPrice, o.Quantity, o.Total, o.Currency, unit, total)
			}
		}
		first := mustOrder(t, ctx, s, db.Owner{}, p.ID, 3)
		wantPrice(t, first, 1000, 3000)
		if _, err := s.UpdatePet(ctx, p.ID, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Price: ptr("12.00")}); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindOrderByID(ctx, first.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantPrice(t, got, 1000, 3000)
		second := mustOrder(t, ctx, s, db.Owner{}, p.ID, 2)
		wantPrice(t, second, 1200, 2400)
		co, err := s.PlaceCheckout(ctx, "shopper", 10, buyer, []db.NewOrder{{PetID: &p.ID, Quantity: ptr(int64(4))}})
		if err != nil {
			t.Fatal(err)
		}
		wantPrice(t, co.Orders[0], 1200, 4800)
		if co.Total() != 4800 {
			t.Fatalf("checkout total = %s, want 48.00", co.Total())
		}
		orders, _, err := s.FindOrders(ctx, db.OrderFilter{})
		if err != nil || len(orders) != 3 {
			t.Fatalf("orders: %v, %d", err, len(orders))
		}
		wantPrice(t, orders[0], 1000, 3000)
		wantPrice(t, orders[1], 1200, 2400)
		wantPrice(t, orders[2], 1200, 4800)
	})
}

func TestPlaceCheckout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 5)
		tom := MustCreatePet(t, ctx, s, c.ID, "Tom", 5)
		today := s.Now().UTC().Truncate(24 * time.Hour)
		date := today.AddDate(0, 0, 90)
		in := db.NewCheckout{Name: " Ada Lovelace ", Email: "Ada@Example.com", Phone: "+44 (0)20 7946-0000", PreferredDate: date.Format(time.DateOnly)}
		co, err := s.PlaceCheckout(ctx, "alice", 10, in, []db.NewOrder{
			{PetID: &rex.ID, Quantity: ptr(int64(1))}, {PetID: &tom.ID, Quantity: ptr(int64(2))}})
		if err != nil {
			t.Fatal(err)
		}
		if co.ID == 0 || len(co.Orders) != 2 || co.Name != "Ada Lovelace" {
			t.Fatalf("checkout = %+v", co)
		}
		for _, o := range co.Orders {
			if o.ShipDate == nil || !o.ShipDate.Equal(date) {
				t.Errorf("order %d ship date = %v, want %v", o.ID, o.ShipDate, date)
			}
			if o.Customer == nil || *o.Customer != (db.Customer{Name: "Ada Lovelace", Email: "Ada@Example.com", Phone: "+44 (0)20 7946-0000"}) {
				t.Errorf("order %d customer = %+v", o.ID, o.Customer)
			}
		}
		// Staff see the buyer on the stored orders; an API order has none.
		api := mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		orders, _, err := s.FindOrders(ctx, db.OrderFilter{})
		if err != nil || len(orders) != 3 {
			t.Fatalf("orders: %v, %d", err, len(orders))
		}
		for _, o := range orders {
			if (o.Customer != nil) == (o.ID == api.ID) {
				t.Errorf("order %d customer = %+v", o.ID, o.Customer)
			}
		}

		// Found by number and email, any case; a wrong pair and a number
		// that does not exist get the same answer.
		found, err := s.FindCheckout(ctx, co.ID, "  ada@EXAMPLE.com")
		if err != nil {
			t.Fatal(err)
		}
		if len(found.Orders) != 2 || found.Total() != co.Total() || found.ShopperID != "alice" || found.Phone != in.Phone {
			t.Fatalf("found = %+v", found)
		}
		_, wrongEmail := s.FindCheckout(ctx, co.ID, "eve@example.com")
		_, noSuch := s.FindCheckout(ctx, co.ID+100, "ada@example.com")
		_, zero := s.FindCheckout(ctx, 0, "")
		wantCode(t, wrongEmail, db.ENotFound)
		for _, err := range []error{noSuch, zero} {
			if err == nil || err.Error() != wrongEmail.Error() {
				t.Errorf("not found answers differ: %v vs %v", err, wrongEmail)
			}
		}

		// Whoever proved the checkout may cancel its orders, and only those.
		proven := &db.Owner{CheckoutID: co.ID}
		wantCode(t, s.CancelOrder(ctx, api.ID, proven), db.ENotFound)
		if err := s.CancelOrder(ctx, co.Orders[0].ID, proven); err != nil {
			t.Fatal(err)
		}
		found, _ = s.FindCheckout(ctx, co.ID, "ada@example.com")
		if len(found.Orders) != 1 || found.Orders[0].ID != co.Orders[1].ID {
			t.Fatalf("after a cancel: %+v", found.Orders)
		}
		wantState(t, ctx, s, rex.ID, db.StatusAvailable, 4)
	})
}

func TestPlaceCheckoutInvalid(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 5)
		today := s.Now().UTC().Truncate(24 * time.Hour)
		day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }
		for name, tc := range map[string]struct {
			in    func(*db.NewCheckout)
			field string
		}{
			"ErrNameMissing":   {func(c *db.NewCheckout) { c.Name = "  " }, "name"},
			"ErrNameLong":      {func(c *db.NewCheckout) { c.Name = strings.Repeat("n", 101) }, "name"},
			"ErrNameControl":   {func(c *db.NewCheckout) { c.Name = "Ada\x1b[31m" }, "name"},
			"ErrEmailMissing":  {func(c *db.NewCheckout) { c.Email = "" }, "email"},
			"ErrEmailNoAt":     {func(c *db.NewCheckout) { c.Email = "ada.example.com" }, "email"},
			"ErrEmailNoDot":    {func(c *db.NewCheckout) { c.Email = "ada@localhost" }, "email"},
			"ErrEmailName":     {func(c *db.NewCheckout) { c.Email = "Ada <ada@example.com>" }, "email"},
			"ErrEmailTwoAts":   {func(c *db.NewCheckout) { c.Email = "a@b@example.com" }, "email"},
			"ErrEmailLong":     {func(c *db.NewCheckout) { c.Email = strings.Repeat("a", 243) + "@example.com" }, "email"},
			"ErrEmailNewline":  {func(c *db.NewCheckout) { c.Email = "ada@example.com\nBcc: x@y.z" }, "email"},
			"ErrPhoneLetters":  {func(c *db.NewCheckout) { c.Phone = "call me" }, "phone"},
			"ErrPhoneLong":     {func(c *db.NewCheckout) { c.Phone = strings.Repeat("1", 31) }, "phone"},
			"ErrPhoneNoDigits": {func(c *db.NewCheckout) { c.Phone = "+-()" }, "phone"},
			"ErrDateYesterday": {func(c *db.NewCheckout) { c.PreferredDate = day(-1) }, "date"},
			"ErrDatePast90":    {func(c *db.NewCheckout) { c.PreferredDate = day(91) }, "date"},
			"ErrDateFormat":    {func(c *db.NewCheckout) { c.PreferredDate = "next week" }, "date"},
			"ErrDateNotADay":   {func(c *db.NewCheckout) { c.PreferredDate = "2030-02-30" }, "date"},
		} {
			t.Run(name, func(t *testing.T) {
				in := db.NewCheckout{Name: "Ada", Email: "ada@example.com"}
				tc.in(&in)
				_, err := s.PlaceCheckout(ctx, "alice", 10, in, []db.NewOrder{{PetID: &rex.ID, Quantity: ptr(int64(1))}})
				wantField(t, err, tc.field)
			})
		}
		// Nothing was placed by any of them; the edges are fine.
		wantState(t, ctx, s, rex.ID, db.StatusAvailable, 5)
		for _, in := range []db.NewCheckout{
			{Name: strings.Repeat("n", 100), Email: strings.Repeat("a", 242) + "@example.com", Phone: strings.Repeat("1", 30), PreferredDate: day(0)},
			{Name: "Ada", Email: "ada+pets@mail.example.co.uk", PreferredDate: day(90)},
		} {
			if _, err := s.PlaceCheckout(ctx, "alice", 10, in, []db.NewOrder{{PetID: &rex.ID, Quantity: ptr(int64(1))}}); err != nil {
				t.Errorf("%+v: %v", in, err)
			}
		}
	})
}

// Orders placed before orders recorded a currency take the store's at its
// next start.
func TestAdoptCurrency(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 5)
		o := mustOrder(t, ctx, s, db.Owner{}, p.ID, 1)
		if _, err := s.DB().ExecContext(ctx, `UPDATE orders SET currency = NULL WHERE id = $1`, o.ID); err != nil {
			t.Fatal(err)
		}
		s.Currency = "USD"
		if err := s.AdoptCurrency(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindOrderByID(ctx, o.ID, nil)
		if err != nil || got.Currency != "USD" {
			t.Fatalf("currency = %q, %v; want USD", got.Currency, err)
		}
		// Orders that recorded one keep it.
		s.Currency = "GBP"
		if err := s.AdoptCurrency(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.FindOrderByID(ctx, o.ID, nil); got.Currency != "USD" {
			t.Fatalf("currency = %q after a second start; want USD", got.Currency)
		}
	})
}

// Migration 00006 gives the pets and orders that exist sensible defaults:
// no fee, no profile, no photos; orders of 0.00.
func TestSellingMigrationDefaults(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		s, err := db.Open(ctx, rawURL, dbtest.NewClock(t).Now)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.MigrateUpTo(ctx, 5); err != nil {
			t.Fatal(err)
		}
		c := MustCreateCategory(t, ctx, s, "Dogs")
		var petID int64
		if err := s.DB().GetContext(ctx, &petID, `INSERT INTO pets (name, name_key, category_id, status, created_at, updated_at)
			VALUES ('Rex', 'rex', $1, 'available', $2, $2) RETURNING id`, c.ID, s.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at) VALUES ($1, 2, $2)`, petID, s.Now()); err != nil {
			t.Fatal(err)
		}
		var orderID int64
		if err := s.DB().GetContext(ctx, &orderID, `INSERT INTO orders (pet_id, quantity, state, created_at, updated_at)
			VALUES ($1, 1, 'open', $2, $2) RETURNING id`, petID, s.Now()); err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.AdoptCurrency(ctx); err != nil {
			t.Fatal(err)
		}
		p, err := s.FindPetByID(ctx, petID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Price != 0 || p.Description != nil || p.Breed != nil || p.BirthDate != nil || len(p.Photos) != 0 || p.Photos == nil {
			t.Errorf("migrated pet = %+v", p)
		}
		o, err := s.FindOrderByID(ctx, orderID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if o.UnitPrice != 0 || o.Total != 0 || o.Currency != "EUR" || o.Customer != nil {
			t.Errorf("migrated order = %+v", o)
		}
	})
}
