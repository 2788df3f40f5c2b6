package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// The dashboard's takings (SPEC §14): today's revenue counts the orders
// placed today (UTC) that were not cancelled, complete ones included; the
// open value counts the open orders whenever they were placed.
func TestConsoleDashboardTakings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b := a.SignedIn(t)
		ctx := context.Background()
		rex := pricedPet(t, a, "Rex", "1250", 10)
		tom := pricedPet(t, a, "Tom", "2.5", 10)
		takings := func(t *testing.T, p *browsertest.Page, revenue, openValue string) {
			t.Helper()
			if got := browsertest.Text(p.ID("revenue-today").Find(".value")); got != revenue {
				t.Errorf("revenue today = %q, want %q", got, revenue)
			}
			if got := browsertest.Text(p.ID("open-value").Find(".value")); got != openValue {
				t.Errorf("open value = %q, want %q", got, openValue)
			}
		}
		place := func(p *db.Pet, qty int64) *db.Order {
			t.Helper()
			o, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &p.ID, Quantity: &qty})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		takings(t, b.Get("/staff").WantStatus(http.StatusOK), "€0.00", "€0.00")

		// 2 × 1,250.00 bought in the storefront stays open; 4 × 2.50 is
		// completed; 1 × 1,250.00 is cancelled.
		if _, err := a.Store.PlaceCheckout(ctx, "browser-1", 10, db.NewCheckout{Name: "Ada", Email: "ada@example.com"},
			[]db.NewOrder{{PetID: &rex.ID, Quantity: handlerstest.Ptr(int64(2))}}); err != nil {
			t.Fatal(err)
		}
		done := place(tom, 4)
		gone := place(rex, 1)
		b.HXPost("/staff/orders/"+handlerstest.Itoa(done.ID)+"/complete", nil).WantStatus(http.StatusOK)
		b.HXPost("/staff/orders/"+handlerstest.Itoa(gone.ID)+"/cancel", nil).WantStatus(http.StatusOK)
		p := b.Get("/staff").WantStatus(http.StatusOK)
		takings(t, p, "€2,510.00", "€2,500.00")
		// The live refresh (htmx, on every order event) carries them too.
		takings(t, b.HX("/staff").WantStatus(http.StatusOK), "€2,510.00", "€2,500.00")
		if got := browsertest.Text(p.ID("recent-orders").Find("tbody")); !contains(got, "Rex 2 €2,500.00") {
			t.Errorf("newest open orders = %q", got)
		}

		// A new day (UTC): nothing placed yet today, the open order still open.
		a.Clock.IntoNextDay(time.Minute)
		b.Follow(b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusSeeOther)) // a sign-in lasts 12 hours
		takings(t, b.Get("/staff").WantStatus(http.StatusOK), "€0.00", "€2,500.00")
		place(tom, 1)
		takings(t, b.Get("/staff").WantStatus(http.StatusOK), "€2.50", "€2,502.50")
	})
}
