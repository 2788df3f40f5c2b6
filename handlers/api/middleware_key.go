package api

import (
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// The request state the API's middleware keeps for the rest of the chain,
// in this file alone: the key the request presented (currentKey) or why
// it could not be used (keyErr), and whether the limiter has counted it.
type (
	keyLocal         struct{}
	keyErrLocal      struct{}
	rateLimitedLocal struct{}
)

// plainKey is the API key a request presents in X-API-Key or as a Bearer
// token, "" when it presents none.
func plainKey(c *fiber.Ctx) string {
	if k := c.Get("X-API-Key"); k != "" {
		return strings.TrimSpace(k)
	}
	if a := c.Get(fiber.HeaderAuthorization); len(a) > 7 && strings.EqualFold(a[:7], "Bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// resolveKey resolves the presented key, if any, before the limiter runs (so
// the limiter can count by key) without refusing anything itself: a bad key
// is refused by requireKey after the request has been counted against the
// client's IP. So is a key that could not be looked up (the database is
// down): the answer, 503 unavailable, still carries the rate-limit headers.
// The request's context reads the change counter of keys and bans once
// (db.WithAuthSnapshot): the key lookup and the limiter's ban check share
// that read, and on a GET it brings the catalog's counter along for
// the conditional answers.
func (h *Handler) resolveKey(c *fiber.Ctx) error {
	get := c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead
	c.SetUserContext(db.WithAuthSnapshot(c.UserContext(), get))
	_ = h.lookUpKey(c) // remembered for requireKey, requireStaff and rejectBadKey
	return c.Next()
}

// lookUpKey looks the presented key up and remembers the outcome for
// currentKey and requireKey. It returns the lookup's own failure, which it
// also remembers: until requireKey refuses the request with it, the request
// counts as one without a valid key.
func (h *Handler) lookUpKey(c *fiber.Ctx) error {
	plain := plainKey(c)
	if plain == "" {
		return nil
	}
	k, err := h.Store.Authenticate(c.UserContext(), plain)
	switch {
	case db.ErrorCode(err) == db.EUnauthorized:
		c.Locals(keyErrLocal{}, err)
	case err != nil:
		c.Locals(keyErrLocal{}, err)
		return err
	default:
		c.Locals(keyLocal{}, k)
		web.LogAttrs(c, slog.Int64("keyId", k.ID))
		if k.Role == db.RoleStaff {
			// A staff key's changes are audited (SPEC §16); a customer's
			// orders are not changes staff made.
			c.SetUserContext(db.WithOrigin(c.UserContext(), db.Origin{
				Actor: db.KeyActor(k.ID, k.Name), RequestID: web.RequestID(c), IP: web.ClientIP(c, h.Proxies),
			}))
		}
	}
	return nil
}

// currentKey is the request's authenticated key, nil when anonymous.
func currentKey(c *fiber.Ctx) *db.APIKey {
	k, _ := c.Locals(keyLocal{}).(*db.APIKey)
	return k
}

// keyErr is why the presented key cannot be used, nil when it can or
// none was presented.
func keyErr(c *fiber.Ctx) error {
	err, _ := c.Locals(keyErrLocal{}).(error)
	return err
}

// rejectBadKey refuses a request whose presented key is unknown or revoked
// (or could not be looked up), even on operations anyone may call.
func rejectBadKey(c *fiber.Ctx) error {
	if err := keyErr(c); err != nil {
		return err
	}
	return c.Next()
}

// requireKey lets only requests with a valid key through (401 otherwise,
// or the failure of the key's lookup).
func requireKey(c *fiber.Ctx) error {
	if err := keyErr(c); err != nil {
		return err
	}
	if currentKey(c) == nil {
		return db.Errorf(db.EUnauthorized, "An API key is required (X-API-Key or Authorization: Bearer).")
	}
	return c.Next()
}

// requireStaff lets only staff keys through (401 without a key, 403 for
// customers).
func requireStaff(c *fiber.Ctx) error {
	if err := keyErr(c); err != nil {
		return err
	}
	k := currentKey(c)
	if k == nil {
		return db.Errorf(db.EUnauthorized, "An API key is required (X-API-Key or Authorization: Bearer).")
	}
	if k.Role != db.RoleStaff {
		return db.Errorf(db.EForbidden, "This operation needs a staff key.")
	}
	return c.Next()
}

// orderOwner is whose orders the caller may see: nil for staff (all).
func orderOwner(c *fiber.Ctx) *db.Owner {
	k := currentKey(c)
	if k == nil || k.Role == db.RoleStaff {
		return nil
	}
	return &db.Owner{APIKeyID: k.ID}
}
