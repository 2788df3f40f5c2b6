package shop_test

import (
	"net/http"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// A cart line shows the pet's first photo when it has one, as its card
// does, and the drawing of its kind when it has none (issue 42).
func TestCartLineShowsThePetsPhoto(t *testing.T) {
	a := handlerstest.NewOn(t, dbtest.SQLite)
	rex := a.SeedPet("Rex", 5)
	tom := a.SeedPet("Tom", 5)
	a.UploadPhoto(rex.ID, "image/jpeg", handlerstest.JPEGOf(t, 640, 480)).Want(t, http.StatusCreated)
	c := a.Shopper(t)
	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "1")).WantRedirect("/cart")
	c.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(tom.ID), "quantity", "1")).WantRedirect("/cart")
	p := c.Get("/cart").WantStatus(http.StatusOK)
	line := func(id int64) string { return `[data-testid="cart-line"][data-pet-id="` + handlerstest.Itoa(id) + `"]` }
	photo := p.Find(line(rex.ID) + ` [data-testid="line-photo"]`)
	if src := photo.AttrOr("src", ""); !strings.HasPrefix(src, "/media/photos/") || !strings.HasSuffix(src, "/thumb.jpg") {
		t.Fatalf("Rex's cart line shows %q, want the thumbnail of his photo", src)
	}
	if p.Find(line(rex.ID)+" .pet-picture").Length() != 0 {
		t.Errorf("Rex's line shows the drawing beside his photo")
	}
	if p.Find(line(tom.ID)+" .pet-picture").Length() != 1 || p.Find(line(tom.ID)+` [data-testid="line-photo"]`).Length() != 0 {
		t.Errorf("Tom, who has no photo, has no drawing")
	}
}
