package shop_test

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

// Pets' photos in the storefront (SPEC §14), on both databases: a card
// shows the first photo's thumbnail with both sizes offered, its size and
// lazy loading, or the drawing; the pet page a gallery whose thumbnails are
// links choosing the photo shown large (?photo=N), which takes any query
// without failing.
func TestShopPhotos(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex, tom, fin := a.SeedPet("Rex", 1), a.SeedPet("Tom", 1), a.SeedPet("Fin", 1)
		r1 := addSizedPhoto(t, a, rex.ID, 1600, 1200, 400, 300)
		r2 := addSizedPhoto(t, a, rex.ID, 900, 1600, 225, 400)
		r3 := addSizedPhoto(t, a, rex.ID, 640, 480, 400, 300)
		t1 := addSizedPhoto(t, a, tom.ID, 800, 600, 400, 300)
		c := a.Shopper(t)
		card := func(p *browsertest.Page, pet *db.Pet) *goquery.Selection {
			return p.Find(`[data-testid="pet-card"][data-pet-id="` + handlerstest.Itoa(pet.ID) + `"]`)
		}

		t.Run("cards", func(t *testing.T) {
			p := c.Get("/").WantStatus(http.StatusOK)
			img := card(p, rex).Find(`img[data-testid="card-photo"]`)
			if img.Length() != 1 {
				t.Fatalf("Rex's card has %d photos", img.Length())
			}
			wantAttrs(t, img, map[string]string{
				"src": r1.ThumbURL, "srcset": r1.ThumbURL + " 400w, " + r1.URL + " 1600w",
				"width": "400", "height": "300", "loading": "lazy", "decoding": "async", "alt": "Photo of Rex",
			})
			if img.AttrOr("sizes", "") == "" {
				t.Errorf("the card's srcset has no sizes")
			}
			if card(p, rex).Find(".pet-picture").Length() != 0 {
				t.Errorf("Rex's card shows the drawing too")
			}
			if got := card(p, tom).Find("img").AttrOr("src", ""); got != t1.ThumbURL {
				t.Errorf("Tom's card shows %q", got)
			}
			fins := card(p, fin)
			if fins.Find("img").Length() != 0 || fins.Find(".pet-picture svg").Length() != 1 {
				t.Errorf("Fin has no photo and should show the drawing")
			}
		})

		pet := "/pets/" + handlerstest.Itoa(rex.ID)
		t.Run("gallery", func(t *testing.T) {
			p := c.Get(pet).WantStatus(http.StatusOK)
			g := p.ID("gallery")
			if got := g.Find("h2").Text(); got != "Photos of Rex" {
				t.Errorf("gallery heading = %q", got)
			}
			if g.AttrOr("aria-labelledby", "") != g.Find("h2").AttrOr("id", "-") {
				t.Errorf("the gallery is not labelled by its heading")
			}
			wantAttrs(t, p.ID("gallery-main"), map[string]string{
				"src": r1.URL, "srcset": r1.ThumbURL + " 400w, " + r1.URL + " 1600w",
				"width": "1600", "height": "1200", "alt": "Photo 1 of 3 of Rex",
			})
			thumbs := p.ID("gallery-thumb")
			if thumbs.Length() != 3 {
				t.Fatalf("%d thumbnails, want 3", thumbs.Length())
			}
			for i, ph := range []*db.Photo{r1, r2, r3} {
				link := thumbs.Eq(i)
				if got, want := link.AttrOr("href", ""), pet+"?photo="+handlerstest.Itoa(int64(i+1)); got != want {
					t.Errorf("thumbnail %d links to %q, want %q", i+1, got, want)
				}
				_, current := link.Attr("aria-current")
				if current != (i == 0) {
					t.Errorf("thumbnail %d aria-current %v", i+1, current)
				}
				wantAttrs(t, link.Find("img"), map[string]string{
					"src": ph.ThumbURL, "width": handlerstest.Itoa(int64(ph.ThumbWidth)), "height": handlerstest.Itoa(int64(ph.ThumbHeight)),
					"loading": "lazy", "alt": "Photo " + handlerstest.Itoa(int64(i+1)) + " of 3 of Rex",
				})
			}
			if p.Find(".pet-picture").Length() != 0 {
				t.Errorf("the pet page shows the drawing beside the photos")
			}
		})

		t.Run("?photo= chooses", func(t *testing.T) {
			p := c.Get(pet + "?photo=2").WantStatus(http.StatusOK)
			wantAttrs(t, p.ID("gallery-main"), map[string]string{"src": r2.URL, "width": "900", "height": "1600", "alt": "Photo 2 of 3 of Rex"})
			if got := p.Text("gallery-caption"); got != "Photo 2 of 3" {
				t.Errorf("caption = %q", got)
			}
			if _, ok := p.ID("gallery-thumb").Eq(1).Attr("aria-current"); !ok {
				t.Errorf("the second thumbnail is not marked current")
			}
			if n := p.Find(`[data-testid="gallery-thumb"][aria-current]`).Length(); n != 1 {
				t.Errorf("%d thumbnails marked current", n)
			}
		})

		t.Run("?photo= out of range or hostile", func(t *testing.T) {
			for _, q := range []string{"0", "4", "-1", "abc", "%00", "%ff", "1e1", "+2", "99999999999999999999", "2&photo=3", "", "%20%32"} {
				p := c.Get(pet + "?photo=" + q)
				if p.Status != http.StatusOK {
					t.Errorf("?photo=%s: %d", q, p.Status)
					continue
				}
				src := p.ID("gallery-main").AttrOr("src", "")
				if q == "2&photo=3" {
					if src != r2.URL {
						t.Errorf("?photo=%s shows %q, want the second", q, src)
					}
				} else if src != r1.URL {
					t.Errorf("?photo=%s shows %q, want the first", q, src)
				}
			}
		})

		t.Run("one photo, no photos", func(t *testing.T) {
			p := c.Get("/pets/" + handlerstest.Itoa(tom.ID)).WantStatus(http.StatusOK)
			wantAttrs(t, p.ID("gallery-main"), map[string]string{"src": t1.URL, "alt": "Photo 1 of 1 of Tom"})
			if p.ID("gallery-thumb").Length() != 0 || p.ID("gallery-caption").Length() != 0 {
				t.Errorf("one photo needs no choosing")
			}
			p = c.Get("/pets/" + handlerstest.Itoa(fin.ID)).WantStatus(http.StatusOK)
			if p.ID("gallery").Length() != 0 {
				t.Errorf("Fin has no photos but a gallery")
			}
			if got := p.Find(`.pet-picture svg[role="img"]`).AttrOr("aria-label", ""); got != "Illustration of a pet for Fin" && got != "Illustration of a dog for Fin" {
				t.Errorf("Fin's drawing is labelled %q", got)
			}
		})
	})
}

// addSizedPhoto gives a pet a photo of the sizes named (the bytes are a
// small JPEG: the pages read the sizes the store keeps).
func addSizedPhoto(t *testing.T, a *handlerstest.App, petID int64, w, h, tw, th int) *db.Photo {
	t.Helper()
	jpg := handlerstest.JPEGOf(t, 8, 8)
	ph, err := a.Store.AddPhoto(context.Background(), petID, db.NewPhoto{
		Large: db.PhotoSize{JPEG: jpg, Width: w, Height: h}, Thumb: db.PhotoSize{JPEG: jpg, Width: tw, Height: th}})
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

// wantAttrs fails unless the element has each attribute with its value.
func wantAttrs(t *testing.T, s *goquery.Selection, want map[string]string) {
	t.Helper()
	if s.Length() == 0 {
		t.Errorf("no element to have %v", want)
		return
	}
	for k, v := range want {
		if got, ok := s.Attr(k); !ok || got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}
