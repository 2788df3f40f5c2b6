package web

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// Deprecated is a deprecated operation (SPEC §7). Its answers carry
// `Deprecation: @<unix>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594) and a
// successor link; after the sunset the operation is gone (410).
type Deprecated struct {
	Method string
	// Path matches the operation's paths; its first group is the argument
	// Successor needs.
	Path      *regexp.Regexp
	Since     time.Time
	Sunset    time.Time
	Now       func() time.Time
	Successor func(arg string) string
}

// Mark sets the deprecation headers on requests for the operation. It runs
// before authentication and the limiter, so every answer carries them,
// 401 and 429 included.
func (d *Deprecated) Mark(c *fiber.Ctx) error {
	if c.Method() == d.Method || (d.Method == fiber.MethodGet && c.Method() == fiber.MethodHead) {
		if m := d.Path.FindStringSubmatch(c.Path()); m != nil {
			c.Set("Deprecation", "@"+strconv.FormatInt(d.Since.Unix(), 10))
			c.Set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
			c.Append(fiber.HeaderLink, "<"+d.Successor(m[1])+`>; rel="successor-version"`)
		}
	}
	return c.Next()
}

// Gone answers 410 endpoint_sunset once the sunset has passed.
func (d *Deprecated) Gone(c *fiber.Ctx) error {
	if !d.Now().Before(d.Sunset) {
		return db.Errorf(EEndpointSunset, "This operation was retired on %s; use GET /api/pets?ids=.", d.Sunset.UTC().Format(time.RFC3339))
	}
	return c.Next()
}

// Stability marks an operation's answers with X-API-Stability.
func Stability(level string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("X-API-Stability", level)
		return c.Next()
	}
}
