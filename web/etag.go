package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Conditional serves the conditional GETs of SPEC §2 on the routes it
// guards: every 200 carries a strong ETag, the hash of its body (so equal
// tags mean byte-identical bodies), and an If-None-Match that names the
// current tag (or is *) gets 304 with no body, the same tag and the headers
// set before it (request id, rate limit: the request has been counted).
//
// It also keeps what it served. Its version function reads a counter that grows with
// every committed change to what the routes show (on the API it comes with
// the key's read, so it costs the request nothing more). Each instance
// remembers, per route, query and role, the answer it last served and the
// counter read before the query that made it; while the counter is
// unchanged that answer is still the current one, so the handler is not
// called: a match of its tag gets 304, any other request the remembered
// body. A hot catalog so costs one shared read of the counter per request,
// whether clients revalidate or not. The counter is read before the
// handler's query, so a remembered body may be newer than its counter,
// never older: a race costs an extra query, never a stale answer. Bodies
// are kept within a memory budget (servedBudget); a body over it is only
// tagged.
type Conditional struct {
	version func(ctx context.Context) (int64, error)
	served  *sizedLRU[servedAnswer]
}

// NewConditional guards routes whose shown data changes with the counter
// version reads.
func NewConditional(version func(ctx context.Context) (int64, error)) *Conditional {
	return &Conditional{version: version, served: newSizedLRU(servedEntries, servedBudget, func(a servedAnswer) int {
		return len(a.body) + len(a.link) + len(a.etag) + len(a.contentType) + 64
	})}
}

// servedAnswer is what a guarded route last answered for one key.
type servedAnswer struct {
	version     int64
	etag        string // quoted
	link        string // the Link header of that answer, repeated on a 304
	contentType string
	body        []byte // nil when it was too large to keep
}

// servedEntries and servedBudget bound the remembered answers: the query is
// the caller's to choose. A page of 20 pets is about 8 KiB.
const (
	servedEntries = 4096
	servedBudget  = 8 << 20
)

// Handler is the middleware; put it just before the route's handler.
func (cd *Conditional) Handler(c *fiber.Ctx) error {
	inm := c.Get(fiber.HeaderIfNoneMatch)
	key := servedTagKey(c)
	version, err := cd.version(c.UserContext())
	if err != nil {
		return err
	}
	if served, ok := cd.served.get(key); ok && served.version == version {
		if served.link != "" {
			c.Set(fiber.HeaderLink, served.link)
		}
		if tag, ok := matchTag(inm, served.etag); ok {
			return notModified(c, tag)
		}
		if served.body != nil {
			c.Set(fiber.HeaderETag, served.etag)
			c.Response().Header.SetContentType(served.contentType)
			c.Response().SetBody(served.body) // a copy: the kept body is shared
			return c.SendStatus(fiber.StatusOK)
		}
	}
	if err := c.Next(); err != nil {
		return err
	}
	etag, ok := setBodyTag(c)
	if !ok {
		return nil
	}
	answer := servedAnswer{version: version, etag: etag, link: strings.Clone(c.GetRespHeader(fiber.HeaderLink)),
		contentType: string(c.Response().Header.ContentType())}
	if body := c.Response().Body(); len(body) <= servedBudget/8 {
		answer.body = bytes.Clone(body)
	}
	cd.served.add(strings.Clone(key), answer)
	if tag, ok := matchTag(inm, etag); ok {
		return notModified(c, tag)
	}
	return nil
}

// servedTagKey names what decides the body: the route, the query as sent
// and the caller's role.
func servedTagKey(c *fiber.Ctx) string {
	role := ""
	if k := CurrentKey(c); k != nil {
		role = k.Role
	}
	return c.Path() + "?" + string(c.Request().URI().QueryString()) + "#" + role
}

// setBodyTag sets the strong ETag of a 200's body and returns it.
func setBodyTag(c *fiber.Ctx) (string, bool) {
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
	_, ok := matchTag(c.Get(fiber.HeaderIfNoneMatch), etag)
	return ok
}

// NotModified answers 304 with etag and the headers set so far, no body.
func NotModified(c *fiber.Ctx, etag string) error { return notModified(c, etag) }

// notModified turns the answer into a 304 for the client's tag.
func notModified(c *fiber.Ctx, tag string) error {
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

// matchTag reports whether the If-None-Match value names etag, in any of
// its codings (weak comparison, RFC 9110 §13.1.2), and returns the tag the
// client holds: the one a 304 carries.
func matchTag(ifNoneMatch, etag string) (string, bool) {
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
