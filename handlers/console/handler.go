// Package console serves the staff console of SPEC §10 under /staff:
// sign-in, the dashboard, inventory, orders, the catalog, API keys and
// rate-limit use, for signed-in staff. Handlers return errors;
// RenderError answers them with the console's error page.
package console

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

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

// Handler serves the console's routes. Its fields are set once at start.
type Handler struct {
	Store *db.Store
	// Sessions keeps the console's cookie (SessionName).
	Sessions *browser.Sessions
	// Limiter shows keys' use and lifts bans.
	Limiter *ratelimit.Limiter
	// Shared is the Redis counter store behind its in-process fallback,
	// nil when counting in process only: the pages say when it is down.
	Shared *ratelimit.FailoverStore
	// Proxies are believed about the client IP a sign-in counts against.
	Proxies ratelimit.TrustedProxies
	Events  *events.Hub
	Logger  *slog.Logger
	// Now is the clock the pages show times against.
	Now func() time.Time
	// PhotoLimits bound a photo upload (zero fields: SPEC §14's).
	PhotoLimits photo.Limits
	// Photos processes photo uploads, shared with the API (required for
	// the upload route).
	Photos *photo.Worker
	// Imports checks, stores and reports catalog imports (SPEC §18).
	Imports *imports.Imports
	// Deliveries queues the test events and retries staff ask for (SPEC §15).
	Deliveries *webhooks.Deliveries
	// Emails resends emails (SPEC §19).
	Mail *email.Emails
	// Queue is the process's queue: the Jobs page shows, retries and
	// cancels its jobs (SPEC §21).
	Queue *queue.Queue
	// PasswordCost is the bcrypt cost of the passwords the console sets;
	// 0 is bcrypt's default (the tests' apps use the lowest).
	PasswordCost int
	// TwoFactorRequired: every staff user must sign in with two-factor
	// sign-in, and one without it enrols before any other page
	// (PETSTORE_STAFF_2FA=required).
	TwoFactorRequired bool
	// FormLimit counts sign-in posts per client address (browser.WebLimit),
	// in the bucket the shop's forms share.
	FormLimit fiber.Handler

	surface *web.Surface
	csrf    fiber.Handler
}

// hashPassword is the stored form of a password the console sets.
func (h *Handler) hashPassword(password string) (string, error) {
	if h.PasswordCost == 0 {
		return db.HashPassword(password)
	}
	return db.HashPasswordCost(password, h.PasswordCost)
}

// Words of the 503 page (SPEC §2: the database is unavailable) for staff;
// web.ErrorHandler has set Retry-After.
const unavailable = "The console cannot reach the database just now. Nothing was changed; try again in a few seconds."

// RenderError is the console's error renderer (web.ErrorRenderer): the
// error page that links back to the console (the error alone for htmx).
func RenderError(c *fiber.Ctx, p web.Problem) error {
	return web.ErrorPage(c, p, true, unavailable)
}

// NoStore keeps console pages out of caches: they show stock,
// orders and keys.
func NoStore(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, web.PrivateCache)
	return c.Next()
}

// RequireDatabase answers 503 unavailable, through the error handler,
// when the database does not answer a ping: for a page that needs no query
// to render but leads nowhere without one (the sign-in form), so nobody
// types a password into a form that cannot work.
func (h *Handler) RequireDatabase(c *fiber.Ctx) error {
	if err := h.Store.Ping(c.UserContext()); err != nil {
		return err
	}
	return c.Next()
}

// StreamEvents is the event stream of SPEC §8 behind the console's
// sign-in, for the htmx SSE extension: GET /staff/events. It ends when
// the session is signed out.
func (h *Handler) StreamEvents(c *fiber.Ctx) error {
	sess, err := h.session(c)
	if err != nil {
		return err
	}
	sid := sess.Value(keyStaffSession)
	return h.Events.Serve(c, func(ctx context.Context) error {
		_, err := h.Store.FindStaffUserBySession(ctx, sid)
		return err
	})
}
