package shop_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

func TestShopCheckout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) { testShopCheckout(t, handlerstest.NewOn(t, open)) })
}

func testShopCheckout(t *testing.T, a *handlerstest.App) {
	s := catalogSeed(t, a)
	rex, milo := s.Pets["Rex"], s.Pets["Milo"]

	t.Run("success places every line and empties the cart", func(t *testing.T) {
		c := a.Shopper(t)
		c.Submit("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "2"))
		c.Submit("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1"))
		n := c.Checkout(nil)
		r := c.Get("/orders/confirmation/" + handlerstest.Itoa(n)).WantStatus(http.StatusOK)
		if got := r.Text("order-number"); got != handlerstest.Itoa(n) {
			t.Errorf("order number = %q, want %d", got, n)
		}
		if got := r.Texts("order-pet"); !slices.Equal(got, []string{"Rex", "Milo"}) {
			t.Errorf("confirmation lists %q, want the cart's order", got)
		}
		if got := c.Get("/orders").Find(`[data-testid="order"][data-state="open"] [data-testid="order-pet"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() }); !slices.Equal(got, []string{"Rex", "Milo"}) {
			t.Errorf("open orders = %q", got)
		}
		if got := r.Text("cart-count"); got != "(0 items)" {
			t.Errorf("count = %q", got)
		}
		if handlerstest.PetStock(t, a, rex.ID) != 1 || handlerstest.PetStock(t, a, milo.ID) != 1 {
			t.Error("stock did not go down")
		}
		if c.Get("/cart").ID("cart-empty").Length() != 1 {
			t.Error("the cart is not empty")
		}
		handlerstest.SetStock(t, a, rex.ID, 3)
		handlerstest.SetStock(t, a, milo.ID, 2)
	})

	t.Run("htmx success redirects with HX-Redirect", func(t *testing.T) {
		c := a.Shopper(t)
		c.Submit("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1"))
		n := c.Checkout(nil, true)
		if got := c.Get("/orders/confirmation/" + handlerstest.Itoa(n)).WantStatus(http.StatusOK).Texts("order-pet"); !slices.Equal(got, []string{"Milo"}) {
			t.Errorf("confirmation lists %q", got)
		}
		handlerstest.SetStock(t, a, milo.ID, 2)
	})

	t.Run("stock changed meanwhile: nothing is ordered, the cart stays", func(t *testing.T) {
		c := a.Shopper(t)
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1")).WantRedirect("/cart")
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "3")).WantRedirect("/cart")
		handlerstest.SetStock(t, a, rex.ID, 2) // someone else bought one
		r := c.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusUnprocessableEntity)
		bad := r.Find(`[data-testid="cart-line"]:has([data-testid="line-error"])`)
		if bad.Length() != 1 || bad.AttrOr("data-pet-id", "") != handlerstest.Itoa(rex.ID) {
			t.Fatalf("failing line not marked:\n%s", r.Body)
		}
		if got := r.Text("line-error"); got != "Only 2 left." {
			t.Errorf("line error = %q", got)
		}
		if got := r.Text("cart-error"); !strings.Contains(got, "Nothing was ordered. Rex: Only 2 left.") {
			t.Errorf("summary = %q", got)
		}
		if handlerstest.PetStock(t, a, milo.ID) != 2 {
			t.Error("the first line was ordered anyway")
		}
		if got := c.Get("/cart").Texts("line-name"); !slices.Equal(got, []string{"Milo", "Rex"}) {
			t.Errorf("cart after failure = %q", got)
		}
		if got := c.Get("/orders").ID("order").Length(); got != 0 {
			t.Errorf("%d orders placed", got)
		}
		hx := c.HXPost("/checkout", handlerstest.Buyer()).WantStatus(http.StatusUnprocessableEntity)
		if hx.IsFullPage() || hx.Text("line-error") != "Only 2 left." {
			t.Errorf("htmx failure is not the cart fragment:\n%s", hx.Body)
		}
		handlerstest.SetStock(t, a, rex.ID, 3)
	})

	t.Run("pets no longer available or gone", func(t *testing.T) {
		c := a.Shopper(t)
		gone := s.AddPet(t, a, s.Cats["Dogs"].ID, "Shadow", 1)
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(gone.ID), "quantity", "1")).WantRedirect("/cart")
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "2")).WantRedirect("/cart")
		if err := a.Store.DeletePet(t.Context(), gone.ID); err != nil {
			t.Fatal(err)
		}
		r := c.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusUnprocessableEntity)
		if got := r.Text("line-error"); got != "This pet is no longer in the catalog." {
			t.Errorf("deleted pet: %q", got)
		}
		if got := r.Texts("line-name"); !slices.Equal(got, []string{"Pet #" + handlerstest.Itoa(gone.ID), "Milo"}) {
			t.Errorf("lines = %q", got)
		}
		c.Post("/cart/lines/"+handlerstest.Itoa(gone.ID)+"/remove", nil).WantRedirect("/cart")

		other := a.Shopper(t)
		other.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "2")).WantRedirect("/cart")
		other.Checkout(nil) // Milo is now pending
		r = c.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusUnprocessableEntity)
		if got := r.Text("line-error"); got != "No longer available." {
			t.Errorf("pending pet: %q", got)
		}
	})

	t.Run("an empty cart", func(t *testing.T) {
		c := a.Shopper(t)
		r := c.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusUnprocessableEntity)
		if !strings.Contains(r.Text("cart-error"), "empty") {
			t.Errorf("error = %q", r.Text("cart-error"))
		}
	})
}

func TestShopOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) { testShopOrders(t, handlerstest.NewOn(t, open)) })
}

func testShopOrders(t *testing.T, a *handlerstest.App) {
	s := catalogSeed(t, a)
	rex, milo := s.Pets["Rex"], s.Pets["Milo"]
	c := a.Shopper(t)
	if c.Get("/orders").ID("orders-empty").Length() != 1 {
		t.Error("a new browser has orders")
	}
	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "1")).WantRedirect("/cart")
	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "2")).WantRedirect("/cart")
	c.Checkout(nil)

	r := c.Get("/orders")
	ids := r.Find(`[data-testid="order"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-order-id", "") })
	if len(ids) != 2 {
		t.Fatalf("orders = %q", ids)
	}
	rexOrder, milosOrder := shopAtoi(t, ids[0]), shopAtoi(t, ids[1]) // one checkout, in the cart's order
	if _, err := a.Store.UpdateOrder(t.Context(), rexOrder, db.OrderUpdate{Complete: handlerstest.Ptr(true)}); err != nil {
		t.Fatal(err)
	}

	r = c.Get("/orders")
	open := r.Find(`[data-testid="order"][data-state="open"]`)
	done := r.Find(`[data-testid="order"][data-state="complete"]`)
	if open.Length() != 1 || done.Length() != 1 {
		t.Fatalf("open %d, complete %d; want 1 and 1", open.Length(), done.Length())
	}
	if got := strings.Fields(open.Find(`[data-testid="order-pet"]`).Text() + " " + open.Find(`[data-testid="order-quantity"]`).Text()); !slices.Equal(got, []string{"Milo", "×", "2"}) {
		t.Errorf("open order reads %q", got)
	}
	if done.Find(`[data-testid="cancel"]`).Length() != 0 || done.Find(`[data-testid="order-state"]`).Text() != "Complete" {
		t.Error("a complete order offers cancel")
	}
	if open.Find(`form[action="/orders/`+handlerstest.Itoa(milosOrder)+`/cancel"]`).Length() != 1 {
		t.Error("the open order has no cancel form")
	}

	t.Run("others cannot see or cancel them", func(t *testing.T) {
		other := a.Shopper(t)
		if other.Get("/orders").ID("order").Length() != 0 {
			t.Error("another browser sees these orders")
		}
		other.Post("/orders/"+handlerstest.Itoa(milosOrder)+"/cancel", nil).WantStatus(http.StatusNotFound)
		other.Post("/orders/abc/cancel", nil).WantStatus(http.StatusBadRequest)
	})

	t.Run("a complete order cannot be cancelled", func(t *testing.T) {
		r := c.Post("/orders/"+handlerstest.Itoa(rexOrder)+"/cancel", nil).WantStatus(http.StatusConflict)
		if !strings.Contains(r.Text("error-message"), "complete") {
			t.Errorf("message = %q", r.Text("error-message"))
		}
	})

	t.Run("cancel puts the stock back", func(t *testing.T) {
		before := handlerstest.PetStock(t, a, milo.ID)
		r := c.HXPost("/orders/"+handlerstest.Itoa(milosOrder)+"/cancel", nil).WantStatus(http.StatusOK)
		if r.IsFullPage() || r.Find("#orders").Length() != 1 {
			t.Fatalf("not the orders fragment:\n%s", r.Body)
		}
		if got := r.Find(`#flash[hx-swap-oob] [data-testid="flash"]`).Text(); got != "Your order of Milo × 2 is cancelled." {
			t.Errorf("flash = %q", got)
		}
		if r.Find(`[data-state="open"]`).Length() != 0 {
			t.Error("the cancelled order is still open")
		}
		if got := handlerstest.PetStock(t, a, milo.ID); got != before+2 {
			t.Errorf("stock = %d, want %d", got, before+2)
		}
		c.Post("/orders/"+handlerstest.Itoa(milosOrder)+"/cancel", nil).WantStatus(http.StatusNotFound)
	})

	t.Run("plain form cancel redirects", func(t *testing.T) {
		c.Submit("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1"))
		n := c.Checkout(nil)
		id := c.Get("/orders").Find(`[data-checkout-id="`+handlerstest.Itoa(n)+`"] [data-testid="order"][data-state="open"]`).AttrOr("data-order-id", "")
		c.Post("/orders/"+id+"/cancel", nil).WantRedirect("/orders")
		if got := c.Get("/orders").Text("flash"); got != "Your order of Milo × 1 is cancelled." {
			t.Errorf("flash = %q", got)
		}
	})

	t.Run("a deleted pet keeps its name in the history", func(t *testing.T) {
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1")).WantRedirect("/cart")
		c.Checkout(nil)
		id := shopAtoi(t, c.Get("/orders").Find(`[data-testid="order"][data-state="open"]`).AttrOr("data-order-id", ""))
		if _, err := a.Store.UpdateOrder(t.Context(), id, db.OrderUpdate{Complete: handlerstest.Ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if err := a.Store.DeletePet(t.Context(), milo.ID); err != nil {
			t.Fatal(err)
		}
		r := c.Get("/orders")
		names := r.Find(`[data-testid="order"][data-state="complete"] [data-testid="order-pet"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if !slices.Contains(names, "Milo") {
			t.Errorf("complete orders = %q", names)
		}
		if r.Find(`a[href="/pets/`+handlerstest.Itoa(milo.ID)+`"]`).Length() != 0 {
			t.Error("a deleted pet is still linked")
		}
	})
}

func shopAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an id: %q", s)
	}
	return n
}
