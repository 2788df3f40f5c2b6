package shop_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"petstore/handlers/handlerstest"
)

func TestShopPetPage(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)

	r := c.Get("/pets/" + handlerstest.Itoa(s.Pets["Rex"].ID)).WantStatus(http.StatusOK)
	for id, want := range map[string]string{"pet-name": "Rex", "category": "Dogs", "status": "Available", "stock": "3 in stock"} {
		if got := r.Find(`[data-testid="pet"] [data-testid="` + id + `"]`).First().Text(); strings.TrimSpace(got) != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if n := r.Find("h1").Length(); n != 1 {
		t.Errorf("%d h1, want 1", n)
	}
	f := r.ID("order-form").Find("form")
	if m, _ := f.Attr("method"); m != "post" || f.AttrOr("action", "") != "/cart" {
		t.Errorf("order form %s %s, want post /cart", m, f.AttrOr("action", ""))
	}
	if f.Find(`input[name="_csrf"]`).AttrOr("value", "") != c.CSRF || c.CSRF == "" {
		t.Error("order form lacks the CSRF token")
	}
	if r.Find(`label[for="quantity"]`).Length() != 1 {
		t.Error("quantity has no label")
	}
	if label, _ := r.Find(`[data-testid="pet"] svg[role="img"]`).Attr("aria-label"); !strings.Contains(label, "Rex") {
		t.Errorf("picture label = %q", label)
	}

	sold := c.Get("/pets/" + handlerstest.Itoa(s.Pets["Bella"].ID)).WantStatus(http.StatusOK)
	if sold.ID("add-to-cart").Length() != 0 || sold.ID("unavailable").Length() != 1 {
		t.Error("a sold pet offers the order form")
	}

	for path, status := range map[string]int{
		"/pets/abc": 400, "/pets/0": 400, "/pets/-3": 400, "/pets/99999999999999999999": 400, "/pets/424242": 404,
	} {
		r := c.Get(path).WantStatus(status)
		if r.ID("error").Length() != 1 || r.ID("nav-cart").Length() != 1 {
			t.Errorf("%s: not a shop error page", path)
		}
	}
	if err := a.Store.DeletePet(t.Context(), s.Pets["Milo"].ID); err != nil {
		t.Fatal(err)
	}
	c.Get("/pets/" + handlerstest.Itoa(s.Pets["Milo"].ID)).WantStatus(http.StatusNotFound)
}

