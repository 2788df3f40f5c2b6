// Package web is the HTTP kit the handlers use: the Fiber app and its error
// handling, JSON decoding, paging, rendering and middleware.
package web

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"regexp"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
)

// APIVersion is the version of the published description (SPEC §2).
const APIVersion = "1.0.0"

// MaxBody is the largest request body the API reads (SPEC §2). Fiber's own
// limit sits higher so that most oversize bodies are refused inside the
// middleware chain, with every header in place.
const MaxBody = 64 << 10

// AppOptions configures NewApp.
type AppOptions struct {
	Logger *slog.Logger
	// Prepare runs for error answers made before the middleware ran.
	Prepare func(c *fiber.Ctx)
	// Metrics, when set, measures every request.
	Metrics *Metrics
}

// NewApp builds the Fiber app with the error handler, timeouts that let
// shutdown finish, request ids, logs and metrics, and panic recovery
// (inside the logger, so a panic is logged as the 500 it becomes), and
// compression of text answers.
func NewApp(o AppOptions) *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "petstore",
		ErrorHandler:          ErrorHandler(o.Logger, o.Prepare),
		BodyLimit:             1 << 20,
		ReadBufferSize:        16 << 10,
		ReadTimeout:           15 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           60 * time.Second,
		DisableStartupMessage: true,
		StrictRouting:         false,
	})
	app.Use(requestID)
	app.Use(Observe(o.Logger, o.Metrics))
	app.Use(recover.New())
	app.Use(Compress())
	return app
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestID reuses a sane incoming X-Request-Id or makes one, and echoes it.
func requestID(c *fiber.Ctx) error {
	SetRequestID(c)
	return c.Next()
}

// SetRequestID makes sure the request has an id; it is idempotent.
func SetRequestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localRequestID).(string); ok {
		return id
	}
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID.MatchString(id) {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	return id
}

// RequestID is the request's id.
func RequestID(c *fiber.Ctx) string { return SetRequestID(c) }

type localKey int

const (
	localRequestID localKey = iota
	localAPIKey
	localAuthErr
	localRateLimited
)

// APIHeaders stamps every /api answer with the request id and the API
// version, errors included.
func APIHeaders(c *fiber.Ctx) error {
	SetAPIHeaders(c)
	return c.Next()
}

// SetAPIHeaders sets the headers of APIHeaders outside the middleware chain.
func SetAPIHeaders(c *fiber.Ctx) {
	SetRequestID(c)
	c.Set("X-API-Version", APIVersion)
	c.Set("X-Content-Type-Options", "nosniff")
}
