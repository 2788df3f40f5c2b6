package web

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"
)

// Bodies of the compression tests: text past minCompressSize, a JSON
// answer of exactly minCompressSize (1,400) bytes and one a byte shorter.
var (
	bigPage  = "<!doctype html><ul>" + strings.Repeat("<li>a good dog</li>", 150) + "</ul>"
	bigJSON  = "[" + strings.Repeat(`{"id":1,"name":"Rex"},`, 120) + `{"id":2}]`
	edgeDoc  = `"` + strings.Repeat("a", 1400-2) + `"`
	smallDoc = `"` + strings.Repeat("a", 1400-3) + `"`
)

// compressApp serves the answers Compress meets.
func compressApp(t *testing.T) *fiber.App {
	t.Helper()
	text := func(ct, body string) fiber.Handler {
		return func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, ct)
			return c.SendString(body)
		}
	}
	return newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/page", text(fiber.MIMETextHTMLCharsetUTF8, bigPage)))
		r.Add(route("GET", "/json", text(fiber.MIMEApplicationJSON, bigJSON)))
		r.Add(route("GET", "/edge", text(fiber.MIMEApplicationJSON, edgeDoc)))
		r.Add(route("GET", "/small", text(fiber.MIMEApplicationJSON, smallDoc)))
		r.Add(route("GET", "/photo", text("image/png", bigPage)))
		r.Add(route("GET", "/archive.gz", text("text/plain", bigPage)))
		r.Add(route("GET", "/precompressed", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentEncoding, "gzip")
			return text("text/css", bigPage)(c)
		}))
		r.Add(Route{Method: "GET", Path: "/stream", Streaming: true, Handlers: []fiber.Handler{text("text/plain", bigPage)}})
		r.Add(route("GET", "/tagged", func(c *fiber.Ctx) error {
			if err := text(fiber.MIMEApplicationJSON, bigJSON)(c); err != nil {
				return err
			}
			SetBodyTag(c)
			return nil
		}))
		r.Add(route("GET", "/not-modified", func(c *fiber.Ctx) error { return NotModified(c, BodyTag([]byte(bigJSON))) }))
	})
}

// decode undoes the content coding enc.
func decode(t *testing.T, enc string, b []byte) string {
	t.Helper()
	var r io.Reader
	var err error
	switch enc {
	case "":
		return string(b)
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(b))
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	default:
		t.Fatalf("unknown coding %q", enc)
	}
	if err != nil {
		t.Fatalf("%s: %v", enc, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", enc, err)
	}
	return string(out)
}

// coded is what a test of compression checks of an answer.
type coded struct {
	Encoding    string // Content-Encoding
	ContentType string
	Vary        bool // Vary names Accept-Encoding
	Body        string
}

// TestCompressNegotiated: a text answer (HTML, JSON) of at least
// minCompressSize bytes comes in the coding the client accepts, brotli
// before gzip before deflate, and decodes to the plain answer; without
// Accept-Encoding it comes plain. Either way it says Vary:
// Accept-Encoding, so a shared cache keeps the two apart.
func TestCompressNegotiated(t *testing.T) {
	app := compressApp(t)
	for _, path := range []string{"/page", "/json", "/edge"} {
		plain := get(t, app, path)
		for _, tc := range []struct {
			accept, want string
		}{
			{"gzip", "gzip"},
			{"br", "br"},
			{"deflate", "deflate"},
			{"gzip, deflate, br, zstd", "br"},
			{"gzip, deflate", "gzip"},
			{"", ""},
			{"identity", ""},
			{"zstd", ""},
		} {
			t.Run(path+" "+tc.accept, func(t *testing.T) {
				a := get(t, app, path, fiber.HeaderAcceptEncoding, tc.accept)
				enc := a.Header.Get(fiber.HeaderContentEncoding)
				got := coded{Encoding: enc, ContentType: a.Header.Get(fiber.HeaderContentType),
					Vary: strings.Contains(a.Header.Get(fiber.HeaderVary), fiber.HeaderAcceptEncoding), Body: decode(t, enc, a.Body)}
				want := coded{Encoding: tc.want, ContentType: plain.Header.Get(fiber.HeaderContentType), Vary: true, Body: string(plain.Body)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Accept-Encoding %q (-want +got):\n%s", tc.accept, diff)
				}
				if tc.want != "" && len(a.Body) >= len(plain.Body) {
					t.Errorf("%d bytes compressed, %d plain", len(a.Body), len(plain.Body))
				}
			})
		}
	}
}

