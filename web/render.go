package web

import (
	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
)

// Render writes a templ component as HTML. Pages pass their full layout
// and their bare partial; htmx requests (HX-Request) get the partial.
func Render(c *fiber.Ctx, full, partial templ.Component) error {
	c.Type("html", "utf-8")
	comp := full
	if partial != nil && IsHTMX(c) {
		comp = partial
	}
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// IsHTMX reports whether htmx made the request.
func IsHTMX(c *fiber.Ctx) bool { return c.Get("HX-Request") == "true" }
