package handlers_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/handlers/handlerstest"
	"petstore/web"
)

var versionedAsset = regexp.MustCompile(`^/static/[0-9a-f]{12}/`)

func get(a *handlerstest.App, path string, header map[string]string) *handlerstest.Response {
	a.T.Helper()
	return a.Do(handlerstest.Req{Method: "GET", Path: path, Header: header})
}

// TestPagesLinkVersionedAssets: every asset a page links (stylesheets,
// scripts, the favicon) is at a versioned URL that answers with immutable
// caching; the plain URLs still answer, with a short max-age.
func TestPagesLinkVersionedAssets(t *testing.T) {
	a := handlerstest.New(t)
	for _, page := range []string{"/", "/staff/login", "/api/docs"} {
		r := get(a, page, nil).Want(t, 200)
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		doc.Find("link[href], script[src]").Each(func(_ int, s *goquery.Selection) {
			u := s.AttrOr("href", s.AttrOr("src", ""))
			urls = append(urls, u)
		})
		if doc.Find(`link[rel="icon"]`).Length() != 1 {
			t.Errorf("%s: no favicon link", page)
		}
		if len(urls) < 3 {
			t.Fatalf("%s links %d assets: %v", page, len(urls), urls)
		}
		for _, u := range urls {
			if !versionedAsset.MatchString(u) {
				t.Errorf("%s links %q, not a versioned asset URL", page, u)
				continue
			}
			res := get(a, u, nil).Want(t, 200)
			if got := res.Header.Get("Cache-Control"); got != web.ImmutableCache {
				t.Errorf("%s: Cache-Control %q, want %q", u, got, web.ImmutableCache)
			}
		}
	}
	plain := get(a, "/static/css/app.css", nil).Want(t, 200)
	if got := plain.Header.Get("Cache-Control"); got != "public, max-age=3600" {
		t.Errorf("plain URL: Cache-Control %q", got)
	}
	old := get(a, "/static/000000000000/css/app.css", nil).Want(t, 200)
	if got := old.Header.Get("Cache-Control"); got == web.ImmutableCache || !bytes.Equal(old.Body, plain.Body) {
		t.Errorf("an old version: Cache-Control %q, want the current file, not immutable", got)
	}
	icon := get(a, "/favicon.ico", nil).Want(t, 200)
	if ct := icon.Header.Get("Content-Type"); ct != "image/svg+xml" || !bytes.Contains(icon.Body, []byte("<svg")) {
		t.Errorf("/favicon.ico: %s %q", ct, icon.Body)
	}
}

// TestCompressionWiring: what the app serves goes through compression —
// pages, scripts and styles (the assets' own precompressed bytes) and the
// API's JSON come in the coding asked for, with Vary: Accept-Encoding — and
// the API's tagged answers, remembered or not, keep their coding's tag,
// which revalidates. (The rules of compressing, and of what is left
// alone: web/compress_test.go.)
func TestCompressionWiring(t *testing.T) {
	a := handlerstest.New(t)
	a.SkipContract = true // its check cannot read compressed bodies
	// A page of 60 pets is past the 1,400 bytes Compress starts at.
	for i := range 60 {
		a.SeedPet("Pet number "+strconv.Itoa(i), 2)
	}
	shop := get(a, "/", nil).Want(t, 200)
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(shop.Body))
	htmx := doc.Find(`script[src*="htmx"]`).AttrOr("src", "")
	css := doc.Find(`link[rel="stylesheet"]`).AttrOr("href", "")

	cases := []struct{ path, key, enc string }{
		{"/", "", "gzip"}, {"/", "", "br"}, {htmx, "", "br"}, {css, "", "gzip"},
		{"/api/pets?limit=60", a.Customer, "gzip"}, {"/api/pets?limit=60", a.Customer, "br"},
	}
	for _, c := range cases {
		r := a.Do(handlerstest.Req{Method: "GET", Path: c.path, Key: c.key, Header: map[string]string{"Accept-Encoding": c.enc}}).Want(t, 200)
		if got := r.Header.Get("Content-Encoding"); got != c.enc {
			t.Errorf("%s (%s): Content-Encoding %q (%d bytes)", c.path, c.enc, got, len(r.Body))
		}
		if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s (%s): Vary %q", c.path, c.enc, r.Header.Get("Vary"))
		}
		if c.key == "" {
			continue
		}
		// The API's tagged answers are compressed once per coding and kept
		// (web.Compress): a second GET answers the same bytes, and both
		// decode to the plain answer.
		again := a.Do(handlerstest.Req{Method: "GET", Path: c.path, Key: c.key, Header: map[string]string{"Accept-Encoding": c.enc}}).Want(t, 200)
		if !bytes.Equal(again.Body, r.Body) || again.Header.Get("Content-Encoding") != c.enc || again.Header.Get("ETag") != r.Header.Get("ETag") {
			t.Errorf("%s (%s) again: %d bytes in %q tagged %s, want the same %d bytes tagged %s", c.path, c.enc,
				len(again.Body), again.Header.Get("Content-Encoding"), again.Header.Get("ETag"), len(r.Body), r.Header.Get("ETag"))
		}
		identity := a.Do(handlerstest.Req{Method: "GET", Path: c.path, Key: c.key}).Want(t, 200)
		if c.enc == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(again.Body))
			if err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, identity.Body) {
				t.Errorf("%s: the kept gzip body decodes to %d bytes (%v), want the %d of the plain answer", c.path, len(plain), err, len(identity.Body))
			}
		}
		tag := r.Header.Get("ETag")
		if !strings.HasSuffix(tag, `-`+c.enc+`"`) {
			t.Errorf("%s (%s): ETag %q, want the coding's own tag", c.path, c.enc, tag)
		}
		a.Do(handlerstest.Req{Method: "GET", Path: c.path, Key: c.key, Header: map[string]string{"Accept-Encoding": c.enc, "If-None-Match": tag}}).Want(t, 304)
	}
}

// TestEventStreamsNotCompressed: the SSE streams are never compressed, so
// each event reaches the client when it is written.
func TestEventStreamsNotCompressed(t *testing.T) {
	a := handlerstest.New(t)
	base := a.Listen()
	req, _ := http.NewRequest("GET", base+"/api/events", nil)
	req.Header.Set("X-API-Key", a.Staff)
	req.Header.Set("Accept-Encoding", "gzip, br")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("/api/events: %d, Content-Encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
}
