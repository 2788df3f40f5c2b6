package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web/ratelimit"
)

// ClientBucket is the per-address bucket of the request's client
// (ratelimit.TrustedProxies.ClientBucket): its IP, X-Forwarded-For
// believed only from TRUSTED_PROXIES, an IPv6 client by its /64. The API's
// anonymous limit, the browsers' form limit and the console's sign-in
// lockout all count by it. Every X-Forwarded-For line counts (SPEC §17):
// a proxy that adds a line of its own leaves the client's line before it.
func ClientBucket(c *fiber.Ctx, proxies ratelimit.TrustedProxies) string {
	return proxies.ClientBucket(c.Context().RemoteIP().String(), HeaderList(c, fiber.HeaderXForwardedFor))
}

// HeaderList is every line of the request's header name joined into one
// comma-separated list, in the order they arrived: the one value RFC 9110
// §5.3 says the lines stand for. c.Get reads the first line alone.
func HeaderList(c *fiber.Ctx, name string) string {
	lines := c.Request().Header.PeekAll(name)
	switch len(lines) {
	case 0:
		return ""
	case 1:
		return string(lines[0])
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(l)
	}
	return b.String()
}

// KeyLimits are the limits in force for a key (stored with it): what the
// API counts it against and what the console's usage page shows.
func KeyLimits(k *db.APIKey) ratelimit.Limits {
	return ratelimit.Limits{Plan: k.Plan, PerMinute: k.PerMinute, PerDay: k.PerDay}
}

// ClientIP is the request's client address as the trusted proxies say
// (ratelimit.TrustedProxies.ClientIP): what the audit log records.
func ClientIP(c *fiber.Ctx, proxies ratelimit.TrustedProxies) string {
	return proxies.ClientIP(c.Context().RemoteIP().String(), HeaderList(c, fiber.HeaderXForwardedFor))
}
