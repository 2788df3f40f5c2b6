package db

import (
	"errors"
	"fmt"

	"petstore/db/internal/outage"
)

// Error codes of SPEC §2. A Store returns an *Error with one of these for
// every failure the caller caused; anything else is a bug or an outage.
// The codes only HTTP raises (method_not_allowed, payload_too_large,
// unsupported_media_type, endpoint_sunset) are web's.
const (
	EBadRequest            = "bad_request"
	EUnauthorized          = "unauthorized"
	EForbidden             = "forbidden"
	EBanned                = "api_key_banned"
	ENotFound              = "not_found"
	EInsufficientStock     = "insufficient_stock"
	EPetNotAvailable       = "pet_not_available"
	EInvalidTransition     = "invalid_transition"
	EOrderComplete         = "order_complete"
	ECategoryExists        = "category_exists"
	ECategoryInUse         = "category_in_use"
	EPetHasOpenOrders      = "pet_has_open_orders"
	EIdempotencyInProgress = "idempotency_in_progress"
	ETooManyPhotos         = "too_many_photos"
	EValidationFailed      = "validation_failed"
	EIdempotencyKeyReused  = "idempotency_key_reused"
	ERateLimited           = "rate_limited"
	EInternal              = "internal"
	EUnavailable           = "unavailable"

	// ETooManyOpenUnits refuses a storefront checkout past
	// PETSTORE_SHOP_MAX_OPEN_UNITS (SPEC §9); the API never returns it.
	ETooManyOpenUnits = "too_many_open_units"
)

// Error is a failure the caller can act on. Message is safe to show users.
type Error struct {
	Code    string
	Message string
	Details []FieldError
}

// FieldError names one invalid field (as sent in JSON) or query parameter.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds a coded error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of a coded error, EInternal for any other
// error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// Problems collects field errors while validating a body.
type Problems []FieldError

// Add records that field is invalid.
func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err is nil when nothing was added, else a validation_failed Error.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Code: EValidationFailed, Message: "The request has invalid values.", Details: p}
}

// Invalid is a validation_failed error for one field.
func Invalid(field, format string, args ...any) error {
	var p Problems
	p.Add(field, format, args...)
	return p.Err()
}

// IsUnavailable reports whether err means the database cannot serve right
// now — unreachable, cut, dropped, shutting down, out of connections or
// resources, or too slow for the caller's deadline — rather than a bug:
// SPEC §2 answers it with 503 unavailable and Retry-After. A coded Error
// says so by its code; anything else is judged by the driver's error type,
// SQLSTATE or result code (db/internal/outage), never by message text.
func IsUnavailable(err error) bool {
	var coded *Error
	if errors.As(err, &coded) {
		return coded.Code == EUnavailable
	}
	return outage.Is(err)
}
