package api_test

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// petPhotos reads a pet's photos through the API.
func petPhotos(t *testing.T, a *handlerstest.App, petID int64) []db.Photo {
	t.Helper()
	var p struct {
		Photos []db.Photo `json:"photos"`
	}
	a.GetJSON(t, a.Customer, "/api/pets/"+handlerstest.Itoa(petID), &p)
	return p.Photos
}

// TestPhotoUpload uploads a photo as staff: 201 with the Photo of the large
// size, its address in Location, and the pet lists it. An 1800×1200 JPEG
// is stored as 1600×1067 and 400×267 (longest side 1600 and 400, rounded);
// a PNG smaller than both sizes keeps its own. On both databases.
func TestPhotoUpload(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)

		r := a.UploadPhoto(rex.ID, "image/jpeg", handlerstest.JPEGOf(t, 1800, 1200)).Want(t, http.StatusCreated)
		var ph db.Photo
		r.Decode(t, &ph)
		want := db.Photo{ID: ph.ID, URL: db.PhotoURL(ph.ID, "large"), ThumbURL: db.PhotoURL(ph.ID, "thumb"), Width: 1600, Height: 1067}
		if ph.ID < 1 || ph != want {
			t.Fatalf("photo %+v, want %+v", ph, want)
		}
		if got := r.Header.Get("Location"); got != ph.URL {
			t.Errorf("Location = %q, want %q", got, ph.URL)
		}
		if r.Header.Get("X-RateLimit-Limit") == "" {
			t.Error("the 201 has no rate-limit headers")
		}
		if got := petPhotos(t, a, rex.ID); len(got) != 1 || got[0] != want {
			t.Errorf("the pet's photos are %+v, want [%+v]", got, want)
		}

		// A PNG smaller than both sizes is never scaled up. Its Content-Type
		// may carry parameters and any letter case.
		small := a.UploadPhoto(rex.ID, "Image/PNG; charset=binary", handlerstest.PNGOf(t, 300, 200)).Want(t, http.StatusCreated)
		var sp db.Photo
		small.Decode(t, &sp)
		if sp.Width != 300 || sp.Height != 200 {
			t.Errorf("a 300×200 PNG is stored %d×%d", sp.Width, sp.Height)
		}
		if got := petPhotos(t, a, rex.ID); len(got) != 2 || got[0].ID != ph.ID || got[1].ID != sp.ID {
			t.Errorf("the pet's photos are %+v, want %d then %d", got, ph.ID, sp.ID)
		}
	})
}

// TestPhotoRefusals sends every upload SPEC §14 refuses, on both
// databases: each gets its Error object with the rate-limit headers, and
// no photo is stored.
func TestPhotoRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		path := "/api/pets/" + handlerstest.Itoa(rex.ID) + "/photos"
		jpg := handlerstest.JPEGOf(t, 64, 48)
		noise := make([]byte, 4096)
		_, _ = rand.Read(noise)
		cases := []struct {
			name   string
			req    handlerstest.Req
			status int
			code   string
			field  string
		}{
			{"text/plain", handlerstest.Req{Body: "not a picture", ContentType: "text/plain"}, 415, "unsupported_media_type", ""},
			{"no content type", handlerstest.Req{Body: jpg, Header: map[string]string{"Content-Type": ""}}, 415, "unsupported_media_type", ""},
			{"JSON", handlerstest.Req{Body: `{"url":"http://example.com/a.jpg"}`}, 415, "unsupported_media_type", ""},
			{"SVG", handlerstest.Req{Body: `<svg xmlns="http://www.w3.org/2000/svg"/>`, ContentType: "image/svg+xml"}, 415, "unsupported_media_type", ""},
			{"compressed", handlerstest.Req{Body: jpg, ContentType: "image/jpeg", Header: map[string]string{"Content-Encoding": "gzip"}}, 415, "unsupported_media_type", ""},
			{"over 8 MiB", handlerstest.Req{Body: append(bytes.Clone(jpg), make([]byte, 8<<20)...), ContentType: "image/jpeg"}, 413, "payload_too_large", ""},
			{"random bytes", handlerstest.Req{Body: noise, ContentType: "image/png"}, 422, "validation_failed", "body"},
			{"truncated JPEG", handlerstest.Req{Body: jpg[:len(jpg)/2], ContentType: "image/jpeg"}, 422, "validation_failed", "body"},
			{"empty", handlerstest.Req{Body: []byte{}, ContentType: "image/jpeg"}, 422, "validation_failed", "body"},
			{"10000×10000 claimed", handlerstest.Req{Body: handlerstest.PNGClaiming(t, 10000, 10000), ContentType: "image/png"}, 422, "validation_failed", "body"},
			{"no key", handlerstest.Req{Body: jpg, ContentType: "image/jpeg", Key: "-"}, 401, "unauthorized", ""},
			{"customer key", handlerstest.Req{Body: jpg, ContentType: "image/jpeg", Key: a.Customer}, 403, "forbidden", ""},
			{"unknown pet", handlerstest.Req{Path: "/api/pets/9999999/photos", Body: jpg, ContentType: "image/jpeg"}, 404, "not_found", ""},
			{"bad pet id", handlerstest.Req{Path: "/api/pets/abc/photos", Body: jpg, ContentType: "image/jpeg"}, 400, "bad_request", "petId"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				req := tc.req
				req.Method = "POST"
				if req.Path == "" {
					req.Path = path
				}
				switch req.Key {
				case "":
					req.Key = a.Staff
				case "-":
					req.Key = ""
				}
				r := a.Do(req).Want(t, tc.status, tc.code)
				if p := r.Problem(t); tc.field != "" && (len(p.Details) != 1 || p.Details[0].Field != tc.field || p.Details[0].Message == "") {
					t.Errorf("details %+v, want one naming %s", p.Details, tc.field)
				}
				for _, h := range []string{"X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "RateLimit"} {
					if r.Header.Get(h) == "" {
						t.Errorf("header %s missing", h)
					}
				}
			})
		}
		if got := petPhotos(t, a, rex.ID); len(got) != 0 {
			t.Errorf("refused uploads stored %+v", got)
		}
	})
}

