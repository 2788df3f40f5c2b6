package handlers

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"petstore/static"
	"petstore/views"
	"petstore/web"
)

// NewApp builds the whole app over h: error handling, static assets and
// every route. It does not listen.
func NewApp(h *Handler) *fiber.App {
	if h.Now == nil {
		panic("handlers: Handler.Now is nil; give it the clock the store reads")
	}
	app := web.NewApp(web.AppOptions{Logger: h.Logger, Prepare: h.PrepareAnswer, Page: errorPage, Metrics: h.Metrics})
	app.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static.FS), MaxAge: 3600}))
	h.Routes(app)
	return app
}

// Words of the 503 page (SPEC §2: the database is unavailable), for the
// people each surface serves; web.ErrorHandler has set Retry-After.
const (
	shopUnavailable    = "The shop cannot reach its database just now. Nothing was changed; please try again in a few seconds."
	consoleUnavailable = "The console cannot reach the database just now. Nothing was changed; try again in a few seconds."
)

// errorPage renders the error page for browsers (a fragment for htmx).
func errorPage(c *fiber.Ctx, p web.Problem) error {
	v := views.ErrorView{Status: p.Status, Message: p.Message, RequestID: p.RequestID,
		Console: c.Path() == "/staff" || strings.HasPrefix(c.Path(), "/staff/")}
	if p.Status == http.StatusServiceUnavailable {
		v.Message = shopUnavailable
		if v.Console {
			v.Message = consoleUnavailable
		}
		v.RetryURL = retryURL(c)
	}
	return web.Render(c, views.ErrorPage(v), views.ErrorFragment(v))
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
