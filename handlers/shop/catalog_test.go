package shop_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/handlers/handlerstest"
)

// catalogSeed is a small catalog: dogs and cats in every status.
func catalogSeed(t *testing.T, a *handlerstest.App) *handlerstest.ShopSeed {
	t.Helper()
	s := handlerstest.SeedShop(t, a,
		handlerstest.ShopPetSpec{Cat: "Dogs", Name: "Rex", Stock: 3},
		handlerstest.ShopPetSpec{Cat: "Dogs", Name: "Bella", Stock: 0}, // sold: no open orders
		handlerstest.ShopPetSpec{Cat: "Cats", Name: "Milo", Stock: 2},
		handlerstest.ShopPetSpec{Cat: "Cats", Name: "Rexana", Stock: 1},
	)
	return s
}

func TestShopCatalogFilters(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	dogs, cats := handlerstest.Itoa(s.Cats["Dogs"].ID), handlerstest.Itoa(s.Cats["Cats"].ID)

	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"all", "/", []string{"Rex", "Bella", "Milo", "Rexana"}},
		{"category", "/?category=" + dogs, []string{"Rex", "Bella"}},
		{"status", "/?status=sold", []string{"Bella"}},
		{"category and status", "/?category=" + cats + "&status=available", []string{"Milo", "Rexana"}},
		{"search is case-insensitive contains", "/?q=REX", []string{"Rex", "Rexana"}},
		{"search with filters", "/?q=rex&category=" + cats, []string{"Rexana"}},
		{"empty values are no filter", "/?q=&category=&status=", []string{"Rex", "Bella", "Milo", "Rexana"}},
		{"no match", "/?q=zebra", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Get(tc.path).WantStatus(http.StatusOK)
			if got := r.Texts("pet-name"); !slices.Equal(got, tc.want) {
				t.Errorf("pets = %q, want %q", got, tc.want)
			}
			if len(tc.want) == 0 && r.ID("empty").Length() != 1 {
				t.Error("no empty-state message")
			}
			if n := r.Find("h1").Length(); n != 1 {
				t.Errorf("%d h1, want 1", n)
			}
		})
	}

	t.Run("the form keeps the filters", func(t *testing.T) {
		r := c.Get("/?q=rex&category=" + cats + "&status=available")
		if v, _ := r.Find("#q").Attr("value"); v != "rex" {
			t.Errorf("search box = %q", v)
		}
		if v, _ := r.Find("#category option[selected]").Attr("value"); v != cats {
			t.Errorf("category selected = %q, want %s", v, cats)
		}
		if v, _ := r.Find("#status option[selected]").Attr("value"); v != "available" {
			t.Errorf("status selected = %q", v)
		}
		f := r.ID("filters")
		if m, _ := f.Attr("method"); m != "get" {
			t.Errorf("filter form method %q: it must work as a plain GET form", m)
		}
		search := r.ID("search")
		if trig, _ := search.Attr("hx-trigger"); trig != "input changed delay:300ms, search" {
			t.Errorf("search hx-trigger = %q", trig)
		}
		if _, ok := f.Attr("hx-push-url"); !ok {
			t.Error("the filters do not push the URL")
		}
		for _, id := range []string{"q", "category", "status"} {
			if r.Find(`label[for="`+id+`"]`).Length() != 1 {
				t.Errorf("input %s has no label", id)
			}
		}
	})

	t.Run("cards show category, status and stock", func(t *testing.T) {
		r := c.Get("/?q=bella")
		card := r.ID("pet-card")
		if got := card.Find(`[data-testid="category"]`).Text(); got != "Dogs" {
			t.Errorf("category = %q", got)
		}
		if got := card.Find(`[data-testid="status"]`).Text(); got != "Sold" {
			t.Errorf("status = %q", got)
		}
		if href, _ := card.Find(`a[data-testid="pet-name"]`).Attr("href"); href != "/pets/"+handlerstest.Itoa(s.Pets["Bella"].ID) {
			t.Errorf("link = %q", href)
		}
	})

	t.Run("htmx gets the results fragment", func(t *testing.T) {
		r := c.HX("/?category=" + dogs).WantStatus(http.StatusOK)
		if r.IsFullPage() || strings.Contains(r.Body, "<header") {
			t.Fatalf("htmx answer is a whole page:\n%s", r.Body)
		}
		if r.Find("#results").Length() != 1 {
			t.Fatalf("no #results in\n%s", r.Body)
		}
		if got := r.Texts("pet-name"); !slices.Equal(got, []string{"Rex", "Bella"}) {
			t.Errorf("pets = %q", got)
		}
		if !strings.Contains(r.Header.Get("Vary"), "HX-Request") {
			t.Errorf("Vary = %q, want HX-Request", r.Header.Get("Vary"))
		}
		full := c.Get("/?category=" + dogs)
		if !full.IsFullPage() {
			t.Error("without HX-Request the page is not whole")
		}
		req := httptest.NewRequest(http.MethodGet, "/?category="+dogs, nil)
		req.Header.Set("HX-Request", "true")
		req.Header.Set("HX-History-Restore-Request", "true")
		restore := c.Do(req)
		if !restore.IsFullPage() {
			t.Error("a history restore did not get the whole page")
		}
	})

	t.Run("bad filters are friendly 400 pages", func(t *testing.T) {
		for _, path := range []string{"/?category=abc", "/?category=-1", "/?status=lost", "/?cursor=%%%", "/?cursor=bm9wZQ"} {
			r := c.Get(path).WantStatus(http.StatusBadRequest)
			if r.ID("error").Length() != 1 || r.ID("brand").Length() != 1 {
				t.Errorf("%s: not a shop error page:\n%s", path, r.Body)
			}
		}
	})

	t.Run("an over-long search is cut, not refused", func(t *testing.T) {
		c.Get("/?q=" + strings.Repeat("x", 500)).WantStatus(http.StatusOK)
	})
}

