package shop_test

import (
	"net/http"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

// openUnitsOf sums the open units of every storefront shopper.
func openUnitsOf(t *testing.T, a *handlerstest.App) int64 {
	t.Helper()
	var n int64
	err := a.Store.DB().Get(&n, `SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE shopper_id IS NOT NULL AND state = 'open'`)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// One browser holds at most PETSTORE_SHOP_MAX_OPEN_UNITS (default 10)
// units in open orders: a checkout past it is refused whole, with a
// message and the cart kept.
func TestShopMaxOpenUnits(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open) // the default cap, 10
		seed := handlerstest.SeedShop(t, a, handlerstest.ShopPetSpec{Cat: "Dogs", Name: "Rex", Stock: 50}, handlerstest.ShopPetSpec{Cat: "Cats", Name: "Tom", Stock: 50})
		rex, tom := handlerstest.Itoa(seed.Pets["Rex"].ID), handlerstest.Itoa(seed.Pets["Tom"].ID)
		s := a.Shopper(t)
		s.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "6")).WantRedirect("/cart")
		s.Checkout(nil)

		s.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "3")).WantRedirect("/cart")
		s.Post("/cart", handlerstest.Form("pet_id", tom, "quantity", "2")).WantRedirect("/cart")
		r := s.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusConflict)
		if msg := r.Text("cart-error"); !strings.Contains(msg, "Nothing was ordered") || !strings.Contains(msg, "at most 10") || !strings.Contains(msg, "You can order 4 more") {
			t.Errorf("message = %q", msg)
		}
		if got := r.Texts("line-name"); len(got) != 2 {
			t.Errorf("cart lines = %q, want both kept", got)
		}
		if got := openUnitsOf(t, a); got != 6 {
			t.Fatalf("open units = %d, want 6: nothing of the refused checkout placed", got)
		}
		if got := handlerstest.PetStock(t, a, seed.Pets["Tom"].ID); got != 50 {
			t.Fatalf("Tom's stock = %d, want 50", got)
		}
		hx := s.HXPost("/checkout", handlerstest.Buyer()).WantStatus(http.StatusConflict)
		if hx.IsFullPage() || !strings.Contains(hx.Text("cart-error"), "at most 10") {
			t.Errorf("htmx: want the cart fragment with the message; got\n%s", hx.Body)
		}

		// Up to the cap exactly is fine; then not one more.
		s.Post("/cart/lines/"+tom+"/remove", nil).WantRedirect("/cart")
		s.Post("/cart/lines/"+rex, handlerstest.Form("quantity", "4")).WantRedirect("/cart")
		s.Checkout(nil)
		s.Post("/cart", handlerstest.Form("pet_id", tom, "quantity", "1")).WantRedirect("/cart")
		r = s.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusConflict)
		if msg := r.Text("cart-error"); !strings.Contains(msg, "cancel one") {
			t.Errorf("message at the cap = %q", msg)
		}

		// Another browser has its own allowance.
		other := a.Shopper(t)
		other.Post("/cart", handlerstest.Form("pet_id", tom, "quantity", "10")).WantRedirect("/cart")
		other.Checkout(nil)
		if got := openUnitsOf(t, a); got != 20 {
			t.Fatalf("open units = %d, want 20", got)
		}
	})
}

// PETSTORE_SHOP_MAX_OPEN_UNITS sets the cap.
func TestShopMaxOpenUnitsConfigured(t *testing.T) {
	a := handlerstest.New(t, func(h *handlers.Handler, _ *ratelimit.Config) { h.Config.ShopMaxOpenUnits = 2 })
	rex := handlerstest.Itoa(a.SeedPet("Rex", 5).ID)
	s := a.Shopper(t)
	s.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "3")).WantRedirect("/cart")
	if msg := s.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusConflict).Text("cart-error"); !strings.Contains(msg, "at most 2") {
		t.Errorf("message = %q", msg)
	}
	s.Post("/cart/lines/"+rex, handlerstest.Form("quantity", "2")).WantRedirect("/cart")
	s.Checkout(nil)
}

// Checkouts of one session at once (a script replaying its cookie) never
// together pass the cap: with 6 units in the cart only one of them places
// anything.
func TestShopMaxOpenUnitsConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		seed := handlerstest.SeedShop(t, a, handlerstest.ShopPetSpec{Cat: "Dogs", Name: "Rex", Stock: 50})
		s := a.Shopper(t)
		s.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(seed.Pets["Rex"].ID), "quantity", "6")).WantRedirect("/cart")
		var cookies []string
		for k, v := range s.Cookies {
			cookies = append(cookies, k+"="+v.Value)
		}

		statuses := handlerstest.PostAtOnce(t, a, 4, "/checkout", "_csrf="+s.CSRF+"&"+handlerstest.Buyer().Encode(), func(r *http.Request) {
			r.Header.Set("Cookie", strings.Join(cookies, "; "))
		})
		if statuses[http.StatusSeeOther] != 1 || statuses[http.StatusConflict] != 3 {
			t.Fatalf("answers = %v, want one checkout placed (303) and three refused (409)", statuses)
		}
		if got := openUnitsOf(t, a); got != 6 {
			t.Fatalf("open units = %d, want 6", got)
		}
		if got := handlerstest.PetStock(t, a, seed.Pets["Rex"].ID); got != 44 {
			t.Fatalf("stock = %d, want 44", got)
		}
	})
}
