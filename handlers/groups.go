package handlers

import (
	"regexp"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// group is a route group that knows its routes' methods and templates.
// Its first middleware marks its requests with its web.Surface: the
// error renderer, and the route a request was for when the group's own
// middleware answered it (a 429, a CSRF refusal) before a route took it,
// so metrics and logs name that route. The API's fallback uses the same
// knowledge to tell 405 (with Allow) from 404: Fiber v2 does not.
type group struct {
	fiber.Router
	prefix string
	routes []groupRoute
}

type groupRoute struct {
	method, template string
	re               *regexp.Regexp
}

var paramSegment = regexp.MustCompile(`:[A-Za-z]+`)

// newGroup makes the group under prefix; errors renders its error answers
// (nil: the Error object) and middleware runs for every path under prefix.
func newGroup(app *fiber.App, prefix string, errors web.ErrorRenderer, middleware ...fiber.Handler) *group {
	g := &group{prefix: prefix}
	s := &web.Surface{Errors: errors, Prefix: prefix, Route: g.template}
	g.Router = app.Group(prefix, append([]fiber.Handler{s.Mark}, middleware...)...)
	return g
}

// add registers a route, and for GET its HEAD as fiber.Router.Get does.
func (g *group) add(method, path string, hs ...fiber.Handler) {
	g.Add(method, path, hs...)
	if method == fiber.MethodGet {
		g.Add(fiber.MethodHead, path, hs...)
	}
	template := g.prefix + path // as Fiber names it
	pattern := "^" + paramSegment.ReplaceAllString(regexp.QuoteMeta(strings.TrimSuffix(template, "/")), `[^/]+`) + "/?$"
	g.routes = append(g.routes, groupRoute{method: method, template: template, re: regexp.MustCompile(pattern)})
}

// template is the template of the group's route for the request's method
// and path, "" when it has none.
func (g *group) template(c *fiber.Ctx) string {
	method := c.Method()
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	for _, rt := range g.routes {
		if rt.method == method && rt.re.MatchString(c.Path()) {
			return rt.template
		}
	}
	return ""
}

// methodFallback answers every request under the group no route took:
// 405 with Allow when the path exists under another method, else 404
// with notFound.
func (g *group) methodFallback(notFound string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		seen := map[string]bool{}
		for _, rt := range g.routes {
			if rt.re.MatchString(c.Path()) {
				seen[rt.method] = true
				if rt.method == fiber.MethodGet {
					seen[fiber.MethodHead] = true
				}
			}
		}
		if len(seen) == 0 {
			return db.Errorf(db.ENotFound, "%s", notFound)
		}
		allow := make([]string, 0, len(seen))
		for m := range seen {
			allow = append(allow, m)
		}
		sort.Strings(allow)
		c.Set(fiber.HeaderAllow, strings.Join(allow, ", "))
		return db.Errorf(web.EMethodNotAllowed, "%s is not allowed here; allowed: %s.", c.Method(), strings.Join(allow, ", "))
	}
}
