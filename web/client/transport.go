package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Transport is the client's one http.RoundTripper. It
//   - paces itself from the RateLimit (or X-RateLimit-*) headers: when the
//     binding window has no units left it waits for the window's reset
//     before sending, so a program within its plan never sees a 429;
//   - waits Retry-After after a 429 and sends again (at most MaxRateWaits
//     times, never past MaxRetryAfter or the context's deadline);
//   - retries a 503 and a connection failure with exponential backoff and
//     full jitter, bounded by MaxAttempts and MaxElapsed;
//   - never retries any other answer: a ban (403 api_key_banned) and every
//     other 4xx come back at once;
//   - gives every POST an Idempotency-Key (unless it has one), the same on
//     every retry, so a retried order is the same order (SPEC §5); the
//     catalog import, which the API does not key, is retried only when it
//     was never sent.
//
// The context's deadline wins over every wait. A Transport is safe for
// concurrent use; share one per API key (its pacing is the key's).
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// MaxAttempts bounds the sends of one request when 503s or connection
	// failures answer (default 8).
	MaxAttempts int
	// MaxElapsed bounds the time one request spends retrying 503s and
	// connection failures (default 30 s).
	MaxElapsed time.Duration
	// BaseDelay and MaxDelay shape the backoff: before retry n it waits a
	// random time in [0, min(MaxDelay, BaseDelay·2ⁿ)) (defaults 200 ms, 5 s).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After it waits out (default 65 s,
	// a minute window); a longer one (the day window) returns the 429.
	MaxRetryAfter time.Duration
	// MaxRateWaits bounds the 429s one request waits out (default 3).
	MaxRateWaits int
	// NoPacing turns the pacing off: only the 429s slow the program down.
	NoPacing bool
	// Sleep waits d or until ctx ends (then it returns ctx.Err()); nil
	// means a timer. Now reads the time; nil means time.Now. Tests hand
	// both the server's clock.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time

	mu        sync.Mutex
	known     bool      // a response has told the window's state
	remaining int64     // units left in the binding window
	resetAt   time.Time // when the binding window resets
}

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func orDefault[T int | time.Duration](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// RoundTrip sends req, waiting and retrying as the type's comment says.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	keyed := keysIdempotency(req)
	if keyed && req.Method == http.MethodPost && req.Header.Get("Idempotency-Key") == "" {
		req = req.Clone(ctx)
		req.Header.Set("Idempotency-Key", rand.Text())
	}
	maxAttempts := orDefault(t.MaxAttempts, 8)
	maxElapsed := orDefault(t.MaxElapsed, 30*time.Second)
	start := time.Now()
	failures, rateWaits := 0, 0
	for sent := 0; ; sent++ {
		if err := t.pace(ctx); err != nil {
			return nil, err
		}
		r, err := rewound(req, sent)
		if err != nil {
			return nil, err
		}
		resp, err := base.RoundTrip(r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			failures++
			if failures >= maxAttempts || time.Since(start) >= maxElapsed || (!keyed && !neverSent(err)) {
				return nil, fmt.Errorf("petstore: %d attempts: %w", failures, err)
			}
			if err := t.sleep(ctx, t.backoff(failures)); err != nil {
				return nil, err
			}
			continue
		}
		t.observe(resp.Header)
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			wait := max(retryAfter(resp.Header), time.Second)
			rateWaits++
			if rateWaits > orDefault(t.MaxRateWaits, 3) || wait > orDefault(t.MaxRetryAfter, 65*time.Second) || pastDeadline(ctx, wait) {
				return resp, nil
			}
			discard(resp)
			if err := t.sleep(ctx, wait); err != nil {
				return nil, err
			}
		case http.StatusServiceUnavailable:
			failures++
			if failures >= maxAttempts || time.Since(start) >= maxElapsed {
				return resp, nil
			}
			discard(resp)
			if err := t.sleep(ctx, t.backoff(failures)); err != nil {
				return nil, err
			}
		default:
			return resp, nil
		}
	}
}

