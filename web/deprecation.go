package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// Deprecation marks every answer of a deprecated operation (SPEC §7):
// `Deprecation: @<unix>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594) and
// the successor link; after the sunset the operation is gone (410).
func Deprecation(since, sunset time.Time, now func() time.Time, successor func(c *fiber.Ctx) string) fiber.Handler {
	dep := "@" + strconv.FormatInt(since.Unix(), 10)
	sun := sunset.UTC().Format(http.TimeFormat)
	return func(c *fiber.Ctx) error {
		c.Set("Deprecation", dep)
		c.Set("Sunset", sun)
		c.Append(fiber.HeaderLink, "<"+successor(c)+`>; rel="successor-version"`)
		if !now().Before(sunset) {
			return db.Errorf(db.EEndpointSunset, "This operation was retired on %s; use %s.", sunset.UTC().Format(time.RFC3339), successor(c))
		}
		return c.Next()
	}
}

// Stability marks an operation's answers with X-API-Stability.
func Stability(level string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("X-API-Stability", level)
		return c.Next()
	}
}
