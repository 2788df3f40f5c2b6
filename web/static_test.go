package web

import (
	"io"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/gofiber/fiber/v2"
)

// precompressedFS is a MapFS whose .css files come "compressed" as their
// coding's name and their own name, so the test sees which bytes went out.
type precompressedFS struct{ fstest.MapFS }

func (p precompressedFS) Encoded(name, coding string) ([]byte, bool) {
	if _, ok := p.MapFS[name]; !ok || name != "css/app.css" {
		return nil, false
	}
	return []byte(coding + ":" + name), true
}

// TestStaticAssetsPrecompressed: a file the assets hold compressed goes
// out in the best coding the client accepts, with Content-Encoding, Vary
// and the cache lifetime its URL earns; otherwise the plain file.
func TestStaticAssetsPrecompressed(t *testing.T) {
	fsys := precompressedFS{fstest.MapFS{
		"css/app.css": {Data: []byte("body{color:red}")},
		"img/a.png":   {Data: []byte("png")},
	}}
	app := fiber.New()
	app.Use("/static", StaticAssets(fsys, func(name string) string {
		if name == "css/app.css" {
			return "0123456789ab"
		}
		return ""
	}))
	for _, c := range []struct {
		path, accept, wantBody, wantEncoding, wantCache string
	}{
		{"/static/0123456789ab/css/app.css", "gzip, deflate, br, zstd", "br:css/app.css", "br", ImmutableCache},
		{"/static/0123456789ab/css/app.css", "gzip", "gzip:css/app.css", "gzip", ImmutableCache},
		{"/static/0123456789ab/css/app.css", "br;q=0, gzip;q=0.5", "gzip:css/app.css", "gzip", ImmutableCache},
		{"/static/0123456789ab/css/app.css", "", "body{color:red}", "", ImmutableCache},
		{"/static/000000000000/css/app.css", "br", "br:css/app.css", "br", "public, max-age=3600"},
		{"/static/css/app.css", "*", "br:css/app.css", "br", "public, max-age=3600"},
		{"/static/img/a.png", "br", "png", "", "public, max-age=3600"},
	} {
		req := httptest.NewRequest("GET", c.path, nil)
		if c.accept != "" {
			req.Header.Set("Accept-Encoding", c.accept)
		}
		res, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(body) != c.wantBody || res.Header.Get("Content-Encoding") != c.wantEncoding ||
			res.Header.Get("Cache-Control") != c.wantCache {
			t.Errorf("%s (%q): %d %q, encoding %q, cache %q; want %q, %q, %q", c.path, c.accept, res.StatusCode, body,
				res.Header.Get("Content-Encoding"), res.Header.Get("Cache-Control"), c.wantBody, c.wantEncoding, c.wantCache)
		}
		if c.wantEncoding != "" && (res.Header.Get("Vary") != "Accept-Encoding" || res.Header.Get("Content-Type") != "text/css") {
			t.Errorf("%s: Vary %q, Content-Type %q", c.path, res.Header.Get("Vary"), res.Header.Get("Content-Type"))
		}
	}
}
