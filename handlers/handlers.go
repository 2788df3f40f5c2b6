// Package handlers holds the pet store's HTTP handlers for its three
// audiences: the JSON API (api_*.go), the storefront (shop_*.go) and the
// staff console (console_*.go). routes.go is the only route table.
package handlers

import (
	"log/slog"
	"sync"
	"time"

	"petstore/db"
	"petstore/web"
	"petstore/web/events"
	"petstore/web/ratelimit"
)

// Config is what the handlers need to know about the deployment.
type Config struct {
	// Deprecated is when GET /pets/{petId} was deprecated; Sunset when it goes.
	Deprecated time.Time
	Sunset     time.Time
	// ShopMaxOpenUnits is the most units one storefront shopper may hold
	// in open orders (PETSTORE_SHOP_MAX_OPEN_UNITS); 0 means
	// DefaultShopMaxOpenUnits.
	ShopMaxOpenUnits int64
}

// DefaultShopMaxOpenUnits is PETSTORE_SHOP_MAX_OPEN_UNITS' default (SPEC §11).
const DefaultShopMaxOpenUnits = 10

// Handler serves every route. Its fields are set once at start.
type Handler struct {
	Store   *db.Store
	Limiter *ratelimit.Limiter
	// Shared is the Redis counter store behind its in-process fallback,
	// nil when counting in process only.
	Shared  *ratelimit.FailoverStore
	Proxies ratelimit.TrustedProxies
	Events  *events.Hub
	// Sessions keeps the storefront's and the console's cookies.
	Sessions *web.Sessions
	Logger   *slog.Logger
	Config   Config
	// Now is the clock, required: the one cmd makes and also hands to the
	// store and the limiter, so a test pins all of them in one place.
	Now func() time.Time
	// Metrics, when set, measures requests, limits and orders.
	Metrics *web.Metrics

	limiterOnce sync.Once
	limiter     *web.RateLimiter

	docOnce sync.Once
	doc     []byte
	docErr  error
}

// ordersPlaced counts placed orders in the metrics.
func (h *Handler) ordersPlaced(n int) {
	if h.Metrics != nil {
		h.Metrics.OrdersPlaced(n)
	}
}
