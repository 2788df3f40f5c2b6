package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// The console's lists each have one search box (SPEC §10): orders by
// number, buyer's name, email or phone; catalog and inventory by pet
// name. What was searched stays in the box, in the live refresh's URL
// and in the next page's; a search no text can be is refused in the
// console's layout, never a 500.
func TestConsoleSearch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b := a.SignedIn(t)
		ctx := context.Background()
		rex := a.SeedPet("Rex the Brave", 5)
		tom := a.SeedPet("Tomcat", 5)
		ada, err := a.Store.PlaceCheckout(ctx, "browser-1", 10,
			db.NewCheckout{Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+44 20 7946 0958"},
			[]db.NewOrder{{PetID: &rex.ID, Quantity: handlerstest.Ptr(int64(1))}})
		if err != nil {
			t.Fatal(err)
		}
		bob, err := a.Store.PlaceCheckout(ctx, "browser-2", 10, db.NewCheckout{Name: "Bob", Email: "bob@example.org"},
			[]db.NewOrder{{PetID: &tom.ID, Quantity: handlerstest.Ptr(int64(1))}})
		if err != nil {
			t.Fatal(err)
		}
		orderIDs := func(path string) []string {
			t.Helper()
			p := b.Get(path).WantStatus(http.StatusOK)
			var ids []string
			p.ID("order-row").Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-order-id", "")) })
			return ids
		}
		adaID, bobID := handlerstest.Itoa(ada.Orders[0].ID), handlerstest.Itoa(bob.Orders[0].ID)
		for q, want := range map[string][]string{
			"ada":                {adaID},
			"ADA LOVE":           {adaID},
			"bob@example":        {bobID},
			"+44 20 79":          {adaID},
			"#" + adaID:          {adaID},
			"lovelace@":          nil,
			"":                   {bobID, adaID},
			"<script>x</script>": nil,
		} {
			if got := orderIDs("/staff/orders?q=" + url.QueryEscape(q)); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("orders ?q=%q: %v, want %v", q, got, want)
			}
		}
		p := b.Get("/staff/orders?q=" + url.QueryEscape("<b>Ada")).WantStatus(http.StatusOK)
		if v, _ := p.ID("search").Attr("value"); v != "<b>Ada" {
			t.Errorf("the search box holds %q", v)
		}
		if strings.Contains(p.Body, "<b>Ada") {
			t.Errorf("the search text is not escaped")
		}
		live, _ := p.ID("orders").Attr("hx-get")
		if live != "/staff/orders?q=%3Cb%3EAda" {
			t.Errorf("the live refresh fetches %q, without the search", live)
		}

		petNames := func(path, testid string) []string {
			t.Helper()
			var names []string
			b.Get(path).WantStatus(http.StatusOK).ID(testid).Each(func(_ int, s *goquery.Selection) {
				names = append(names, browsertest.Text(s))
			})
			return names
		}
		if got := petNames("/staff/catalog?q=BRAVE", "pet-row"); len(got) != 1 || !strings.Contains(got[0], "Rex the Brave") {
			t.Errorf("catalog ?q=BRAVE: %q", got)
		}
		if got := petNames("/staff/catalog?q=cat", "pet-row"); len(got) != 1 || !strings.Contains(got[0], "Tomcat") {
			t.Errorf("catalog ?q=cat: %q", got)
		}
		if got := petNames("/staff/inventory?q=tom", "inventory-row"); len(got) != 1 || !strings.Contains(got[0], "Tomcat") {
			t.Errorf("inventory ?q=tom: %q", got)
		}

		// Text that cannot be searched for: 400 in the console's layout.
		for _, path := range []string{"/staff/orders?q=a%00", "/staff/catalog?q=%FF", "/staff/inventory?q=" + strings.Repeat("a", 300)} {
			p := b.Get(path).WantStatus(http.StatusBadRequest)
			if !p.IsFullPage() || p.Find("nav").Length() == 0 {
				t.Errorf("%s: the refusal leaves the console's layout", path)
			}
		}
	})
}

