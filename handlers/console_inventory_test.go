package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestConsoleInventory(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	ctx := context.Background()
	rex := a.seedPet("Rex", 3)
	fido := a.seedPet("Fido", 0) // sold
	cats, err := a.store.CreateCategory(ctx, db.NewCategory{Name: ptr("Cats")})
	if err != nil {
		t.Fatal(err)
	}
	tom, err := a.store.CreatePet(ctx, db.NewPet{Name: ptr("Tom"), CategoryID: &cats.ID})
	if err != nil {
		t.Fatal(err)
	}
	row := func(p *page, id int64) string {
		t.Helper()
		r := p.find("#inv-" + itoa(id))
		if r.Length() == 0 {
			return ""
		}
		q, _ := r.Find(`[data-testid="quantity"]`).Attr("value")
		return text(r.Find(`[data-testid="pet-name"]`)) + " " + text(r.Find(`[data-testid="status"]`)) + " " + q
	}

	t.Run("list and filters", func(t *testing.T) {
		p := b.get("/staff/inventory").wantStatus(http.StatusOK)
		if got := p.id("inventory-row").Length(); got != 3 {
			t.Fatalf("rows = %d, want 3", got)
		}
		if got := row(p, rex.ID); got != "Rex available 3" {
			t.Errorf("Rex row = %q", got)
		}
		if got := row(p, fido.ID); got != "Fido sold 0" {
			t.Errorf("Fido row = %q", got)
		}
		if p.find(`label[for="qty-`+itoa(rex.ID)+`"]`).Length() != 1 {
			t.Errorf("quantity field has no label")
		}
		if _, ok := p.find("main").Attr("sse-connect"); !ok {
			t.Errorf("inventory page does not subscribe to the event stream")
		}
		p = b.get("/staff/inventory?status=sold").wantStatus(http.StatusOK)
		if got := p.id("inventory-row").Length(); got != 1 || row(p, fido.ID) == "" {
			t.Fatalf("sold filter: %d rows", got)
		}
		p = b.get("/staff/inventory?category=" + itoa(cats.ID)).wantStatus(http.StatusOK)
		if got := p.id("inventory-row").Length(); got != 1 || row(p, tom.ID) == "" {
			t.Fatalf("category filter: %d rows", got)
		}
		if v, _ := p.find(`#f-category option[selected]`).Attr("value"); v != itoa(cats.ID) {
			t.Errorf("category filter not kept in the form: %q", v)
		}
		b.get("/staff/inventory?status=lost").wantStatus(http.StatusBadRequest)
		// htmx refetches the table body alone.
		p = b.hx("/staff/inventory?status=available").wantStatus(http.StatusOK)
		if p.find("html main").Length() != 0 || p.find("tbody#inventory-rows").Length() != 1 {
			t.Fatalf("htmx answer is not the table body:\n%s", p.Body)
		}
		p = b.hx("/staff/inventory/" + itoa(rex.ID)).wantStatus(http.StatusOK)
		if got := row(p, rex.ID); got != "Rex available 3" {
			t.Errorf("single row = %q", got)
		}
	})
	t.Run("edit OK", func(t *testing.T) {
		p := b.hxPost("/staff/inventory/"+itoa(rex.ID), url.Values{"quantity": {"7"}}).wantStatus(http.StatusOK)
		if got := row(p, rex.ID); got != "Rex available 7" {
			t.Fatalf("row = %q", got)
		}
		p.wantText("row-saved", "Saved")
		wantStock(t, a, rex.ID, db.StatusAvailable, 7)
		// Stock back from 0 makes a sold pet available (SPEC §5).
		p = b.hxPost("/staff/inventory/"+itoa(fido.ID), url.Values{"quantity": {"2"}}).wantStatus(http.StatusOK)
		if got := row(p, fido.ID); got != "Fido available 2" {
			t.Fatalf("row = %q", got)
		}
	})
	t.Run("zero with an open order is pending", func(t *testing.T) {
		if _, err := a.store.PlaceOrder(ctx, db.Owner{APIKeyID: a.custID}, db.NewOrder{PetID: &tom.ID, Quantity: ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}
		b.hxPost("/staff/inventory/"+itoa(tom.ID), url.Values{"quantity": {"4"}}).wantStatus(http.StatusOK)
		p := b.hxPost("/staff/inventory/"+itoa(tom.ID), url.Values{"quantity": {"0"}}).wantStatus(http.StatusOK)
		if got := row(p, tom.ID); got != "Tom pending 0" {
			t.Fatalf("row = %q", got)
		}
	})
	t.Run("invalid is 422 with the message", func(t *testing.T) {
		for _, tc := range []struct{ in, msg string }{
			{"-1", "quantity must be between 0 and 1000000"},
			{"1000001", "quantity must be between 0 and 1000000"},
			{"", "quantity is required"},
			{"two", "quantity must be a whole number from 0 to 1000000"},
		} {
			p := b.hxPost("/staff/inventory/"+itoa(rex.ID), url.Values{"quantity": {tc.in}}).wantStatus(http.StatusUnprocessableEntity)
			r := p.find("#inv-" + itoa(rex.ID))
			if got := text(r.Find(".field-error")); got != tc.msg {
				t.Errorf("%q: message = %q, want %q", tc.in, got, tc.msg)
			}
			in := r.Find(`[data-testid="quantity"]`)
			if v, _ := in.Attr("value"); v != tc.in {
				t.Errorf("%q: field keeps %q", tc.in, v)
			}
			if inv, _ := in.Attr("aria-invalid"); inv != "true" {
				t.Errorf("%q: field not marked invalid", tc.in)
			}
			desc, _ := in.Attr("aria-describedby")
			if r.Find("#"+desc).Length() != 1 {
				t.Errorf("%q: aria-describedby %q names nothing", tc.in, desc)
			}
		}
		wantStock(t, a, rex.ID, db.StatusAvailable, 7)
		b.hxPost("/staff/inventory/999999", url.Values{"quantity": {"1"}}).wantStatus(http.StatusNotFound)
	})
	t.Run("without JavaScript", func(t *testing.T) {
		p := b.post("/staff/inventory/"+itoa(rex.ID), url.Values{"quantity": {"5"}}).wantRedirect("/staff/inventory")
		b.follow(p).wantText("flash", "Rex: 5 in stock.")
		p = b.post("/staff/inventory/"+itoa(rex.ID), url.Values{"quantity": {"-5"}}).wantRedirect("/staff/inventory")
		b.follow(p).wantText("flash", "quantity must be between 0 and 1000000")
		wantStock(t, a, rex.ID, db.StatusAvailable, 5)
	})
}

// TestConsoleInventoryRowAsPage opens a row's live-refresh address as a
// page (a new tab, no HX-Request): it used to panic into a 500; it now
// redirects to the inventory page starting at that pet, scrolled to its
// row. An unknown pet is the 404 page, on both databases.
func TestConsoleInventoryRowAsPage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		b := a.signedIn(t)
		a.seedPet("Rex", 3)
		fido := a.seedPet("Fido", 2)
		a.seedPet("Tom", 1)

		p := b.get("/staff/inventory/" + itoa(fido.ID))
		p.wantRedirect("/staff/inventory?after=" + itoa(fido.ID-1) + "#inv-" + itoa(fido.ID))
		p = b.follow(p).wantStatus(http.StatusOK)
		if p.find("html main").Length() != 1 {
			t.Fatalf("not a whole page:\n%s", p.Body)
		}
		if id, _ := p.id("inventory-row").First().Attr("data-pet-id"); id != itoa(fido.ID) {
			t.Errorf("first row is pet %s, want %d (Fido)", id, fido.ID)
		}
		b.get("/staff/inventory/9999999").wantStatus(http.StatusNotFound)
		// htmx still gets the row alone.
		p = b.hx("/staff/inventory/" + itoa(fido.ID)).wantStatus(http.StatusOK)
		if p.find("html main").Length() != 0 || p.find("#inv-"+itoa(fido.ID)).Length() != 1 {
			t.Fatalf("htmx answer is not the row:\n%s", p.Body)
		}
	})
}

func wantStock(t *testing.T, a *testApp, petID int64, status string, stock int64) {
	t.Helper()
	p, err := a.store.FindPetByID(context.Background(), petID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != status || p.Stock != stock {
		t.Fatalf("pet %d = %s/%d, want %s/%d", petID, p.Status, p.Stock, status, stock)
	}
}
