package handlers_test

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web"
)

// TestMediaPhotos uploads a photo carrying an Exif GPS position through the
// API and fetches its three sizes (large, the pages' medium, thumb) as an
// anonymous visitor, on both databases:
// JPEGs of the right size with no metadata left, cached for a year with an
// ETag, 304 when revalidated, never compressed, never with a cookie.
func TestMediaPhotos(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		upload := handlerstest.WithExifGPS(t, handlerstest.JPEGOf(t, 1800, 1200))
		if m := handlerstest.JPEGMarkers(t, upload); m[0] != 0xe1 || !bytes.Contains(upload, []byte("Exif\x00\x00MM")) || !bytes.Contains(upload, handlerstest.GPSLatitude) {
			t.Fatalf("the upload lacks the Exif GPS segment the test is about (markers % x)", m)
		}
		var ph db.Photo
		a.UploadPhoto(rex.ID, "image/jpeg", upload).Want(t, http.StatusCreated).Decode(t, &ph)

		for _, size := range []struct {
			url           string
			width, height int
		}{{ph.URL, 1600, 1067}, {db.PhotoURL(ph.ID, db.PhotoMedium), 800, 534}, {ph.ThumbURL, 400, 267}} {
			r := a.Do(handlerstest.Req{Method: "GET", Path: size.url, Header: map[string]string{"Accept-Encoding": "br, gzip"}}).Want(t, http.StatusOK)
			m, err := jpeg.Decode(bytes.NewReader(r.Body))
			if err != nil {
				t.Fatalf("%s is not a JPEG: %v", size.url, err)
			}
			if got := m.Bounds().Size(); got != image.Pt(size.width, size.height) {
				t.Errorf("%s is %v, want %dx%d", size.url, got, size.width, size.height)
			}
			for _, marker := range handlerstest.JPEGMarkers(t, r.Body) {
				if marker >= 0xe0 && marker <= 0xef || marker == 0xfe {
					t.Errorf("%s has a metadata segment (marker %#x)", size.url, marker)
				}
			}
			if bytes.Contains(r.Body, []byte("Exif")) || bytes.Contains(r.Body, handlerstest.GPSLatitude) {
				t.Errorf("%s still holds the Exif GPS position", size.url)
			}
			etag := r.Header.Get("ETag")
			for h, want := range map[string]string{
				"Content-Type": "image/jpeg", "Cache-Control": web.ImmutableCache, "Content-Encoding": "",
				"X-Content-Type-Options": "nosniff", "Set-Cookie": "",
			} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("%s: %s = %q, want %q", size.url, h, got, want)
				}
			}
			if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
				t.Fatalf("%s: ETag %q, want a strong tag", size.url, etag)
			}

			nm := a.Do(handlerstest.Req{Method: "GET", Path: size.url, Header: map[string]string{"If-None-Match": `"other", ` + etag}}).Want(t, http.StatusNotModified)
			if len(nm.Body) != 0 || nm.Header.Get("ETag") != etag || nm.Header.Get("Cache-Control") != web.ImmutableCache {
				t.Errorf("%s: 304 with %d bytes, ETag %q, Cache-Control %q", size.url, len(nm.Body), nm.Header.Get("ETag"), nm.Header.Get("Cache-Control"))
			}
			stale := a.Do(handlerstest.Req{Method: "GET", Path: size.url, Header: map[string]string{"If-None-Match": `"other"`}}).Want(t, http.StatusOK)
			if !bytes.Equal(stale.Body, r.Body) || stale.Header.Get("ETag") != etag {
				t.Errorf("%s: a stale tag got %d bytes and ETag %q, want the photo again", size.url, len(stale.Body), stale.Header.Get("ETag"))
			}
			head := a.Do(handlerstest.Req{Method: "HEAD", Path: size.url}).Want(t, http.StatusOK)
			if len(head.Body) != 0 || head.Header.Get("ETag") != etag {
				t.Errorf("%s: HEAD gave %d bytes and ETag %q", size.url, len(head.Body), head.Header.Get("ETag"))
			}
		}
		large := a.Do(handlerstest.Req{Method: "GET", Path: ph.URL}).Want(t, http.StatusOK)
		thumb := a.Do(handlerstest.Req{Method: "GET", Path: ph.ThumbURL}).Want(t, http.StatusOK)
		if large.Header.Get("ETag") == thumb.Header.Get("ETag") {
			t.Error("both sizes have one ETag")
		}
	})
}

// TestMediaNotFound: addresses that name no photo are 404, never a 500,
// and never cached for a year; a deleted pet's photos stop being served,
// revalidations included. On both databases.
func TestMediaNotFound(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		var ph db.Photo
		a.UploadPhoto(rex.ID, "image/png", handlerstest.PNGOf(t, 40, 30)).Want(t, http.StatusCreated).Decode(t, &ph)
		etag := a.Do(handlerstest.Req{Method: "GET", Path: ph.ThumbURL}).Want(t, http.StatusOK).Header.Get("ETag")
		id := handlerstest.Itoa(ph.ID)

		paths := []string{
			"/media/photos/9999999/large.jpg", "/media/photos/abc/large.jpg", "/media/photos/0/thumb.jpg",
			"/media/photos/-1/thumb.jpg", "/media/photos/9223372036854775808/large.jpg", "/media/photos/%00/large.jpg",
			"/media/photos/" + id + "/huge.jpg", "/media/photos/" + id + "/large.png", "/media/photos/" + id,
		}
		for _, p := range paths {
			r := a.Do(handlerstest.Req{Method: "GET", Path: p}).Want(t, http.StatusNotFound)
			if r.Header.Get("Cache-Control") == web.ImmutableCache {
				t.Errorf("GET %s: a 404 cached for a year", p)
			}
		}
		r := a.Do(handlerstest.Req{Method: "GET", Path: "/media/photos/abc/large.jpg", Header: map[string]string{"Accept": "application/json"}}).Want(t, http.StatusNotFound)
		if p := r.Problem(t); p.Code != "not_found" {
			t.Errorf("a client asking for JSON got %+v", p)
		}

		if err := a.Store.DeletePet(context.Background(), rex.ID); err != nil {
			t.Fatal(err)
		}
		for _, req := range []handlerstest.Req{
			{Method: "GET", Path: ph.URL}, {Method: "GET", Path: ph.ThumbURL},
			{Method: "GET", Path: ph.ThumbURL, Header: map[string]string{"If-None-Match": etag}},
		} {
			a.Do(req).Want(t, http.StatusNotFound)
		}
	})
}
