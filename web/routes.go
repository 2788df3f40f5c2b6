package web

import (
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// Route is one line of the route table: the method, the Fiber path
// template, the chain that serves it, and what the app core must know of
// the route before (or beside) its chain: how large a body it takes and
// whether it answers with a stream. Each audience (the API, the shop, the
// console) turns its own options into a Route; no other file describes a
// route by its path.
type Route struct {
	Method string
	// Path is the whole template, prefix included ("/api/pets/:petId").
	Path     string
	Handlers []fiber.Handler
	// Body is the largest request body the route takes; 0 is MaxBody. A
	// route given more reads its body itself, with ReadBody or
	// UploadParts placed after the checks that need none, within
	// StreamedReadTimeout (see BodyLimits).
	Body int64
	// Streaming routes answer with a stream that stays open (an event
	// stream): never compressed, never buffered.
	Streaming bool
}

// Routes is the app's route table as registered. It registers each line
// with Fiber (a GET also answers HEAD, as fiber.Router.Get does) and keeps
// a matcher for it, so the parts that look at a request before or after
// Fiber routes it (the body limits at the header, the 405 of a path that
// has other methods) read the same line.
type Routes struct {
	app   *fiber.App
	lines []routeLine
}

// routeLine is a registered route and its path matcher.
type routeLine struct {
	Route
	match *regexp.Regexp
}

// routeParam is a parameter segment of a Fiber route template.
var routeParam = regexp.MustCompile(`:[A-Za-z]+`)

// templateMatcher matches the paths Fiber routes to template: any letter
// case (Fiber's default), with or without a trailing slash.
func templateMatcher(template string) *regexp.Regexp {
	return regexp.MustCompile("(?i)^" + routeParam.ReplaceAllString(regexp.QuoteMeta(strings.TrimSuffix(template, "/")), `[^/]+`) + "/?$")
}

// Add registers r. Call it while the app is built, before it serves.
func (t *Routes) Add(r Route) {
	hs := r.Handlers
	if r.Streaming {
		hs = append([]fiber.Handler{markStreaming}, hs...)
	}
	t.app.Add(r.Method, r.Path, hs...)
	if r.Method == fiber.MethodGet {
		t.app.Add(fiber.MethodHead, r.Path, hs...)
	}
	t.lines = append(t.lines, routeLine{Route: r, match: templateMatcher(r.Path)})
}

// Template is the template of the route for method and path, "" when
// there is none: the name metrics and logs give a request that middleware
// answered before its route's chain (HEAD is GET's).
func (t *Routes) Template(method, path string) string {
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	for _, l := range t.lines {
		if l.Method == method && l.match.MatchString(path) {
			return l.Path
		}
	}
	return ""
}

// Allowed lists the methods some route takes at path (HEAD beside GET),
// sorted: a request no route took is 405 with these as Allow when there
// are any, else 404.
func (t *Routes) Allowed(path string) []string {
	var methods []string
	for _, l := range t.lines {
		if !l.match.MatchString(path) {
			continue
		}
		methods = append(methods, l.Method)
		if l.Method == fiber.MethodGet {
			methods = append(methods, fiber.MethodHead)
		}
	}
	slices.Sort(methods)
	return slices.Compact(methods)
}

// bodyLimit is the most a request for method and path may send, and
// whether its route reads its body itself (Route.Body over MaxBody).
func (t *Routes) bodyLimit(method, path []byte) (int64, bool) {
	for _, l := range t.lines {
		if l.Body > MaxBody && l.Method == string(method) && l.match.Match(path) {
			return l.Body, true
		}
	}
	return MaxBody, false
}

type streamingLocal struct{}

// markStreaming tells the app's middleware (Compress) that the route
// answers with a stream, and takes the request out of the Load.
func markStreaming(c *fiber.Ctx) error {
	c.Locals(streamingLocal{}, true)
	leaveLoad(c)
	return c.Next()
}

// IsStreaming reports whether the request's route answers with a stream
// (Route.Streaming).
func IsStreaming(c *fiber.Ctx) bool {
	s, _ := c.Locals(streamingLocal{}).(bool)
	return s
}

// MethodFallback answers the requests under a prefix that no route took:
// 405 with Allow when the path exists under other methods (Fiber v2 does
// not tell the two apart once a prefix has middleware of its own), else
// 404 with notFound.
func (t *Routes) MethodFallback(notFound string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		allow := t.Allowed(c.Path())
		if len(allow) == 0 {
			return db.Errorf(db.ENotFound, "%s", notFound)
		}
		list := strings.Join(allow, ", ")
		c.Set(fiber.HeaderAllow, list)
		return db.Errorf(EMethodNotAllowed, "%s is not allowed here; allowed: %s.", c.Method(), list)
	}
}

// Fallback answers the requests under prefix that no route took, with
// handlers: an audience's chain ending in its 404 (or MethodFallback).
// Add it after the audience's routes.
func (t *Routes) Fallback(prefix string, handlers []fiber.Handler) {
	args := []any{prefix}
	for _, h := range handlers {
		args = append(args, h)
	}
	t.app.Use(args...)
}
