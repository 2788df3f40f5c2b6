package shop_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"petstore/handlers/handlerstest"
)

// TestShopResultsCount: the catalog says what the filters found in a polite
// live region, on whole pages (no JavaScript) and, out of band, in the
// htmx answer to a filter change.
func TestShopResultsCount(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	cats := handlerstest.Itoa(s.Cats["Cats"].ID)

	for _, tc := range []struct{ path, want string }{
		{"/", "4 pets found."},
		{"/?q=rex", "2 pets found."},
		{"/?q=bella", "1 pet found."},
		{"/?q=zebra", "No pets found."},
		{"/?category=" + cats + "&status=sold", "No pets found."},
	} {
		r := c.Get(tc.path).WantStatus(http.StatusOK)
		region := r.Find("#results-count")
		if region.Length() != 1 {
			t.Fatalf("%s: %d #results-count, want 1", tc.path, region.Length())
		}
		if got := strings.TrimSpace(region.Text()); got != tc.want {
			t.Errorf("%s: count = %q, want %q", tc.path, got, tc.want)
		}
		if live, role := region.AttrOr("aria-live", ""), region.AttrOr("role", ""); live != "polite" || role != "status" {
			t.Errorf("%s: aria-live=%q role=%q, want a polite status region", tc.path, live, role)
		}
		if region.Closest("#results").Length() != 0 {
			t.Errorf("%s: the region is inside #results, which htmx replaces", tc.path)
		}

		hx := c.HX(tc.path).WantStatus(http.StatusOK)
		oob := hx.Find("#results-count")
		if oob.Length() != 1 || oob.AttrOr("hx-swap-oob", "") != "innerHTML" {
			t.Fatalf("%s: htmx answer has no out-of-band count:\n%s", tc.path, hx.Body)
		}
		if got := strings.TrimSpace(oob.Text()); got != tc.want {
			t.Errorf("%s: htmx count = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestShopResultsCountPaged: past a page the count says "more than", a
// count it knows without counting every match, which "load more" keeps
// true; a no-JS next page counts its own pets.
func TestShopResultsCountPaged(t *testing.T) {
	a := handlerstest.New(t)
	var specs []handlerstest.ShopPetSpec
	for i := 1; i <= 15; i++ {
		specs = append(specs, handlerstest.ShopPetSpec{Cat: "Fish", Name: fmt.Sprintf("Fish %02d", i), Stock: 1})
	}
	handlerstest.SeedShop(t, a, specs...)
	c := a.Shopper(t)

	first := c.Get("/")
	if got := strings.TrimSpace(first.Find("#results-count").Text()); got != "The first 12 pets found; more below." {
		t.Errorf("first page count = %q", got)
	}
	next := first.ID("load-more-link").AttrOr("href", "")
	if more := c.HX(next); more.Find("#results-count").Length() != 0 {
		t.Errorf("load more replaces the count:\n%s", more.Body)
	}
	if got := strings.TrimSpace(c.Get(next).Find("#results-count").Text()); got != "3 more pets found." {
		t.Errorf("no-JS next page count = %q", got)
	}
}

// TestShopMetaDescription: the catalog and each pet's page describe
// themselves for search engines and link previews.
func TestShopMetaDescription(t *testing.T) {
	a := handlerstest.New(t)
	name := `Rex "the brave"`
	s := handlerstest.SeedShop(t, a,
		handlerstest.ShopPetSpec{Cat: "Dogs", Name: name, Stock: 3},
		handlerstest.ShopPetSpec{Cat: "Cats", Name: "Milo", Stock: 0},
	)
	c := a.Shopper(t)

	description := func(path string) string {
		t.Helper()
		meta := c.Get(path).WantStatus(http.StatusOK).Find(`head meta[name="description"]`)
		if meta.Length() != 1 {
			t.Fatalf("%s: %d meta descriptions, want 1", path, meta.Length())
		}
		return meta.AttrOr("content", "")
	}
	for _, path := range []string{"/", "/?category=" + handlerstest.Itoa(s.Cats["Dogs"].ID)} {
		if got := description(path); !strings.Contains(got, "Pet Store") || !strings.Contains(got, "pets") {
			t.Errorf("%s: description = %q, want the catalog's", path, got)
		}
	}
	for _, tc := range []struct{ pet, want string }{
		{name, `Meet Rex "the brave", a dog in the Dogs category at Pet Store. Available to order (3 in stock).`},
		{"Milo", "Meet Milo, a cat in the Cats category at Pet Store. Has found a home and cannot be ordered."},
	} {
		if got := description("/pets/" + handlerstest.Itoa(s.Pets[tc.pet].ID)); got != tc.want {
			t.Errorf("%s: description = %q, want %q", tc.pet, got, tc.want)
		}
	}
}
