package api

import (
	"github.com/gofiber/fiber/v2"

	"petstore/web"
)

// Who may call an operation (SPEC §3).
type Who int

const (
	// Anyone, without a key; a key that is presented must still be valid.
	Anyone Who = iota
	// Customer: any valid key.
	Customer
	// Staff: a staff key.
	Staff
)

// Option is a property of one API route, written on its line of the
// route table.
type Option func(*routeOptions)

type routeOptions struct {
	who         Who
	deprecated  func(c *fiber.Ctx) string
	stability   string
	notCounted  bool
	conditional bool
	idempotent  bool
	body        web.Body
	checks      []fiber.Handler
	streaming   bool
}

// For says who may call the route (Anyone when not given).
func For(who Who) Option { return func(o *routeOptions) { o.who = who } }

// Deprecated marks the route deprecated (SPEC §7); successor is the
// address of what replaces the request's resource.
func Deprecated(successor func(c *fiber.Ctx) string) Option {
	return func(o *routeOptions) { o.deprecated = successor }
}

// Stability marks the route's answers with X-API-Stability (beta,
// experimental).
func Stability(level string) Option { return func(o *routeOptions) { o.stability = level } }

// NotCounted: a request with a valid key does not count against its
// limits (GET /rate-limit); it still gets the headers.
func NotCounted() Option { return func(o *routeOptions) { o.notCounted = true } }

// Conditional: the route answers If-None-Match and is served from the
// remembered answers while the catalog is unchanged (SPEC §2).
func Conditional() Option { return func(o *routeOptions) { o.conditional = true } }

// Idempotent: the route honours Idempotency-Key (SPEC §5).
func Idempotent() Option { return func(o *routeOptions) { o.idempotent = true } }

// Body is the request body the route takes (web.Route.Body) when it is
// not MaxBody read whole: a photo's 8 MiB, a catalog import's streamed
// file.
func Body(b web.Body) Option { return func(o *routeOptions) { o.body = b } }

// Check runs h after the key and the role, before the body is read (the
// content type of an upload).
func Check(h fiber.Handler) Option { return func(o *routeOptions) { o.checks = append(o.checks, h) } }

// Streaming: the route answers with an open stream (web.Route.Streaming).
func Streaming() Option { return func(o *routeOptions) { o.streaming = true } }

// Route is the line of the route table for method and path (under
// Prefix): handler behind the API's chain as its options make it. Every
// route has the whole chain (request id and version headers, the
// deprecation headers, the key, the limit), so whatever refuses a
// request, its answer is the route's. The body is read (or refused: 413,
// 415) only after the key, the limit, the role and the route's checks
// have passed (web.ReadBody).
func (h *Handler) Route(method, path string, handler fiber.Handler, opts ...Option) web.Route {
	var o routeOptions
	for _, opt := range opts {
		opt(&o)
	}
	chain := []fiber.Handler{h.surface.Mark, headers}
	if o.who != Anyone {
		// The answer depends on the key (SPEC §17); the catalog's tagged
		// answers are the same for every key (conditional unmarks them).
		chain = append(chain, web.PrivateAnswer)
	}
	var dep *deprecation
	if o.deprecated != nil {
		dep = &deprecation{since: h.Deprecated, sunset: h.Sunset, now: h.Now, successor: o.deprecated}
		chain = append(chain, dep.mark)
	}
	chain = append(chain, h.resolveKey, h.limit.handler(o.notCounted))
	if dep != nil {
		chain = append(chain, dep.gone)
	}
	if o.stability != "" {
		chain = append(chain, stability(o.stability))
	}
	chain = append(chain, access[o.who])
	if o.conditional {
		chain = append(chain, h.conditional.handler)
	}
	chain = append(chain, o.checks...)
	chain = append(chain, web.ReadBody)
	if o.idempotent {
		chain = append(chain, h.idempotent)
	}
	chain = append(chain, handler)
	return web.Route{Method: method, Path: Prefix + path, Handlers: chain, Body: o.body, Streaming: o.streaming}
}

// access is the check of each Who.
var access = map[Who]fiber.Handler{Anyone: rejectBadKey, Customer: requireKey, Staff: requireStaff}

// Fallback answers /api paths no route takes (404, or 405 with Allow),
// behind the same chain as every route, so the answer is counted and
// carries every header.
func (h *Handler) Fallback(routes *web.Routes) []fiber.Handler {
	return []fiber.Handler{h.surface.Mark, headers, web.PrivateAnswer, h.resolveKey, h.limit.handler(false), routes.MethodFallback("No such API route.")}
}

// headers stamps every /api answer with the request id, the API version
// and nosniff, errors included.
func headers(c *fiber.Ctx) error {
	setHeaders(c)
	return c.Next()
}

// setHeaders sets the headers of headers outside the middleware chain.
func setHeaders(c *fiber.Ctx) {
	web.SetRequestID(c)
	c.Set("X-API-Version", Version)
	c.Set("X-Content-Type-Options", "nosniff")
}
