package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
)

func TestConsolePets(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	ctx := context.Background()
	dogs, err := a.store.CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
	if err != nil {
		t.Fatal(err)
	}
	fieldError := func(p *page, field string) string { return text(p.id("error-" + field + "-error")) }

	var rexID int64
	t.Run("create OK", func(t *testing.T) {
		b.get("/staff/pets/new").wantStatus(http.StatusOK)
		p := b.post("/staff/pets", url.Values{"name": {"  Rex  "}, "categoryId": {itoa(dogs.ID)}, "status": {"available"}}).wantRedirect("/staff/catalog")
		p = b.follow(p)
		p.wantText("flash", "Pet “Rex” created.")
		row := p.find(`[data-testid="pet-row"]`)
		if row.Length() != 1 || !strings.Contains(text(row), "Rex Dogs available 1") {
			t.Fatalf("pet row = %q", text(row))
		}
		rexID = mustAtoi(t, row.AttrOr("data-pet-id", ""))
	})
	t.Run("create invalid shows the API's messages", func(t *testing.T) {
		p := b.post("/staff/pets", url.Values{"name": {"   "}, "categoryId": {""}, "status": {"available"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "name"); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		if got := fieldError(p, "categoryId"); got != "is required" {
			t.Errorf("categoryId error = %q", got)
		}
		if inv, _ := p.find("#name").Attr("aria-invalid"); inv != "true" {
			t.Errorf("name not marked invalid")
		}
		p = b.post("/staff/pets", url.Values{"name": {strings.Repeat("x", 101)}, "categoryId": {"999"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "name"); got != "must be at most 100 characters" {
			t.Errorf("name error = %q", got)
		}
		p = b.post("/staff/pets", url.Values{"name": {"Ghost"}, "categoryId": {"999"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "categoryId"); got != "category 999 does not exist" {
			t.Errorf("categoryId error = %q", got)
		}
		if v, _ := p.find("#name").Attr("value"); v != "Ghost" {
			t.Errorf("the form lost the name: %q", v)
		}
		p = b.post("/staff/pets", url.Values{"name": {"Ghost"}, "categoryId": {itoa(dogs.ID)}, "status": {"pending"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "status"); got != "a new pet is available or sold; pending comes from orders" {
			t.Errorf("status error = %q", got)
		}
	})
	t.Run("edit", func(t *testing.T) {
		p := b.get("/staff/pets/" + itoa(rexID) + "/edit").wantStatus(http.StatusOK)
		if v, _ := p.find("#name").Attr("value"); v != "Rex" {
			t.Fatalf("name field = %q", v)
		}
		b.post("/staff/pets/"+itoa(rexID), url.Values{"name": {"Rex II"}, "categoryId": {itoa(dogs.ID)}, "status": {"available"}}).wantRedirect("/staff/catalog")
		if p, _ := a.store.FindPetByID(ctx, rexID); p.Name != "Rex II" {
			t.Fatalf("name = %q", p.Name)
		}
		p = b.post("/staff/pets/"+itoa(rexID), url.Values{"name": {""}, "categoryId": {itoa(dogs.ID)}}).wantStatus(http.StatusUnprocessableEntity)
		if got := fieldError(p, "name"); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		// A status change the store refuses (an open order) is a 409 with its message.
		if _, err := a.store.PlaceOrder(ctx, db.Owner{APIKeyID: a.custID}, db.NewOrder{PetID: &rexID, Quantity: ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}
		b.post("/staff/inventory/"+itoa(rexID), url.Values{"quantity": {"3"}})
		p = b.post("/staff/pets/"+itoa(rexID), url.Values{"name": {"Rex II"}, "categoryId": {itoa(dogs.ID)}, "status": {"sold"}}).wantStatus(http.StatusConflict)
		p.wantText("form-problem", "Pet "+itoa(rexID)+" has 1 open orders.")
		b.get("/staff/pets/999999/edit").wantStatus(http.StatusNotFound)
	})
	t.Run("delete", func(t *testing.T) {
		p := b.post("/staff/pets/"+itoa(rexID)+"/delete", nil).wantRedirect("/staff/catalog")
		b.follow(p).wantText("flash", "has 1 open orders")
		o, _, _ := a.store.FindOrders(ctx, db.OrderFilter{PetID: rexID})
		if err := a.store.CancelOrder(ctx, o[0].ID, nil); err != nil {
			t.Fatal(err)
		}
		p = b.post("/staff/pets/"+itoa(rexID)+"/delete", nil).wantRedirect("/staff/catalog")
		p = b.follow(p)
		p.wantText("flash", "Pet “Rex II” deleted.")
		if p.id("pet-row").Length() != 0 {
			t.Errorf("deleted pet still listed")
		}
	})
}

func TestConsoleCategories(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	ctx := context.Background()
	var id int64
	t.Run("create", func(t *testing.T) {
		b.get("/staff/categories/new").wantStatus(http.StatusOK)
		p := b.post("/staff/categories", url.Values{"name": {"Birds"}, "description": {"Feathered friends"}}).wantRedirect("/staff/catalog")
		p = b.follow(p)
		p.wantText("flash", "Category “Birds” created.")
		row := p.find(`[data-testid="category-row"]`)
		if !strings.Contains(text(row), "Birds Feathered friends 0") {
			t.Fatalf("row = %q", text(row))
		}
		id = mustAtoi(t, row.AttrOr("data-category-id", ""))
	})
	t.Run("validation and conflicts", func(t *testing.T) {
		p := b.post("/staff/categories", url.Values{"name": {""}, "description": {strings.Repeat("d", 501)}}).wantStatus(http.StatusUnprocessableEntity)
		if got := text(p.id("error-name-error")); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		if got := text(p.id("error-description-error")); got != "must be at most 500 characters" {
			t.Errorf("description error = %q", got)
		}
		p = b.post("/staff/categories", url.Values{"name": {"BIRDS"}}).wantStatus(http.StatusConflict)
		if got := text(p.id("error-name-error")); got != `A category named "BIRDS" already exists.` {
			t.Errorf("name error = %q", got)
		}
	})
	t.Run("edit", func(t *testing.T) {
		p := b.get("/staff/categories/" + itoa(id) + "/edit").wantStatus(http.StatusOK)
		if got := p.find("#description").Text(); got != "Feathered friends" {
			t.Fatalf("description = %q", got)
		}
		b.post("/staff/categories/"+itoa(id), url.Values{"name": {"Parrots"}, "description": {""}}).wantRedirect("/staff/catalog")
		c, _ := a.store.FindCategoryByID(ctx, id)
		if c.Name != "Parrots" || c.Description != nil {
			t.Fatalf("category = %+v", c)
		}
	})
	t.Run("delete", func(t *testing.T) {
		pet, err := a.store.CreatePet(ctx, db.NewPet{Name: ptr("Polly"), CategoryID: &id})
		if err != nil {
			t.Fatal(err)
		}
		p := b.post("/staff/categories/"+itoa(id)+"/delete", nil).wantRedirect("/staff/catalog")
		b.follow(p).wantText("flash", "still has 1 pets")
		if err := a.store.DeletePet(ctx, pet.ID); err != nil {
			t.Fatal(err)
		}
		p = b.post("/staff/categories/"+itoa(id)+"/delete", nil).wantRedirect("/staff/catalog")
		b.follow(p).wantText("flash", "Category “Parrots” deleted.")
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
