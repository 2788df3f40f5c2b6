package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// Text PostgreSQL cannot hold (NUL, bytes that are not UTF-8) and control
// characters, typed into the storefront's search and the console's forms:
// the search finds nothing on a normal page, a form comes back (422) with
// the field's message, on both databases. Before, PostgreSQL answered 500.

func TestHostileTextInStorefrontSearch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.SeedPet("Rex", 2)
		s := a.Shopper(t)
		if got := s.Get("/?q=Rex").WantStatus(http.StatusOK).Texts("pet-name"); len(got) != 1 {
			t.Fatalf("a plain search finds %v, want Rex", got)
		}
		for _, q := range []string{"R%00", "%00", "R%ffx", "R%c3", "R%1bx", "%7f", "%c2%85"} {
			for _, hx := range []bool{false, true} {
				r := s.Send(http.MethodGet, "/?q="+q, nil, hx).WantStatus(http.StatusOK)
				if got := r.Texts("pet-name"); len(got) != 0 {
					t.Errorf("q=%s (htmx %v) finds %v, want nothing", q, hx, got)
				}
				if r.ID("empty").Length() != 1 {
					t.Errorf("q=%s (htmx %v): no “No pets match.”:\n%s", q, hx, r.Body)
				}
				if !utf8.ValidString(r.Body) || strings.ContainsAny(r.Body, "\x00\x1b\x7f\u0085") {
					t.Errorf("q=%s (htmx %v): the page echoes the raw text", q, hx)
				}
				if box, _ := r.Find("#q").Attr("value"); !hx && !strings.Contains(box, "\uFFFD") {
					t.Errorf("q=%s: the search box shows %q, want U+FFFD in place of what it cannot show", q, box)
				}
			}
		}
	})
}

func TestHostileTextInConsoleForms(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 2)
		b := a.SignedIn(t)
		b.Get("/staff/categories/new").WantStatus(http.StatusOK)
		for _, tc := range []struct {
			name, path string
			form       url.Values
			field, msg string
		}{
			{"NUL in a category description", "/staff/categories", url.Values{"name": {"Birds"}, "description": {"Loud.\x00"}},
				"description", "must not contain control characters other than line breaks"},
			{"escape in a category description", "/staff/categories/" + handlerstest.Itoa(pet.CategoryID), url.Values{"name": {"Dogs"}, "description": {"\x1b[2J"}},
				"description", "must not contain control characters other than line breaks"},
			{"invalid UTF-8 in a category description", "/staff/categories", url.Values{"name": {"Birds"}, "description": {"Lou\xffd"}},
				"description", "must be valid UTF-8"},
			{"NUL in a category name", "/staff/categories", url.Values{"name": {"Bi\x00rds"}},
				"name", "must not contain control characters"},
			{"tab after a pet name", "/staff/pets", url.Values{"name": {"Max\t"}, "categoryId": {handlerstest.Itoa(pet.CategoryID)}, "status": {"available"}},
				"name", "must not contain control characters"},
			{"NUL in a pet name", "/staff/pets/" + handlerstest.Itoa(pet.ID), url.Values{"name": {"Re\x00x"}, "categoryId": {handlerstest.Itoa(pet.CategoryID)}, "status": {"available"}},
				"name", "must not contain control characters"},
			{"NUL in a pet description", "/staff/pets/" + handlerstest.Itoa(pet.ID), petForm(pet, "description", "Calm.\x00"),
				"description", "must not contain control characters other than line breaks"},
			{"escape in a pet description", "/staff/pets", petForm(pet, "description", "\x1b[2J"),
				"description", "must not contain control characters other than line breaks"},
			{"invalid UTF-8 in a pet description", "/staff/pets/" + handlerstest.Itoa(pet.ID), petForm(pet, "description", "Ca\xfflm"),
				"description", "must be valid UTF-8"},
			{"NUL in a breed", "/staff/pets/" + handlerstest.Itoa(pet.ID), petForm(pet, "breed", "Bea\x00gle"),
				"breed", "must not contain control characters"},
			{"invalid UTF-8 in a breed", "/staff/pets", petForm(pet, "breed", "Bea\xffgle"),
				"breed", "must be valid UTF-8"},
			{"NUL in a price", "/staff/pets/" + handlerstest.Itoa(pet.ID), petForm(pet, "price", "12\x00"),
				"price", `must be an amount like "129.00": up to 7 digits, then at most 2 decimals`},
			{"NUL in a birth date", "/staff/pets/" + handlerstest.Itoa(pet.ID), petForm(pet, "birthDate", "2020-01-01\x00"),
				"birthDate", "must be a date as YYYY-MM-DD"},
			{"invalid UTF-8 in a birth date", "/staff/pets", petForm(pet, "birthDate", "\xff\xfe"),
				"birthDate", "must be a date as YYYY-MM-DD"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := b.Post(tc.path, tc.form).WantStatus(http.StatusUnprocessableEntity)
				if got := browsertest.Text(p.ID("error-" + tc.field + "-error")); got != tc.msg {
					t.Errorf("%s error = %q, want %q", tc.field, got, tc.msg)
				}
				// The form shows the value again, with U+FFFD for what a page cannot hold.
				if body := string(p.Body); !utf8.ValidString(body) || strings.ContainsAny(body, "\x00\x1b") {
					t.Errorf("the form echoes the raw text")
				}
				if shown := p.Find("#"+tc.field).AttrOr("value", p.Find("#"+tc.field).Text()); !strings.Contains(shown, "\uFFFD") {
					t.Errorf("%s shows %q, want U+FFFD in place of what it cannot show", tc.field, shown)
				}
			})
		}
		// Line breaks are what a textarea sends: kept.
		b.Post("/staff/pets/"+handlerstest.Itoa(pet.ID), petForm(pet, "description", "Calm.\r\nLoves walks.")).WantRedirect("/staff/catalog")
		p := b.Post("/staff/categories", url.Values{"name": {"Fish"}, "description": {"Wet.\r\nVery wet."}}).WantRedirect("/staff/catalog")
		b.Follow(p).WantText("flash", "Category “Fish” created.")
	})
}

