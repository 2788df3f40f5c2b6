package ratelimit

import (
	"strconv"
	"time"
)

// Headers passes every rate-limit header of SPEC §6 to set, so that the
// middleware can write them with Fiber's c.Set on every response, errors
// included:
//
//	X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset (Unix
//	seconds) of the binding window; X-RateLimit-Limit-Minute,
//	X-RateLimit-Remaining-Minute, X-RateLimit-Limit-Day,
//	X-RateLimit-Remaining-Day; the draft-ietf-httpapi-ratelimit-headers-10
//	fields RateLimit-Policy and RateLimit; and Retry-After when the
//	request is not allowed (on a Status decision: when one would not be).
//
// Call it only on a Decision returned by the Limiter.
func (d Decision) Headers(set func(key, value string)) {
	b := d.BindingWindow()
	set("X-RateLimit-Limit", itoa(b.Limit))
	set("X-RateLimit-Remaining", itoa(b.Remaining))
	set("X-RateLimit-Reset", itoa(b.Reset.Unix()))
	set("X-RateLimit-Limit-Minute", itoa(d.Minute.Limit))
	set("X-RateLimit-Remaining-Minute", itoa(d.Minute.Remaining))
	set("X-RateLimit-Limit-Day", itoa(d.Day.Limit))
	set("X-RateLimit-Remaining-Day", itoa(d.Day.Remaining))
	set("RateLimit-Policy", `"minute";q=`+itoa(d.Minute.Limit)+`;w=60, "day";q=`+itoa(d.Day.Limit)+`;w=86400`)
	set("RateLimit", strconv.Quote(b.Name)+";r="+itoa(b.Remaining)+";t="+itoa(secondsUntil(d.At, b.Reset)))
	if !d.Allowed {
		set("Retry-After", itoa(int64(d.RetryAfter/time.Second)))
	}
}

// secondsUntil counts whole seconds from now until t, rounding up: a window
// resetting 0.3 s from now is 1 s away, so a client that waits never comes
// back early.
func secondsUntil(now, t time.Time) int64 {
	return int64(ceilSeconds(t.Sub(now)) / time.Second)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
