package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

func TestConsoleOrders(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()
	rex := a.SeedPet("Rex", 1)
	tom := a.SeedPet("Tom", 5)
	place := func(p *db.Pet, qty int64, owner db.Owner) *db.Order {
		t.Helper()
		o, err := a.Store.PlaceOrder(ctx, owner, db.NewOrder{PetID: &p.ID, Quantity: &qty})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o1 := place(rex, 1, db.Owner{APIKeyID: a.CustID}) // Rex → pending
	o2 := place(tom, 2, db.Owner{ShopperID: "browser-1"})
	o3 := place(tom, 1, db.Owner{APIKeyID: a.CustID})
	state := func(p *browsertest.Page, id int64) string {
		return browsertest.Text(p.Find("#order-" + handlerstest.Itoa(id)).Find(`[data-testid="order-state"]`))
	}

	t.Run("list newest first with names", func(t *testing.T) {
		p := b.Get("/staff/orders").WantStatus(http.StatusOK)
		rows := p.ID("order-row")
		if rows.Length() != 3 {
			t.Fatalf("rows = %d", rows.Length())
		}
		if first, _ := rows.First().Attr("data-order-id"); first != handlerstest.Itoa(o3.ID) {
			t.Errorf("first row = order %s, want the newest %d", first, o3.ID)
		}
		r := p.Find("#order-" + handlerstest.Itoa(o2.ID))
		if got := browsertest.Text(r); !contains(got, "Tom", "Storefront", "Open") {
			t.Errorf("row = %q", got)
		}
		if got := browsertest.Text(p.Find("#order-" + handlerstest.Itoa(o1.ID))); !contains(got, "Rex", "API · customer") {
			t.Errorf("row = %q", got)
		}
		p = b.Get("/staff/orders?pet=" + handlerstest.Itoa(tom.ID)).WantStatus(http.StatusOK)
		if p.ID("order-row").Length() != 2 {
			t.Errorf("pet filter: %d rows", p.ID("order-row").Length())
		}
		p.WantText("pet-filter", "Tom")
		b.Get("/staff/orders?state=lost").WantStatus(http.StatusBadRequest)
		if p := b.HX("/staff/orders"); p.Find("tbody#order-rows").Length() != 1 || p.Find("main").Length() != 0 {
			t.Errorf("htmx answer is not the table body")
		}
	})
	t.Run("complete", func(t *testing.T) {
		p := b.HXPost("/staff/orders/"+handlerstest.Itoa(o1.ID)+"/complete", nil).WantStatus(http.StatusOK)
		if got := state(p, o1.ID); got != "Complete" {
			t.Fatalf("state = %q", got)
		}
		if p.Find("#order-"+handlerstest.Itoa(o1.ID)+` [data-testid="complete-order"]`).Length() != 0 {
			t.Errorf("a complete order still offers Complete")
		}
		// Rex had stock 0 and no other open order: sold (SPEC §5).
		wantStock(t, a, rex.ID, db.StatusSold, 0)
		p = b.Get("/staff/orders?state=open")
		if p.Find("#order-"+handlerstest.Itoa(o1.ID)).Length() != 0 || p.ID("order-row").Length() != 2 {
			t.Errorf("open filter shows %d rows, the complete one included: %v", p.ID("order-row").Length(), p.Find("#order-"+handlerstest.Itoa(o1.ID)).Length())
		}
		p = b.Get("/staff/orders?state=complete")
		if p.ID("order-row").Length() != 1 || state(p, o1.ID) != "Complete" {
			t.Errorf("complete filter: %d rows", p.ID("order-row").Length())
		}
	})
	t.Run("cancel", func(t *testing.T) {
		p := b.HXPost("/staff/orders/"+handlerstest.Itoa(o2.ID)+"/cancel", nil).WantStatus(http.StatusOK)
		p.WantText("order-cancelled", "Order #"+handlerstest.Itoa(o2.ID)+" was cancelled")
		wantStock(t, a, tom.ID, db.StatusAvailable, 4)
		if b.Get("/staff/orders").Find("#order-"+handlerstest.Itoa(o2.ID)).Length() != 0 {
			t.Errorf("a cancelled order is still listed")
		}
	})
	t.Run("a complete order cannot be cancelled", func(t *testing.T) {
		p := b.HXPost("/staff/orders/"+handlerstest.Itoa(o1.ID)+"/cancel", nil).WantStatus(http.StatusConflict)
		if got := browsertest.Text(p.Find("#order-" + handlerstest.Itoa(o1.ID) + " .field-error")); got != "Order "+handlerstest.Itoa(o1.ID)+" is complete and cannot be cancelled." {
			t.Errorf("message = %q", got)
		}
		if state(p, o1.ID) != "Complete" {
			t.Errorf("row does not show the order")
		}
		b.HXPost("/staff/orders/999999/complete", nil).WantStatus(http.StatusNotFound)
	})
	t.Run("without JavaScript", func(t *testing.T) {
		p := b.Post("/staff/orders/"+handlerstest.Itoa(o3.ID)+"/complete", nil).WantRedirect("/staff/orders")
		b.Follow(p).WantText("flash", "Order #"+handlerstest.Itoa(o3.ID)+" is complete.")
		p = b.Post("/staff/orders/"+handlerstest.Itoa(o3.ID)+"/cancel", nil).WantRedirect("/staff/orders")
		b.Follow(p).WantText("flash", "is complete and cannot be cancelled")
	})
}

// contains reports whether s contains every part.
func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
