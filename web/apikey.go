package web

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// KeyAuthenticator finds the live key for a plain API key (db.Store does).
type KeyAuthenticator interface {
	Authenticate(ctx context.Context, plain string) (*db.APIKey, error)
}

// PlainKey is the API key a request presents in X-API-Key or as a Bearer
// token, "" when it presents none.
func PlainKey(c *fiber.Ctx) string {
	if k := c.Get("X-API-Key"); k != "" {
		return strings.TrimSpace(k)
	}
	if a := c.Get(fiber.HeaderAuthorization); len(a) > 7 && strings.EqualFold(a[:7], "Bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// APIKey resolves the presented key, if any, before the limiter runs (so
// the limiter can count by key) without refusing anything itself: a bad key
// is refused by RequireKey after the request has been counted against the
// client's IP. So is a key that could not be looked up (the database is
// down): the answer, 503 unavailable, still carries the rate-limit headers.
// The request's context reads the change counter of keys and bans once
// (db.WithAuthSnapshot): the key lookup and the limiter's ban check share
// that read, and on a GET it brings the catalog's counter along for
// Conditional.
func APIKey(auth KeyAuthenticator) fiber.Handler {
	return func(c *fiber.Ctx) error {
		get := c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead
		c.SetUserContext(db.WithAuthSnapshot(c.UserContext(), get))
		_ = ResolveKey(c, auth) // remembered for RequireKey, RequireStaff and RejectBadKey
		return c.Next()
	}
}

// ResolveKey looks the presented key up and remembers the outcome for
// CurrentKey and RequireKey. It returns the lookup's own failure, which it
// also remembers: until RequireKey refuses the request with it, the request
// counts as one without a valid key.
func ResolveKey(c *fiber.Ctx, auth KeyAuthenticator) error {
	plain := PlainKey(c)
	if plain == "" {
		return nil
	}
	k, err := auth.Authenticate(c.UserContext(), plain)
	switch {
	case db.ErrorCode(err) == db.EUnauthorized:
		c.Locals(localAuthErr, err)
	case err != nil:
		c.Locals(localAuthErr, err)
		return err
	default:
		c.Locals(localAPIKey, k)
	}
	return nil
}

// CurrentKey is the request's authenticated key, nil when anonymous.
func CurrentKey(c *fiber.Ctx) *db.APIKey {
	k, _ := c.Locals(localAPIKey).(*db.APIKey)
	return k
}

// RejectBadKey refuses a request whose presented key is unknown or revoked
// (or could not be looked up), even on operations anyone may call.
func RejectBadKey(c *fiber.Ctx) error {
	if err, ok := c.Locals(localAuthErr).(error); ok {
		return err
	}
	return c.Next()
}

// RequireKey lets only requests with a valid key through (401 otherwise,
// or the failure of the key's lookup).
func RequireKey(c *fiber.Ctx) error {
	if err, ok := c.Locals(localAuthErr).(error); ok {
		return err
	}
	if CurrentKey(c) == nil {
		return db.Errorf(db.EUnauthorized, "An API key is required (X-API-Key or Authorization: Bearer).")
	}
	return c.Next()
}

// RequireStaff lets only staff keys through (401 without a key, 403 for
// customers).
func RequireStaff(c *fiber.Ctx) error {
	if err, ok := c.Locals(localAuthErr).(error); ok {
		return err
	}
	k := CurrentKey(c)
	if k == nil {
		return db.Errorf(db.EUnauthorized, "An API key is required (X-API-Key or Authorization: Bearer).")
	}
	if k.Role != db.RoleStaff {
		return db.Errorf(db.EForbidden, "This operation needs a staff key.")
	}
	return c.Next()
}

// OrderOwner is whose orders the caller may see: nil for staff (all).
func OrderOwner(c *fiber.Ctx) *db.Owner {
	k := CurrentKey(c)
	if k == nil || k.Role == db.RoleStaff {
		return nil
	}
	return &db.Owner{APIKeyID: k.ID}
}
