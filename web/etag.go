package web

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Strong entity tags (SPEC §2's conditional GETs, the photos' tags): the
// tag of a body, the match of If-None-Match against it in any content
// coding Compress adds, and the 304. The API keeps the answers it tagged
// (handlers/api's remembered answers); the photos keep their tag beside
// their bytes.

// SetBodyTag sets the strong ETag of a 200's body and returns it.
func SetBodyTag(c *fiber.Ctx) (string, bool) {
	if c.Response().StatusCode() != fiber.StatusOK {
		return "", false
	}
	etag := BodyTag(c.Response().Body())
	c.Set(fiber.HeaderETag, etag)
	return etag, true
}

// BodyTag is the strong ETag of a body, quoted: the first 16 bytes of its
// SHA-256, in hex.
func BodyTag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// IfNoneMatch reports whether the request's If-None-Match names etag (or
// is *): the client holds the current representation. For answers whose
// tag is known before their body is read (a photo's, kept beside it).
func IfNoneMatch(c *fiber.Ctx, etag string) bool {
	_, ok := MatchTag(c.Get(fiber.HeaderIfNoneMatch), etag)
	return ok
}

// NotModified turns the answer into a 304 for the client's tag, with the
// headers set so far and no body.
func NotModified(c *fiber.Ctx, tag string) error {
	c.Response().ResetBody()
	c.Response().Header.Del(fiber.HeaderContentType)
	c.Response().Header.SetNoDefaultContentType(true)
	c.Set(fiber.HeaderETag, tag)
	return c.SendStatus(fiber.StatusNotModified)
}

// tagEncodings are the content codings Compress may add to a tag: a
// compressed body is another representation, so it gets its own strong
// tag, the body's tag with "-br" (or "-gzip", "-deflate") inside the quotes.
var tagEncodings = []string{"br", "gzip", "deflate"}

// encodedTag is etag for the body in the content coding enc.
func encodedTag(etag, enc string) string {
	if len(etag) < 2 || etag[0] != '"' {
		return etag
	}
	return etag[:len(etag)-1] + "-" + enc + `"`
}

// MatchTag reports whether the If-None-Match value names etag, in any of
// its codings (weak comparison, RFC 9110 §13.1.2), and returns the tag the
// client holds: the one a 304 carries.
func MatchTag(ifNoneMatch, etag string) (string, bool) {
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimSpace(t)
		if t == "*" {
			return etag, true
		}
		t = strings.TrimPrefix(t, "W/")
		if t == etag {
			return t, true
		}
		for _, enc := range tagEncodings {
			if t == encodedTag(etag, enc) {
				return t, true
			}
		}
	}
	return "", false
}
