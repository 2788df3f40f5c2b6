package handlers_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestShopCheckout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) { testShopCheckout(t, newTestAppOn(t, open)) })
}

func testShopCheckout(t *testing.T, a *testApp) {
	s := catalogSeed(t, a)
	rex, milo := s.pets["Rex"], s.pets["Milo"]

	t.Run("success places every line and empties the cart", func(t *testing.T) {
		c := newShopClient(t, a)
		c.submit("/cart", form("pet_id", itoa(rex.ID), "quantity", "2"))
		c.submit("/cart", form("pet_id", itoa(milo.ID), "quantity", "1"))
		c.post("/checkout", nil).wantRedirect("/orders")
		r := c.get("/orders").wantStatus(http.StatusOK)
		if got := r.text("flash"); !strings.HasPrefix(got, "Thank you! Your order is placed: orders #") {
			t.Errorf("flash = %q", got)
		}
		if got := r.find(`[data-testid="open-orders"] [data-testid="order-pet"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() }); !slices.Equal(got, []string{"Milo", "Rex"}) {
			t.Errorf("open orders = %q, want newest first", got)
		}
		if got := r.text("cart-count"); got != "(0 items)" {
			t.Errorf("count = %q", got)
		}
		if petStock(t, a, rex.ID) != 1 || petStock(t, a, milo.ID) != 1 {
			t.Error("stock did not go down")
		}
		if c.get("/cart").testid("cart-empty").Length() != 1 {
			t.Error("the cart is not empty")
		}
		setStock(t, a, rex.ID, 3)
		setStock(t, a, milo.ID, 2)
	})

	t.Run("htmx success redirects with HX-Redirect", func(t *testing.T) {
		c := newShopClient(t, a)
		c.submit("/cart", form("pet_id", itoa(milo.ID), "quantity", "1"))
		r := c.post("/checkout", nil, true).wantStatus(http.StatusOK)
		if got := r.Header.Get("HX-Redirect"); got != "/orders" {
			t.Errorf("HX-Redirect = %q", got)
		}
		if got := c.get("/orders").text("flash"); !strings.Contains(got, "order #") {
			t.Errorf("flash = %q", got)
		}
		setStock(t, a, milo.ID, 2)
	})

	t.Run("stock changed meanwhile: nothing is ordered, the cart stays", func(t *testing.T) {
		c := newShopClient(t, a)
		c.post("/cart", form("pet_id", itoa(milo.ID), "quantity", "1")).wantRedirect("/cart")
		c.post("/cart", form("pet_id", itoa(rex.ID), "quantity", "3")).wantRedirect("/cart")
		setStock(t, a, rex.ID, 2) // someone else bought one
		r := c.post("/checkout", nil).wantStatus(http.StatusUnprocessableEntity)
		bad := r.find(`[data-testid="cart-line"]:has([data-testid="line-error"])`)
		if bad.Length() != 1 || bad.AttrOr("data-pet-id", "") != itoa(rex.ID) {
			t.Fatalf("failing line not marked:\n%s", r.Body)
		}
		if got := r.text("line-error"); got != "Only 2 left." {
			t.Errorf("line error = %q", got)
		}
		if got := r.text("cart-error"); !strings.Contains(got, "Nothing was ordered. Rex: Only 2 left.") {
			t.Errorf("summary = %q", got)
		}
		if petStock(t, a, milo.ID) != 2 {
			t.Error("the first line was ordered anyway")
		}
		if got := c.get("/cart").texts("line-name"); !slices.Equal(got, []string{"Milo", "Rex"}) {
			t.Errorf("cart after failure = %q", got)
		}
		if got := c.get("/orders").testid("order").Length(); got != 0 {
			t.Errorf("%d orders placed", got)
		}
		hx := c.post("/checkout", nil, true).wantStatus(http.StatusUnprocessableEntity)
		if hx.isFullPage() || hx.text("line-error") != "Only 2 left." {
			t.Errorf("htmx failure is not the cart fragment:\n%s", hx.Body)
		}
		setStock(t, a, rex.ID, 3)
	})

	t.Run("pets no longer available or gone", func(t *testing.T) {
		c := newShopClient(t, a)
		gone := s.addPet(t, a, s.cats["Dogs"].ID, "Shadow", 1)
		c.post("/cart", form("pet_id", itoa(gone.ID), "quantity", "1")).wantRedirect("/cart")
		c.post("/cart", form("pet_id", itoa(milo.ID), "quantity", "2")).wantRedirect("/cart")
		if err := a.store.DeletePet(t.Context(), gone.ID); err != nil {
			t.Fatal(err)
		}
		r := c.post("/checkout", nil).wantStatus(http.StatusUnprocessableEntity)
		if got := r.text("line-error"); got != "This pet is no longer in the catalog." {
			t.Errorf("deleted pet: %q", got)
		}
		if got := r.texts("line-name"); !slices.Equal(got, []string{"Pet #" + itoa(gone.ID), "Milo"}) {
			t.Errorf("lines = %q", got)
		}
		c.post("/cart/lines/"+itoa(gone.ID)+"/remove", nil).wantRedirect("/cart")

		other := newShopClient(t, a)
		other.post("/cart", form("pet_id", itoa(milo.ID), "quantity", "2")).wantRedirect("/cart")
		other.post("/checkout", nil).wantRedirect("/orders") // Milo is now pending
		r = c.post("/checkout", nil).wantStatus(http.StatusUnprocessableEntity)
		if got := r.text("line-error"); got != "No longer available." {
			t.Errorf("pending pet: %q", got)
		}
	})

	t.Run("an empty cart", func(t *testing.T) {
		c := newShopClient(t, a)
		r := c.post("/checkout", nil).wantStatus(http.StatusUnprocessableEntity)
		if !strings.Contains(r.text("cart-error"), "empty") {
			t.Errorf("error = %q", r.text("cart-error"))
		}
	})
}

func TestShopOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) { testShopOrders(t, newTestAppOn(t, open)) })
}

func testShopOrders(t *testing.T, a *testApp) {
	s := catalogSeed(t, a)
	rex, milo := s.pets["Rex"], s.pets["Milo"]
	c := newShopClient(t, a)
	if c.get("/orders").testid("orders-empty").Length() != 1 {
		t.Error("a new browser has orders")
	}
	c.post("/cart", form("pet_id", itoa(rex.ID), "quantity", "1")).wantRedirect("/cart")
	c.post("/cart", form("pet_id", itoa(milo.ID), "quantity", "2")).wantRedirect("/cart")
	c.post("/checkout", nil).wantRedirect("/orders")

	r := c.get("/orders")
	ids := r.find(`[data-testid="order"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-order-id", "") })
	if len(ids) != 2 {
		t.Fatalf("orders = %q", ids)
	}
	milosOrder, rexOrder := shopAtoi(t, ids[0]), shopAtoi(t, ids[1])
	if _, err := a.store.UpdateOrder(t.Context(), rexOrder, db.OrderUpdate{Complete: ptr(true)}); err != nil {
		t.Fatal(err)
	}

	r = c.get("/orders")
	open := r.find(`[data-testid="open-orders"] [data-testid="order"]`)
	done := r.find(`[data-testid="complete-orders"] [data-testid="order"]`)
	if open.Length() != 1 || done.Length() != 1 {
		t.Fatalf("open %d, complete %d; want 1 and 1", open.Length(), done.Length())
	}
	if got := strings.Fields(open.Find(`[data-testid="order-pet"]`).Text() + " " + open.Find(`[data-testid="order-quantity"]`).Text()); !slices.Equal(got, []string{"Milo", "×", "2"}) {
		t.Errorf("open order reads %q", got)
	}
	if done.Find(`[data-testid="cancel"]`).Length() != 0 || done.Find(`[data-testid="order-state"]`).Text() != "Complete" {
		t.Error("a complete order offers cancel")
	}
	if open.Find(`form[action="/orders/`+itoa(milosOrder)+`/cancel"]`).Length() != 1 {
		t.Error("the open order has no cancel form")
	}

	t.Run("others cannot see or cancel them", func(t *testing.T) {
		other := newShopClient(t, a)
		if other.get("/orders").testid("order").Length() != 0 {
			t.Error("another browser sees these orders")
		}
		other.post("/orders/"+itoa(milosOrder)+"/cancel", nil).wantStatus(http.StatusNotFound)
		other.post("/orders/abc/cancel", nil).wantStatus(http.StatusBadRequest)
	})

	t.Run("a complete order cannot be cancelled", func(t *testing.T) {
		r := c.post("/orders/"+itoa(rexOrder)+"/cancel", nil).wantStatus(http.StatusConflict)
		if !strings.Contains(r.text("error-message"), "complete") {
			t.Errorf("message = %q", r.text("error-message"))
		}
	})

	t.Run("cancel puts the stock back", func(t *testing.T) {
		before := petStock(t, a, milo.ID)
		r := c.post("/orders/"+itoa(milosOrder)+"/cancel", nil, true).wantStatus(http.StatusOK)
		if r.isFullPage() || r.find("#orders").Length() != 1 {
			t.Fatalf("not the orders fragment:\n%s", r.Body)
		}
		if got := r.find(`#flash[hx-swap-oob] [data-testid="flash"]`).Text(); got != "Order #"+itoa(milosOrder)+" is cancelled." {
			t.Errorf("flash = %q", got)
		}
		if r.find(`[data-testid="open-orders"]`).Length() != 0 {
			t.Error("the cancelled order is still open")
		}
		if got := petStock(t, a, milo.ID); got != before+2 {
			t.Errorf("stock = %d, want %d", got, before+2)
		}
		c.post("/orders/"+itoa(milosOrder)+"/cancel", nil).wantStatus(http.StatusNotFound)
	})

	t.Run("plain form cancel redirects", func(t *testing.T) {
		c.submit("/cart", form("pet_id", itoa(milo.ID), "quantity", "1"))
		id := c.submit("/checkout", nil).find(`[data-testid="open-orders"] [data-testid="order"]`).AttrOr("data-order-id", "")
		c.post("/orders/"+id+"/cancel", nil).wantRedirect("/orders")
		if got := c.get("/orders").text("flash"); got != "Order #"+id+" is cancelled." {
			t.Errorf("flash = %q", got)
		}
	})

	t.Run("a deleted pet keeps its name in the history", func(t *testing.T) {
		c.post("/cart", form("pet_id", itoa(milo.ID), "quantity", "1")).wantRedirect("/cart")
		c.post("/checkout", nil).wantRedirect("/orders")
		id := shopAtoi(t, c.get("/orders").find(`[data-testid="open-orders"] [data-testid="order"]`).AttrOr("data-order-id", ""))
		if _, err := a.store.UpdateOrder(t.Context(), id, db.OrderUpdate{Complete: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if err := a.store.DeletePet(t.Context(), milo.ID); err != nil {
			t.Fatal(err)
		}
		r := c.get("/orders")
		names := r.find(`[data-testid="complete-orders"] [data-testid="order-pet"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if !slices.Contains(names, "Milo") {
			t.Errorf("complete orders = %q", names)
		}
		if r.find(`a[href="/pets/`+itoa(milo.ID)+`"]`).Length() != 0 {
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
