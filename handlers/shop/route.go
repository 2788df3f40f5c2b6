package shop

import (
	"github.com/gofiber/fiber/v2"

	"petstore/web"
	"petstore/web/browser"
)

// New is the storefront over h's parts. Its chains' middleware is made
// here, once.
func New(h Handler) *Handler {
	h.surface = &web.Surface{Errors: h.RenderError}
	h.csrf = browser.CSRF(h.Sessions, SessionName)
	h.catalog = newRendered(func(h renderedHTML) int { return len(h) })
	h.pages = newRendered(func(p taggedPage) int { return len(p.html) + len(p.etag) })
	h.pets = newRendered(func(p *petRendered) int { return len(p.head) + len(p.tail) + petViewSize })
	return &h
}

// Route is the line of the route table for method and path: handler
// behind the shop's chain. Every route gets its error answers
// (RenderError), the security headers (CSP 'self'), the body
// (web.ReadBody: CSRF reads the form), CSRF on unsafe methods, the per-IP limit of form posts (every POST, before it reads
// the database) and the shopper's session. The chain is the route's own,
// so it never runs for paths the shop does not own.
func (h *Handler) Route(method, path string, handler fiber.Handler) web.Route {
	return web.Route{Method: method, Path: path, Handlers: []fiber.Handler{h.surface.Mark, web.SecurityHeaders, web.ReadBody, h.csrf, h.FormLimit, h.Session, handler}}
}
