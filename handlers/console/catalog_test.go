package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

func TestConsolePets(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()
	dogs, err := a.Store.CreateCategory(ctx, db.NewCategory{Name: handlerstest.Ptr("Dogs")})
	if err != nil {
		t.Fatal(err)
	}
	fieldError := func(p *browsertest.Page, field string) string {
		return browsertest.Text(p.ID("error-" + field + "-error"))
	}

	var rexID int64
	t.Run("create OK", func(t *testing.T) {
		b.Get("/staff/pets/new").WantStatus(http.StatusOK)
		p := b.Post("/staff/pets", url.Values{"name": {"  Rex  "}, "categoryId": {handlerstest.Itoa(dogs.ID)}, "status": {"available"}}).WantRedirect("/staff/catalog")
		p = b.Follow(p)
		p.WantText("flash", "Pet “Rex” created.")
		row := p.Find(`[data-testid="pet-row"]`)
		if row.Length() != 1 || !strings.Contains(browsertest.Text(row), "Rex Dogs Available 1") {
			t.Fatalf("pet row = %q", browsertest.Text(row))
		}
		rexID = mustAtoi(t, row.AttrOr("data-pet-id", ""))
	})
	t.Run("create invalid shows the API's messages", func(t *testing.T) {
		p := b.Post("/staff/pets", url.Values{"name": {"   "}, "categoryId": {""}, "status": {"available"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "name"); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		if got := fieldError(p, "categoryId"); got != "is required" {
			t.Errorf("categoryId error = %q", got)
		}
		if inv, _ := p.Find("#name").Attr("aria-invalid"); inv != "true" {
			t.Errorf("name not marked invalid")
		}
		p = b.Post("/staff/pets", url.Values{"name": {strings.Repeat("x", 101)}, "categoryId": {"999"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "name"); got != "must be at most 100 characters" {
			t.Errorf("name error = %q", got)
		}
		p = b.Post("/staff/pets", url.Values{"name": {"Ghost"}, "categoryId": {"999"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "categoryId"); got != "category 999 does not exist" {
			t.Errorf("categoryId error = %q", got)
		}
		if v, _ := p.Find("#name").Attr("value"); v != "Ghost" {
			t.Errorf("the form lost the name: %q", v)
		}
		p = b.Post("/staff/pets", url.Values{"name": {"Ghost"}, "categoryId": {handlerstest.Itoa(dogs.ID)}, "status": {"pending"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "status"); got != "a new pet is available or sold; pending comes from orders" {
			t.Errorf("status error = %q", got)
		}
	})
	t.Run("edit", func(t *testing.T) {
		p := b.Get("/staff/pets/" + handlerstest.Itoa(rexID) + "/edit").WantStatus(http.StatusOK)
		if v, _ := p.Find("#name").Attr("value"); v != "Rex" {
			t.Fatalf("name field = %q", v)
		}
		b.Post("/staff/pets/"+handlerstest.Itoa(rexID), url.Values{"name": {"Rex II"}, "categoryId": {handlerstest.Itoa(dogs.ID)}, "status": {"available"}}).WantRedirect("/staff/catalog")
		if p, _ := a.Store.FindPetByID(ctx, rexID); p.Name != "Rex II" {
			t.Fatalf("name = %q", p.Name)
		}
		p = b.Post("/staff/pets/"+handlerstest.Itoa(rexID), url.Values{"name": {""}, "categoryId": {handlerstest.Itoa(dogs.ID)}}).WantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "name"); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		// A status change the store refuses (an open order) is a 409 with its message.
		if _, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &rexID, Quantity: handlerstest.Ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}
		b.Post("/staff/inventory/"+handlerstest.Itoa(rexID), url.Values{"quantity": {"3"}})
		p = b.Post("/staff/pets/"+handlerstest.Itoa(rexID), url.Values{"name": {"Rex II"}, "categoryId": {handlerstest.Itoa(dogs.ID)}, "status": {"sold"}}).WantStatus(http.StatusConflict)
		p.WantText("form-problem", "Pet "+handlerstest.Itoa(rexID)+" has 1 open orders.")
		b.Get("/staff/pets/999999/edit").WantStatus(http.StatusNotFound)
	})
	t.Run("delete", func(t *testing.T) {
		p := b.Post("/staff/pets/"+handlerstest.Itoa(rexID)+"/delete", nil).WantRedirect("/staff/catalog")
		b.Follow(p).WantText("flash", "has 1 open orders")
		o, _, _ := a.Store.FindOrders(ctx, db.OrderFilter{PetID: rexID})
		if err := a.Store.CancelOrder(ctx, o[0].ID, nil); err != nil {
			t.Fatal(err)
		}
		p = b.Post("/staff/pets/"+handlerstest.Itoa(rexID)+"/delete", nil).WantRedirect("/staff/catalog")
		p = b.Follow(p)
		p.WantText("flash", "Pet “Rex II” deleted.")
		if p.ID("pet-row").Length() != 0 {
			t.Errorf("deleted pet still listed")
		}
	})
}

func TestConsoleCategories(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()
	var id int64
	t.Run("create", func(t *testing.T) {
		b.Get("/staff/categories/new").WantStatus(http.StatusOK)
		p := b.Post("/staff/categories", url.Values{"name": {"Birds"}, "description": {"Feathered friends"}}).WantRedirect("/staff/catalog")
		p = b.Follow(p)
		p.WantText("flash", "Category “Birds” created.")
		row := p.Find(`[data-testid="category-row"]`)
		if !strings.Contains(browsertest.Text(row), "Birds Feathered friends 0") {
			t.Fatalf("row = %q", browsertest.Text(row))
		}
		id = mustAtoi(t, row.AttrOr("data-category-id", ""))
	})
	t.Run("validation and conflicts", func(t *testing.T) {
		p := b.Post("/staff/categories", url.Values{"name": {""}, "description": {strings.Repeat("d", 501)}}).WantStatus(http.StatusUnprocessableEntity)
		if got := browsertest.Text(p.ID("error-name-error")); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		if got := browsertest.Text(p.ID("error-description-error")); got != "must be at most 500 characters" {
			t.Errorf("description error = %q", got)
		}
		p = b.Post("/staff/categories", url.Values{"name": {"BIRDS"}}).WantStatus(http.StatusConflict)
		if got := browsertest.Text(p.ID("error-name-error")); got != `A category named "BIRDS" already exists.` {
			t.Errorf("name error = %q", got)
		}
	})
	t.Run("edit", func(t *testing.T) {
		p := b.Get("/staff/categories/" + handlerstest.Itoa(id) + "/edit").WantStatus(http.StatusOK)
		if got := p.Find("#description").Text(); got != "Feathered friends" {
			t.Fatalf("description = %q", got)
		}
		b.Post("/staff/categories/"+handlerstest.Itoa(id), url.Values{"name": {"Parrots"}, "description": {""}}).WantRedirect("/staff/catalog")
		c, _ := a.Store.FindCategoryByID(ctx, id)
		if c.Name != "Parrots" || c.Description != nil {
			t.Fatalf("category = %+v", c)
		}
	})
	t.Run("delete", func(t *testing.T) {
		pet, err := a.Store.CreatePet(ctx, db.NewPet{Name: handlerstest.Ptr("Polly"), CategoryID: &id})
		if err != nil {
			t.Fatal(err)
		}
		p := b.Post("/staff/categories/"+handlerstest.Itoa(id)+"/delete", nil).WantRedirect("/staff/catalog")
		b.Follow(p).WantText("flash", "still has 1 pets")
		if err := a.Store.DeletePet(ctx, pet.ID); err != nil {
			t.Fatal(err)
		}
		p = b.Post("/staff/categories/"+handlerstest.Itoa(id)+"/delete", nil).WantRedirect("/staff/catalog")
		b.Follow(p).WantText("flash", "Category “Parrots” deleted.")
	})
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int64(r-'0')
	}
	if s == "" {
		t.Fatal("empty number")
	}
	return n
}
