package api

import (
	"bytes"
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/web"
	"petstore/web/lru"
)

// conditional serves the conditional GETs of SPEC §2 on the routes it
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
type conditional struct {
	version func(ctx context.Context) (int64, error)
	served  *lru.Sized[servedAnswer]
}

// newConditional guards routes whose shown data changes with the counter
// version reads.
func newConditional(version func(ctx context.Context) (int64, error)) *conditional {
	return &conditional{version: version, served: lru.NewSized(servedEntries, servedBudget, func(a servedAnswer) int {
		return len(a.body) + len(a.link) + len(a.etag) + len(a.contentType) + servedOverhead
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
// the caller's to choose. The budget is what bounds memory: a page of 20
// pets is about 8 KiB, so about a thousand pages fit. The entry cap is for
// the small answers (a pet, an item of stock: about 200 bytes with their
// tag and the servedOverhead each is charged for the LRU's element, map
// slot and key), so that a catalog of 16,000 pets fits whole, one answer a
// pet, at about 7 MiB.
const (
	servedEntries  = 16384
	servedBudget   = 8 << 20
	servedOverhead = 256
)

// handler is the middleware; put it just before the route's handler.
func (cd *conditional) handler(c *fiber.Ctx) error {
	inm := c.Get(fiber.HeaderIfNoneMatch)
	key := servedTagKey(c)
	version, err := cd.version(c.UserContext())
	if err != nil {
		return err
	}
	if served, ok := cd.served.Get(key); ok && served.version == version {
		shared(c)
		if served.link != "" {
			c.Set(fiber.HeaderLink, served.link)
		}
		if tag, ok := web.MatchTag(inm, served.etag); ok {
			return web.NotModified(c, tag)
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
	etag, ok := web.SetBodyTag(c)
	if !ok {
		return nil
	}
	shared(c)
	answer := servedAnswer{version: version, etag: etag, link: strings.Clone(c.GetRespHeader(fiber.HeaderLink)),
		contentType: string(c.Response().Header.ContentType())}
	if body := c.Response().Body(); len(body) <= servedBudget/8 {
		answer.body = bytes.Clone(body)
	}
	cd.served.Add(strings.Clone(key), answer)
	if tag, ok := web.MatchTag(inm, etag); ok {
		return web.NotModified(c, tag)
	}
	return nil
}

// servedTagKey names what decides the body: the route, the query as sent
// and the caller's role.
func servedTagKey(c *fiber.Ctx) string {
	role := ""
	if k := currentKey(c); k != nil {
		role = k.Role
	}
	return c.Path() + "?" + string(c.Request().URI().QueryString()) + "#" + role
}

// shared unmarks a tagged answer private: it is the same for every key
// (SPEC §17), unlike the route's refusals, which stay private, no-store.
func shared(c *fiber.Ctx) { c.Response().Header.Del(fiber.HeaderCacheControl) }
