package shop_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// placeFor fills a new browser's cart with the pets (one each) and checks
// out with email; it returns the browser and the checkout's order number.
func placeFor(t *testing.T, a *handlerstest.App, email string, pets ...*db.Pet) (*handlerstest.Browser, int64) {
	t.Helper()
	c := a.Shopper(t)
	for _, p := range pets {
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(p.ID), "quantity", "1")).WantRedirect("/cart")
	}
	return c, c.Checkout(handlerstest.Buyer("email", email))
}

// echoed matches what a form shows back of the values sent.
var echoed = regexp.MustCompile(`value="[^"]*"`)

// GET /orders/lookup finds a checkout by its number and email from any
// browser; a wrong pair gets one answer whether or not the number exists;
// the checkout's open orders can be cancelled from there, and only by a
// session that proved the pair.
func TestShopLookup(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := pricedSeed(t, a)
		rex, milo, fin := s.Pets["Rex"], s.Pets["Milo"], s.Pets["Fin"]
		_, n := placeFor(t, a, "Ada@Example.com", rex, milo)
		_, theirs := placeFor(t, a, "bob@example.com", fin)
		number := handlerstest.Itoa(n)

		b := a.Shopper(t) // another browser: no cookie of the buyer's
		form := b.Get("/orders/lookup").WantStatus(http.StatusOK)
		for _, id := range []string{"lookup-number", "lookup-email"} {
			if form.Find(`label[for="`+id+`"]`).Length() != 1 || form.Find("#"+id).Length() != 1 {
				t.Errorf("field %s has no label", id)
			}
		}
		if form.Find(`form[action="/orders/lookup"][method="post"] input[name="_csrf"]`).Length() != 1 {
			t.Error("the lookup form is not a POST form with the CSRF token")
		}
		if form.Find(`footer a[href="/orders/lookup"]`).Length() != 1 {
			t.Error("the footer does not link Find an order")
		}

		t.Run("a wrong pair gets one answer", func(t *testing.T) {
			wrongEmail := b.Post("/orders/lookup", handlerstest.Form("number", number, "email", "eve@example.com"))
			noNumber := b.Post("/orders/lookup", handlerstest.Form("number", handlerstest.Itoa(theirs+1000), "email", "ada@example.com"))
			othersNumber := b.Post("/orders/lookup", handlerstest.Form("number", handlerstest.Itoa(theirs), "email", "ada@example.com"))
			for name, r := range map[string]*browsertest.Page{"no such number": noNumber, "another's number": othersNumber} {
				if r.Status != wrongEmail.Status || r.Status != http.StatusNotFound {
					t.Errorf("%s: status %d, wrong email %d; want both 404", name, r.Status, wrongEmail.Status)
				}
				if got, want := r.Text("lookup-not-found"), wrongEmail.Text("lookup-not-found"); got != want || got == "" {
					t.Errorf("%s: %q, wrong email: %q", name, got, want)
				}
				got, _ := r.Find("#lookup-form").Html()
				want, _ := wrongEmail.Find("#lookup-form").Html()
				if echoed.ReplaceAllString(got, "") != echoed.ReplaceAllString(want, "") {
					t.Errorf("%s: the forms differ beyond the values typed:\n%s\n%s", name, got, want)
				}
			}
			if wrongEmail.Find("#lookup-number").AttrOr("value", "") != number || wrongEmail.Find("#lookup-email").AttrOr("value", "") != "eve@example.com" {
				t.Error("the values typed are not kept")
			}
			hx := b.HXPost("/orders/lookup", handlerstest.Form("number", number, "email", "eve@example.com")).WantStatus(http.StatusNotFound)
			if hx.IsFullPage() || hx.Text("lookup-not-found") != wrongEmail.Text("lookup-not-found") {
				t.Errorf("htmx: not the form fragment with the same answer:\n%s", hx.Body)
			}
			b.Get("/orders/lookup/" + number).WantStatus(http.StatusNotFound)
		})

		t.Run("empty fields and a number that is not one", func(t *testing.T) {
			r := b.Post("/orders/lookup", handlerstest.Form("number", "", "email", " ")).WantStatus(http.StatusUnprocessableEntity)
			if r.Text("error-number") != "Enter your order number." || r.Text("error-email") != "Enter the email address you gave at checkout." {
				t.Errorf("messages = %q, %q", r.Text("error-number"), r.Text("error-email"))
			}
			if r.Find("#lookup-number").AttrOr("aria-invalid", "") != "true" || r.Find(`[data-testid="error-summary"] a[href="#lookup-email"]`).Length() != 1 {
				t.Error("the fields are not marked")
			}
			for _, bad := range []string{"abc", "-3", "0", "99999999999999999999", "4 2"} {
				r := b.Post("/orders/lookup", handlerstest.Form("number", bad, "email", "ada@example.com")).WantStatus(http.StatusUnprocessableEntity)
				if r.Text("error-number") != "Order number must be a number, like 42." {
					t.Errorf("number %q: %q", bad, r.Text("error-number"))
				}
			}
		})

		t.Run("the right pair, in any case, shows the checkout", func(t *testing.T) {
			r := b.Post("/orders/lookup", handlerstest.Form("number", " #"+number+" ", "email", "ada@EXAMPLE.com"))
			r.WantRedirect("/orders/lookup/" + number)
			page := b.Get("/orders/lookup/" + number).WantStatus(http.StatusOK)
			if got := page.Texts("order-pet"); !slices.Equal(got, []string{"Rex", "Milo"}) {
				t.Errorf("orders = %q", got)
			}
			if got := page.Texts("order-total"); !slices.Equal(got, []string{"€129.00", "€45.50"}) {
				t.Errorf("order totals = %q", got)
			}
			if got := page.Text("checkout-total"); got != "€174.50" {
				t.Errorf("checkout total = %q", got)
			}
			if page.ID("cancel").Length() != 2 {
				t.Errorf("%d cancel buttons, want 2", page.ID("cancel").Length())
			}
			hx := b.HXPost("/orders/lookup", handlerstest.Form("number", number, "email", "ada@example.com")).WantStatus(http.StatusOK)
			if got := hx.Header.Get("HX-Redirect"); got != "/orders/lookup/"+number {
				t.Errorf("htmx: HX-Redirect = %q", got)
			}
		})

		ids := b.Get("/orders/lookup/" + number).Find(`[data-testid="order"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-order-id", "") })
		rexOrder, milosOrder := ids[0], ids[1]
		cancel := func(checkout, order string) string {
			return "/orders/lookup/" + checkout + "/orders/" + order + "/cancel"
		}

		t.Run("a forged cancel is 404", func(t *testing.T) {
			stranger := a.Shopper(t)
			r := stranger.Post(cancel(number, rexOrder), nil).WantStatus(http.StatusNotFound)
			if r.ID("error").Length() != 1 {
				t.Error("not the shop's error page")
			}
			stranger.HXPost(cancel(number, rexOrder), nil).WantStatus(http.StatusNotFound)
			// b proved n, not theirs: neither theirs nor its order through n.
			theirOrder := handlerstest.Itoa(orderOf(t, a, theirs))
			b.Post(cancel(handlerstest.Itoa(theirs), theirOrder), nil).WantStatus(http.StatusNotFound)
			b.Post(cancel(number, theirOrder), nil).WantStatus(http.StatusNotFound)
			b.Post(cancel("abc", rexOrder), nil).WantStatus(http.StatusBadRequest)
			b.Post(cancel(number, "0"), nil).WantStatus(http.StatusBadRequest)
			if handlerstest.PetStock(t, a, rex.ID) != 4 || handlerstest.PetStock(t, a, fin.ID) != 3 {
				t.Error("a forged cancel changed the stock")
			}
		})

		t.Run("cancel from the lookup", func(t *testing.T) {
			b.Post(cancel(number, rexOrder), nil).WantRedirect("/orders/lookup/" + number)
			page := b.Get("/orders/lookup/" + number)
			if got := page.Text("flash"); got != "Your order of Rex × 1 is cancelled." {
				t.Errorf("flash = %q", got)
			}
			if got := page.Texts("order-pet"); !slices.Equal(got, []string{"Milo"}) {
				t.Errorf("orders after the cancel = %q", got)
			}
			if got := page.Text("checkout-total"); got != "€45.50" {
				t.Errorf("total after the cancel = %q", got)
			}
			if handlerstest.PetStock(t, a, rex.ID) != 5 {
				t.Error("the stock did not come back")
			}
			b.Post(cancel(number, rexOrder), nil).WantStatus(http.StatusNotFound)

			if _, err := a.Store.UpdateOrder(t.Context(), shopAtoi(t, milosOrder), db.OrderUpdate{Complete: handlerstest.Ptr(true)}); err != nil {
				t.Fatal(err)
			}
			if page := b.Get("/orders/lookup/" + number); page.ID("cancel").Length() != 0 || page.Text("order-state") != "Complete" {
				t.Error("a complete order offers cancel")
			}
			b.Post(cancel(number, milosOrder), nil).WantStatus(http.StatusConflict)
		})

		t.Run("htmx cancel swaps the result", func(t *testing.T) {
			_, n2 := placeFor(t, a, "ada@example.com", fin)
			b.Post("/orders/lookup", handlerstest.Form("number", handlerstest.Itoa(n2), "email", "ada@example.com")).WantRedirect("/orders/lookup/" + handlerstest.Itoa(n2))
			order := handlerstest.Itoa(orderOf(t, a, n2))
			r := b.HXPost(cancel(handlerstest.Itoa(n2), order), nil).WantStatus(http.StatusOK)
			if r.IsFullPage() || r.Find("#lookup-result").Length() != 1 || r.ID("checkout-empty").Length() != 1 {
				t.Fatalf("not the result fragment, emptied:\n%s", r.Body)
			}
			if got := r.Find(`#flash[hx-swap-oob] [data-testid="flash"]`).Text(); got != "Your order of Fin × 1 is cancelled." {
				t.Errorf("flash = %q", got)
			}
		})
	})
}

