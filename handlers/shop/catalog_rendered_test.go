package shop_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// TestShopCatalogRenderedPerVersion: the catalog's part of a page is
// rendered once per catalog version and served to every shopper, so it
// must show every change to the catalog at once, in each part (the whole
// page, a filter's results, "load more"), while the frame around it stays
// each shopper's own (the cart count).
func TestShopCatalogRenderedPerVersion(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := catalogSeed(t, a)
		ctx := context.Background()
		ann, bob := a.Shopper(t), a.Shopper(t)
		dogs := s.Cats["Dogs"]
		ann.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(s.Pets["Rex"].ID), "quantity", "2")).WantRedirect("/cart")

		// The same content for both, each in a frame of their own; asked
		// twice, so the second answers come from what was rendered.
		for range 2 {
			pa, pb := ann.Get("/").WantStatus(http.StatusOK), bob.Get("/").WantStatus(http.StatusOK)
			if got, want := pb.Texts("pet-name"), pa.Texts("pet-name"); !slices.Equal(got, want) || len(got) != 4 {
				t.Fatalf("catalogs differ: %q and %q", got, want)
			}
			if got := pa.Text("cart-count"); got != "(2 items)" {
				t.Errorf("Ann's cart count = %q, want (2 items)", got)
			}
			if got := pb.Text("cart-count"); got != "(0 items)" {
				t.Errorf("Bob's cart count = %q, want (0 items)", got)
			}
			// No form to post, so no token (browser.CSRF).
			ta, _ := pa.Find("body").Attr("hx-headers")
			tb, _ := pb.Find("body").Attr("hx-headers")
			if ta != "" || tb != "" {
				t.Errorf("CSRF headers %q and %q on the catalog: want none", ta, tb)
			}
		}
		bob.HX("/?category=" + handlerstest.Itoa(dogs.ID)).WantStatus(http.StatusOK)

		// A new pet, a pet sold out and a renamed category show at once.
		name, catID := "Zed", dogs.ID
		if _, err := a.Store.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID}); err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		if _, err := a.Store.SetInventory(ctx, s.Pets["Milo"].ID, db.InventoryUpdate{Quantity: &zero}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Store.UpdateCategory(ctx, dogs.ID, db.NewCategory{Name: handlerstest.Ptr("Hounds")}); err != nil {
			t.Fatal(err)
		}
		page := bob.Get("/").WantStatus(http.StatusOK)
		if got := page.Texts("pet-name"); !slices.Contains(got, "Zed") {
			t.Errorf("after a new pet the catalog shows %q", got)
		}
		if got := page.Find(`#category option[value="` + handlerstest.Itoa(dogs.ID) + `"]`).Text(); got != "Hounds" {
			t.Errorf("renamed category's option = %q, want Hounds", got)
		}
		stock := func(name string) string {
			return page.Find(`[data-pet-id="` + handlerstest.Itoa(s.Pets[name].ID) + `"] [data-testid="stock"]`).Text()
		}
		if milo, bella := stock("Milo"), stock("Bella"); milo == "" || milo != bella {
			t.Errorf("Milo's stock label after selling out = %q, want a sold pet's (Bella's) %q", milo, bella)
		}
		results := bob.HX("/?category=" + handlerstest.Itoa(dogs.ID)).WantStatus(http.StatusOK)
		if got := results.Texts("pet-name"); !slices.Contains(got, "Zed") {
			t.Errorf("the filter's results after a new pet = %q", got)
		}
		if got := results.Texts("category"); len(got) == 0 || got[0] != "Hounds" {
			t.Errorf("the filter's results show the category as %q, want Hounds", got)
		}
	})
}

