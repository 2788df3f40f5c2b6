package api

import (
	"log/slog"
	"math"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/ratelimit"
)

// apiLimit counts every API request against its subject's two windows,
// sets the rate-limit headers on the answer and refuses with 429 (or 403
// while banned). A failing counter store lets the request through: losing
// the limiter must not take the API down. A failing ban store (the
// database) does not stop the counting: see ratelimit.Decision.BanErr.
// (The browsers' form limit is its counterpart.)
type apiLimit struct {
	// limiter decides; apiLimit is the middleware over it.
	limiter *ratelimit.Limiter
	proxies ratelimit.TrustedProxies
	logger  *slog.Logger
	// metrics, when set, counts the outcomes and the bans started.
	metrics *web.Metrics
}

// subject names who a request counts against, and under which limits: its
// key, or for requests without a valid key the client IP at the free plan.
func subject(c *fiber.Ctx, proxies ratelimit.TrustedProxies) (string, ratelimit.Limits) {
	if k := currentKey(c); k != nil {
		return k.Subject(), web.KeyLimits(k)
	}
	free := db.PlanLimits[db.PlanFree]
	return "ip:" + web.ClientBucket(c, proxies), ratelimit.Limits{Plan: db.PlanFree, PerMinute: free.PerMinute, PerDay: free.PerDay}
}

// handler is the middleware. A notCounted route's requests (GET
// /api/rate-limit) are not counted when they present a valid key; they
// get the headers of the current state. One without a valid key (none,
// unknown, revoked) counts against its client's address like any
// anonymous request, so the exemption is no free, unlimited lookup, and a
// banned address stays banned.
func (r *apiLimit) handler(notCounted bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := r.count(c, notCounted); err != nil {
			return err
		}
		return c.Next()
	}
}

// count decides the request once (later calls do nothing), sets the
// headers and returns the refusal, if any.
func (r *apiLimit) count(c *fiber.Ctx, notCounted bool) error {
	if c.Locals(rateLimitedLocal{}) != nil {
		return nil
	}
	c.Locals(rateLimitedLocal{}, true)
	subject, lim := subject(c, r.proxies)
	if notCounted && currentKey(c) != nil {
		// Not counted, but every answer carries the headers.
		if d, err := r.limiter.Status(c.UserContext(), subject, lim); err == nil {
			d.Headers(func(k, v string) {
				if k != fiber.HeaderRetryAfter {
					c.Set(k, v)
				}
			})
		}
		return nil
	}
	if keyErr := keyErr(c); keyErr != nil && db.IsUnavailable(keyErr) {
		// The key could not be checked: the database is down. The request
		// counts against the client's IP like an anonymous one, so its
		// answer carries every header, but the answer is the 503 (SPEC §2):
		// a client whose valid key cannot be read is neither limited nor
		// banned for the outage's sake.
		if d, err := r.limiter.AllowUnbanned(c.UserContext(), subject, lim); err == nil {
			d.Headers(func(k, v string) { c.Set(k, v) })
		}
		r.report("unavailable")
		return keyErr
	}
	d, err := r.limiter.Allow(c.UserContext(), subject, lim)
	if err != nil {
		r.report("error")
		r.logger.Warn("rate limiter failed; request let through", "requestId", web.RequestID(c), "err", err)
		return nil
	}
	d.Headers(func(k, v string) { c.Set(k, v) })
	if d.BanErr != nil {
		// The database is down: the request was still counted, and the
		// handler will most likely answer 503 with these headers.
		r.logger.Warn("bans could not be checked; decided on counts and the bans known here", "requestId", web.RequestID(c), "err", d.BanErr)
	}
	if d.BanStarted {
		r.logger.Warn("ban started", "requestId", web.RequestID(c), "subject", subject, "until", d.BannedUntil)
		if r.metrics != nil {
			r.metrics.BanStarted()
		}
	}
	switch {
	case d.Banned:
		r.report("banned")
		return db.Errorf(db.EBanned, "This caller is banned for repeatedly exceeding its rate limit; retry in %d seconds.", seconds(d.RetryAfter.Seconds()))
	case !d.Allowed:
		r.report("limited")
		w := d.BindingWindow()
		return db.Errorf(db.ERateLimited, "Rate limit of %d requests per %s exceeded; retry in %d seconds.", w.Limit, w.Name, seconds(d.RetryAfter.Seconds()))
	}
	r.report("allowed")
	return nil
}

func (r *apiLimit) report(outcome string) {
	if r.metrics != nil {
		r.metrics.RateLimit(outcome)
	}
}

func seconds(f float64) int64 { return int64(math.Ceil(f)) }
