package shop_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// Prices on the cards, the pet page and every cart line, with line totals
// and the cart's total (SPEC §14), in the store's currency.
func TestShopPrices(t *testing.T) {
	a := handlerstest.New(t)
	s := pricedSeed(t, a)
	rex, milo, fin := s.Pets["Rex"], s.Pets["Milo"], s.Pets["Fin"]
	c := a.Shopper(t)

	r := c.Get("/")
	for _, tc := range []struct {
		pet  *db.Pet
		want string
	}{{rex, "€129.00"}, {milo, "€45.50"}, {fin, "No fee"}} {
		card := r.Find(`[data-testid="pet-card"][data-pet-id="` + handlerstest.Itoa(tc.pet.ID) + `"]`)
		if got := strings.TrimSpace(card.Find(`[data-testid="price"]`).Text()); got != tc.want {
			t.Errorf("%s's card: price %q, want %q", tc.pet.Name, got, tc.want)
		}
	}
	if got := c.Get("/pets/" + handlerstest.Itoa(rex.ID)).Text("price"); got != "€129.00" {
		t.Errorf("pet page price = %q", got)
	}

	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "2")).WantRedirect("/cart")
	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "3")).WantRedirect("/cart")
	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(fin.ID), "quantity", "4")).WantRedirect("/cart")
	r = c.Get("/cart")
	if got := r.Texts("line-unit"); !slices.Equal(got, []string{"€129.00", "€45.50", "No fee"}) {
		t.Errorf("unit prices = %q", got)
	}
	if got := r.Texts("line-total"); !slices.Equal(got, []string{"€258.00", "€136.50", "€0.00"}) {
		t.Errorf("line totals = %q", got)
	}
	if got := r.Text("cart-total"); got != "€394.50" {
		t.Errorf("cart total = %q", got)
	}

	// An htmx change of a line brings the new totals.
	hx := c.HXPost("/cart/lines/"+handlerstest.Itoa(milo.ID), handlerstest.Form("quantity", "1")).WantStatus(http.StatusOK)
	if got := hx.Text("cart-total"); got != "€303.50" {
		t.Errorf("cart total after the change = %q", got)
	}

	// A pet gone from the catalog counts for nothing.
	if err := a.Store.DeletePet(t.Context(), fin.ID); err != nil {
		t.Fatal(err)
	}
	if got := c.Get("/cart").Text("cart-total"); got != "€303.50" {
		t.Errorf("total with a deleted pet = %q", got)
	}
}

// The pet page shows the description (its lines and paragraphs, as text),
// the breed and the age by the store's clock.
func TestShopPetProfile(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := pricedSeed(t, a)
		today := a.Clock.Now().UTC()
		// The first of the month 16 months back: 1 year 4 months old on
		// any day of this month.
		born := time.Date(today.Year(), today.Month()-16, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		rex := updatePet(t, a, s.Pets["Rex"], db.NewPet{
			Breed:       db.Set("Labrador <Retriever>"),
			BirthDate:   db.Set(born),
			Description: db.Set("Loves walks.\n<b>Calm</b> & kind.\r\n\r\nGood with <script>alert(1)</script> children."),
		})
		c := a.Shopper(t)
		r := c.Get("/pets/" + handlerstest.Itoa(rex.ID)).WantStatus(http.StatusOK)
		if got := r.Text("breed"); got != "Labrador <Retriever>" {
			t.Errorf("breed = %q", got)
		}
		if got := r.Text("age"); got != "1 year 4 months" {
			t.Errorf("age = %q (born %s, today %s)", got, born, today.Format(time.DateOnly))
		}
		desc := r.ID("pet-description")
		paras := desc.Find("p")
		if paras.Length() != 2 || paras.First().Find("br").Length() != 1 {
			t.Fatalf("description = %s", r.Body)
		}
		if desc.Find("b, script").Length() != 0 || !strings.Contains(paras.First().Text(), "<b>Calm</b> & kind.") || !strings.Contains(paras.Last().Text(), "<script>alert(1)</script>") {
			t.Errorf("the description is not shown as text: %q", desc.Text())
		}
		if desc.Find("h2").Length() != 1 || r.Find("h1").Length() != 1 {
			t.Error("headings: want the page's h1 and the description's h2")
		}

		// The age follows the clock: on the first of next month, 1 year 5 months.
		a.Clock.Set(time.Date(today.Year(), today.Month()+1, 1, 10, 0, 0, 0, time.UTC))
		if got := c.Get("/pets/" + handlerstest.Itoa(rex.ID)).Text("age"); got != "1 year 5 months" {
			t.Errorf("age a month later = %q", got)
		}

		// No profile: no breed, age or description, and the price is "No fee".
		r = c.Get("/pets/" + handlerstest.Itoa(s.Pets["Fin"].ID))
		if r.ID("breed").Length()+r.ID("age").Length()+r.ID("pet-description").Length() != 0 {
			t.Error("a pet without a profile shows one")
		}
		if got := r.Text("price"); got != "No fee" {
			t.Errorf("price = %q", got)
		}
	})
}

