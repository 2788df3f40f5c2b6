// Package api serves the JSON API of SPEC §2-§8 under /api: the catalog,
// the store's orders and inventory, API keys, rate limits and the event
// stream, and the API's protocol beside them (middleware_*.go: the key,
// the rate limit, idempotency, deprecation and stability, the remembered
// conditional answers; json.go: strict JSON bodies). Handlers return
// errors; web.ErrorHandler answers them with the Error object.
package api

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/events"
	"petstore/web/imports"
	"petstore/web/openapi"
	"petstore/web/photo"
	"petstore/web/ratelimit"
	"petstore/web/webhooks"
)

// Version is the version of the published description (SPEC §2): every
// answer's X-API-Version.
const Version = "1.0.0"

// Prefix is where the API is mounted.
const Prefix = "/api"

// Config is what New builds the API from. Its fields are set once at start.
type Config struct {
	Store   *db.Store
	Limiter *ratelimit.Limiter
	Proxies ratelimit.TrustedProxies
	Events  *events.Hub
	Logger  *slog.Logger
	// Now is the store's clock: the deprecated operation's sunset is read
	// against it.
	Now func() time.Time
	// Deprecated is when GET /pets/{petId} was deprecated; Sunset when it
	// goes (the OpenAPI document says so too).
	Deprecated time.Time
	Sunset     time.Time
	// Metrics, when set, counts limiter outcomes and placed orders.
	Metrics *web.Metrics
	// PhotoLimits bound what a photo upload may cost; zero fields take
	// SPEC §14's (photo.DefaultLimits).
	PhotoLimits photo.Limits
	// Photos processes photo uploads, shared with the console (required
	// for the upload route).
	Photos *photo.Worker
	// Imports checks, stores and reports catalog imports (SPEC §18).
	Imports *imports.Imports
	// Deliveries queues the test events and retries staff ask for (SPEC §15).
	Deliveries *webhooks.Deliveries
}

// Handler serves the API's routes and builds their chains (Route).
type Handler struct {
	Config
	surface     *web.Surface
	limit       *apiLimit
	conditional *conditional
	idempotent  fiber.Handler
	doc         []byte
}

// New builds the API over cfg: its middleware is made here, once, and
// every route's chain is made from it (Route).
func New(cfg Config) (*Handler, error) {
	doc, err := openapi.DocumentWithSunset(cfg.Sunset)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		Config:      cfg,
		surface:     &web.Surface{Prefix: Prefix},
		limit:       &apiLimit{limiter: cfg.Limiter, proxies: cfg.Proxies, logger: cfg.Logger, metrics: cfg.Metrics},
		conditional: newConditional(cfg.Store.CatalogVersion),
		idempotent:  idempotency(cfg.Store, cfg.Logger),
		doc:         doc,
	}
	return h, nil
}

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
