// Package handlers builds the pet store's app: the route table of its
// three audiences, each served by a package of its own (handlers/api, the
// JSON API; handlers/shop, the storefront; handlers/console, the staff
// console), and the health checks. routes.go is the only route table.
package handlers

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"petstore/db"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/email"
	"petstore/web/events"
	"petstore/web/imports"
	"petstore/web/photo"
	"petstore/web/queue"
	"petstore/web/ratelimit"
	"petstore/web/webhooks"
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
	// MetricsElsewhere: /metrics is served on the operations listener
	// (PETSTORE_METRICS_ADDR), so the app has no such route and answers 404.
	MetricsElsewhere bool
	// PhotoLimits bound what a photo upload may cost; zero fields take
	// SPEC §14's (photo.DefaultLimits). Tests under the race detector give
	// the decode more time.
	PhotoLimits photo.Limits
	// StaffTwoFactorRequired: every staff user signs in with a TOTP code,
	// and enrols at their next sign-in (PETSTORE_STAFF_2FA=required).
	StaffTwoFactorRequired bool
	// PasswordCost is the bcrypt cost of staff passwords set in the
	// console; 0 is bcrypt's default. The tests' apps use the lowest.
	PasswordCost int
}

// DefaultShopMaxOpenUnits is PETSTORE_SHOP_MAX_OPEN_UNITS' default (SPEC §11).
const DefaultShopMaxOpenUnits = 10

// Handler is what the app is built from: every part the three audiences'
// handlers share. Its fields are set once at start; NewApp gives each
// audience the ones it uses.
type Handler struct {
	Store   *db.Store
	Limiter *ratelimit.Limiter
	// Shared is the Redis counter store behind its in-process fallback,
	// nil when counting in process only.
	Shared  *ratelimit.FailoverStore
	Proxies ratelimit.TrustedProxies
	Events  *events.Hub
	// Sessions keeps the storefront's and the console's cookies.
	Sessions *browser.Sessions
	Logger   *slog.Logger
	Config   Config
	// Now is the clock, required: the one cmd makes and also hands to the
	// store and the limiter, so a test pins all of them in one place.
	Now func() time.Time
	// Metrics, when set, measures requests, limits and orders.
	Metrics *web.Metrics
	// Photos processes the photo uploads of the API and the console, one
	// at a time with at most photo.MaxWaiting waiting (SPEC §17): one per
	// instance. Nil: NewApp makes one.
	Photos *photo.Worker
	// Load, when set, counts the requests being answered, for the webhook
	// deliveries that give way to them (web.Load).
	Load *web.Load
	// Tracer, when set, makes a span of every request (web.Trace); nil is
	// tracing off.
	Tracer trace.TracerProvider
	// Imports runs the catalog imports (SPEC §18), and Deliveries queues the
	// test events and retries of SPEC §15, both kinds of job of the
	// process's queue (web/queue). Nil: NewApp makes them over a queue of
	// its own that it never starts: their jobs wait for a started queue of
	// any instance.
	Imports    *imports.Imports
	Deliveries *webhooks.Deliveries
	// Queue is the process's queue those kinds register with: the
	// console's Jobs page reads it and retries and cancels its jobs
	// (SPEC §21). Nil: NewApp makes it as it makes Imports.
	Queue *queue.Queue
	// Emails resends emails from the console (SPEC §19); nil: NewApp
	// makes it as it makes Imports, keeping emails in the database.
	Emails *email.Emails
}
