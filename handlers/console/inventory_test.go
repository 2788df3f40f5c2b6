package console_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

func TestConsoleInventory(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()
	rex := a.SeedPet("Rex", 3)
	fido := a.SeedPet("Fido", 0) // sold
	cats, err := a.Store.CreateCategory(ctx, db.NewCategory{Name: handlerstest.Ptr("Cats")})
	if err != nil {
		t.Fatal(err)
	}
	tom, err := a.Store.CreatePet(ctx, db.NewPet{Name: handlerstest.Ptr("Tom"), CategoryID: &cats.ID})
	if err != nil {
		t.Fatal(err)
	}
	row := func(p *browsertest.Page, id int64) string {
		t.Helper()
		r := p.Find("#inv-" + handlerstest.Itoa(id))
		if r.Length() == 0 {
			return ""
		}
		q, _ := r.Find(`[data-testid="quantity"]`).Attr("value")
		return browsertest.Text(r.Find(`[data-testid="pet-name"]`)) + " " + browsertest.Text(r.Find(`[data-testid="status"]`)) + " " + q
	}

	t.Run("list and filters", func(t *testing.T) {
		p := b.Get("/staff/inventory").WantStatus(http.StatusOK)
		if got := p.ID("inventory-row").Length(); got != 3 {
			t.Fatalf("rows = %d, want 3", got)
		}
		if got := row(p, rex.ID); got != "Rex Available 3" {
			t.Errorf("Rex row = %q", got)
		}
		if got := row(p, fido.ID); got != "Fido Sold 0" {
			t.Errorf("Fido row = %q", got)
		}
		if p.Find(`label[for="qty-`+handlerstest.Itoa(rex.ID)+`"]`).Length() != 1 {
			t.Errorf("quantity field has no label")
		}
		if _, ok := p.Find("main").Attr("sse-connect"); !ok {
			t.Errorf("inventory page does not subscribe to the event stream")
		}
		p = b.Get("/staff/inventory?status=sold").WantStatus(http.StatusOK)
		if got := p.ID("inventory-row").Length(); got != 1 || row(p, fido.ID) == "" {
			t.Fatalf("sold filter: %d rows", got)
		}
		p = b.Get("/staff/inventory?category=" + handlerstest.Itoa(cats.ID)).WantStatus(http.StatusOK)
		if got := p.ID("inventory-row").Length(); got != 1 || row(p, tom.ID) == "" {
			t.Fatalf("category filter: %d rows", got)
		}
		if v, _ := p.Find(`#f-category option[selected]`).Attr("value"); v != handlerstest.Itoa(cats.ID) {
			t.Errorf("category filter not kept in the form: %q", v)
		}
		b.Get("/staff/inventory?status=lost").WantStatus(http.StatusBadRequest)
		// htmx refetches the table body alone.
		p = b.HX("/staff/inventory?status=available").WantStatus(http.StatusOK)
		if p.Find("html main").Length() != 0 || p.Find("tbody#inventory-rows").Length() != 1 {
			t.Fatalf("htmx answer is not the table body:\n%s", p.Body)
		}
		p = b.HX("/staff/inventory/" + handlerstest.Itoa(rex.ID)).WantStatus(http.StatusOK)
		if got := row(p, rex.ID); got != "Rex Available 3" {
			t.Errorf("single row = %q", got)
		}
	})
	t.Run("edit OK", func(t *testing.T) {
		p := b.HXPost("/staff/inventory/"+handlerstest.Itoa(rex.ID), url.Values{"quantity": {"7"}}).WantStatus(http.StatusOK)
		if got := row(p, rex.ID); got != "Rex Available 7" {
			t.Fatalf("row = %q", got)
		}
		p.WantText("row-saved", "Saved")
		wantStock(t, a, rex.ID, db.StatusAvailable, 7)
		// Stock back from 0 makes a sold pet available (SPEC §5).
		p = b.HXPost("/staff/inventory/"+handlerstest.Itoa(fido.ID), url.Values{"quantity": {"2"}}).WantStatus(http.StatusOK)
		if got := row(p, fido.ID); got != "Fido Available 2" {
			t.Fatalf("row = %q", got)
		}
	})
	t.Run("zero with an open order is pending", func(t *testing.T) {
		if _, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &tom.ID, Quantity: handlerstest.Ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}
		b.HXPost("/staff/inventory/"+handlerstest.Itoa(tom.ID), url.Values{"quantity": {"4"}}).WantStatus(http.StatusOK)
		p := b.HXPost("/staff/inventory/"+handlerstest.Itoa(tom.ID), url.Values{"quantity": {"0"}}).WantStatus(http.StatusOK)
		if got := row(p, tom.ID); got != "Tom Reserved 0" {
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
			p := b.HXPost("/staff/inventory/"+handlerstest.Itoa(rex.ID), url.Values{"quantity": {tc.in}}).WantStatus(http.StatusUnprocessableEntity)
			r := p.Find("#inv-" + handlerstest.Itoa(rex.ID))
			if got := browsertest.Text(r.Find(".field-error")); got != tc.msg {
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
		b.HXPost("/staff/inventory/999999", url.Values{"quantity": {"1"}}).WantStatus(http.StatusNotFound)
	})
	t.Run("without JavaScript", func(t *testing.T) {
		p := b.Post("/staff/inventory/"+handlerstest.Itoa(rex.ID), url.Values{"quantity": {"5"}}).WantRedirect("/staff/inventory")
		b.Follow(p).WantText("flash", "Rex: 5 in stock.")
		p = b.Post("/staff/inventory/"+handlerstest.Itoa(rex.ID), url.Values{"quantity": {"-5"}}).WantRedirect("/staff/inventory")
		b.Follow(p).WantText("flash", "quantity must be between 0 and 1000000")
		wantStock(t, a, rex.ID, db.StatusAvailable, 5)
	})
}

// TestConsoleInventoryRowAsPage opens a row's live-refresh address as a
// page (a new tab, no HX-Request): it used to panic into a 500; it now
// redirects to the inventory page starting at that pet, scrolled to its
// row. An unknown pet is the 404 page, on both databases.
func TestConsoleInventoryRowAsPage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b := a.SignedIn(t)
		a.SeedPet("Rex", 3)
		fido := a.SeedPet("Fido", 2)
		a.SeedPet("Tom", 1)

		p := b.Get("/staff/inventory/" + handlerstest.Itoa(fido.ID))
		p.WantRedirect("/staff/inventory?after=" + handlerstest.Itoa(fido.ID-1) + "#inv-" + handlerstest.Itoa(fido.ID))
		p = b.Follow(p).WantStatus(http.StatusOK)
		if p.Find("html main").Length() != 1 {
			t.Fatalf("not a whole page:\n%s", p.Body)
		}
		if id, _ := p.ID("inventory-row").First().Attr("data-pet-id"); id != handlerstest.Itoa(fido.ID) {
			t.Errorf("first row is pet %s, want %d (Fido)", id, fido.ID)
		}
		b.Get("/staff/inventory/9999999").WantStatus(http.StatusNotFound)
		// htmx still gets the row alone.
		p = b.HX("/staff/inventory/" + handlerstest.Itoa(fido.ID)).WantStatus(http.StatusOK)
		if p.Find("html main").Length() != 0 || p.Find("#inv-"+handlerstest.Itoa(fido.ID)).Length() != 1 {
			t.Fatalf("htmx answer is not the row:\n%s", p.Body)
		}
	})
}

func wantStock(t *testing.T, a *handlerstest.App, petID int64, status string, stock int64) {
	t.Helper()
	p, err := a.Store.FindPetByID(context.Background(), petID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != status || p.Stock != stock {
		t.Fatalf("pet %d = %s/%d, want %s/%d", petID, p.Status, p.Stock, status, stock)
	}
}
