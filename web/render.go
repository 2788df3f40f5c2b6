package web

import (
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/views"
)

// Render writes a templ component as the answer's HTML.
func Render(c *fiber.Ctx, comp templ.Component) error {
	c.Type("html", "utf-8")
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// RenderPage writes a page that htmx also asks for in part: page, its
// full layout, to a browser's navigation, part to an htmx request
// (HX-Request: a list's rows, a live panel).
func RenderPage(c *fiber.Ctx, page, part templ.Component) error {
	if IsHTMX(c) {
		return Render(c, part)
	}
	return Render(c, page)
}

// IsHTMX reports whether htmx made the request.
func IsHTMX(c *fiber.Ctx) bool { return c.Get("HX-Request") == "true" }

// ErrorPage renders p as the plain error page of a browser surface (the
// bare error for htmx); console says it belongs to the staff console. On
// a 503 it shows a link to try the page again and, for an outage (the
// database is unavailable), unavailable: words for the people that
// surface serves. A client that asks for JSON gets the Error object.
func ErrorPage(c *fiber.Ctx, p Problem, console bool, unavailable string) error {
	if WantsJSON(c) {
		return SendProblem(c, p)
	}
	v := views.ErrorView{Status: p.Status, Message: p.Message, RequestID: p.RequestID, Console: console}
	if p.Status == fiber.StatusServiceUnavailable {
		v.RetryURL = retryURL(c)
		if p.Outage {
			v.Message = unavailable
		}
	}
	return RenderPage(c, views.ErrorPage(v), views.ErrorFragment(v))
}

// retryURL is the address to try a failed page again: the request's own,
// when it was a GET of a local path ("//host" would leave the site).
func retryURL(c *fiber.Ctx) string {
	u := c.OriginalURL()
	if c.Method() != fiber.MethodGet || !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") || strings.HasPrefix(u, "/\\") {
		return ""
	}
	return u
}
