// Package api serves the JSON API of SPEC §2-§8 under /api: the catalog,
// the store's orders and inventory, API keys, rate limits and the event
// stream. Handlers return errors; web.ErrorHandler answers them with the
// Error object.
package api

import (
	"log/slog"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/events"
	"petstore/web/photo"
	"petstore/web/ratelimit"
)

// Handler serves the API's routes. Its fields are set once at start.
type Handler struct {
	Store   *db.Store
	Limiter *ratelimit.Limiter
	Proxies ratelimit.TrustedProxies
	Events  *events.Hub
	Logger  *slog.Logger
	// Sunset is when GET /pets/{petId} goes; the OpenAPI document says so.
	Sunset time.Time
	// Metrics, when set, counts limiter outcomes and placed orders.
	Metrics *web.Metrics
	// PhotoLimits bound what a photo upload may cost; zero fields take
	// SPEC §14's (photo.DefaultLimits).
	PhotoLimits photo.Limits

	apiLimitOnce sync.Once
	apiLimit     *web.APILimit

	conditionalOnce sync.Once
	conditional     *web.Conditional

	docOnce sync.Once
	doc     []byte
	docErr  error
}

// Limit is the API's rate limit (web.APILimit over Limiter): every request
// but GET /api/rate-limit counts against its key, or its IP without one.
func (h *Handler) Limit(c *fiber.Ctx) error {
	return h.limit().Handler(c)
}

// limit is the API's web.APILimit, built from the Handler's fields once.
func (h *Handler) limit() *web.APILimit {
	h.apiLimitOnce.Do(func() {
		h.apiLimit = &web.APILimit{
			Limiter: h.Limiter, Proxies: h.Proxies, Logger: h.Logger,
			Exempt: isRateLimitStatus, Metrics: h.Metrics,
		}
	})
	return h.apiLimit
}

// Conditional answers If-None-Match on the catalog and inventory GETs
// (web.Conditional over the store's catalog change counter).
func (h *Handler) Conditional(c *fiber.Ctx) error {
	h.conditionalOnce.Do(func() { h.conditional = web.NewConditional(h.Store.CatalogVersion) })
	return h.conditional.Handler(c)
}

// Idempotent honours Idempotency-Key on the POSTs it guards (web.Idempotency).
func (h *Handler) Idempotent() fiber.Handler { return web.Idempotency(h.Store, h.Logger) }

// ordersPlaced counts placed orders in the metrics.
func (h *Handler) ordersPlaced(n int) {
	if h.Metrics != nil {
		h.Metrics.OrdersPlaced(n)
	}
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
