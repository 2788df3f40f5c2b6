package handlers_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestShopPetPage(t *testing.T) {
	a := newTestApp(t)
	s := catalogSeed(t, a)
	c := newShopClient(t, a)

	r := c.get("/pets/" + itoa(s.pets["Rex"].ID)).wantStatus(http.StatusOK)
	for id, want := range map[string]string{"pet-name": "Rex", "category": "Dogs", "status": "Available", "stock": "3 in stock"} {
		if got := r.find(`[data-testid="pet"] [data-testid="` + id + `"]`).First().Text(); strings.TrimSpace(got) != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if n := r.find("h1").Length(); n != 1 {
		t.Errorf("%d h1, want 1", n)
	}
	f := r.testid("order-form").Find("form")
	if m, _ := f.Attr("method"); m != "post" || f.AttrOr("action", "") != "/cart" {
		t.Errorf("order form %s %s, want post /cart", m, f.AttrOr("action", ""))
	}
	if f.Find(`input[name="_csrf"]`).AttrOr("value", "") != c.csrf || c.csrf == "" {
		t.Error("order form lacks the CSRF token")
	}
	if r.find(`label[for="quantity"]`).Length() != 1 {
		t.Error("quantity has no label")
	}
	if label, _ := r.find(`[data-testid="pet"] svg[role="img"]`).Attr("aria-label"); !strings.Contains(label, "Rex") {
		t.Errorf("picture label = %q", label)
	}

	sold := c.get("/pets/" + itoa(s.pets["Bella"].ID)).wantStatus(http.StatusOK)
	if sold.testid("add-to-cart").Length() != 0 || sold.testid("unavailable").Length() != 1 {
		t.Error("a sold pet offers the order form")
	}

	for path, status := range map[string]int{
		"/pets/abc": 400, "/pets/0": 400, "/pets/-3": 400, "/pets/99999999999999999999": 400, "/pets/424242": 404,
	} {
		r := c.get(path).wantStatus(status)
		if r.testid("error").Length() != 1 || r.testid("nav-cart").Length() != 1 {
			t.Errorf("%s: not a shop error page", path)
		}
	}
	if err := a.store.DeletePet(t.Context(), s.pets["Milo"].ID); err != nil {
		t.Fatal(err)
	}
	c.get("/pets/" + itoa(s.pets["Milo"].ID)).wantStatus(http.StatusNotFound)
}

func TestShopAddToCart(t *testing.T) {
	a := newTestApp(t)
	s := catalogSeed(t, a)
	c := newShopClient(t, a)
	rex, milo := itoa(s.pets["Rex"].ID), itoa(s.pets["Milo"].ID)

	c.post("/cart", form("pet_id", rex, "quantity", "2")).wantRedirect("/cart")
	r := c.get("/cart").wantStatus(http.StatusOK)
	if got := r.text("flash"); got != "Added 2 × Rex to your cart." {
		t.Errorf("flash = %q", got)
	}
	if got := r.text("cart-count"); got != "(2 items)" {
		t.Errorf("cart count = %q", got)
	}
	if got := r.texts("line-name"); !slices.Equal(got, []string{"Rex"}) {
		t.Errorf("lines = %q", got)
	}
	if got := r.testid("line-quantity").AttrOr("value", ""); got != "2" {
		t.Errorf("quantity = %q", got)
	}
	if c.get("/cart").text("flash") != "" {
		t.Error("the flash shows twice")
	}

	t.Run("htmx gets the form back and the count out of band", func(t *testing.T) {
		r := c.post("/cart", form("pet_id", milo, "quantity", "1"), true).wantStatus(http.StatusOK)
		if r.isFullPage() || r.find("#order-form").Length() != 1 {
			t.Fatalf("not the order form fragment:\n%s", r.Body)
		}
		if oob := r.find(`#cart-count[hx-swap-oob]`); oob.Length() != 1 || !strings.Contains(oob.Text(), "3") {
			t.Errorf("cart count not swapped out of band: %q", oob.Text())
		}
		if got := r.find(`#flash[hx-swap-oob] [data-testid="flash"]`).Text(); got != "Added 1 × Milo to your cart." {
			t.Errorf("flash = %q", got)
		}
		if got := r.text("in-cart"); !strings.Contains(got, "You have 1") {
			t.Errorf("in cart = %q", got)
		}
	})

	t.Run("adding again adds up, within the stock", func(t *testing.T) {
		r := c.post("/cart", form("pet_id", rex, "quantity", "2")).wantStatus(http.StatusUnprocessableEntity)
		if got := r.text("form-error"); got != "Only 3 left. Your cart has 2 already." {
			t.Errorf("error = %q", got)
		}
		if r.testid("quantity").AttrOr("aria-invalid", "") != "true" {
			t.Error("the input is not marked invalid")
		}
		c.post("/cart", form("pet_id", rex, "quantity", "1")).wantRedirect("/cart")
		if got := c.get("/cart").testid("line-quantity").First().AttrOr("value", ""); got != "3" {
			t.Errorf("Rex quantity = %q, want 3", got)
		}
	})

	t.Run("bad quantities re-render the form with 422", func(t *testing.T) {
		for _, q := range []string{"", "0", "-1", "abc", "1.5", "1001", "99999999999999999999"} {
			r := c.post("/cart", form("pet_id", milo, "quantity", q)).wantStatus(http.StatusUnprocessableEntity)
			if got := r.text("form-error"); got != "Enter a whole number from 1 to 1000." {
				t.Errorf("quantity %q: error = %q", q, got)
			}
			if r.testid("pet").Length() != 1 {
				t.Errorf("quantity %q: not the pet page", q)
			}
		}
		hx := c.post("/cart", form("pet_id", milo, "quantity", "0"), true).wantStatus(http.StatusUnprocessableEntity)
		if hx.isFullPage() || hx.text("form-error") == "" {
			t.Errorf("htmx 422 is not the form fragment:\n%s", hx.Body)
		}
	})

	t.Run("a pet that cannot be ordered", func(t *testing.T) {
		r := c.post("/cart", form("pet_id", itoa(s.pets["Bella"].ID), "quantity", "1")).wantStatus(http.StatusUnprocessableEntity)
		if got := r.text("unavailable"); !strings.Contains(got, "Bella") {
			t.Errorf("sold pet: %q", got)
		}
		c.post("/cart", form("pet_id", "424242", "quantity", "1")).wantStatus(http.StatusNotFound)
		c.post("/cart", form("pet_id", "dog", "quantity", "1")).wantStatus(http.StatusBadRequest)
		c.post("/cart", form("quantity", "1")).wantStatus(http.StatusBadRequest)
		hx := c.post("/cart", form("pet_id", "424242", "quantity", "1"), true).wantStatus(http.StatusNotFound)
		if hx.Header.Get("HX-Retarget") != "#flash" || hx.text("flash") == "" {
			t.Errorf("htmx 404 is not a message for #flash: %v\n%s", hx.Header, hx.Body)
		}
	})
}

func TestShopCartUpdate(t *testing.T) {
	a := newTestApp(t)
	s := catalogSeed(t, a)
	c := newShopClient(t, a)
	rex, milo := itoa(s.pets["Rex"].ID), itoa(s.pets["Milo"].ID)
	c.submit("/cart", form("pet_id", rex, "quantity", "1"))
	c.submit("/cart", form("pet_id", milo, "quantity", "1"))

	c.post("/cart/lines/"+rex, form("quantity", "3")).wantRedirect("/cart")
	r := c.get("/cart")
	if got := r.text("flash"); got != "Updated Rex to 3." {
		t.Errorf("flash = %q", got)
	}
	if got := r.text("cart-count"); got != "(4 items)" {
		t.Errorf("count = %q", got)
	}

	r = c.post("/cart/lines/"+rex, form("quantity", "4")).wantStatus(http.StatusUnprocessableEntity)
	if got := r.text("line-error"); got != "Only 3 left." {
		t.Errorf("line error = %q", got)
	}
	if got := r.find(`[data-pet-id="`+rex+`"] [data-testid="line-quantity"]`).AttrOr("value", ""); got != "4" {
		t.Errorf("the refused input is not kept: %q", got)
	}
	r = c.post("/cart/lines/"+milo, form("quantity", "zero"), true).wantStatus(http.StatusUnprocessableEntity)
	if r.isFullPage() || r.find("#cart").Length() != 1 || r.text("line-error") != "Enter a whole number from 1 to 1000." {
		t.Errorf("htmx 422 is not the cart fragment with the error:\n%s", r.Body)
	}

	r = c.post("/cart/lines/"+milo+"/remove", nil, true).wantStatus(http.StatusOK)
	if got := r.texts("line-name"); !slices.Equal(got, []string{"Rex"}) {
		t.Errorf("after remove: %q", got)
	}
	if got := r.find(`#cart-count[hx-swap-oob]`).Text(); !strings.Contains(got, "3") {
		t.Errorf("count after remove = %q", got)
	}
	c.post("/cart/lines/"+milo+"/remove", nil).wantStatus(http.StatusNotFound)
	c.post("/cart/lines/abc", form("quantity", "1")).wantStatus(http.StatusBadRequest)
	c.post("/cart/lines/"+rex+"/remove", nil).wantRedirect("/cart")
	if c.get("/cart").testid("cart-empty").Length() != 1 {
		t.Error("the cart is not empty")
	}
}

func TestShopCSRF(t *testing.T) {
	a := newTestApp(t)
	s := catalogSeed(t, a)
	c := newShopClient(t, a)
	rex := itoa(s.pets["Rex"].ID)

	for name, f := range map[string]map[string]string{
		"missing": {"pet_id": rex, "quantity": "1", "_csrf": ""},
		"wrong":   {"pet_id": rex, "quantity": "1", "_csrf": "forged"},
	} {
		v := form()
		for k, x := range f {
			v.Set(k, x)
		}
		r := c.post("/cart", v).wantStatus(http.StatusForbidden)
		if r.testid("error").Length() != 1 {
			t.Errorf("%s token: not the shop's error page", name)
		}
	}
	// Another browser's token does not work either.
	other := newShopClient(t, a)
	c.post("/cart", form("pet_id", rex, "quantity", "1", "_csrf", other.csrf)).wantStatus(http.StatusForbidden)
	for _, path := range []string{"/checkout", "/orders/1/cancel", "/cart/lines/" + rex} {
		c.post(path, form("_csrf", "x")).wantStatus(http.StatusForbidden)
	}
	if c.get("/cart").testid("cart-empty").Length() != 1 {
		t.Error("a forged post changed the cart")
	}
	// htmx sends the token in the X-CSRF-Token header (hx-headers on <body>).
	r := c.send(http.MethodPost, "/cart", form("pet_id", rex, "quantity", "1").Encode(),
		map[string]string{"HX-Request": "true", "X-CSRF-Token": c.csrf})
	r.wantStatus(http.StatusOK)
}

// TestShopFlashesBounded: a script that posts to the cart again and again
// without loading a page gets a working session every time (the queued
// messages do not outgrow the cookie), and the next page shows only the
// newest few.
func TestShopFlashesBounded(t *testing.T) {
	a := newTestApp(t)
	s := catalogSeed(t, a)
	c := newShopClient(t, a)
	rex := itoa(s.pets["Rex"].ID)
	for range 27 { // 54 posts, under the form limit of 60 a minute
		c.post("/cart", form("pet_id", rex, "quantity", "1")).wantRedirect("/cart")
		c.post("/cart/lines/"+rex+"/remove", form()).wantRedirect("/cart")
	}
	if got := c.get("/cart").wantStatus(http.StatusOK).texts("flash"); len(got) != 3 {
		t.Errorf("the cart page shows %d messages, want the newest 3: %q", len(got), got)
	}
}
