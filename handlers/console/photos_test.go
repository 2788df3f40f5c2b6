package console_test

import (
	"bytes"
	"context"
	"image/gif"
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
	"petstore/web/photo/phototest"
)

// The console's photo upload (SPEC §14), on both databases: several files
// in one multipart form, as the plain form sends it and as console.js
// does; the images are stored, the rest listed with their reasons.

func TestConsolePhotoUpload(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		b := a.SignedIn(t)
		edit := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/edit"
		upload := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/photos"

		t.Run("the form", func(t *testing.T) {
			p := b.Get(edit).WantStatus(http.StatusOK)
			if p.ID("no-photos").Length() != 1 {
				t.Errorf("a pet without photos does not say so")
			}
			form := p.ID("photo-upload")
			if form.AttrOr("enctype", "") != "multipart/form-data" || form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != upload {
				t.Errorf("upload form = %v", form.Nodes[0].Attr)
			}
			// The token comes before the files: the server reads it first.
			inputs := form.Find("input")
			if inputs.First().AttrOr("name", "") != "_csrf" {
				t.Errorf("the form's first input is %q, want _csrf", inputs.First().AttrOr("name", ""))
			}
			file := form.Find(`input[type="file"]`)
			if file.AttrOr("name", "") != "photos" || file.AttrOr("accept", "") != "image/jpeg,image/png,image/gif,image/webp" || file.AttrOr("multiple", "x") == "x" {
				t.Errorf("file input = %v", file.Nodes[0].Attr)
			}
			if label := p.Find(`label[for="` + file.AttrOr("id", "") + `"]`); label.Length() != 1 {
				t.Errorf("the file input has no label")
			}
		})

		t.Run("several files, plain form", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, b.CSRF,
				handlerstest.UploadFile{Name: "garden.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 640, 480)},
				handlerstest.UploadFile{Name: "notes.txt", ContentType: "text/plain", Data: []byte("not a photo")},
				handlerstest.UploadFile{Name: "bomb.png", ContentType: "image/png", Data: handlerstest.PNGClaiming(t, 10000, 10000)},
				handlerstest.UploadFile{Name: "sofa.png", ContentType: "image/png", Data: handlerstest.PNGOf(t, 300, 200)},
				handlerstest.UploadFile{Name: "fake.jpg", ContentType: "image/jpeg", Data: []byte("plain text in disguise")},
				handlerstest.UploadFile{Name: "huge.jpg", ContentType: "image/jpeg", Data: bytes.Repeat([]byte{0xff}, 8<<20+1)},
			)
			p := b.Upload(upload, body, ct, false).WantRedirect(edit + "#photos")
			p = b.Follow(p).WantStatus(http.StatusOK)
			p.WantText("photos-message", "Added 2 photos. 4 files were not added:")
			got := linesOf(p.ID("photos-refused").Find("li"))
			want := []string{
				"“notes.txt”: not an image: send JPEG, PNG, GIF or WebP files.",
				"“bomb.png”: too many pixels: at most 40 megapixels, 20000 on a side.",
				"“fake.jpg”: not an image that can be read (JPEG, PNG, GIF or WebP).",
				"“huge.jpg”: too large: at most 8 MiB a photo.",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("refused files (-want +got):\n%s", diff)
			}
			if p.ID("photos-message").HasClass("error") != true {
				t.Errorf("a partial upload's message is not marked as an error")
			}
			photos := petPhotos(t, a, rex.ID)
			if len(photos) != 2 || photos[0].Width != 640 || photos[0].Height != 480 || photos[0].ThumbWidth != 400 || photos[1].Width != 300 {
				t.Fatalf("stored photos = %+v, want garden.jpg then sofa.png", photos)
			}
			// The section lists them, with sizes reserved and text alternatives.
			imgs := p.ID("photo").Find("img")
			if imgs.Length() != 2 {
				t.Fatalf("%d thumbnails shown, want 2", imgs.Length())
			}
			first := imgs.First()
			for attr, want := range map[string]string{"src": photos[0].ThumbURL, "width": "400", "height": "300", "alt": "Photo 1 of 2 of Rex", "loading": "lazy"} {
				if got := first.AttrOr(attr, ""); got != want {
					t.Errorf("thumbnail %s = %q, want %q", attr, got, want)
				}
			}
			p.WantText("photo-count", "2 of 8")
			// The message was shown once.
			if b.Get(edit).ID("photos-message").Length() != 0 {
				t.Errorf("the upload's message is shown again")
			}
		})

		t.Run("with JavaScript: the section comes back", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, b.CSRF,
				handlerstest.UploadFile{Name: "third.gif", ContentType: "image/gif", Data: gifOf(t, 50, 40)})
			p := b.Upload(upload, body, ct, true).WantStatus(http.StatusOK)
			if p.Find("html").Length() != 0 && p.Find("nav").Length() != 0 {
				t.Errorf("the answer is a whole page, want the photos section")
			}
			p.WantText("photos-message", "Added 1 photo.")
			if _, ok := p.Find("#photos-status").Attr("data-focus"); !ok {
				t.Errorf("focus does not go to the outcome")
			}
			if n := p.ID("photo").Length(); n != 3 {
				t.Errorf("%d photos in the section, want 3", n)
			}
		})

		t.Run("not a multipart form", func(t *testing.T) {
			b.Post(upload, nil).WantRedirect(edit + "#photos")
			b.Get(edit).WantText("photos-message", "Choose one or more photos to upload.")
			body, ct := handlerstest.PhotoForm(t, b.CSRF) // the token, no file
			b.Upload(upload, body, ct, false).WantRedirect(edit + "#photos")
			b.Get(edit).WantText("photos-message", "Choose one or more photos to upload.")
		})

		t.Run("the ninth photo", func(t *testing.T) {
			for range 4 {
				addPhoto(t, a, rex.ID)
			}
			body, ct := handlerstest.PhotoForm(t, b.CSRF,
				handlerstest.UploadFile{Name: "eighth.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 64, 64)},
				handlerstest.UploadFile{Name: "ninth.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 64, 64)})
			p := b.Follow(b.Upload(upload, body, ct, false).WantRedirect(edit + "#photos"))
			p.WantText("photos-message", "Added 1 photo. 1 file was not added:")
			p.WantText("photos-refused", "“ninth.jpg”: Rex has 8 photos, the most a pet may have.")
			if n := len(petPhotos(t, a, rex.ID)); n != 8 {
				t.Fatalf("%d photos stored, want 8", n)
			}
			// A full pet offers no upload, and refuses one all the same.
			if p.ID("photo-upload").Length() != 0 || p.ID("photos-full").Length() != 1 {
				t.Errorf("a pet with 8 photos still offers the upload form")
			}
			body, ct = handlerstest.PhotoForm(t, b.CSRF,
				handlerstest.UploadFile{Name: "tenth.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 64, 64)})
			p = b.Upload(upload, body, ct, true).WantStatus(http.StatusOK)
			p.WantText("photos-message", "No photo was added. 1 file was not added:")
			if n := len(petPhotos(t, a, rex.ID)); n != 8 {
				t.Fatalf("%d photos stored, want 8", n)
			}
		})
	})
}

// TestConsolePhotoUploadMany: past 8 files the rest of an upload is not
// read; the first 8 are processed as ever. On both databases.
func TestConsolePhotoUploadMany(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		b := a.SignedIn(t)
		var files []handlerstest.UploadFile
		for i := range 10 {
			files = append(files, handlerstest.UploadFile{Name: "f" + handlerstest.Itoa(int64(i)) + ".txt", ContentType: "text/plain", Data: []byte("x")})
		}
		files[0] = handlerstest.UploadFile{Name: "real.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 32, 32)}
		body, ct := handlerstest.PhotoForm(t, b.CSRF, files...)
		p := b.Upload("/staff/pets/"+handlerstest.Itoa(rex.ID)+"/photos", body, ct, true).WantStatus(http.StatusOK)
		p.WantText("photos-message", "Added 1 photo. At most 8 photos can be sent at once: the rest of the upload was not read. 7 files were not added:")
		if n := p.ID("photos-refused").Find("li").Length(); n != 7 {
			t.Errorf("%d files listed, want 7", n)
		}
		if n := len(petPhotos(t, a, rex.ID)); n != 1 {
			t.Errorf("%d photos stored, want 1", n)
		}
	})
}

// petPhotos are a pet's photos as the store has them.
func petPhotos(t *testing.T, a *handlerstest.App, id int64) db.Photos {
	t.Helper()
	p, err := a.Store.FindPetByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Photos
}

// addPhoto gives a pet one more photo through the store.
func addPhoto(t *testing.T, a *handlerstest.App, petID int64) *db.Photo {
	t.Helper()
	jpg := handlerstest.JPEGOf(t, 8, 8)
	ph, err := a.Store.AddPhoto(context.Background(), petID, db.NewPhoto{
		Large: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}, Thumb: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}})
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

// gifOf is a w×h GIF.
func gifOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, phototest.PhotoLike(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// linesOf is the text of each element of a selection.
func linesOf(s *goquery.Selection) []string {
	var out []string
	s.Each(func(_ int, el *goquery.Selection) { out = append(out, browsertest.Text(el)) })
	return out
}
