package api

import (
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// webhookWithSecret is a Webhook with its signing secret: the 201 of
// POST /webhooks and the 200 of rotate-secret, the only answers that show
// it.
type webhookWithSecret struct {
	*db.Webhook
	Secret string `json:"secret"`
}

// withSecret answers w with its secret, never cached, and never kept for
// an Idempotency-Key replay (neverReplayed: the record would hold the
// secret in plain text for a day, and replay it after a rotation or the
// endpoint's deletion); a retry runs again, as a key issuance's does.
func withSecret(c *fiber.Ctx, status int, w *db.Webhook) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	neverReplayed(c)
	return c.Status(status).JSON(webhookWithSecret{Webhook: w, Secret: w.Secret})
}

// ListWebhooks is GET /api/webhooks: every endpoint (at most 20).
func (h *Handler) ListWebhooks(c *fiber.Ctx) error {
	ws, err := h.Store.FindWebhooks(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(nonNil(ws))
}

// CreateWebhook is POST /api/webhooks.
func (h *Handler) CreateWebhook(c *fiber.Ctx) error {
	var in db.NewWebhook
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	w, err := h.Store.CreateWebhook(c.UserContext(), in)
	if err != nil {
		return err
	}
	c.Location("/api/webhooks/" + strconv.FormatInt(w.ID, 10))
	return withSecret(c, fiber.StatusCreated, w)
}

// GetWebhook is GET /api/webhooks/{webhookId}.
func (h *Handler) GetWebhook(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.FindWebhookByID)
	if err != nil {
		return err
	}
	return c.JSON(w)
}

// UpdateWebhook is PATCH /api/webhooks/{webhookId}.
func (h *Handler) UpdateWebhook(c *fiber.Ctx) error {
	id, err := web.PathID(c, "webhookId")
	if err != nil {
		return err
	}
	var in db.WebhookUpdate
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	w, err := h.Store.UpdateWebhook(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(w)
}

// DeleteWebhook is DELETE /api/webhooks/{webhookId}.
func (h *Handler) DeleteWebhook(c *fiber.Ctx) error {
	id, err := web.PathID(c, "webhookId")
	if err != nil {
		return err
	}
	if err := h.Store.DeleteWebhook(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// RotateWebhookSecret is POST /api/webhooks/{webhookId}/rotate-secret.
func (h *Handler) RotateWebhookSecret(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.RotateWebhookSecret)
	if err != nil {
		return err
	}
	return withSecret(c, fiber.StatusOK, w)
}

// TestWebhook is POST /api/webhooks/{webhookId}/test: 202 with the
// queued delivery of a webhook.test event.
func (h *Handler) TestWebhook(c *fiber.Ctx) error {
	d, err := web.FindByPath(c, "webhookId", h.Deliveries.Test)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(d)
}

// ListWebhookDeliveries is GET /api/webhooks/{webhookId}/deliveries:
// newest first, paged, filtered by status.
func (h *Handler) ListWebhookDeliveries(c *fiber.Ctx) error {
	id, err := web.PathID(c, "webhookId")
	if err != nil {
		return err
	}
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	status, err := web.QueryParam(c, "status")
	if err != nil {
		return err
	}
	if status != "" && !slices.Contains(db.DeliveryStatuses, status) {
		return web.BadParam("status", "must be pending, succeeded or failed")
	}
	ds, more, err := h.Store.FindWebhookDeliveries(c.UserContext(), db.DeliveryFilter{WebhookID: id, Status: status, Page: page})
	if err != nil {
		return err
	}
	if len(ds) > 0 {
		web.SetNextLink(c, more, ds[len(ds)-1].ID)
	}
	return c.JSON(nonNil(ds))
}

// RetryWebhookDelivery is POST
// /api/webhooks/{webhookId}/deliveries/{deliveryId}/retry: 202 with the
// delivery, pending again.
func (h *Handler) RetryWebhookDelivery(c *fiber.Ctx) error {
	webhookID, err := web.PathID(c, "webhookId")
	if err != nil {
		return err
	}
	id, err := web.PathID(c, "deliveryId")
	if err != nil {
		return err
	}
	d, err := h.Deliveries.Retry(c.UserContext(), webhookID, id)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(d)
}