// orderOf is the first order of checkout n.
func orderOf(t *testing.T, a *handlerstest.App, n int64) int64 {
	t.Helper()
	ck, err := a.Store.FindCheckoutByID(t.Context(), n)
	if err != nil || len(ck.Orders) == 0 {
		t.Fatalf("checkout %d: %v, %+v", n, err, ck)
	}
	return ck.Orders[0].ID
}

// A session keeps the newest five checkouts it proved: an older one needs
// its number and email again.
func TestShopLookupRemembersFive(t *testing.T) {
	a := handlerstest.New(t)
	pet := a.SeedPet("Rex", 50)
	c := a.Shopper(t)
	var numbers []string
	for range 6 {
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(pet.ID), "quantity", "1")).WantRedirect("/cart")
		numbers = append(numbers, handlerstest.Itoa(c.Checkout(nil)))
	}
	b := a.Shopper(t)
	for _, n := range numbers {
		b.Post("/orders/lookup", handlerstest.Form("number", n, "email", "ada@example.com")).WantRedirect("/orders/lookup/" + n)
	}
	b.Get("/orders/lookup/" + numbers[0]).WantStatus(http.StatusNotFound)
	for _, n := range numbers[1:] {
		b.Get("/orders/lookup/" + n).WantStatus(http.StatusOK)
	}
	// Proving the first again makes it the newest; the second drops out.
	b.Post("/orders/lookup", handlerstest.Form("number", numbers[0], "email", "ada@example.com")).WantRedirect("/orders/lookup/" + numbers[0])
	b.Get("/orders/lookup/" + numbers[0]).WantStatus(http.StatusOK)
	if r := b.Get("/orders/lookup/" + numbers[1]).WantStatus(http.StatusNotFound); !strings.Contains(r.Text("error-message"), "Find an order") {
		t.Errorf("message = %q", r.Text("error-message"))
	}
}