func TestShopCatalogLoadMore(t *testing.T) {
	a := handlerstest.New(t)
	var specs []handlerstest.ShopPetSpec
	for i := 1; i <= 27; i++ {
		specs = append(specs, handlerstest.ShopPetSpec{Cat: "Fish", Name: fmt.Sprintf("Fish %02d", i), Stock: 1})
	}
	specs = append(specs, handlerstest.ShopPetSpec{Cat: "Birds", Name: "Kiwi", Stock: 1})
	seed := handlerstest.SeedShop(t, a, specs...)
	c := a.Shopper(t)

	first := c.Get("/?category=" + handlerstest.Itoa(seed.Cats["Fish"].ID))
	if n := first.ID("pet-card").Length(); n != 12 {
		t.Fatalf("first page has %d cards, want 12", n)
	}
	next, ok := first.ID("load-more-link").Attr("href")
	if !ok || !strings.Contains(next, "cursor=") || !strings.Contains(next, "category=") {
		t.Fatalf("load more link = %q, want the filters and a cursor", next)
	}
	if hx, _ := first.ID("load-more-link").Attr("hx-get"); hx != next {
		t.Errorf("hx-get = %q, want %q", hx, next)
	}

	// htmx: the next cards and a new "load more" item, to replace the old one.
	more := c.HX(next).WantStatus(http.StatusOK)
	if more.IsFullPage() || more.Find("#results").Length() != 0 {
		t.Fatalf("load more is not a bare fragment:\n%s", more.Body)
	}
	if got := more.Texts("pet-name"); len(got) != 12 || got[0] != "Fish 13" || got[11] != "Fish 24" {
		t.Fatalf("second page = %q", got)
	}
	last, _ := more.ID("load-more-link").Attr("href")
	end := c.HX(last)
	if got := end.Texts("pet-name"); !slices.Equal(got, []string{"Fish 25", "Fish 26", "Fish 27"}) {
		t.Fatalf("last page = %q", got)
	}
	if end.ID("load-more").Length() != 0 {
		t.Error("the last page offers more")
	}

	// Without JavaScript the same link is a whole page, with a way back.
	page2 := c.Get(next).WantStatus(http.StatusOK)
	if !page2.IsFullPage() || page2.ID("first-page").Length() != 1 {
		t.Error("the no-JS next page is not a whole page with a link to the first")
	}
	if got := page2.Texts("pet-name"); len(got) != 12 || got[0] != "Fish 13" {
		t.Errorf("no-JS page 2 = %q", got)
	}
}

