package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// statusOf maps every error code of SPEC §2 to its HTTP status.
var statusOf = map[string]int{
	db.EBadRequest:            http.StatusBadRequest,
	db.EUnauthorized:          http.StatusUnauthorized,
	db.EForbidden:             http.StatusForbidden,
	db.EBanned:                http.StatusForbidden,
	db.ENotFound:              http.StatusNotFound,
	db.EMethodNotAllowed:      http.StatusMethodNotAllowed,
	db.EInsufficientStock:     http.StatusConflict,
	db.EPetNotAvailable:       http.StatusConflict,
	db.EInvalidTransition:     http.StatusConflict,
	db.EOrderComplete:         http.StatusConflict,
	db.ECategoryExists:        http.StatusConflict,
	db.ECategoryInUse:         http.StatusConflict,
	db.EPetHasOpenOrders:      http.StatusConflict,
	db.EIdempotencyInProgress: http.StatusConflict,
	db.ETooManyOpenUnits:      http.StatusConflict,
	db.EEndpointSunset:        http.StatusGone,
	db.EPayloadTooLarge:       http.StatusRequestEntityTooLarge,
	db.EUnsupportedMediaType:  http.StatusUnsupportedMediaType,
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
	http.StatusMethodNotAllowed:            {Code: db.EMethodNotAllowed, Message: "Method not allowed."},
	http.StatusRequestEntityTooLarge:       {Code: db.EPayloadTooLarge, Message: "The request body is larger than 64 KiB."},
	http.StatusRequestHeaderFieldsTooLarge: {Code: db.EBadRequest, Message: "The request headers are too large."},
	http.StatusRequestTimeout:              {Code: db.EBadRequest, Message: "The request took too long to arrive."},
	http.StatusUnsupportedMediaType:        {Code: db.EUnsupportedMediaType, Message: "The request body must be JSON."},
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

// Problem is the Error object of SPEC §2 as sent on the wire.
type Problem struct {
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Status    int             `json:"status"`
	Details   []db.FieldError `json:"details,omitempty"`
	RequestID string          `json:"requestId,omitempty"`
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
			return Problem{Code: e.Code, Message: e.Message, Status: fe.Code}
		}
		if fe.Code >= 400 && fe.Code < 500 {
			return Problem{Code: db.EBadRequest, Message: "The request is malformed.", Status: http.StatusBadRequest}
		}
	case db.IsUnavailable(err):
		return Problem{Code: db.EUnavailable, Message: "The database is unavailable; try again shortly.", Status: http.StatusServiceUnavailable}
	}
	return Problem{Code: db.EInternal, Message: "Internal error.", Status: http.StatusInternalServerError}
}

// ErrorHandler answers every failed request (fiber.Config.ErrorHandler):
// the Error object for the API and JSON clients, a fragment for htmx and a
// page for browsers. prepare, when set, runs for answers Fiber produces
// before any handler ran (a 413 from the body limit), so they carry the
// same headers as the rest.
func ErrorHandler(logger *slog.Logger, prepare func(c *fiber.Ctx), page func(c *fiber.Ctx, p Problem) error) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var fe *fiber.Error
		if errors.As(err, &fe) && fe.Code == http.StatusBadGateway && unparsed(c) {
			// Fiber's name for a request it could not read off a broken or
			// reset connection: the client's doing (and the client is
			// usually gone), not a 5xx to log as ours.
			err = BadRequest("The request could not be read.")
		}
		p := ProblemOf(err)
		if prepare != nil {
			prepare(c)
		}
		p.RequestID = RequestID(c)
		if p.Status >= 500 {
			logger.Error("request failed", "requestId", p.RequestID, "method", c.Method(), "path", c.Path(), "status", p.Status, "err", err)
			if p.Status == http.StatusServiceUnavailable {
				c.Set(fiber.HeaderRetryAfter, "5")
			}
		}
		c.Status(p.Status)
		if IsAPI(c) || page == nil || unparsed(c) || strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON) {
			return c.JSON(p)
		}
		return page(c, p)
	}
}

// unparsed reports an answer to a request fasthttp could not read (headers
// past the read buffer, a bad Content-Length, a body past the limit, a read
// timeout): it has reset the request, so nothing tells an API call from a
// page. Such requests come from programs, which the Error object serves.
func unparsed(c *fiber.Ctx) bool {
	return len(c.Request().Header.RawHeaders()) == 0
}

// IsAPI reports whether the request is for the JSON API.
func IsAPI(c *fiber.Ctx) bool {
	p := c.Path()
	return p == "/api" || strings.HasPrefix(p, "/api/")
}
