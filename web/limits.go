package web

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web/ratelimit"
)

// ClientBucket is the per-address bucket of the request's client
// (ratelimit.TrustedProxies.ClientBucket): its IP, X-Forwarded-For
// believed only from TRUSTED_PROXIES, an IPv6 client by its /64. The API's
// anonymous limit, the browsers' form limit and the console's sign-in
// lockout all count by it.
func ClientBucket(c *fiber.Ctx, proxies ratelimit.TrustedProxies) string {
	return proxies.ClientBucket(c.Context().RemoteIP().String(), c.Get(fiber.HeaderXForwardedFor))
}

// KeyLimits are the limits in force for a key (stored with it): what the
// API counts it against and what the console's usage page shows.
func KeyLimits(k *db.APIKey) ratelimit.Limits {
	return ratelimit.Limits{Plan: k.Plan, PerMinute: k.PerMinute, PerDay: k.PerDay}
}
