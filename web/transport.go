package web

import (
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/web/ratelimit"
)

// HSTS is the Strict-Transport-Security value of answers over TLS: two
// years, subdomains included.
const HSTS = "max-age=63072000; includeSubDomains"

type overTLSLocal struct{}

// Transport decides once per request whether it arrived over TLS (SPEC
// §11): on the connection itself, or per X-Forwarded-Proto: https sent by
// a peer in TRUSTED_PROXIES; the header from any other peer is the
// client's say-so and is ignored. An answer over TLS carries
// Strict-Transport-Security, and the session cookies are Secure
// (browser.Session.Save asks OverTLS).
func Transport(proxies ratelimit.TrustedProxies) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if arrivedOverTLS(c, proxies) {
			c.Locals(overTLSLocal{}, true)
			c.Set(fiber.HeaderStrictTransportSecurity, HSTS)
		}
		return c.Next()
	}
}

// OverTLS reports whether Transport found the request arrived over TLS.
func OverTLS(c *fiber.Ctx) bool {
	tls, _ := c.Locals(overTLSLocal{}).(bool)
	return tls
}

// arrivedOverTLS reads the connection, then a trusted peer's
// X-Forwarded-Proto, every line of it as one list (HeaderList). Of a list
// ("https, http") the last value counts: the one the peer itself wrote.
func arrivedOverTLS(c *fiber.Ctx, proxies ratelimit.TrustedProxies) bool {
	if c.Context().IsTLS() {
		return true
	}
	proto := HeaderList(c, fiber.HeaderXForwardedProto)
	if proto == "" {
		return false
	}
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok || !proxies.Trusted(peer) {
		return false
	}
	if i := strings.LastIndexByte(proto, ','); i >= 0 {
		proto = proto[i+1:]
	}
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
