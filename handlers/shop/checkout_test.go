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

// pricedSeed is Rex (Dogs, 129.00, stock 5), Milo (Cats, 45.50, stock 3)
// and Fin (Fish, no fee, stock 4).
func pricedSeed(t *testing.T, a *handlerstest.App) *handlerstest.ShopSeed {
	t.Helper()
	s := handlerstest.SeedShop(t, a,
		handlerstest.ShopPetSpec{Cat: "Dogs", Name: "Rex", Stock: 5},
		handlerstest.ShopPetSpec{Cat: "Cats", Name: "Milo", Stock: 3},
		handlerstest.ShopPetSpec{Cat: "Fish", Name: "Fin", Stock: 4},
	)
	s.Pets["Rex"] = updatePet(t, a, s.Pets["Rex"], db.NewPet{Price: handlerstest.Ptr("129")})
	s.Pets["Milo"] = updatePet(t, a, s.Pets["Milo"], db.NewPet{Price: handlerstest.Ptr("45.5")})
	return s
}

// updatePet changes a pet's fields of SPEC §14 through the store.
func updatePet(t *testing.T, a *handlerstest.App, p *db.Pet, in db.NewPet) *db.Pet {
	t.Helper()
	in.Name, in.CategoryID = &p.Name, &p.CategoryID
	if _, err := a.Store.UpdatePet(t.Context(), p.ID, in); err != nil {
		t.Fatal(err)
	}
	p, err := a.Store.FindPetByID(t.Context(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// day is the date n days from the app clock's today (UTC), as a form
// sends it.
func day(a *handlerstest.App, n int) string {
	return a.Clock.Now().UTC().AddDate(0, 0, n).Format(time.DateOnly)
}

// Every rule of SPEC §14's checkout form: a refused field comes back on the
// form with its message beside it (aria-invalid, aria-describedby, a link
// in the error summary), the values kept, the cart and the stock untouched.
func TestShopCheckoutDetails(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := pricedSeed(t, a)
		rex, milo := s.Pets["Rex"], s.Pets["Milo"]
		c := a.Shopper(t)
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "2")).WantRedirect("/cart")
		c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1")).WantRedirect("/cart")

		for _, tc := range []struct {
			name, field, value, want string
		}{
			{"name empty", "name", "", "Name is required."},
			{"name only spaces", "name", "   ", "Name is required."},
			{"name of 101 characters", "name", strings.Repeat("é", 101), "Name must be at most 100 characters."},
			{"name with a control character", "name", "Ada\x07Lovelace", "Name must not contain control characters."},
			{"name with a NUL", "name", "Ada\x00", "Name must not contain control characters."},
			{"email missing", "email", "", "Email is required."},
			{"email without a domain", "email", "ada@", "Email must be an email address, like name@example.com."},
			{"email without a dot in the domain", "email", "ada@localhost", "Email must be an email address, like name@example.com."},
			{"email of 255 characters", "email", strings.Repeat("a", 243) + "@example.com", "Email must be an email address of at most 254 characters."},
			{"email with a display name", "email", "Ada <ada@example.com>", "Email must be an email address, like name@example.com."},
			{"email not UTF-8", "email", "ada\xff@example.com", "Email must be an email address, like name@example.com."},
			{"phone with letters", "phone", "call me", "Phone may hold only digits, spaces and + - ( )."},
			{"phone of 31 characters", "phone", strings.Repeat("1", 31), "Phone must be at most 30 characters."},
			{"phone without digits", "phone", "+ ( )", "Phone must have digits."},
			{"date yesterday", "date", day(a, -1), "Preferred date must be today or later."},
			{"date today + 91", "date", day(a, 91), "Preferred date must be within 90 days, by " + day(a, 90) + "."},
			{"date garbage", "date", "next tuesday", "Preferred date must be a date as YYYY-MM-DD."},
			{"date not a day", "date", day(a, 1)[:8] + "32", "Preferred date must be a date as YYYY-MM-DD."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form := handlerstest.Buyer(tc.field, tc.value, "date", day(a, 3))
				form.Set(tc.field, tc.value)
				r := c.Post("/checkout", form).WantStatus(http.StatusUnprocessableEntity)
				if !r.IsFullPage() {
					t.Fatal("want the whole cart page")
				}
				if got := r.Text("error-" + tc.field); got != tc.want {
					t.Errorf("message = %q, want %q", got, tc.want)
				}
				input := r.Find("#checkout-" + tc.field)
				if input.AttrOr("aria-invalid", "") != "true" || !strings.Contains(input.AttrOr("aria-describedby", ""), "checkout-"+tc.field+"-error") {
					t.Errorf("the input is not marked: %v", input.Nodes[0].Attr)
				}
				if r.Find(`label[for="checkout-`+tc.field+`"]`).Length() != 1 {
					t.Error("the input has no label")
				}
				if got := r.Find(`[data-testid="error-summary"] a[href="#checkout-` + tc.field + `"]`).Text(); got != tc.want {
					t.Errorf("summary link = %q", got)
				}
				if n := r.Find(`#checkout-form [aria-invalid="true"]`).Length(); n != 1 {
					t.Errorf("%d fields marked invalid, want 1", n)
				}
				for f, sent := range map[string]string{"name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0000", "date": day(a, 3)} {
					if f != tc.field && r.Find("#checkout-"+f).AttrOr("value", "") != sent {
						t.Errorf("%s not kept: %q", f, r.Find("#checkout-"+f).AttrOr("value", ""))
					}
				}
				if got := r.Texts("line-name"); !slices.Equal(got, []string{"Rex", "Milo"}) {
					t.Errorf("cart lines = %q", got)
				}
			})
		}

		t.Run("several fields at once, in the form's order", func(t *testing.T) {
			r := c.Post("/checkout", handlerstest.Form("name", "", "email", "nope", "phone", "", "date", "")).WantStatus(http.StatusUnprocessableEntity)
			links := r.Find(`[data-testid="error-summary"] a`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("href", "") })
			if !slices.Equal(links, []string{"#checkout-name", "#checkout-email"}) {
				t.Errorf("summary links = %q", links)
			}
			if r.Find("#checkout-phone").AttrOr("aria-invalid", "") != "" {
				t.Error("an empty phone is refused, but it is optional")
			}
		})

		t.Run("htmx gets the cart fragment with the messages", func(t *testing.T) {
			r := c.HXPost("/checkout", handlerstest.Buyer("email", "x")).WantStatus(http.StatusUnprocessableEntity)
			if r.IsFullPage() || r.Find("#cart #checkout-form").Length() != 1 {
				t.Fatalf("not the cart fragment:\n%s", r.Body)
			}
			if got := r.Text("error-email"); !strings.HasPrefix(got, "Email must be") {
				t.Errorf("message = %q", got)
			}
		})

		t.Run("the cart and the stock are untouched", func(t *testing.T) {
			if got := c.Get("/cart").Texts("line-name"); !slices.Equal(got, []string{"Rex", "Milo"}) {
				t.Errorf("cart = %q", got)
			}
			if n := handlerstest.CountRows(t, a, "orders"); n != 0 {
				t.Errorf("%d orders placed by refused checkouts", n)
			}
			if n := handlerstest.CountRows(t, a, "checkouts"); n != 0 {
				t.Errorf("%d checkouts recorded", n)
			}
			if handlerstest.PetStock(t, a, rex.ID) != 5 || handlerstest.PetStock(t, a, milo.ID) != 3 {
				t.Error("the stock changed")
			}
		})

		t.Run("the date bounds come from the store's clock", func(t *testing.T) {
			in := c.Get("/cart").Find("#checkout-date")
			if in.AttrOr("type", "") != "date" || in.AttrOr("min", "") != day(a, 0) || in.AttrOr("max", "") != day(a, 90) {
				t.Errorf("date input: type %q, min %q, max %q; want date, %s, %s", in.AttrOr("type", ""), in.AttrOr("min", ""), in.AttrOr("max", ""), day(a, 0), day(a, 90))
			}
		})

		for _, tc := range []struct {
			name string
			days int
		}{{"today is fine", 0}, {"today + 90 is fine", 90}} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.days > 0 {
					c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "1")).WantRedirect("/cart")
				}
				n := c.Checkout(handlerstest.Buyer("date", " "+day(a, tc.days)+" "))
				ck, err := a.Store.FindCheckoutByID(t.Context(), n)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := time.Parse(time.DateOnly, day(a, tc.days))
				for _, o := range ck.Orders {
					if o.ShipDate == nil || !o.ShipDate.Equal(want) || o.ShipDate.UTC().Format(time.TimeOnly) != "00:00:00" {
						t.Errorf("order %d ships %v, want %v (00:00 UTC)", o.ID, o.ShipDate, want)
					}
				}
				if c.Get("/cart").ID("cart-empty").Length() != 1 {
					t.Error("the cart was not emptied")
				}
			})
		}

		t.Run("no preferred date, no phone", func(t *testing.T) {
			c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1")).WantRedirect("/cart")
			n := c.Checkout(handlerstest.Buyer("phone", "", "name", "  Grace Hopper  ", "email", "grace@example.org"))
			ck, err := a.Store.FindCheckoutByID(t.Context(), n)
			if err != nil {
				t.Fatal(err)
			}
			if ck.Name != "Grace Hopper" || ck.Phone != "" || ck.Orders[0].ShipDate != nil {
				t.Errorf("checkout = %+v, order ships %v", ck, ck.Orders[0].ShipDate)
			}
			r := c.Get("/orders/confirmation/" + handlerstest.Itoa(n))
			if got := r.Text("confirmation-date"); got != "Not chosen" {
				t.Errorf("date = %q", got)
			}
		})

		t.Run("the next checkout is filled in with the last one's details", func(t *testing.T) {
			c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(milo.ID), "quantity", "1")).WantRedirect("/cart")
			r := c.Get("/cart")
			for f, want := range map[string]string{"name": "Grace Hopper", "email": "grace@example.org", "phone": "", "date": ""} {
				if got := r.Find("#checkout-"+f).AttrOr("value", ""); got != want {
					t.Errorf("%s = %q, want %q", f, got, want)
				}
			}
			if a.Shopper(t).Get("/cart").Find("#checkout-form").Length() != 0 {
				t.Error("an empty cart offers the checkout form")
			}
		})

		t.Run("a cart line's htmx form keeps the details typed", func(t *testing.T) {
			form := handlerstest.Form("quantity", "1", "name", "Typed Name", "email", "typed@example.com", "phone", "", "date", day(a, 5))
			r := c.HXPost("/cart/lines/"+handlerstest.Itoa(milo.ID), form).WantStatus(http.StatusOK)
			if got := r.Find("#checkout-name").AttrOr("value", ""); got != "Typed Name" {
				t.Errorf("name = %q", got)
			}
			if got := r.Find("#checkout-date").AttrOr("value", ""); got != day(a, 5) {
				t.Errorf("date = %q", got)
			}
		})
	})
}