// keysIdempotency reports whether sending req twice does what sending it
// once does: every method but POST, and every POST but the catalog import
// (POST /pets/import), the one POST the API does not key (SPEC §5, §18).
// The import is not given a key, and a connection failure retries it only
// when it was never sent (the dial failed).
func keysIdempotency(req *http.Request) bool {
	return req.Method != http.MethodPost || !strings.HasSuffix(strings.TrimSuffix(req.URL.Path, "/"), "/pets/import")
}

// neverSent reports whether a send failed before the connection existed.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// backoff is the wait before retry n (1, 2, …): full jitter, a uniform
// random time below min(MaxDelay, BaseDelay·2ⁿ⁻¹).
func (t *Transport) backoff(n int) time.Duration {
	ceiling := orDefault(t.BaseDelay, 200*time.Millisecond) << min(n-1, 20)
	ceiling = min(ceiling, orDefault(t.MaxDelay, 5*time.Second))
	return time.Duration(mathrand.Int64N(int64(ceiling) + 1))
}

// pace waits, when the last answers said the window is used up, until it
// resets (every caller sharing the transport waits alike); otherwise it
// takes one of the remaining units. A reset further away than
// MaxRetryAfter (the day's window) is not waited for: the request is not
// sent and a 429 *Error (ErrRateLimited) says when the window resets.
func (t *Transport) pace(ctx context.Context) error {
	if t.NoPacing {
		return nil
	}
	for {
		t.mu.Lock()
		if !t.known || t.remaining > 0 {
			if t.known {
				t.remaining--
			}
			t.mu.Unlock()
			return nil
		}
		wait := t.resetAt.Sub(t.now())
		if wait <= 0 {
			t.known = false // the next answer tells the new window's state
			t.mu.Unlock()
			return nil
		}
		if wait > orDefault(t.MaxRetryAfter, 65*time.Second) {
			t.mu.Unlock()
			// Sending would only earn a 429 and, repeated, a ban.
			return &Error{Code: "rate_limited", Status: http.StatusTooManyRequests, RetryAfter: wait,
				Message: "The key's limit is used up until its window resets; the request was not sent."}
		}
		t.mu.Unlock()
		if err := t.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// observe keeps the binding window's state from an answer's headers: the
// IETF RateLimit field ("minute";r=42;t=18), else X-RateLimit-Remaining
// and X-RateLimit-Reset (Unix seconds).
func (t *Transport) observe(h http.Header) {
	remaining, reset, ok := parseRateLimit(h.Get("RateLimit"))
	var resetAt time.Time
	if ok {
		resetAt = t.now().Add(time.Duration(reset) * time.Second)
	} else {
		r, err1 := strconv.ParseInt(h.Get("X-RateLimit-Remaining"), 10, 64)
		u, err2 := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
		if err1 != nil || err2 != nil {
			return
		}
		remaining, resetAt = r, time.Unix(u, 0)
	}
	t.mu.Lock()
	t.known, t.remaining, t.resetAt = true, remaining, resetAt
	t.mu.Unlock()
}

// parseRateLimit reads r and t from `"minute";r=42;t=18`.
func parseRateLimit(v string) (remaining, reset int64, ok bool) {
	if v == "" {
		return 0, 0, false
	}
	var haveR, haveT bool
	for _, p := range strings.Split(strings.SplitN(v, ",", 2)[0], ";") {
		k, val, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "r":
			remaining, haveR = n, true
		case "t":
			reset, haveT = n, true
		}
	}
	return remaining, reset, haveR && haveT
}

// rewound is req ready for send number n: the first send uses req itself,
// later ones a copy with the body read again (GetBody).
func rewound(req *http.Request, n int) (*http.Request, error) {
	if n == 0 || req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("petstore: cannot retry a request whose body cannot be read again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

func pastDeadline(ctx context.Context, wait time.Duration) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < wait
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}
