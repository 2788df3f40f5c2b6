package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is every refusal the API answers (any status of 400 and above), as
// the API's Error object. Test for it with errors.As; errors.Is(err,
// ErrBanned) and errors.Is(err, ErrRateLimited) pick out the two refusals
// a program usually treats apart.
type Error struct {
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	Status    int      `json:"status"`
	RequestID string   `json:"requestId,omitempty"`
	Details   []Detail `json:"details,omitempty"`
	// RetryAfter is the answer's Retry-After (a ban's time left, a 429's
	// wait, a 503's advice); zero when absent.
	RetryAfter time.Duration `json:"-"`
}

// Detail is one invalid field of a 422 (or a 400 naming a parameter).
type Detail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ErrBanned matches (errors.Is) the 403 api_key_banned refusal: the key is
// banned for Error.RetryAfter; the client never retries it.
var ErrBanned = errors.New("petstore: the API key is banned")

// ErrRateLimited matches (errors.Is) a 429 the client could not wait out
// (its Retry-After beyond Transport.MaxRetryAfter or the context's deadline).
var ErrRateLimited = errors.New("petstore: rate limited")

// Error reads "petstore: 422 validation_failed: Invalid pet. (name: required) [request abc]".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "petstore: %d %s: %s", e.Status, e.Code, e.Message)
	for _, d := range e.Details {
		fmt.Fprintf(&b, " (%s: %s)", d.Field, d.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrBanned) and errors.Is(err, ErrRateLimited) work.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrBanned:
		return e.Code == "api_key_banned"
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	}
	return false
}

// errorFrom reads a refusal's body into an *Error and closes it. A body
// that is not the Error object (a proxy's page) still gives an Error, with
// the status and a code derived from it.
func errorFrom(resp *http.Response) *Error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{}
	if json.Unmarshal(body, e) != nil || e.Code == "" {
		e = &Error{Code: codeFor(resp.StatusCode), Message: strings.TrimSpace(string(body))}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	e.Status = resp.StatusCode
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	e.RetryAfter = retryAfter(resp.Header)
	return e
}

func codeFor(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	case status == http.StatusServiceUnavailable:
		return "unavailable"
	case status >= 500:
		return "internal"
	}
	return "bad_request"
}

// retryAfter is the Retry-After header in whole seconds (the API's form);
// zero when absent or not a number.
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get("Retry-After")), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}
