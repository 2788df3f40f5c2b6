package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// issuedKey is the 201 body of POST /keys: the key plus its plain form,
// shown this once.
type issuedKey struct {
	*db.APIKey
	Key string `json:"key"`
}

// ListKeys is GET /api/keys.
func (h *Handler) ListKeys(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	ks, more, err := h.Store.FindAPIKeys(c.UserContext(), page)
	if err != nil {
		return err
	}
	if len(ks) > 0 {
		web.SetNextLink(c, more, ks[len(ks)-1].ID)
	}
	return c.JSON(nonNil(ks))
}

// GetKey is GET /api/keys/{keyId}: one key as the list shows it (never
// the plain key), revoked or not; the Location of POST /keys points here.
func (h *Handler) GetKey(c *fiber.Ctx) error {
	id, err := web.PathID(c, "keyId")
	if err != nil {
		return err
	}
	k, err := h.Store.FindAPIKeyByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(k)
}

// CreateKey is POST /api/keys: the answer holds the plain key, this
// once, and is never cached.
func (h *Handler) CreateKey(c *fiber.Ctx) error {
	var in db.NewAPIKey
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	k, plain, err := h.Store.CreateAPIKey(c.UserContext(), in)
	if err != nil {
		return err
	}
	c.Location("/api/keys/" + strconv.FormatInt(k.ID, 10))
	neverReplayed(c)
	return c.Status(fiber.StatusCreated).JSON(issuedKey{APIKey: k, Key: plain})
}

// UpdateKey is PATCH /api/keys/{keyId}.
func (h *Handler) UpdateKey(c *fiber.Ctx) error {
	id, err := web.PathID(c, "keyId")
	if err != nil {
		return err
	}
	var in db.NewAPIKey
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	k, err := h.Store.UpdateAPIKey(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(k)
}

// RevokeKey is DELETE /api/keys/{keyId}.
func (h *Handler) RevokeKey(c *fiber.Ctx) error {
	id, err := web.PathID(c, "keyId")
	if err != nil {
		return err
	}
	if err := h.Store.RevokeAPIKey(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
