package console

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/browser"
)

// Prefix is where the console is mounted.
const Prefix = "/staff"

// Option is a property of one console route, written on its line of the
// route table.
type Option func(*routeOptions)

type routeOptions struct {
	public    bool
	formLimit bool
	checks    []fiber.Handler
	body      web.Body
	streaming bool
	admin     bool
	steps     []Step
}

// Public: the route needs no signed-in staff user (the sign-in page and form).
func Public() Option { return func(o *routeOptions) { o.public = true } }

// Admin: only staff with the admin role may use the route (SPEC §16); a
// clerk gets the console's 403 page.
func Admin() Option { return func(o *routeOptions) { o.admin = true } }

// Setup: the route also serves a signed-in user who must first take one of
// steps (choose their own password, turn on two-factor sign-in), whom
// every other route sends to the step's page.
func Setup(steps ...Step) Option {
	return func(o *routeOptions) { o.steps = append(o.steps, steps...) }
}

// FormLimited: the route's posts count against the per-IP form limit
// before any database lookup or bcrypt (the sign-in form).
func FormLimited() Option { return func(o *routeOptions) { o.formLimit = true } }

// Check runs h before the route's handler, after the sign-in.
func Check(h fiber.Handler) Option { return func(o *routeOptions) { o.checks = append(o.checks, h) } }

// Body is the request body the route takes (web.Route.Body) when it is
// not MaxBody read whole: a file upload's, streamed and read part by part
// (browser.UploadParts).
func Body(b web.Body) Option { return func(o *routeOptions) { o.body = b } }

// Streaming: the route answers with an open stream (web.Route.Streaming).
func Streaming() Option { return func(o *routeOptions) { o.streaming = true } }

// New is the console over h's parts. Its chains' middleware is made here,
// once: every route has the console's error page, the security headers,
// no caching, the body (web.ReadBody) and CSRF, then the sign-in unless it
// is Public. The body goes before CSRF, which reads its token from the
// form: an upload's streamed body is only checked there (a body announced
// past the limit is 413, none of it read; CSRF then reads the token part
// alone, see browser.CSRF).
func New(h Handler) *Handler {
	h.surface = &web.Surface{Prefix: Prefix}
	h.surface.Errors = h.renderError
	h.csrf = browser.CSRF(h.Sessions, SessionName)
	return &h
}

// Route is the line of the route table for method and path (under
// Prefix): handler behind the console's chain as its options make it.
func (h *Handler) Route(method, path string, handler fiber.Handler, opts ...Option) web.Route {
	var o routeOptions
	for _, opt := range opts {
		opt(&o)
	}
	chain := []fiber.Handler{h.surface.Mark, web.SecurityHeaders, NoStore, web.ReadBody, h.csrf}
	if o.formLimit {
		chain = append(chain, h.FormLimit)
	}
	if !o.public {
		chain = append(chain, h.RequireStaff(o.steps...))
	}
	if o.admin {
		chain = append(chain, requireAdmin)
	}
	chain = append(chain, o.checks...)
	chain = append(chain, handler)
	return web.Route{Method: method, Path: Prefix + path, Handlers: chain, Body: o.body, Streaming: o.streaming}
}

// Fallback answers console paths no route takes: the console's 404 page,
// behind the same headers and CSRF check as every console route.
func (h *Handler) Fallback() []fiber.Handler {
	return []fiber.Handler{h.surface.Mark, web.SecurityHeaders, NoStore, h.csrf, func(c *fiber.Ctx) error {
		return db.Errorf(db.ENotFound, "There is no page at this address.")
	}}
}

// errAdminOnly refuses a clerk an admin page or form.
var errAdminOnly = db.Errorf(db.EForbidden, "This page is for admins.")

// requireAdmin lets only admins through (after RequireStaff).
func requireAdmin(c *fiber.Ctx) error {
	if u := currentStaff(c); u == nil || !u.IsAdmin() {
		return errAdminOnly
	}
	return c.Next()
}
