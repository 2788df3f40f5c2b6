package handlers

import (
	"github.com/gofiber/fiber/v2"

	"petstore/static"
	"petstore/web"
)

// NewApp builds the whole app over h: error handling, static assets and
// every route. It does not listen.
func NewApp(h *Handler) *fiber.App {
	if h.Now == nil {
		panic("handlers: Handler.Now is nil; give it the clock the store reads")
	}
	h.bodies = &web.BodyLimits{}
	app := web.NewApp(web.AppOptions{Logger: h.Logger, Prepare: h.PrepareAnswer, Metrics: h.Metrics, Proxies: h.Proxies, Bodies: h.bodies})
	app.Use("/static", web.StaticAssets(static.Assets(), static.Version))
	app.Get("/favicon.ico", favicon)
	h.Routes(app)
	return app
}

// favicon answers the browsers that ask for /favicon.ico without reading
// the page's <link rel="icon">: the paw (static/img/favicon.svg), for a day.
func favicon(c *fiber.Ctx) error {
	b, err := static.FS.ReadFile("img/favicon.svg")
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
	c.Type("svg")
	return c.Send(b)
}