func TestShopAddToCart(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	rex, milo := handlerstest.Itoa(s.Pets["Rex"].ID), handlerstest.Itoa(s.Pets["Milo"].ID)

	c.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "2")).WantRedirect("/cart")
	r := c.Get("/cart").WantStatus(http.StatusOK)
	if got := r.Text("flash"); got != "Added 2 × Rex to your cart." {
		t.Errorf("flash = %q", got)
	}
	if got := r.Text("cart-count"); got != "(2 items)" {
		t.Errorf("cart count = %q", got)
	}
	if got := r.Texts("line-name"); !slices.Equal(got, []string{"Rex"}) {
		t.Errorf("lines = %q", got)
	}
	if got := r.ID("line-quantity").AttrOr("value", ""); got != "2" {
		t.Errorf("quantity = %q", got)
	}
	if c.Get("/cart").Text("flash") != "" {
		t.Error("the flash shows twice")
	}

	t.Run("htmx gets the form back and the count out of band", func(t *testing.T) {
		r := c.HXPost("/cart", handlerstest.Form("pet_id", milo, "quantity", "1")).WantStatus(http.StatusOK)
		if r.IsFullPage() || r.Find("#order-form").Length() != 1 {
			t.Fatalf("not the order form fragment:\n%s", r.Body)
		}
		if oob := r.Find(`#cart-count[hx-swap-oob]`); oob.Length() != 1 || !strings.Contains(oob.Text(), "3") {
			t.Errorf("cart count not swapped out of band: %q", oob.Text())
		}
		if got := r.Find(`#flash[hx-swap-oob] [data-testid="flash"]`).Text(); got != "Added 1 × Milo to your cart." {
			t.Errorf("flash = %q", got)
		}
		if got := r.Text("in-cart"); !strings.Contains(got, "You have 1") {
			t.Errorf("in cart = %q", got)
		}
	})

	t.Run("adding again adds up, within the stock", func(t *testing.T) {
		r := c.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "2")).WantStatus(http.StatusUnprocessableEntity)
		if got := r.Text("form-error"); got != "Only 3 left. Your cart has 2 already." {
			t.Errorf("error = %q", got)
		}
		if r.ID("quantity").AttrOr("aria-invalid", "") != "true" {
			t.Error("the input is not marked invalid")
		}
		c.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "1")).WantRedirect("/cart")
		if got := c.Get("/cart").ID("line-quantity").First().AttrOr("value", ""); got != "3" {
			t.Errorf("Rex quantity = %q, want 3", got)
		}
	})

	t.Run("bad quantities re-render the form with 422", func(t *testing.T) {
		for _, q := range []string{"", "0", "-1", "abc", "1.5", "1001", "99999999999999999999"} {
			r := c.Post("/cart", handlerstest.Form("pet_id", milo, "quantity", q)).WantStatus(http.StatusUnprocessableEntity)
			if got := r.Text("form-error"); got != "Enter a whole number from 1 to 1000." {
				t.Errorf("quantity %q: error = %q", q, got)
			}
			if r.ID("pet").Length() != 1 {
				t.Errorf("quantity %q: not the pet page", q)
			}
		}
		hx := c.HXPost("/cart", handlerstest.Form("pet_id", milo, "quantity", "0")).WantStatus(http.StatusUnprocessableEntity)
		if hx.IsFullPage() || hx.Text("form-error") == "" {
			t.Errorf("htmx 422 is not the form fragment:\n%s", hx.Body)
		}
	})

	t.Run("a pet that cannot be ordered", func(t *testing.T) {
		r := c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(s.Pets["Bella"].ID), "quantity", "1")).WantStatus(http.StatusUnprocessableEntity)
		if got := r.Text("unavailable"); !strings.Contains(got, "Bella") {
			t.Errorf("sold pet: %q", got)
		}
		c.Post("/cart", handlerstest.Form("pet_id", "424242", "quantity", "1")).WantStatus(http.StatusNotFound)
		c.Post("/cart", handlerstest.Form("pet_id", "dog", "quantity", "1")).WantStatus(http.StatusBadRequest)
		c.Post("/cart", handlerstest.Form("quantity", "1")).WantStatus(http.StatusBadRequest)
		hx := c.HXPost("/cart", handlerstest.Form("pet_id", "424242", "quantity", "1")).WantStatus(http.StatusNotFound)
		if hx.Header.Get("HX-Retarget") != "#flash" || hx.Text("flash") == "" {
			t.Errorf("htmx 404 is not a message for #flash: %v\n%s", hx.Header, hx.Body)
		}
	})
}

