package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"testing"

	"petstore/db"
)

// TestMultiInstancePhoto uploads a photo through instance A and fetches it
// through B (SPEC §14: photos live in the database, so any instance serves
// any photo): both sizes, byte for byte and with the same ETag, and B
// answers 304 to the tag A gave. Deleted through B, the photo is gone from
// A too.
func TestMultiInstancePhoto(t *testing.T) {
	a, b := startPair(t, nil)
	staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	ctx := context.Background()
	catName, petName := "Cats", "Tom"
	cat, err := a.srv.Store.CreateCategory(ctx, db.NewCategory{Name: &catName})
	if err != nil {
		t.Fatal(err)
	}
	pet, err := a.srv.Store.CreatePet(ctx, db.NewPet{Name: &petName, CategoryID: &cat.ID})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t)

	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/pets/%d/photos", a.base, pet.ID), bytes.NewReader(gradientJPEG(t, 1200, 900)))
	req.Header.Set("Content-Type", "image/jpeg")
	req.Header.Set("X-API-Key", staff)
	var ph db.Photo
	send(c, req).must(t, http.StatusCreated, &ph)
	if ph.Width != 1200 || ph.Height != 900 {
		t.Errorf("photo %+v, want 1200×900 (never scaled up)", ph)
	}

	for _, size := range []struct {
		url           string
		width, height int
	}{{ph.URL, 1200, 900}, {ph.ThumbURL, 400, 300}} {
		fromB := call(c, "GET", b.base+size.url, "", nil).must(t, http.StatusOK, nil)
		m, err := jpeg.Decode(bytes.NewReader(fromB.body))
		if err != nil || m.Bounds().Dx() != size.width || m.Bounds().Dy() != size.height {
			t.Fatalf("B serves %s as %v (%v), want a %dx%d JPEG", size.url, m.Bounds(), err, size.width, size.height)
		}
		fromA := call(c, "GET", a.base+size.url, "", nil).must(t, http.StatusOK, nil)
		etag := fromA.header.Get("ETag")
		if !bytes.Equal(fromA.body, fromB.body) || etag == "" || fromB.header.Get("ETag") != etag {
			t.Errorf("%s: A and B serve %d and %d bytes, ETags %q and %q", size.url, len(fromA.body), len(fromB.body), etag, fromB.header.Get("ETag"))
		}
		r, _ := http.NewRequest("GET", b.base+size.url, nil)
		r.Header.Set("If-None-Match", etag)
		send(c, r).must(t, http.StatusNotModified, nil)
	}

	call(c, "DELETE", fmt.Sprintf("%s/api/pets/%d/photos/%d", b.base, pet.ID, ph.ID), staff, nil).must(t, http.StatusNoContent, nil)
	call(c, "GET", a.base+ph.URL, "", nil).must(t, http.StatusNotFound, nil)
}

// send makes one request as it is.
func send(c *http.Client, req *http.Request) answer {
	res, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: out, err: err}
}

// gradientJPEG is a w×h JPEG with a smooth gradient.
func gradientJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
