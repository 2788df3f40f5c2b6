// Package web is the app core every audience shares and nothing
// audience-specific: the Fiber app (NewApp) and its route table (Routes),
// the error path (ErrorHandler and the surfaces' renderers), request
// bodies and parameters, rendering, entity tags, compression, security
// headers, request logs, metrics and spans (tracing.go). The API's protocol lives beside its
// handlers (handlers/api); the browsers' sessions, CSRF and flash
// messages in web/browser.
package web

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"go.opentelemetry.io/otel/trace"

	"petstore/web/ratelimit"
)

// MaxBody is the largest request body a route reads (SPEC §2) unless its
// Route.Body gives it more.
const MaxBody = 64 << 10

// AppOptions configures NewApp.
type AppOptions struct {
	Logger *slog.Logger
	// Metrics, when set, measures every request.
	Metrics *Metrics
	// Proxies are the peers whose X-Forwarded-Proto (Transport) and
	// X-Request-Id (requestID) are believed.
	Proxies ratelimit.TrustedProxies
	// Load, when set, counts the requests being answered (streams apart)
	// for background work that gives way to them.
	Load *Load
	// Tracer, when set, makes a span of every request (Trace); nil is
	// tracing off, with no middleware at all.
	Tracer trace.TracerProvider
}

// NewApp builds the Fiber app with the error handler, timeouts that let
// shutdown finish, request ids, whether the request came over TLS (HSTS),
// logs and metrics, panic recovery (inside the logger, so a panic is
// logged as the 500 it becomes), request bodies left unread drained or
// their connection closed (each route reads its own: Route.Body, ReadBody)
// and compression of text answers. Routes
// are added through the table it returns, which every one of those
// reads.
//
// Request bodies are streamed: fasthttp hands the app a request once its
// headers (and at most 8 KiB of body) are in, and the route's line decides
// what is read, when its chain gets to ReadBody. Without streaming, fasthttp reads every body whole before any
// handler runs, up to one limit for the whole app: every route would take
// a photo's 8 MiB, before its key or content type was looked at.
func NewApp(o AppOptions) (*fiber.App, *Routes) {
	app := fiber.New(fiber.Config{
		AppName:      "petstore",
		ErrorHandler: ErrorHandler(o.Logger),
		// Per request, Routes.HeaderReceived sets the limit fasthttp
		// applies, which with streaming bounds only what it reads ahead.
		BodyLimit:         MaxBody,
		StreamRequestBody: true,
		// fasthttp would read a multipart body of any announced length
		// into a form (files on disk) before any handler; forms are parsed
		// from the bounded body instead.
		DisablePreParseMultipartForm: true,
		ReadBufferSize:               16 << 10,
		ReadTimeout:                  15 * time.Second,
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  60 * time.Second,
		DisableStartupMessage:        true,
		StrictRouting:                false,
	})
	routes := &Routes{app: app}
	app.Server().HeaderReceived = routes.HeaderReceived
	app.Use(requestID(o.Proxies))
	app.Use(Transport(o.Proxies))
	if o.Tracer != nil {
		// Outside Observe: the request's log line is written within its span.
		app.Use(Trace(o.Tracer, o.Proxies))
	}
	app.Use(Observe(o.Logger, o.Metrics))
	if o.Load != nil {
		app.Use(o.Load.track)
	}
	app.Use(recover.New())
	app.Use(finishBodies)
	app.Use(Compress())
	return app, routes
}

type requestIDLocal struct{}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestID gives the request its id and echoes it in X-Request-Id. A sane
// incoming X-Request-Id is the id only when the peer is a trusted proxy
// (TRUSTED_PROXIES: a load balancer that numbers requests): the id names
// the request in the logs and in the audit log, where a client's say-so
// could pass one request off as another. From any other peer the server
// makes its own id, and a sane one the client sent is kept beside it in
// the request's log line (clientRequestId), so the client's number can
// still be followed.
func requestID(proxies ratelimit.TrustedProxies) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sent := c.Get(fiber.HeaderXRequestID)
		if validRequestID.MatchString(sent) {
			sent = strings.Clone(sent) // Fiber reuses the header's bytes
			if peer, ok := netip.AddrFromSlice(c.Context().RemoteIP()); ok && proxies.Trusted(peer) {
				setRequestID(c, sent)
			} else {
				LogAttrs(c, slog.String("clientRequestId", sent))
			}
		}
		SetRequestID(c)
		return c.Next()
	}
}

// SetRequestID makes sure the request has an id, the server's own unless
// the requestID middleware took a trusted proxy's; it is idempotent.
func SetRequestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(requestIDLocal{}).(string); ok {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	setRequestID(c, id)
	return id
}

func setRequestID(c *fiber.Ctx, id string) {
	c.Locals(requestIDLocal{}, id)
	c.Set(fiber.HeaderXRequestID, id)
}

// RequestID is the request's id.
func RequestID(c *fiber.Ctx) string { return SetRequestID(c) }