// TestCompressLeavesAlone: answers compressing would not help, or would
// break, go out as the route wrote them: a body under minCompressSize
// (one packet either way; still Vary, since a longer one would be
// compressed), a type that is not text (images are compressed already), a
// file compressed already by its name, a body the route encoded itself,
// a stream (it must reach the client as it is written) and a request for
// an event stream.
func TestCompressLeavesAlone(t *testing.T) {
	app := compressApp(t)
	for _, tc := range []struct {
		name, path string
		header     []string
		want       coded
	}{
		{"a byte under minCompressSize", "/small", nil, coded{ContentType: fiber.MIMEApplicationJSON, Vary: true, Body: smallDoc}},
		{"an image", "/photo", nil, coded{ContentType: "image/png", Body: bigPage}},
		{"a .gz file", "/archive.gz", nil, coded{ContentType: "text/plain", Body: bigPage}},
		{"encoded by the route", "/precompressed", nil, coded{Encoding: "gzip", ContentType: "text/css", Vary: true, Body: bigPage}},
		{"a streaming route", "/stream", nil, coded{ContentType: "text/plain", Body: bigPage}},
		{"an event stream asked for", "/page", []string{fiber.HeaderAccept, "text/event-stream"}, coded{ContentType: fiber.MIMETextHTMLCharsetUTF8, Body: bigPage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, app, tc.path, append([]string{fiber.HeaderAcceptEncoding, "gzip, br"}, tc.header...)...)
			got := coded{Encoding: a.Header.Get(fiber.HeaderContentEncoding), ContentType: a.Header.Get(fiber.HeaderContentType),
				Vary: strings.Contains(a.Header.Get(fiber.HeaderVary), fiber.HeaderAcceptEncoding), Body: string(a.Body)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompressTags: a compressed answer is another representation, so an
// answer with a strong ETag gets a strong tag of its own per coding (the
// body's tag with "-gzip" or "-br" inside the quotes), which
// If-None-Match then matches (MatchTag); a 304 says Vary too.
func TestCompressTags(t *testing.T) {
	app := compressApp(t)
	tag := BodyTag([]byte(bigJSON))
	for _, tc := range []struct {
		accept, want string
	}{
		{"", tag},
		{"gzip", strings.TrimSuffix(tag, `"`) + `-gzip"`},
		{"br", strings.TrimSuffix(tag, `"`) + `-br"`},
	} {
		t.Run("Accept-Encoding "+tc.accept, func(t *testing.T) {
			a := get(t, app, "/tagged", fiber.HeaderAcceptEncoding, tc.accept)
			if got := a.Header.Get(fiber.HeaderETag); got != tc.want {
				t.Errorf("ETag = %s, want %s", got, tc.want)
			}
			if got, ok := MatchTag(tc.want, tag); got != tc.want || !ok {
				t.Errorf("MatchTag(%s, %s) = %s, %v; want the coding's tag matched", tc.want, tag, got, ok)
			}
		})
	}
	t.Run("304", func(t *testing.T) {
		a := get(t, app, "/not-modified", fiber.HeaderAcceptEncoding, "gzip")
		got := coded{Encoding: a.Header.Get(fiber.HeaderContentEncoding), ContentType: a.Header.Get(fiber.HeaderContentType),
			Vary: strings.Contains(a.Header.Get(fiber.HeaderVary), fiber.HeaderAcceptEncoding), Body: string(a.Body)}
		if diff := cmp.Diff(coded{Vary: true}, got); a.Status != 304 || diff != "" {
			t.Errorf("status %d, want 304 (-want +got):\n%s", a.Status, diff)
		}
	})
}

// TestCompressKeepsTaggedBodies: an answer with a strong tag (the hash of
// its body) is compressed once per coding and the encoded bytes reused
// while the route answers the same tag at the same path. The route below
// answers a new body each time under one tag, so what comes back shows
// which bytes were kept: the first gzip body for every later gzip answer,
// brotli kept apart, and plain answers and weakly tagged ones never
// replaced.
func TestCompressKeepsTaggedBodies(t *testing.T) {
	n := 0
	answer := func(tag string) fiber.Handler {
		return func(c *fiber.Ctx) error {
			n++
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			c.Set(fiber.HeaderETag, tag)
			return c.SendString(strconv.Itoa(n) + bigJSON)
		}
	}
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/kept", answer(`"kept"`)))
		r.Add(route("GET", "/other", answer(`"kept"`)))
		r.Add(route("GET", "/weak", answer(`W/"kept"`)))
	})
	for _, tc := range []struct {
		path, accept string
		want         int // the request whose body comes back
	}{
		{"/kept", "gzip", 1},
		{"/kept", "gzip", 1},
		{"/kept", "br", 3},
		{"/kept", "br", 3},
		{"/kept", "", 5},
		{"/kept", "gzip", 1},
		{"/other", "gzip", 7},
		{"/weak", "gzip", 8},
		{"/weak", "gzip", 9},
	} {
		a := get(t, app, tc.path, fiber.HeaderAcceptEncoding, tc.accept)
		enc := a.Header.Get(fiber.HeaderContentEncoding)
		if got, want := decode(t, enc, a.Body), strconv.Itoa(tc.want)+bigJSON; enc != tc.accept || got != want {
			t.Errorf("request %d, %s in %q: %q… in %q, want the body of request %d", n, tc.path, tc.accept, got[:min(len(got), 8)], enc, tc.want)
		}
	}
}