// petForm is the console's pet form for pet, every field valid but the
// one set to value.
func petForm(pet *db.Pet, field, value string) url.Values {
	f := url.Values{"name": {pet.Name}, "categoryId": {handlerstest.Itoa(pet.CategoryID)}, "status": {"available"},
		"price": {"129.00"}, "description": {"Calm."}, "breed": {"Beagle"}, "birthDate": {"2020-01-01"}}
	f.Set(field, value)
	return f
}

// The checkout's details and the order lookup (SPEC §14) take the same
// text: each field comes back refused with its message, the page echoes
// none of it raw, and nothing is placed, on both databases.
func TestHostileTextInCheckoutAndLookup(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 2)
		s := a.Shopper(t)
		s.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(pet.ID), "quantity", "1")).WantRedirect("/cart")
		clean := func(where string, r *browsertest.Page) {
			t.Helper()
			if !utf8.ValidString(r.Body) || strings.ContainsAny(r.Body, "\x00\x1b\x7f\u0085") {
				t.Errorf("%s: the page echoes the raw text", where)
			}
		}
		for _, field := range []string{"name", "email", "phone", "date"} {
			for _, v := range []string{"Ada\x00", "Ad\xffa", "\x1b[2J", "Ada\u0085"} {
				for _, hx := range []bool{false, true} {
					where := fmt.Sprintf("checkout %s=%q (htmx %v)", field, v, hx)
					r := s.Send(http.MethodPost, "/checkout", handlerstest.Buyer(field, v), hx).WantStatus(http.StatusUnprocessableEntity)
					if r.Text("error-"+field) == "" {
						t.Errorf("%s: no message by the field", where)
					}
					clean(where, r)
				}
			}
		}
		if n := handlerstest.CountRows(t, a, "orders"); n != 0 {
			t.Fatalf("%d orders placed", n)
		}
		n := s.Checkout(nil)
		for _, v := range []string{"ada@example.com\x00", "ad\xffa@example.com", "\x1b[2J", "ada\u0085@example.com"} {
			r := s.Post("/orders/lookup", handlerstest.Form("number", handlerstest.Itoa(n), "email", v)).WantStatus(http.StatusNotFound)
			clean(fmt.Sprintf("lookup email=%q", v), r)
			r = s.Post("/orders/lookup", handlerstest.Form("number", v, "email", "ada@example.com")).WantStatus(http.StatusUnprocessableEntity)
			clean(fmt.Sprintf("lookup number=%q", v), r)
		}
	})
}
