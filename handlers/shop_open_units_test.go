package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/web/ratelimit"
)

// openUnitsOf sums the open units of every storefront shopper.
func openUnitsOf(t *testing.T, a *testApp) int64 {
	t.Helper()
	var n int64
	err := a.store.DB().Get(&n, `SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE shopper_id IS NOT NULL AND state = 'open'`)
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
		a := newTestAppOn(t, open) // the default cap, 10
		seed := seedShop(t, a, shopPetSpec{"Dogs", "Rex", 50}, shopPetSpec{"Cats", "Tom", 50})
		rex, tom := itoa(seed.pets["Rex"].ID), itoa(seed.pets["Tom"].ID)
		s := newShopClient(t, a)
		s.post("/cart", form("pet_id", rex, "quantity", "6")).wantRedirect("/cart")
		s.post("/checkout", nil).wantRedirect("/orders")

		s.post("/cart", form("pet_id", rex, "quantity", "3")).wantRedirect("/cart")
		s.post("/cart", form("pet_id", tom, "quantity", "2")).wantRedirect("/cart")
		r := s.post("/checkout", nil).wantStatus(http.StatusConflict)
		if msg := r.text("cart-error"); !strings.Contains(msg, "Nothing was ordered") || !strings.Contains(msg, "at most 10") || !strings.Contains(msg, "You can order 4 more") {
			t.Errorf("message = %q", msg)
		}
		if got := r.texts("line-name"); len(got) != 2 {
			t.Errorf("cart lines = %q, want both kept", got)
		}
		if got := openUnitsOf(t, a); got != 6 {
			t.Fatalf("open units = %d, want 6: nothing of the refused checkout placed", got)
		}
		if got := petStock(t, a, seed.pets["Tom"].ID); got != 50 {
			t.Fatalf("Tom's stock = %d, want 50", got)
		}
		hx := s.post("/checkout", nil, true).wantStatus(http.StatusConflict)
		if hx.isFullPage() || !strings.Contains(hx.text("cart-error"), "at most 10") {
			t.Errorf("htmx: want the cart fragment with the message; got\n%s", hx.Body)
		}

		// Up to the cap exactly is fine; then not one more.
		s.post("/cart/lines/"+tom+"/remove", nil).wantRedirect("/cart")
		s.post("/cart/lines/"+rex, form("quantity", "4")).wantRedirect("/cart")
		s.post("/checkout", nil).wantRedirect("/orders")
		s.post("/cart", form("pet_id", tom, "quantity", "1")).wantRedirect("/cart")
		r = s.post("/checkout", nil).wantStatus(http.StatusConflict)
		if msg := r.text("cart-error"); !strings.Contains(msg, "cancel one") {
			t.Errorf("message at the cap = %q", msg)
		}

		// Another browser has its own allowance.
		other := newShopClient(t, a)
		other.post("/cart", form("pet_id", tom, "quantity", "10")).wantRedirect("/cart")
		other.post("/checkout", nil).wantRedirect("/orders")
		if got := openUnitsOf(t, a); got != 20 {
			t.Fatalf("open units = %d, want 20", got)
		}
	})
}

// PETSTORE_SHOP_MAX_OPEN_UNITS sets the cap.
func TestShopMaxOpenUnitsConfigured(t *testing.T) {
	a := newTestApp(t, func(h *handlers.Handler, _ *ratelimit.Config) { h.Config.ShopMaxOpenUnits = 2 })
	rex := itoa(a.seedPet("Rex", 5).ID)
	s := newShopClient(t, a)
	s.post("/cart", form("pet_id", rex, "quantity", "3")).wantRedirect("/cart")
	if msg := s.post("/checkout", nil).wantStatus(http.StatusConflict).text("cart-error"); !strings.Contains(msg, "at most 2") {
		t.Errorf("message = %q", msg)
	}
	s.post("/cart/lines/"+rex, form("quantity", "2")).wantRedirect("/cart")
	s.post("/checkout", nil).wantRedirect("/orders")
}

// Checkouts of one session at once (a script replaying its cookie) never
// together pass the cap: with 6 units in the cart only one of them places
// anything.
func TestShopMaxOpenUnitsConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		seed := seedShop(t, a, shopPetSpec{"Dogs", "Rex", 50})
		s := newShopClient(t, a)
		s.post("/cart", form("pet_id", itoa(seed.pets["Rex"].ID), "quantity", "6")).wantRedirect("/cart")
		var cookies []string
		for k, v := range s.cookies {
			cookies = append(cookies, k+"="+v)
		}

		statuses := postAtOnce(t, a, 4, "/checkout", "_csrf="+s.csrf, func(r *http.Request) {
			r.Header.Set("Cookie", strings.Join(cookies, "; "))
		})
		if statuses[http.StatusSeeOther] != 1 || statuses[http.StatusConflict] != 3 {
			t.Fatalf("answers = %v, want one checkout placed (303) and three refused (409)", statuses)
		}
		if got := openUnitsOf(t, a); got != 6 {
			t.Fatalf("open units = %d, want 6", got)
		}
		if got := petStock(t, a, seed.pets["Rex"].ID); got != 44 {
			t.Fatalf("stock = %d, want 44", got)
		}
	})
}
