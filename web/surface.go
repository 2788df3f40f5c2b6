package web

import "github.com/gofiber/fiber/v2"

// ErrorRenderer writes the answer to a failed request of one surface (the
// API, the storefront, the console). The error handler has set the status
// and the request id; p is what may be shown.
type ErrorRenderer func(c *fiber.Ctx, p Problem) error

// Surface is what an audience tells the error handler and the request log
// about the requests it takes. Its Mark is the first handler of each of
// the audience's routes, so a request refused anywhere in the chain (CSRF,
// the limiter, a handler) is answered by the audience's renderer.
type Surface struct {
	// Errors renders the audience's error answers; nil means the Error object.
	Errors ErrorRenderer
	// Prefix is the path prefix of the audience's fallback for paths no
	// route takes ("/api"): its requests are logged as "unmatched".
	Prefix string
}

type surfaceLocal struct{}

// Mark makes s the request's surface.
func (s *Surface) Mark(c *fiber.Ctx) error {
	c.Locals(surfaceLocal{}, s)
	return c.Next()
}

// Default makes s the request's surface unless a group marked it already:
// for the app's last handler, which answers paths no route serves.
func (s *Surface) Default(c *fiber.Ctx) error {
	if surfaceOf(c) == nil {
		c.Locals(surfaceLocal{}, s)
	}
	return c.Next()
}

// surfaceOf is the request's surface, nil when no group marked it.
func surfaceOf(c *fiber.Ctx) *Surface {
	s, _ := c.Locals(surfaceLocal{}).(*Surface)
	return s
}

// routeTemplate is the pattern of the route the request was for
// ("/api/pets/:petId"), so metrics and logs stay bounded whatever paths
// clients send. Every route carries its audience's whole chain, so a
// request its middleware refused (a 429, a CSRF failure) is still named by
// its route; requests no route has share the label "unmatched".
func routeTemplate(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "" || r.Path == "/" && c.Path() != "/" {
		return "unmatched" // only the app's own middleware ran
	}
	if s := surfaceOf(c); s != nil && s.Prefix != "" && r.Path == s.Prefix && c.Path() != s.Prefix {
		return "unmatched" // the audience's fallback answered
	}
	return r.Path
}
