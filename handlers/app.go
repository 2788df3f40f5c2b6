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

// errorPage renders the error page for browsers (a fragment for htmx).
func errorPage(c *fiber.Ctx, p web.Problem) error {
	v := views.ErrorView{Status: p.Status, Message: p.Message, RequestID: p.RequestID,
		Console: c.Path() == "/staff" || strings.HasPrefix(c.Path(), "/staff/")}
	return web.Render(c, views.ErrorPage(v), views.ErrorFragment(v))
}
