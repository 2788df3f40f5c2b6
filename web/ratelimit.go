package web

import (
	"log/slog"
	"math"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web/ratelimit"
)

// APILimit counts every API request against its subject's two windows,
// sets the rate-limit headers on the answer and refuses with 429 (or 403
// while banned). A failing counter store lets the request through: losing
// the limiter must not take the API down. A failing ban store (the
// database) does not stop the counting: see ratelimit.Decision.BanErr.
// (WebLimit is the browser forms' counterpart.)
type APILimit struct {
	// Limiter decides; APILimit is the middleware over it.
	Limiter *ratelimit.Limiter
	Proxies ratelimit.TrustedProxies
	Logger  *slog.Logger
	// Exempt requests are not counted (GET /api/rate-limit) when they
	// present a valid key; they get the headers of the current state. One
	// without a valid key (none, unknown, revoked) counts against its
	// client's address like any anonymous request, so the exemption is
	// no free, unlimited lookup, and a banned address stays banned.
	Exempt func(c *fiber.Ctx) bool
	// Metrics, when set, counts the outcomes and the bans started.
	Metrics *Metrics
}

// Subject names who a request counts against, and under which limits: its
// key, or for requests without a valid key the client IP at the free plan.
func Subject(c *fiber.Ctx, proxies ratelimit.TrustedProxies) (string, ratelimit.Limits) {
	if k := CurrentKey(c); k != nil {
		return k.Subject(), KeyLimits(k)
	}
	free := db.PlanLimits[db.PlanFree]
	return "ip:" + ClientBucket(c, proxies), ratelimit.Limits{Plan: db.PlanFree, PerMinute: free.PerMinute, PerDay: free.PerDay}
}

// ClientBucket is the per-address bucket of the request's client
// (ratelimit.TrustedProxies.ClientBucket): its IP, X-Forwarded-For
// believed only from TRUSTED_PROXIES, an IPv6 client by its /64.
func ClientBucket(c *fiber.Ctx, proxies ratelimit.TrustedProxies) string {
	return proxies.ClientBucket(c.Context().RemoteIP().String(), c.Get(fiber.HeaderXForwardedFor))
}

// KeyLimits are the limits in force for a key (stored with it).
func KeyLimits(k *db.APIKey) ratelimit.Limits {
	return ratelimit.Limits{Plan: k.Plan, PerMinute: k.PerMinute, PerDay: k.PerDay}
}

// Handler is the middleware.
func (r *APILimit) Handler(c *fiber.Ctx) error {
	if err := r.Count(c); err != nil {
		return err
	}
	return c.Next()
}

// Count decides the request once (later calls do nothing), sets the
// headers and returns the refusal, if any.
func (r *APILimit) Count(c *fiber.Ctx) error {
	if c.Locals(localRateLimited) != nil {
		return nil
	}
	c.Locals(localRateLimited, true)
	subject, lim := Subject(c, r.Proxies)
	if r.Exempt != nil && CurrentKey(c) != nil && r.Exempt(c) {
		// Not counted, but every answer carries the headers.
		if d, err := r.Limiter.Status(c.UserContext(), subject, lim); err == nil {
			d.Headers(func(k, v string) {
				if k != fiber.HeaderRetryAfter {
					c.Set(k, v)
				}
			})
		}
		return nil
	}
	if keyErr, ok := c.Locals(localAuthErr).(error); ok && db.IsUnavailable(keyErr) {
		// The key could not be checked: the database is down. The request
		// counts against the client's IP like an anonymous one, so its
		// answer carries every header, but the answer is the 503 (SPEC §2):
		// a client whose valid key cannot be read is neither limited nor
		// banned for the outage's sake.
		if d, err := r.Limiter.AllowUnbanned(c.UserContext(), subject, lim); err == nil {
			d.Headers(func(k, v string) { c.Set(k, v) })
		}
		r.report("unavailable")
		return keyErr
	}
	d, err := r.Limiter.Allow(c.UserContext(), subject, lim)
	if err != nil {
		r.report("error")
		r.Logger.Warn("rate limiter failed; request let through", "requestId", RequestID(c), "err", err)
		return nil
	}
	d.Headers(func(k, v string) { c.Set(k, v) })
	if d.BanErr != nil {
		// The database is down: the request was still counted, and the
		// handler will most likely answer 503 with these headers.
		r.Logger.Warn("bans could not be checked; decided on counts and the bans known here", "requestId", RequestID(c), "err", d.BanErr)
	}
	if d.BanStarted {
		r.Logger.Warn("ban started", "requestId", RequestID(c), "subject", subject, "until", d.BannedUntil)
		if r.Metrics != nil {
			r.Metrics.BanStarted()
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

func (r *APILimit) report(outcome string) {
	if r.Metrics != nil {
		r.Metrics.RateLimit(outcome)
	}
}

func seconds(f float64) int64 { return int64(math.Ceil(f)) }
