package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// The orders page shows each order's price snapshot and total, and for a
// storefront checkout its buyer (SPEC §14); an API order shows its key.
func TestConsoleOrdersBuyerAndTotals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b := a.SignedIn(t)
		ctx := context.Background()
		rex := pricedPet(t, a, "Rex", "1250", 5)
		checkout, err := a.Store.PlaceCheckout(ctx, "browser-1", 10,
			db.NewCheckout{Name: "Ada Lovelace", Email: "ada+pets@example.com", Phone: "+44 (20) 7946-0958"},
			[]db.NewOrder{{PetID: &rex.ID, Quantity: handlerstest.Ptr(int64(2))}})
		if err != nil {
			t.Fatal(err)
		}
		shop := checkout.Orders[0]
		noPhone, err := a.Store.PlaceCheckout(ctx, "browser-2", 10, db.NewCheckout{Name: "Bob", Email: "bob@example.org"},
			[]db.NewOrder{{PetID: &rex.ID, Quantity: handlerstest.Ptr(int64(1))}})
		if err != nil {
			t.Fatal(err)
		}
		api, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &rex.ID, Quantity: handlerstest.Ptr(int64(1))})
		if err != nil {
			t.Fatal(err)
		}
		// A later price change does not alter what was ordered.
		if _, err := a.Store.UpdatePet(ctx, rex.ID, db.NewPet{Name: &rex.Name, CategoryID: &rex.CategoryID, Price: handlerstest.Ptr("1")}); err != nil {
			t.Fatal(err)
		}

		check := func(t *testing.T, rows *goquery.Selection) {
			t.Helper()
			row := func(id int64) *goquery.Selection { return rows.Filter("#order-" + handlerstest.Itoa(id)) }
			cell := func(id int64, testid string) string {
				return browsertest.Text(row(id).Find(`[data-testid="` + testid + `"]`))
			}
			for _, tc := range []struct {
				order       int64
				unit, total string
			}{{shop.ID, "1,250.00", "€2,500.00"}, {noPhone.Orders[0].ID, "1,250.00", "€1,250.00"}, {api.ID, "1,250.00", "€1,250.00"}} {
				if got := cell(tc.order, "order-unit-price"); got != tc.unit {
					t.Errorf("order %d unit price = %q, want %q", tc.order, got, tc.unit)
				}
				if got := cell(tc.order, "order-total"); got != tc.total {
					t.Errorf("order %d total = %q, want %q", tc.order, got, tc.total)
				}
			}
			if got := cell(shop.ID, "buyer-name"); got != "Ada Lovelace" {
				t.Errorf("buyer name = %q", got)
			}
			email := row(shop.ID).Find(`[data-testid="buyer-email"]`)
			if href, _ := email.Attr("href"); href != "mailto:ada+pets@example.com" || browsertest.Text(email) != "ada+pets@example.com" {
				t.Errorf("buyer email = %q → %q", browsertest.Text(email), href)
			}
			phone := row(shop.ID).Find(`[data-testid="buyer-phone"]`)
			if href, _ := phone.Attr("href"); href != "tel:+442079460958" || browsertest.Text(phone) != "+44 (20) 7946-0958" {
				t.Errorf("buyer phone = %q → %q", browsertest.Text(phone), href)
			}
			if got := cell(noPhone.Orders[0].ID, "order-buyer"); got != "Bob bob@example.org Storefront" {
				t.Errorf("buyer without a phone = %q", got)
			}
			if row(noPhone.Orders[0].ID).Find(`[data-testid="buyer-phone"]`).Length() != 0 {
				t.Errorf("a buyer without a phone has a phone link")
			}
			// An API order names its key, and no buyer.
			if got := cell(api.ID, "order-buyer"); got != "API · customer" {
				t.Errorf("API order buyer cell = %q", got)
			}
			if n := row(api.ID).Find(`a[href^="mailto:"], a[href^="tel:"]`).Length(); n != 0 {
				t.Errorf("API order has %d contact links", n)
			}
		}
		t.Run("page", func(t *testing.T) {
			p := b.Get("/staff/orders").WantStatus(http.StatusOK)
			if p.Find(".table-wrap > table[data-testid=orders]").Length() != 1 {
				t.Errorf("the orders table is not in a .table-wrap, which scrolls it on a narrow screen")
			}
			check(t, p.ID("order-row"))
		})
		t.Run("live refresh", func(t *testing.T) {
			check(t, b.HX("/staff/orders").ID("order-row"))
		})
		t.Run("a row after an action", func(t *testing.T) {
			b.HXPost("/staff/orders/"+handlerstest.Itoa(shop.ID)+"/complete", nil).WantStatus(http.StatusOK)
			p := b.HXPost("/staff/orders/"+handlerstest.Itoa(shop.ID)+"/cancel", nil).WantStatus(http.StatusConflict)
			row := p.Find("#order-" + handlerstest.Itoa(shop.ID))
			if got := browsertest.Text(row.Find(`[data-testid="order-total"]`)); got != "€2,500.00" {
				t.Errorf("total = %q", got)
			}
			if got := browsertest.Text(row.Find(`[data-testid="buyer-name"]`)); got != "Ada Lovelace" {
				t.Errorf("buyer = %q", got)
			}
		})
	})
}

// pricedPet adds a pet at price (the request form, "129.50") with stock
// in the first category, made when there is none.
func pricedPet(t *testing.T, a *handlerstest.App, name, price string, stock int64) *db.Pet {
	t.Helper()
	ctx := context.Background()
	p := a.SeedPet(name, stock)
	p, err := a.Store.UpdatePet(ctx, p.ID, db.NewPet{Name: &p.Name, CategoryID: &p.CategoryID, Price: &price})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
