package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// TestConsolePhotoOrder moves and deletes a pet's photos with the forms of
// its edit page, as plain forms and with htmx, on both databases: an order
// that names another pet's photo, or is not an order at all, and a photo
// that is not the pet's change nothing.
func TestConsolePhotoOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex, tom := a.SeedPet("Rex", 1), a.SeedPet("Tom", 1)
		p1, p2, p3 := addPhoto(t, a, rex.ID), addPhoto(t, a, rex.ID), addPhoto(t, a, rex.ID)
		toms := addPhoto(t, a, tom.ID)
		b := a.SignedIn(t)
		edit := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/edit"
		order := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/photos/order"
		wantOrder := func(t *testing.T, want ...*db.Photo) {
			t.Helper()
			var got, ids []int64
			for _, ph := range petPhotos(t, a, rex.ID) {
				got = append(got, ph.ID)
			}
			for _, ph := range want {
				ids = append(ids, ph.ID)
			}
			if diff := cmp.Diff(ids, got); diff != "" {
				t.Fatalf("order (-want +got):\n%s", diff)
			}
		}
		// moveForm is what a move button's form posts, read from the page.
		moveForm := func(p *browsertest.Page, photo *db.Photo, dir string) url.Values {
			t.Helper()
			form := p.Find(`[data-photo-id="` + handlerstest.Itoa(photo.ID) + `"] [data-testid="move-` + dir + `"]`).Closest("form")
			if form.Length() != 1 || form.AttrOr("action", "") != order {
				t.Fatalf("no %s form for photo %d", dir, photo.ID)
			}
			v := url.Values{}
			form.Find("input").Each(func(_ int, in *goquery.Selection) { v.Add(in.AttrOr("name", ""), in.AttrOr("value", "")) })
			return v
		}

		t.Run("the buttons", func(t *testing.T) {
			p := b.Get(edit).WantStatus(http.StatusOK)
			items := p.ID("photo")
			if items.Length() != 3 {
				t.Fatalf("%d photos listed", items.Length())
			}
			if _, ok := items.First().Find(`[data-testid="move-earlier"]`).Attr("disabled"); !ok {
				t.Errorf("the first photo can move earlier")
			}
			if _, ok := items.Last().Find(`[data-testid="move-later"]`).Attr("disabled"); !ok {
				t.Errorf("the last photo can move later")
			}
			if got := items.Eq(1).Find(`[data-testid="move-later"]`).Text(); got != "Move later: photo 2" {
				t.Errorf("move button's name = %q", got)
			}
		})
		t.Run("move earlier, plain form", func(t *testing.T) {
			p := b.Get(edit)
			b.Post(order, moveForm(p, p3, "earlier")).WantRedirect(edit + "#photos")
			wantOrder(t, p1, p3, p2)
			b.Get(edit).WantText("photos-message", "Photo moved to place 2 of 3.")
		})
		t.Run("move later, htmx", func(t *testing.T) {
			form := moveForm(b.Get(edit), p1, "later")
			delete(form, "_csrf")
			p := b.HXPost(order, form).WantStatus(http.StatusOK)
			wantOrder(t, p3, p1, p2)
			p.WantText("photos-message", "Photo moved to place 2 of 3.")
			if f := p.Find("[data-focus]"); f.AttrOr("id", "") != "photo-"+handlerstest.Itoa(p1.ID)+"-later" {
				t.Errorf("focus goes to %q, want photo 1's Move later in its new place", f.AttrOr("id", ""))
			}
			// Moved to the end, focus goes to the button it can still use.
			form = moveForm(p, p1, "later")
			delete(form, "_csrf")
			p = b.HXPost(order, form).WantStatus(http.StatusOK)
			wantOrder(t, p3, p2, p1)
			if f := p.Find("[data-focus]"); f.AttrOr("id", "") != "photo-"+handlerstest.Itoa(p1.ID)+"-earlier" {
				t.Errorf("focus goes to %q, want the last photo's Move earlier", f.AttrOr("id", ""))
			}
		})
		t.Run("refused orders", func(t *testing.T) {
			for name, ids := range map[string][]string{
				"another pet's photo": {handlerstest.Itoa(p3.ID), handlerstest.Itoa(p2.ID), handlerstest.Itoa(toms.ID)},
				"a photo missing":     {handlerstest.Itoa(p1.ID), handlerstest.Itoa(p2.ID)},
				"a photo twice":       {handlerstest.Itoa(p1.ID), handlerstest.Itoa(p1.ID), handlerstest.Itoa(p2.ID)},
				"not ids":             {"abc", "-1", "9223372036854775808"},
				"nothing":             nil,
				"too many":            {"1", "2", "3", "4", "5", "6", "7", "8", "9"},
			} {
				t.Log(name)
				b.Post(order, url.Values{"photo": ids}).WantRedirect(edit + "#photos")
				b.Get(edit).WantText("photos-message", "nothing was moved")
				p := b.HXPost(order, url.Values{"photo": ids}).WantStatus(http.StatusConflict)
				p.WantText("photos-message", "does not name each of Rex's photos once")
				wantOrder(t, p3, p2, p1)
			}
			tomPhotos := petPhotos(t, a, tom.ID)
			if len(tomPhotos) != 1 || tomPhotos[0].ID != toms.ID {
				t.Errorf("Tom's photos = %+v", tomPhotos)
			}
		})
		t.Run("delete", func(t *testing.T) {
			p := b.Get(edit)
			del := p.Find(`[data-photo-id="` + handlerstest.Itoa(p2.ID) + `"] [data-testid="delete-photo-confirm"]`).Closest("form")
			if del.AttrOr("action", "") == "" || del.Find(`[data-testid="delete-photo"]`).Length() != 1 {
				t.Fatalf("no delete form with a confirmation for photo %d", p2.ID)
			}
			b.Post(del.AttrOr("action", ""), nil).WantRedirect(edit + "#photos")
			wantOrder(t, p3, p1)
			b.Get(edit).WantText("photos-message", "Photo 2 deleted.")
			if res, err := a.App.Test(httptest.NewRequest(http.MethodGet, p2.ThumbURL, nil), -1); err != nil || res.StatusCode != http.StatusNotFound {
				t.Errorf("the deleted photo is still served: %v %v", res.StatusCode, err)
			}

			// Tom's photo through Rex's address, and a photo deleted already.
			for _, id := range []int64{toms.ID, p2.ID} {
				path := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/photos/" + handlerstest.Itoa(id) + "/delete"
				b.Post(path, nil).WantRedirect(edit + "#photos")
				b.Get(edit).WantText("photos-message", "That photo is not one of Rex's (any more): nothing was deleted.")
				b.HXPost(path, nil).WantStatus(http.StatusConflict).WantText("photos-message", "nothing was deleted")
			}
			if len(petPhotos(t, a, tom.ID)) != 1 {
				t.Errorf("Tom's photo was deleted through Rex")
			}
			wantOrder(t, p3, p1)

			p = b.HXPost("/staff/pets/"+handlerstest.Itoa(rex.ID)+"/photos/"+handlerstest.Itoa(p3.ID)+"/delete", nil).WantStatus(http.StatusOK)
			p.WantText("photos-message", "Photo 1 deleted.")
			if _, ok := p.Find("#photos-status").Attr("data-focus"); !ok {
				t.Errorf("focus does not go to the outcome after a delete")
			}
			wantOrder(t, p1)
		})
		t.Run("signed out", func(t *testing.T) {
			out := a.Browser(t)
			out.Get("/staff/login")
			out.Post(order, url.Values{"photo": {handlerstest.Itoa(p1.ID)}}).WantRedirect("/staff/login")
			out.Post("/staff/pets/"+handlerstest.Itoa(rex.ID)+"/photos/"+handlerstest.Itoa(p1.ID)+"/delete", nil).WantRedirect("/staff/login")
			wantOrder(t, p1)
		})
	})
}
