package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"petstore/db"
)

func TestConsoleOrders(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	ctx := context.Background()
	rex := a.seedPet("Rex", 1)
	tom := a.seedPet("Tom", 5)
	place := func(p *db.Pet, qty int64, owner db.Owner) *db.Order {
		t.Helper()
		o, err := a.store.PlaceOrder(ctx, owner, db.NewOrder{PetID: &p.ID, Quantity: &qty})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o1 := place(rex, 1, db.Owner{APIKeyID: a.custID}) // Rex → pending
	o2 := place(tom, 2, db.Owner{ShopperID: "browser-1"})
	o3 := place(tom, 1, db.Owner{APIKeyID: a.custID})
	state := func(p *page, id int64) string {
		return text(p.find("#order-" + itoa(id)).Find(`[data-testid="order-state"]`))
	}

	t.Run("list newest first with names", func(t *testing.T) {
		p := b.get("/staff/orders").wantStatus(http.StatusOK)
		rows := p.id("order-row")
		if rows.Length() != 3 {
			t.Fatalf("rows = %d", rows.Length())
		}
		if first, _ := rows.First().Attr("data-order-id"); first != itoa(o3.ID) {
			t.Errorf("first row = order %s, want the newest %d", first, o3.ID)
		}
		r := p.find("#order-" + itoa(o2.ID))
		if got := text(r); !contains(got, "Tom", "Storefront", "open") {
			t.Errorf("row = %q", got)
		}
		if got := text(p.find("#order-" + itoa(o1.ID))); !contains(got, "Rex", "API · customer") {
			t.Errorf("row = %q", got)
		}
		p = b.get("/staff/orders?pet=" + itoa(tom.ID)).wantStatus(http.StatusOK)
		if p.id("order-row").Length() != 2 {
			t.Errorf("pet filter: %d rows", p.id("order-row").Length())
		}
		p.wantText("pet-filter", "Tom")
		b.get("/staff/orders?state=lost").wantStatus(http.StatusBadRequest)
		if p := b.hx("/staff/orders"); p.find("tbody#order-rows").Length() != 1 || p.find("main").Length() != 0 {
			t.Errorf("htmx answer is not the table body")
		}
	})
	t.Run("complete", func(t *testing.T) {
		p := b.hxPost("/staff/orders/"+itoa(o1.ID)+"/complete", nil).wantStatus(http.StatusOK)
		if got := state(p, o1.ID); got != "complete" {
			t.Fatalf("state = %q", got)
		}
		if p.find("#order-"+itoa(o1.ID)+` [data-testid="complete-order"]`).Length() != 0 {
			t.Errorf("a complete order still offers Complete")
		}
		// Rex had stock 0 and no other open order: sold (SPEC §5).
		wantStock(t, a, rex.ID, db.StatusSold, 0)
		p = b.get("/staff/orders?state=open")
		if p.find("#order-"+itoa(o1.ID)).Length() != 0 || p.id("order-row").Length() != 2 {
			t.Errorf("open filter shows %d rows, the complete one included: %v", p.id("order-row").Length(), p.find("#order-"+itoa(o1.ID)).Length())
		}
		p = b.get("/staff/orders?state=complete")
		if p.id("order-row").Length() != 1 || state(p, o1.ID) != "complete" {
			t.Errorf("complete filter: %d rows", p.id("order-row").Length())
		}
	})
	t.Run("cancel", func(t *testing.T) {
		p := b.hxPost("/staff/orders/"+itoa(o2.ID)+"/cancel", nil).wantStatus(http.StatusOK)
		p.wantText("order-cancelled", "Order #"+itoa(o2.ID)+" was cancelled")
		wantStock(t, a, tom.ID, db.StatusAvailable, 4)
		if b.get("/staff/orders").find("#order-"+itoa(o2.ID)).Length() != 0 {
			t.Errorf("a cancelled order is still listed")
		}
	})
	t.Run("a complete order cannot be cancelled", func(t *testing.T) {
		p := b.hxPost("/staff/orders/"+itoa(o1.ID)+"/cancel", nil).wantStatus(http.StatusConflict)
		if got := text(p.find("#order-" + itoa(o1.ID) + " .field-error")); got != "Order "+itoa(o1.ID)+" is complete and cannot be cancelled." {
			t.Errorf("message = %q", got)
		}
		if state(p, o1.ID) != "complete" {
			t.Errorf("row does not show the order")
		}
		b.hxPost("/staff/orders/999999/complete", nil).wantStatus(http.StatusNotFound)
	})
	t.Run("without JavaScript", func(t *testing.T) {
		p := b.post("/staff/orders/"+itoa(o3.ID)+"/complete", nil).wantRedirect("/staff/orders")
		b.follow(p).wantText("flash", "Order #"+itoa(o3.ID)+" is complete.")
		p = b.post("/staff/orders/"+itoa(o3.ID)+"/cancel", nil).wantRedirect("/staff/orders")
		b.follow(p).wantText("flash", "is complete and cannot be cancelled")
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
