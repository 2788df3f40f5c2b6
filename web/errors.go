package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// Error codes of SPEC §2 that only HTTP raises: the store never returns
// them, so they live here rather than in db.
const (
	EMethodNotAllowed     = "method_not_allowed"
	EPayloadTooLarge      = "payload_too_large"
	EUnsupportedMediaType = "unsupported_media_type"
	EEndpointSunset       = "endpoint_sunset"
)

// statusOf maps every error code of SPEC §2, the store's and HTTP's own,
// to its HTTP status.
var statusOf = map[string]int{
	db.EBadRequest:            http.StatusBadRequest,
	db.EUnauthorized:          http.StatusUnauthorized,
	db.EForbidden:             http.StatusForbidden,
	db.EBanned:                http.StatusForbidden,
	db.ENotFound:              http.StatusNotFound,
	EMethodNotAllowed:         http.StatusMethodNotAllowed,
	db.EInsufficientStock:     http.StatusConflict,
	db.EPetNotAvailable:       http.StatusConflict,
	db.EInvalidTransition:     http.StatusConflict,
	db.EOrderComplete:         http.StatusConflict,
	db.ECategoryExists:        http.StatusConflict,
	db.ECategoryInUse:         http.StatusConflict,
	db.EPetHasOpenOrders:      http.StatusConflict,
	db.EIdempotencyInProgress: http.StatusConflict,
	db.ETooManyOpenUnits:      http.StatusConflict,
	db.ETooManyPhotos:         http.StatusConflict,
	db.EImportRunning:         http.StatusConflict,
	db.ETooManyWebhooks:       http.StatusConflict,
	db.EWebhookDisabled:       http.StatusConflict,
	db.ELastAdmin:             http.StatusConflict,
	EEndpointSunset:           http.StatusGone,
	EPayloadTooLarge:          http.StatusRequestEntityTooLarge,
	EUnsupportedMediaType:     http.StatusUnsupportedMediaType,
	db.EValidationFailed:      http.StatusUnprocessableEntity,
	db.EIdempotencyKeyReused:  http.StatusUnprocessableEntity,
	db.ERateLimited:           http.StatusTooManyRequests,
	db.EInternal:              http.StatusInternalServerError,
	db.EUnavailable:           http.StatusServiceUnavailable,
}

// codeOfStatus names the statuses Fiber and fasthttp raise themselves
// (*fiber.Error), with messages that never echo their internals.
var codeOfStatus = map[int]*db.Error{
	http.StatusBadRequest:                  {Code: db.EBadRequest, Message: "The request is malformed."},
	http.StatusNotFound:                    {Code: db.ENotFound, Message: "Not found."},
	http.StatusMethodNotAllowed:            {Code: EMethodNotAllowed, Message: "Method not allowed."},
	http.StatusRequestEntityTooLarge:       {Code: EPayloadTooLarge, Message: "The request body is larger than 64 KiB."},
	http.StatusRequestHeaderFieldsTooLarge: {Code: db.EBadRequest, Message: "The request headers are too large."},
	http.StatusRequestTimeout:              {Code: db.EBadRequest, Message: "The request took too long to arrive."},
	http.StatusUnsupportedMediaType:        {Code: EUnsupportedMediaType, Message: "The request body must be JSON."},
	http.StatusServiceUnavailable:          {Code: db.EUnavailable, Message: "The service is unavailable; try again shortly."},
}

// BadRequest is a bad_request error with a user-safe message.
func BadRequest(format string, args ...any) error {
	return db.Errorf(db.EBadRequest, format, args...)
}

// BadParam is a bad_request error naming a query parameter in details.
func BadParam(param, format string, args ...any) error {
	e := db.Errorf(db.EBadRequest, "Query parameter %s is invalid.", param)
	e.Details = []db.FieldError{{Field: param, Message: db.Errorf("", format, args...).Message}}
	return e
}

// Busy is the refusal of work the server sheds while busy (a full line of
// photo uploads waiting to be processed, SPEC §17): 503 unavailable with
// Retry-After and the message given, as any 503, but logged as a warning:
// nothing failed, so a flood of uploads does not fire an operator's
// alerts on errors.
func Busy(format string, args ...any) error {
	return &busyError{db.Errorf(db.EUnavailable, format, args...)}
}

// busyError marks a Busy refusal; the coded error inside is the answer.
type busyError struct{ err *db.Error }

func (e *busyError) Error() string { return e.err.Error() }
func (e *busyError) Unwrap() error { return e.err }

// logLevel is the level a failed request is logged at: an error for a 5xx,
// but for a Busy refusal, a warning; info for the rest.
func logLevel(status int, err error) slog.Level {
	switch {
	case status < 500:
		return slog.LevelInfo
	case errors.As(err, new(*busyError)):
		return slog.LevelWarn
	}
	return slog.LevelError
}

