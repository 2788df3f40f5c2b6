package browser

import (
	"log/slog"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/ratelimit"
)

// WebLimits are the per-IP limits of the browser forms that cost the
// server work: storefront posts and console sign-ins (SPEC §9).
var WebLimits = ratelimit.Limits{Plan: "web", PerMinute: 60, PerDay: 1000}

// webSubject names the bucket a browser form post counts against: its
// client's bucket (web.ClientBucket, as for the API: an IPv6 client by its
// /64, one subscriber's block, SPEC §6). The "web:" prefix keeps it apart
// from the anonymous API's "ip:" bucket, so browsing the shop never uses
// up a script's API allowance, nor the other way round.
func webSubject(c *fiber.Ctx, proxies ratelimit.TrustedProxies) string {
	return "web:" + web.ClientBucket(c, proxies)
}

// WebLimit counts each unsafe request (POST and the like; GET, HEAD and
// OPTIONS pass uncounted) against its client's WebLimits bucket, in the
// limiter's store: Redis when REDIS_URL is set, so the limit holds across
// instances. It has no bans. Put it before any handler that reads the
// database or checks a password, so a flood costs one counter each.
//
// Over the limit it returns a rate_limited error with Retry-After set, for
// the route's error page (or its htmx fragment) to show. A failing
// counter store lets the request through, as for the API.
func WebLimit(limiter *ratelimit.Limiter, proxies ratelimit.TrustedProxies, logger *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
			return c.Next()
		}
		subject := webSubject(c, proxies)
		d, err := limiter.AllowUnbanned(c.UserContext(), subject, WebLimits)
		if err != nil {
			logger.Warn("form rate limiter failed; request let through", "requestId", web.RequestID(c), "err", err)
			return c.Next()
		}
		if !d.Allowed {
			wait := int64(d.RetryAfter.Seconds())
			c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(wait, 10))
			logger.Debug("form rate limit reached", "requestId", web.RequestID(c), "subject", subject, "window", d.Binding)
			return db.Errorf(db.ERateLimited, "Too many requests from your address. Please wait %s and try again.", waitWords(wait))
		}
		return c.Next()
	}
}

// waitWords words a wait in whole seconds for a person: "1 second",
// "42 seconds", "about 3 hours".
func waitWords(s int64) string {
	switch {
	case s == 1:
		return "1 second"
	case s < 120:
		return strconv.FormatInt(s, 10) + " seconds"
	case s < 2*3600:
		return "about " + strconv.FormatInt((s+59)/60, 10) + " minutes"
	default:
		return "about " + strconv.FormatInt((s+3599)/3600, 10) + " hours"
	}
}