func TestShopCartUpdate(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	rex, milo := handlerstest.Itoa(s.Pets["Rex"].ID), handlerstest.Itoa(s.Pets["Milo"].ID)
	c.Submit("/cart", handlerstest.Form("pet_id", rex, "quantity", "1"))
	c.Submit("/cart", handlerstest.Form("pet_id", milo, "quantity", "1"))

	c.Post("/cart/lines/"+rex, handlerstest.Form("quantity", "3")).WantRedirect("/cart")
	r := c.Get("/cart")
	if got := r.Text("flash"); got != "Updated Rex to 3." {
		t.Errorf("flash = %q", got)
	}
	if got := r.Text("cart-count"); got != "(4 items)" {
		t.Errorf("count = %q", got)
	}

	r = c.Post("/cart/lines/"+rex, handlerstest.Form("quantity", "4")).WantStatus(http.StatusUnprocessableEntity)
	if got := r.Text("line-error"); got != "Only 3 left." {
		t.Errorf("line error = %q", got)
	}
	if got := r.Find(`[data-pet-id="`+rex+`"] [data-testid="line-quantity"]`).AttrOr("value", ""); got != "4" {
		t.Errorf("the refused input is not kept: %q", got)
	}
	r = c.HXPost("/cart/lines/"+milo, handlerstest.Form("quantity", "zero")).WantStatus(http.StatusUnprocessableEntity)
	if r.IsFullPage() || r.Find("#cart").Length() != 1 || r.Text("line-error") != "Enter a whole number from 1 to 1000." {
		t.Errorf("htmx 422 is not the cart fragment with the error:\n%s", r.Body)
	}

	r = c.HXPost("/cart/lines/"+milo+"/remove", nil).WantStatus(http.StatusOK)
	if got := r.Texts("line-name"); !slices.Equal(got, []string{"Rex"}) {
		t.Errorf("after remove: %q", got)
	}
	if got := r.Find(`#cart-count[hx-swap-oob]`).Text(); !strings.Contains(got, "3") {
		t.Errorf("count after remove = %q", got)
	}
	c.Post("/cart/lines/"+milo+"/remove", nil).WantStatus(http.StatusNotFound)
	c.Post("/cart/lines/abc", handlerstest.Form("quantity", "1")).WantStatus(http.StatusBadRequest)
	c.Post("/cart/lines/"+rex+"/remove", nil).WantRedirect("/cart")
	if c.Get("/cart").ID("cart-empty").Length() != 1 {
		t.Error("the cart is not empty")
	}
}

func TestShopCSRF(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	rex := handlerstest.Itoa(s.Pets["Rex"].ID)

	for name, f := range map[string]map[string]string{
		"missing": {"pet_id": rex, "quantity": "1", "_csrf": ""},
		"wrong":   {"pet_id": rex, "quantity": "1", "_csrf": "forged"},
	} {
		v := handlerstest.Form()
		for k, x := range f {
			v.Set(k, x)
		}
		r := c.Post("/cart", v).WantStatus(http.StatusForbidden)
		if r.ID("error").Length() != 1 {
			t.Errorf("%s token: not the shop's error page", name)
		}
	}
	// Another browser's token does not work either.
	other := a.Shopper(t)
	c.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "1", "_csrf", other.CSRF)).WantStatus(http.StatusForbidden)
	for _, path := range []string{"/checkout", "/orders/1/cancel", "/cart/lines/" + rex, "/orders/lookup", "/orders/lookup/1/orders/1/cancel"} {
		c.Post(path, handlerstest.Form("_csrf", "x")).WantStatus(http.StatusForbidden)
	}
	if c.Get("/cart").ID("cart-empty").Length() != 1 {
		t.Error("a forged post changed the cart")
	}
	// htmx sends the token in the X-CSRF-Token header (hx-headers on <body>).
	c.HXPost("/cart", handlerstest.Form("pet_id", rex, "quantity", "1")).WantStatus(http.StatusOK)
}

// TestShopFlashesBounded: a script that posts to the cart again and again
// without loading a page gets a working session every time (the queued
// messages do not outgrow the cookie), and the next page shows only the
// newest few.
func TestShopFlashesBounded(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	rex := handlerstest.Itoa(s.Pets["Rex"].ID)
	for range 27 { // 54 posts, under the form limit of 60 a minute
		c.Post("/cart", handlerstest.Form("pet_id", rex, "quantity", "1")).WantRedirect("/cart")
		c.Post("/cart/lines/"+rex+"/remove", handlerstest.Form()).WantRedirect("/cart")
	}
	if got := c.Get("/cart").WantStatus(http.StatusOK).Texts("flash"); len(got) != 3 {
		t.Errorf("the cart page shows %d messages, want the newest 3: %q", len(got), got)
	}
}