// Problem is the Error object of SPEC §2 as sent on the wire.
type Problem struct {
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Status    int             `json:"status"`
	Details   []db.FieldError `json:"details,omitempty"`
	RequestID string          `json:"requestId,omitempty"`
	// Outage marks a 503 whose message is the generic one for a database
	// (or server) that cannot serve, written for programs: pages say it in
	// words of their own. A 503 a handler raised with its own message (a
	// full line of photo uploads) is not an outage.
	Outage bool `json:"-"`
}

// ProblemOf turns any error into the Problem to send, hiding internals.
func ProblemOf(err error) Problem {
	var coded *db.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &coded) && statusOf[coded.Code] != 0:
		return Problem{Code: coded.Code, Message: coded.Message, Status: statusOf[coded.Code], Details: coded.Details}
	case errors.As(err, &fe):
		if e, ok := codeOfStatus[fe.Code]; ok {
			return Problem{Code: e.Code, Message: e.Message, Status: fe.Code, Outage: fe.Code == http.StatusServiceUnavailable}
		}
		if fe.Code >= 400 && fe.Code < 500 {
			return Problem{Code: db.EBadRequest, Message: "The request is malformed.", Status: http.StatusBadRequest}
		}
	case db.IsUnavailable(err):
		return Problem{Code: db.EUnavailable, Message: "The database is unavailable; try again shortly.", Status: http.StatusServiceUnavailable, Outage: true}
	}
	return Problem{Code: db.EInternal, Message: "Internal error.", Status: http.StatusInternalServerError}
}

// answerOf is the error the request's answer is made from: err itself,
// but for a request Fiber could not read off a broken or reset connection
// (its 502), which is the client's doing (and the client is usually gone),
// not a 5xx to log as ours. The error handler and Observe both ask it, so
// the log and the metrics see the status the client is sent.
func answerOf(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code == http.StatusBadGateway && unparsed(c) {
		return BadRequest("The request could not be read.")
	}
	return err
}

// ProblemFor is the Error object the error handler will answer err with
// on this request, its request id included: for middleware that keeps an
// answer (the API's idempotency) or counts it (Observe) before the handler
// has written it.
func ProblemFor(c *fiber.Ctx, err error) Problem {
	p := ProblemOf(answerOf(c, err))
	p.RequestID = RequestID(c)
	return p
}

// ProblemJSON is the body of the Error object as the API sends it: the
// error handler writes it, and Idempotency keeps it for replays.
func ProblemJSON(p Problem) []byte {
	b, err := json.Marshal(p)
	if err != nil { // a Problem holds only strings and ints
		panic("web: encode Problem: " + err.Error())
	}
	return b
}

// SendProblem writes p as the Error object (status set by the caller).
func SendProblem(c *fiber.Ctx, p Problem) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(ProblemJSON(p))
}

// ErrorHandler answers every failed request (fiber.Config.ErrorHandler):
// it sets the status, logs server failures once with the request id, and
// lets the route group that matched render the answer (its
// ErrorRenderer, see Surface); without one, and for requests it could not
// read, the answer is the Error object.
func ErrorHandler(logger *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		err = answerOf(c, err)
		p := ProblemOf(err)
		p.RequestID = RequestID(c)
		if p.Status >= 500 {
			msg := "request failed"
			level := logLevel(p.Status, err)
			if level < slog.LevelError {
				msg = "request refused: busy"
			}
			logger.Log(c.UserContext(), level, msg, "requestId", p.RequestID, "method", c.Method(), "path", c.Path(), "status", p.Status, "err", err)
			if p.Status == http.StatusServiceUnavailable {
				c.Set(fiber.HeaderRetryAfter, "5")
			}
		}
		c.Status(p.Status)
		if s := surfaceOf(c); s != nil && s.Errors != nil && !unparsed(c) {
			return s.Errors(c, p)
		}
		return SendProblem(c, p)
	}
}

// WantsJSON reports whether a browser surface's error should still be the
// Error object: the client asks for JSON (a script, not a person).
func WantsJSON(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
}

// unparsed reports an answer to a request fasthttp could not read (headers
// past the read buffer, a bad Content-Length, a body past the limit, a read
// timeout): it has reset the request, so nothing tells an API call from a
// page. Such requests come from programs, which the Error object serves.
func unparsed(c *fiber.Ctx) bool {
	return len(c.Request().Header.RawHeaders()) == 0
}

// IsAPI reports whether the request is for the JSON API, by its path: for
// answers made before any route group saw the request (Fiber's 413).
func IsAPI(c *fiber.Ctx) bool {
	p := c.Path()
	return p == "/api" || strings.HasPrefix(p, "/api/")
}