// The confirmation and My orders show each order's total and the
// checkout's total, from the prices when the order was placed.
func TestShopOrderTotals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := pricedSeed(t, a)
		rex, milo := s.Pets["Rex"], s.Pets["Milo"]
		c := a.Shopper(t)
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "2")).WantRedirect("/cart")
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1")).WantRedirect("/cart")
		n := c.Checkout(handlerstest.Buyer("date", day(a, 7)))
		updatePet(t, a, rex, db.NewPet{Price: handlerstest.Ptr("999")}) // later price changes alter nothing
		confirmation := "/orders/confirmation/" + handlerstest.Itoa(n)

		r := c.Get(confirmation).WantStatus(http.StatusOK)
		if got := r.Text("confirmation-heading"); got != "Thank you, Ada Lovelace!" {
			t.Errorf("heading = %q", got)
		}
		for id, want := range map[string][]string{
			"order-pet": {"Rex", "Milo"}, "order-quantity": {"2", "1"},
			"order-unit": {"€129.00", "€45.50"}, "order-total": {"€258.00", "€45.50"},
			"checkout-total": {"€303.50"}, "order-number": {handlerstest.Itoa(n)},
			"confirmation-email": {"ada@example.com"}, "confirmation-phone": {"+44 20 7946 0000"},
		} {
			if got := r.Texts(id); !slices.Equal(got, want) {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		ship, _ := time.Parse(time.DateOnly, day(a, 7))
		if got := r.Text("confirmation-date"); got != ship.Format("2 Jan 2006") {
			t.Errorf("date = %q", got)
		}
		if got := r.ID("find-again"); got.Find(`a[href="/orders/lookup"]`).Length() != 1 || !strings.Contains(got.Text(), handlerstest.Itoa(n)) {
			t.Errorf("how to find it again: %q", got.Text())
		}

		o := c.Get("/orders")
		group := o.Find(`[data-testid="checkout-group"][data-checkout-id="` + handlerstest.Itoa(n) + `"]`)
		if got := strings.TrimSpace(group.Find(`[data-testid="checkout-total"]`).Text()); got != "€303.50" {
			t.Errorf("My orders: checkout total = %q", got)
		}
		totals := group.Find(`[data-testid="order-total"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if !slices.Equal(totals, []string{"€258.00", "€45.50"}) {
			t.Errorf("My orders: order totals = %q", totals)
		}
		if group.Find(`a[href="`+confirmation+`"]`).Length() != 1 || o.Find(`a[href="/orders/lookup"]`).Length() < 1 {
			t.Error("My orders links neither the confirmation nor Find an order")
		}

		// A second checkout comes first; cancelling lowers its total.
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "2")).WantRedirect("/cart")
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(s.Pets["Fin"].ID), "quantity", "1")).WantRedirect("/cart")
		n2 := c.Checkout(nil)
		o = c.Get("/orders")
		if got := o.Texts("checkout-number"); !slices.Equal(got, []string{handlerstest.Itoa(n2), handlerstest.Itoa(n)}) {
			t.Errorf("checkouts = %q, want newest first", got)
		}
		if got := o.Texts("checkout-total"); !slices.Equal(got, []string{"€91.00", "€303.50"}) {
			t.Errorf("checkout totals = %q", got)
		}
		milos := o.Find(`[data-checkout-id="`+handlerstest.Itoa(n)+`"] [data-testid="order"]`).Last().AttrOr("data-order-id", "")
		hx := c.HXPost("/orders/"+milos+"/cancel", nil).WantStatus(http.StatusOK)
		if got := hx.Texts("checkout-total"); !slices.Equal(got, []string{"€91.00", "€258.00"}) {
			t.Errorf("totals after a cancel = %q", got)
		}
		if got := c.Get(confirmation).Text("checkout-total"); got != "€258.00" {
			t.Errorf("confirmation total after a cancel = %q", got)
		}

		t.Run("only the browser that placed it sees the confirmation", func(t *testing.T) {
			other := a.Shopper(t)
			theirs := other.Get(confirmation).WantStatus(http.StatusNotFound)
			missing := c.Get("/orders/confirmation/" + handlerstest.Itoa(n2+100)).WantStatus(http.StatusNotFound)
			if theirs.Text("error-message") != missing.Text("error-message") || theirs.ID("order-number").Length() != 0 {
				t.Errorf("answers differ: %q and %q", theirs.Text("error-message"), missing.Text("error-message"))
			}
			c.Get("/orders/confirmation/abc").WantStatus(http.StatusBadRequest)
			c.Get("/orders/confirmation/0").WantStatus(http.StatusBadRequest)
		})
	})
}
