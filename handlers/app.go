package handlers

import (
	"cmp"

	"github.com/gofiber/fiber/v2"

	"petstore/handlers/api"
	"petstore/handlers/console"
	"petstore/handlers/shop"
	"petstore/static"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/email"
	"petstore/web/imports"
	"petstore/web/photo"
	"petstore/web/queue"
	"petstore/web/webhooks"
)

// NewApp builds the whole app over h: error handling, static assets, the
// three audiences, each given the parts it uses, and every route. It does
// not listen.
func NewApp(h *Handler) (*fiber.App, error) {
	if h.Now == nil {
		panic("handlers: Handler.Now is nil; give it the clock the store reads")
	}
	photos := h.Photos
	if photos == nil {
		photos = photo.NewWorker()
	}
	imp, hooks, mails, q, err := h.jobs()
	if err != nil {
		return nil, err
	}
	a, err := api.New(api.Config{
		Store: h.Store, Limiter: h.Limiter, Proxies: h.Proxies, Events: h.Events, Logger: h.Logger, Now: h.Now,
		Deprecated: h.Config.Deprecated, Sunset: h.Config.Sunset, Metrics: h.Metrics, PhotoLimits: h.Config.PhotoLimits, Photos: photos,
		Imports: imp, Deliveries: hooks,
	})
	if err != nil {
		return nil, err
	}
	// The per-IP limit of browser form posts: the shop's forms and the
	// console's sign-in count in one bucket of their own.
	formLimit := browser.WebLimit(h.Limiter, h.Proxies, h.Logger)
	s := shop.New(shop.Handler{
		Store: h.Store, Sessions: h.Sessions, Metrics: h.Metrics, FormLimit: formLimit,
		MaxOpenUnits: cmp.Or(h.Config.ShopMaxOpenUnits, DefaultShopMaxOpenUnits),
	})
	con := console.New(console.Handler{
		Store: h.Store, Sessions: h.Sessions, Limiter: h.Limiter, Shared: h.Shared, FormLimit: formLimit,
		Proxies: h.Proxies, Events: h.Events, Logger: h.Logger, Now: h.Now, PhotoLimits: h.Config.PhotoLimits, Photos: photos,
		TwoFactorRequired: h.Config.StaffTwoFactorRequired, PasswordCost: h.Config.PasswordCost,
		Imports: imp, Deliveries: hooks, Mail: mails, Queue: q,
	})

	app, routes := web.NewApp(web.AppOptions{Logger: h.Logger, Metrics: h.Metrics, Proxies: h.Proxies, Load: h.Load, Tracer: h.Tracer})
	app.Use("/static", web.StaticAssets(static.Assets(), static.Version))
	app.Get("/favicon.ico", favicon)
	h.routes(app, routes, a, s, con)
	return app, nil
}

// jobs returns h's kinds of job and their queue, made over a queue of
// their own (never started) when h has none.
func (h *Handler) jobs() (*imports.Imports, *webhooks.Deliveries, *email.Emails, *queue.Queue, error) {
	if h.Imports != nil && h.Deliveries != nil && h.Emails != nil && h.Queue != nil {
		return h.Imports, h.Deliveries, h.Emails, h.Queue, nil
	}
	q := queue.New(h.Store, queue.Config{Logger: h.Logger})
	imp, err := imports.New(h.Store, q, h.Logger)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	hooks, err := webhooks.New(q, webhooks.Config{Store: h.Store, Now: h.Now, Logger: h.Logger})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	mails, err := email.New(q, email.Config{Store: h.Store, Now: h.Now, Logger: h.Logger})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return cmp.Or(h.Imports, imp), cmp.Or(h.Deliveries, hooks), cmp.Or(h.Emails, mails), cmp.Or(h.Queue, q), nil
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
