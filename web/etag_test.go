package web

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"
)

var strongTag = regexp.MustCompile(`^"[0-9a-f]{32}"$`)

// TestBodyTag: a body's tag is strong (quoted, no W/), the same for the
// same bytes and another for any other bytes.
func TestBodyTag(t *testing.T) {
	a, b := BodyTag([]byte(`[{"id":1}]`)), BodyTag([]byte(`[{"id":2}]`))
	for _, tag := range []string{a, b, BodyTag(nil)} {
		if !strongTag.MatchString(tag) {
			t.Errorf("BodyTag = %s, want a quoted 32-digit hex tag", tag)
		}
	}
	if a == b {
		t.Errorf("two bodies share the tag %s", a)
	}
	if again := BodyTag([]byte(`[{"id":1}]`)); again != a {
		t.Errorf("the same body tagged %s, then %s", a, again)
	}
}

// TestMatchTag: If-None-Match names the client's tag in a list, weakly or
// not (the weak comparison of RFC 9110 §13.1.2), or is *; a tag of the
// body in a content coding Compress adds matches too, and the tag the
// client holds is the one a 304 gives back.
func TestMatchTag(t *testing.T) {
	const tag = `"abc"`
	for _, tc := range []struct {
		name, ifNoneMatch string
		want              string
		match             bool
	}{
		{"the tag", `"abc"`, `"abc"`, true},
		{"weak", `W/"abc"`, `"abc"`, true},
		{"in a list", `"x", "abc" ,"y"`, `"abc"`, true},
		{"any", `*`, `"abc"`, true},
		{"gzip's", `"abc-gzip"`, `"abc-gzip"`, true},
		{"brotli's, weak", `W/"abc-br"`, `"abc-br"`, true},
		{"deflate's", `"abc-deflate"`, `"abc-deflate"`, true},
		{"another tag", `"abd"`, "", false},
		{"an unknown coding", `"abc-zstd"`, "", false},
		{"unquoted", `abc`, "", false},
		{"empty", ``, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MatchTag(tc.ifNoneMatch, tag)
			if got != tc.want || ok != tc.match {
				t.Errorf("MatchTag(%q, %s) = %q, %v; want %q, %v", tc.ifNoneMatch, tag, got, ok, tc.want, tc.match)
			}
		})
	}
}

// conditional is what a conditional GET's answer shows.
type conditional struct {
	Status      int
	ETag        string
	ContentType string
	Body        string
}

// TestConditionalGET: a route that tags its 200 (SetBodyTag) answers a
// client holding the current tag with 304 Not Modified: no body, no
// Content-Type, the client's tag (IfNoneMatch, NotModified), the headers
// set so far kept; a stale tag gets the whole answer. Only a 200 is
// tagged.
func TestConditionalGET(t *testing.T) {
	const body = `[{"id":1,"name":"Rex"}]`
	tag := BodyTag([]byte(body))
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/pets", func(c *fiber.Ctx) error {
			c.Set("X-Kept", "yes")
			if IfNoneMatch(c, tag) {
				held, _ := MatchTag(c.Get(fiber.HeaderIfNoneMatch), tag)
				return NotModified(c, held)
			}
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			if err := c.SendString(body); err != nil {
				return err
			}
			SetBodyTag(c)
			return nil
		}))
		r.Add(route("GET", "/created", func(c *fiber.Ctx) error {
			c.Status(http.StatusCreated)
			if _, ok := SetBodyTag(c); ok {
				c.Set("X-Tagged", "yes")
			}
			return c.SendString(body)
		}))
	})
	full := conditional{Status: 200, ETag: tag, ContentType: fiber.MIMEApplicationJSON, Body: body}
	for _, tc := range []struct {
		name, ifNoneMatch string
		want              conditional
	}{
		{"no tag held", "", full},
		{"the current tag", tag, conditional{Status: 304, ETag: tag}},
		{"the current tag, weakly", "W/" + tag, conditional{Status: 304, ETag: tag}},
		{"any", "*", conditional{Status: 304, ETag: tag}},
		{"a stale tag", `"0123"`, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a answer
			if tc.ifNoneMatch == "" {
				a = get(t, app, "/pets")
			} else {
				a = get(t, app, "/pets", fiber.HeaderIfNoneMatch, tc.ifNoneMatch)
			}
			got := conditional{Status: a.Status, ETag: a.Header.Get(fiber.HeaderETag), ContentType: a.Header.Get(fiber.HeaderContentType), Body: string(a.Body)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("If-None-Match %q (-want +got):\n%s", tc.ifNoneMatch, diff)
			}
			if a.Header.Get("X-Kept") != "yes" {
				t.Errorf("the headers set before the answer are gone: %v", a.Header)
			}
		})
	}
	t.Run("only a 200 is tagged", func(t *testing.T) {
		a := get(t, app, "/created")
		if a.Status != http.StatusCreated || a.Header.Get(fiber.HeaderETag) != "" || a.Header.Get("X-Tagged") != "" {
			t.Errorf("a 201: status %d, ETag %q, tagged %q; want no tag", a.Status, a.Header.Get(fiber.HeaderETag), a.Header.Get("X-Tagged"))
		}
	})
}
