package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/ratelimit"
)

// windowStatus is one window of RateLimitStatus (SPEC §13).
type windowStatus struct {
	Limit     int64 `json:"limit"`
	Remaining int64 `json:"remaining"`
	Reset     int64 `json:"reset"`
}

// rateLimitStatus is the body of GET /rate-limit.
type rateLimitStatus struct {
	Plan        string       `json:"plan"`
	Minute      windowStatus `json:"minute"`
	Day         windowStatus `json:"day"`
	Banned      bool         `json:"banned"`
	BannedUntil *time.Time   `json:"bannedUntil,omitempty"`
}

// RateLimitStatus is GET /api/rate-limit: the caller's plan, windows
// and ban, without counting.
func (h *Handler) RateLimitStatus(c *fiber.Ctx) error {
	subject, lim := subject(c, h.Proxies)
	d, err := h.Limiter.Status(c.UserContext(), subject, lim)
	if err != nil {
		return err
	}
	d.Headers(func(k, v string) {
		if k != fiber.HeaderRetryAfter {
			c.Set(k, v)
		}
	})
	out := rateLimitStatus{
		Plan:   lim.Plan,
		Minute: windowStatus{d.Minute.Limit, d.Minute.Remaining, d.Minute.Reset.Unix()},
		Day:    windowStatus{d.Day.Limit, d.Day.Remaining, d.Day.Reset.Unix()},
		Banned: d.Banned,
	}
	if d.Banned {
		until := d.BannedUntil.UTC()
		out.BannedUntil = &until
	}
	return c.JSON(out)
}

// LiftBan is DELETE /api/keys/{keyId}/ban.
func (h *Handler) LiftBan(c *fiber.Ctx) error {
	k, err := web.FindByPath(c, "keyId", h.Store.FindAPIKeyByID)
	if err != nil {
		return err
	}
	if err := h.Limiter.LiftBan(c.UserContext(), k.Subject()); err != nil {
		return err
	}
	if err := h.Store.Audit(c.UserContext(), db.AuditBanLift, db.TargetID("key", k.ID), db.BanLifted(k)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// keyUsage is the body of GET /keys/{keyId}/usage (SPEC §13).
type keyUsage struct {
	KeyID int64  `json:"keyId"`
	Plan  string `json:"plan"`
	ratelimit.Usage
}

// KeyUsage is GET /api/keys/{keyId}/usage.
func (h *Handler) KeyUsage(c *fiber.Ctx) error {
	k, err := web.FindByPath(c, "keyId", h.Store.FindAPIKeyByID)
	if err != nil {
		return err
	}
	u, err := h.Limiter.Usage(c.UserContext(), k.Subject(), web.KeyLimits(k))
	if err != nil {
		return err
	}
	return c.JSON(keyUsage{KeyID: k.ID, Plan: k.Plan, Usage: u})
}