// TestShopPetPageRenderedPerVersion: a pet page's part is rendered once per
// catalog version and day and served to every shopper, with each shopper's
// own order form in it; a change to the pet shows at once, and its age
// follows the store's day.
func TestShopPetPageRenderedPerVersion(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := catalogSeed(t, a)
		ctx := context.Background()
		rex := s.Pets["Rex"]
		born := a.Clock.Now().AddDate(0, -3, 0).Format(time.DateOnly)
		if _, err := a.Store.UpdatePet(ctx, rex.ID, db.NewPet{Name: &rex.Name, CategoryID: &rex.CategoryID,
			BirthDate: db.Nullable[string]{Present: true, Value: born}}); err != nil {
			t.Fatal(err)
		}
		ann, bob := a.Shopper(t), a.Shopper(t)
		path := "/pets/" + handlerstest.Itoa(rex.ID)
		ann.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "2")).WantRedirect("/cart")

		var age string
		for range 2 { // the second answers come from what was rendered
			for _, sh := range []struct {
				b      *handlerstest.Browser
				inCart string
			}{{ann, "You have 2 in your cart."}, {bob, ""}} {
				r := sh.b.Get(path).WantStatus(http.StatusOK)
				if got := r.ID("order-form").Find(`input[name="_csrf"]`).AttrOr("value", ""); got == "" || got != sh.b.CSRF {
					t.Errorf("order form's CSRF token %q, want the shopper's own %q", got, sh.b.CSRF)
				}
				if got := strings.TrimSpace(r.Text("in-cart")); got != sh.inCart {
					t.Errorf("in cart = %q, want %q", got, sh.inCart)
				}
				if got := r.Text("stock"); got != "3 in stock" {
					t.Errorf("stock = %q, want 3 in stock", got)
				}
				age = r.Text("age")
			}
		}
		if age == "" {
			t.Fatal("no age shown")
		}

		one := int64(1)
		if _, err := a.Store.SetInventory(ctx, rex.ID, db.InventoryUpdate{Quantity: &one}); err != nil {
			t.Fatal(err)
		}
		r := bob.Get(path).WantStatus(http.StatusOK)
		if got := r.Text("stock"); got != "Last one in stock" {
			t.Errorf("stock after a change = %q, want Last one in stock", got)
		}
		if got := r.ID("quantity").AttrOr("max", ""); got != "1" {
			t.Errorf("quantity max after a change = %q, want 1", got)
		}
		a.Clock.Add(45 * 24 * time.Hour)
		if got := bob.Get(path).Text("age"); got == age {
			t.Errorf("age %q unchanged 45 days later", got)
		}
	})
}

// TestShopNewVisitorCatalog: a browser without a session gets the
// catalog with nothing of its own in it (no cookie is set, no token, an
// empty cart), the same bytes as every other such visitor, tagged so a
// revalidation gets 304; a change to the catalog changes page and tag at
// once; and a visitor with a cart still gets their own frame. It pays off
// in the bench's GET / row (issue 44); what users rely on is that a first
// page never shows another visitor's cart or token, and never goes stale.
func TestShopNewVisitorCatalog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		s := catalogSeed(t, a)
		ctx := context.Background()
		first, second := a.Browser(t).Get("/").WantStatus(http.StatusOK), a.Browser(t).Get("/").WantStatus(http.StatusOK)
		for _, p := range []*browsertest.Page{first, second} {
			if sc := p.Header.Values("Set-Cookie"); len(sc) != 0 {
				t.Fatalf("a first visit set %q", sc)
			}
			if hx, _ := p.Find("body").Attr("hx-headers"); hx != "" {
				t.Errorf("a first visit's catalog carries a token: %q", hx)
			}
			if got := p.Text("cart-count"); got != "(0 items)" {
				t.Errorf("cart count = %q, want (0 items)", got)
			}
		}
		tag := first.Header.Get("ETag")
		if first.Body != second.Body || tag == "" || second.Header.Get("ETag") != tag {
			t.Fatalf("two first visits: tags %q and %q, same bytes %v", tag, second.Header.Get("ETag"), first.Body == second.Body)
		}
		v := a.Browser(t)
		v.Header = map[string]string{"If-None-Match": tag}
		v.Get("/").WantStatus(http.StatusNotModified)

		// A shopper with a cart: their own frame, untagged.
		ann := a.Shopper(t)
		ann.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(s.Pets["Rex"].ID), "quantity", "1")).WantRedirect("/cart")
		mine := ann.Get("/").WantStatus(http.StatusOK)
		if got := mine.Text("cart-count"); got != "(1 items)" && got != "(1 item)" {
			t.Errorf("Ann's cart count = %q", got)
		}
		if mine.Header.Get("ETag") != "" {
			t.Errorf("a shopper's own page is tagged %q", mine.Header.Get("ETag"))
		}

		// A new pet shows at once, under a new tag.
		name, catID := "Zed", s.Cats["Dogs"].ID
		if _, err := a.Store.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID}); err != nil {
			t.Fatal(err)
		}
		after := v.Get("/").WantStatus(http.StatusOK)
		if !slices.Contains(after.Texts("pet-name"), "Zed") || after.Header.Get("ETag") == tag {
			t.Fatalf("after a new pet: names %q, tag %q (was %q)", after.Texts("pet-name"), after.Header.Get("ETag"), tag)
		}
	})
}
