// Package ratelimit decides whether an API caller may make one more request:
// two fixed UTC windows per subject (the minute and the day), strikes after a
// 429 and escalating, durable bans (SPEC §6 and §13).
//
// Counters live behind one Store interface with an in-process implementation
// (NewMemoryStore) and a Redis one (NewRedisStore) that is exact across any
// number of instances; NewFailoverStore puts the in-process store behind Redis
// so that an unreachable Redis fails open instead of failing requests. Bans
// live behind BanStore, which the database layer implements so that bans
// survive restarts and apply on every instance.
//
// The HTTP middleware is a thin layer over a Limiter:
//
//	d, err := limiter.Allow(ctx, "key:42", limits)
//	if err != nil {
//		return err // ban store (database) unreachable
//	}
//	d.Headers(c.Set) // on every response, errors included
//	switch {
//	case d.Banned:
//		// 403 api_key_banned; Retry-After is already set
//	case !d.Allowed:
//		// 429 rate_limited; Retry-After is already set
//	}
//
// GET /rate-limit uses Limiter.Status, which never counts, and the console's
// usage page uses Limiter.Usage. Subjects are opaque strings chosen by the
// caller, such as "key:42" or "ip:192.0.2.7".
package ratelimit
