package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// deprecation marks a deprecated operation (SPEC §7). Its answers carry
// `Deprecation: @<unix>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594) and a
// successor link; after the sunset the operation is gone (410). Its route
// line says so (Deprecated), so the headers are on every request Fiber
// routes there, in any letter case.
type deprecation struct {
	since, sunset time.Time
	now           func() time.Time
	successor     func(c *fiber.Ctx) string
}

// mark sets the deprecation headers. It runs before the key and the
// limiter, so every answer carries them, 401 and 429 included.
func (d *deprecation) mark(c *fiber.Ctx) error {
	c.Set("Deprecation", "@"+strconv.FormatInt(d.since.Unix(), 10))
	c.Set("Sunset", d.sunset.UTC().Format(http.TimeFormat))
	c.Append(fiber.HeaderLink, "<"+d.successor(c)+`>; rel="successor-version"`)
	return c.Next()
}

// gone answers 410 endpoint_sunset once the sunset has passed.
func (d *deprecation) gone(c *fiber.Ctx) error {
	if !d.now().Before(d.sunset) {
		return db.Errorf(web.EEndpointSunset, "This operation was retired on %s; use GET /api/pets?ids=.", d.sunset.UTC().Format(time.RFC3339))
	}
	return c.Next()
}

// stability marks an operation's answers with X-API-Stability (SPEC §7).
func stability(level string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("X-API-Stability", level)
		return c.Next()
	}
}