// TestPhotoLimit: a pet takes 8 photos; the 9th is 409 too_many_photos,
// and takes its place once one is deleted. On both databases.
func TestPhotoLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		img := handlerstest.PNGOf(t, 32, 24)
		var first db.Photo
		for i := range db.MaxPhotos {
			r := a.UploadPhoto(rex.ID, "image/png", img).Want(t, http.StatusCreated)
			if i == 0 {
				r.Decode(t, &first)
			}
		}
		r := a.UploadPhoto(rex.ID, "image/png", img).Want(t, http.StatusConflict, "too_many_photos")
		if !strings.Contains(r.Problem(t).Message, "8") {
			t.Errorf("message %q does not say how many", r.Problem(t).Message)
		}
		if n := len(petPhotos(t, a, rex.ID)); n != db.MaxPhotos {
			t.Fatalf("%d photos, want %d", n, db.MaxPhotos)
		}
		del := "/api/pets/" + handlerstest.Itoa(rex.ID) + "/photos/" + handlerstest.Itoa(first.ID)
		a.Do(handlerstest.Req{Method: "DELETE", Path: del, Key: a.Staff}).Want(t, http.StatusNoContent)
		a.UploadPhoto(rex.ID, "image/png", img).Want(t, http.StatusCreated)
	})
}

// TestPhotoDelete: DELETE answers 204 and the photo is gone from the pet
// and from its address; a second DELETE, another pet's photo, a customer
// key and bad ids are refused. On both databases.
func TestPhotoDelete(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex, tom := a.SeedPet("Rex", 1), a.SeedPet("Tom", 1)
		var ph db.Photo
		a.UploadPhoto(rex.ID, "image/png", handlerstest.PNGOf(t, 40, 30)).Want(t, http.StatusCreated).Decode(t, &ph)
		path := func(pet, photo string) string { return "/api/pets/" + pet + "/photos/" + photo }
		rexID, phID := handlerstest.Itoa(rex.ID), handlerstest.Itoa(ph.ID)

		a.Do(handlerstest.Req{Method: "DELETE", Path: path(handlerstest.Itoa(tom.ID), phID), Key: a.Staff}).Want(t, 404, "not_found")
		a.Do(handlerstest.Req{Method: "DELETE", Path: path(rexID, phID), Key: a.Customer}).Want(t, 403, "forbidden")
		a.Do(handlerstest.Req{Method: "DELETE", Path: path(rexID, "abc"), Key: a.Staff}).Want(t, 400, "bad_request")
		a.Do(handlerstest.Req{Method: "DELETE", Path: path("0", phID), Key: a.Staff}).Want(t, 400, "bad_request")
		a.Do(handlerstest.Req{Method: "GET", Path: ph.URL}).Want(t, http.StatusOK)

		a.Do(handlerstest.Req{Method: "DELETE", Path: path(rexID, phID), Key: a.Staff}).Want(t, http.StatusNoContent)
		if got := petPhotos(t, a, rex.ID); len(got) != 0 {
			t.Errorf("photos after the delete: %+v", got)
		}
		for _, u := range []string{ph.URL, ph.ThumbURL} {
			a.Do(handlerstest.Req{Method: "GET", Path: u}).Want(t, http.StatusNotFound)
		}
		a.Do(handlerstest.Req{Method: "DELETE", Path: path(rexID, phID), Key: a.Staff}).Want(t, 404, "not_found")
	})
}

// TestPhotoIdempotent: an upload retried with its Idempotency-Key gets the
// first answer again and stores one photo; the key with another image is
// 422 idempotency_key_reused.
func TestPhotoIdempotent(t *testing.T) {
	a := handlerstest.New(t)
	rex := a.SeedPet("Rex", 1)
	path := "/api/pets/" + handlerstest.Itoa(rex.ID) + "/photos"
	send := func(body []byte) *handlerstest.Response {
		return a.Do(handlerstest.Req{Method: "POST", Path: path, Key: a.Staff, ContentType: "image/png", Body: body,
			Header: map[string]string{"Idempotency-Key": "photo-1"}})
	}
	img := handlerstest.PNGOf(t, 40, 30)
	first := send(img).Want(t, http.StatusCreated)
	again := send(img).Want(t, http.StatusCreated)
	if !bytes.Equal(first.Body, again.Body) || again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Location") != first.Header.Get("Location") {
		t.Errorf("the retry answered %s (replayed %q, Location %q), want %s again", again.Body, again.Header.Get("Idempotent-Replayed"), again.Header.Get("Location"), first.Body)
	}
	if n := len(petPhotos(t, a, rex.ID)); n != 1 {
		t.Errorf("%d photos stored, want 1", n)
	}
	send(handlerstest.PNGOf(t, 41, 30)).Want(t, http.StatusUnprocessableEntity, "idempotency_key_reused")
}