// A clerk refused an admin page stays in the console's layout, with its
// navigation, and is told which admins to ask (SPEC §16: a page in the
// console).
func TestClerkForbiddenPageKeepsTheConsole(t *testing.T) {
	a := handlerstest.NewOn(t, dbtest.SQLite)
	a.SignedIn(t) // an admin to ask
	clerk, _ := a.SignInAs(t, "clara", db.RoleClerk)
	p := clerk.Get("/staff/audit").WantStatus(http.StatusForbidden)
	if !p.IsFullPage() || p.ID("nav-orders").Length() != 1 || p.ID("nav-audit").Length() != 0 {
		t.Fatalf("the 403 page is not the console's page with a clerk's navigation:\n%.600s", p.Body)
	}
	ask := browsertest.Text(p.ID("error-ask"))
	if !strings.Contains(ask, "ask ") || strings.Contains(ask, "clara") {
		t.Errorf("the 403 page says %q: no admin to ask", ask)
	}
	if got := browsertest.Text(p.Find("h1")); got != "Not allowed" {
		t.Errorf("heading %q", got)
	}
}

// A refused export (dates reversed, or not dates) stays on the orders
// page in the console's layout (SPEC §10): the export form open with the
// dates as typed, its problems in an error summary that takes focus, each
// field marked; 422, never a bare error page.
func TestConsoleExportRefusedKeepsTheForm(t *testing.T) {
	a := handlerstest.NewOn(t, dbtest.SQLite)
	b := a.SignedIn(t)
	for _, tc := range []struct{ from, to, field string }{
		{"2026-02-10", "2026-01-01", "x-to"},
		{"yesterday", "2026-01-01", "x-from"},
	} {
		p := b.Get("/staff/orders/export?from=" + url.QueryEscape(tc.from) + "&to=" + tc.to).WantStatus(http.StatusUnprocessableEntity)
		if !p.IsFullPage() || p.ID("nav-orders").Length() != 1 || p.ID("orders").Length() != 1 {
			t.Fatalf("%s–%s: not the orders page in the console's layout:\n%.500s", tc.from, tc.to, p.Body)
		}
		if _, open := p.ID("export-details").Attr("open"); !open {
			t.Errorf("%s–%s: the export form is folded", tc.from, tc.to)
		}
		sum := p.ID("error-summary")
		if _, auto := sum.Attr("autofocus"); !auto || sum.AttrOr("role", "") != "alert" || sum.Find(`a[href="#`+tc.field+`"]`).Length() != 1 {
			t.Errorf("%s–%s: error summary %q, want one that takes focus and links to #%s", tc.from, tc.to, browsertest.Text(sum), tc.field)
		}
		if v, _ := p.ID("export-from").Attr("value"); v != tc.from {
			t.Errorf("the from field holds %q, want %q as typed", v, tc.from)
		}
		if p.Find("#"+tc.field).AttrOr("aria-invalid", "") != "true" {
			t.Errorf("%s–%s: #%s is not marked invalid", tc.from, tc.to, tc.field)
		}
	}
}

// The two-factor secret, for typing by hand, reads in groups of four
// (issue 42); copied, it is the one secret again.
func TestTwoFactorSecretInGroups(t *testing.T) {
	a := handlerstest.NewOn(t, dbtest.SQLite)
	b := a.SignedIn(t)
	secret := b.Get("/staff/account/2fa").WantStatus(http.StatusOK).ID("totp-secret")
	groups := secret.Find("span")
	if groups.Length() < 8 || strings.Join(groups.Map(func(_ int, s *goquery.Selection) string { return s.Text() }), "") != secret.AttrOr("data-secret", "") {
		t.Fatalf("the secret %q shows as %d groups", secret.AttrOr("data-secret", ""), groups.Length())
	}
	groups.Each(func(i int, s *goquery.Selection) {
		if n := len(s.Text()); n > 4 || n == 0 {
			t.Errorf("group %d is %q", i, s.Text())
		}
	})
}
