package web

import "github.com/gofiber/fiber/v2"

// ErrorRenderer writes the answer to a failed request of one surface (the
// API, the storefront, the console). The error handler has set the status
// and the request id; p is what may be shown.
type ErrorRenderer func(c *fiber.Ctx, p Problem) error

// Surface is what a route group tells the error handler and the request
// log about the requests it takes. Its Mark is the group's first
// middleware, so a request refused anywhere in the group (CSRF, the
// limiter, a handler) is answered by the group's renderer.
type Surface struct {
	// Errors renders the group's error answers; nil means the Error object.
	Errors ErrorRenderer
	// Prefix is the group's path prefix ("/api"), Route the name of the
	// route template a request was for when the group's middleware answered
	// it before any route took it (a 429 from the limiter): "" when no
	// route of the group has that method and path.
	Prefix string
	Route  func(c *fiber.Ctx) string
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
// clients send. A request a group's middleware answered before a route
// took it is named by the group (Surface.Route); requests no route has
// share the label "unmatched".
func routeTemplate(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "" || r.Path == "/" && c.Path() != "/" {
		return "unmatched" // only the app's own middleware ran
	}
	if s := surfaceOf(c); s != nil && r.Path == s.Prefix && c.Path() != s.Prefix {
		// The group's middleware answered; the route is the one it was for.
		if s.Route != nil {
			if t := s.Route(c); t != "" {
				return t
			}
		}
		return "unmatched"
	}
	return r.Path
}