func TestShopEscapesNames(t *testing.T) {
	a := handlerstest.New(t)
	s := handlerstest.SeedShop(t, a, handlerstest.ShopPetSpec{Cat: "Dogs", Name: `<script>alert("x")</script>`, Stock: 2})
	c := a.Shopper(t)
	id := handlerstest.Itoa(s.Pets[`<script>alert("x")</script>`].ID)
	for _, path := range []string{"/", "/pets/" + id} {
		r := c.Get(path).WantStatus(http.StatusOK)
		if strings.Contains(r.Body, `<script>alert`) {
			t.Errorf("%s: the name is not escaped", path)
		}
		if !strings.Contains(r.Body, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`) {
			t.Errorf("%s: the escaped name is missing", path)
		}
		if got := r.Texts("pet-name")[0]; got != `<script>alert("x")</script>` {
			t.Errorf("%s: name reads %q", path, got)
		}
	}
	c.Post("/cart", handlerstest.Form("pet_id", id, "quantity", "1")).WantRedirect("/cart")
	r := c.Get("/cart")
	if strings.Contains(r.Body, `<script>alert`) {
		t.Error("cart page: the name is not escaped")
	}
	if !strings.Contains(r.Text("flash"), `<script>alert("x")</script>`) {
		t.Errorf("flash = %q, want the name as text", r.Text("flash"))
	}
}

func TestShopSecurityHeaders(t *testing.T) {
	a := handlerstest.New(t)
	s := catalogSeed(t, a)
	c := a.Shopper(t)
	for _, path := range []string{"/", "/pets/" + handlerstest.Itoa(s.Pets["Rex"].ID), "/cart", "/orders", "/pets/0", "/pets/99999"} {
		r := c.Get(path)
		csp := r.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP = %q", path, csp)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
			if got := r.Header.Get(h); got != want {
				t.Errorf("%s: %s = %q, want %q", path, h, got, want)
			}
		}
		if r.Find("script:not([src])").Length() != 0 || r.Find("[style]").Length() != 0 {
			t.Errorf("%s: inline script or style attribute", path)
		}
		r.Find("script[src], link[rel=stylesheet]").Each(func(_ int, sel *goquery.Selection) {
			src := sel.AttrOr("src", sel.AttrOr("href", ""))
			if !strings.HasPrefix(src, "/static/") {
				t.Errorf("%s: asset %q is not from /static", path, src)
			}
		})
	}
	for _, asset := range []string{"/static/js/shop.js", "/static/css/app.css", "/static/vendor/htmx.min.js", "/static/vendor/pico.min.css"} {
		if r := c.Get(asset); r.Status != http.StatusOK {
			t.Errorf("%s: %d", asset, r.Status)
		}
	}
	if r := a.Browser(t).Get("/"); len(r.Header.Values("Set-Cookie")) != 0 {
		t.Errorf("browsing the catalog set %q: no cookie until a page has a form", r.Header.Values("Set-Cookie"))
	}
	r := a.Browser(t).Get("/cart")
	sc := strings.Join(r.Header.Values("Set-Cookie"), "\n")
	if !strings.Contains(sc, "petstore_shop=") || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") {
		t.Errorf("session cookie = %q", sc)
	}
	if n := len(r.Header.Values("Set-Cookie")); n != 1 {
		t.Errorf("a first visit to the cart sets %d cookies, want 1", n)
	}
}
