package handlers

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"petstore/static"
	"petstore/web"
)

// NewApp builds the whole app over h: error handling, static assets and
// every route. It does not listen.
func NewApp(h *Handler) *fiber.App {
	if h.Now == nil {
		panic("handlers: Handler.Now is nil; give it the clock the store reads")
	}
	app := web.NewApp(web.AppOptions{Logger: h.Logger, Prepare: h.PrepareAnswer, Metrics: h.Metrics, Proxies: h.Proxies})
	app.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static.FS), MaxAge: 3600}))
	h.Routes(app)
	return app
}
