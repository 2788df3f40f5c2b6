package api

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// ListInventory is GET /api/store/inventory.
func (h *Handler) ListInventory(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	f := db.InventoryFilter{Page: page}
	if f.Statuses, err = web.QueryStatuses(c); err != nil {
		return err
	}
	items, more, err := h.Store.FindInventory(c.UserContext(), f)
	if err != nil {
		return err
	}
	if len(items) > 0 {
		web.SetNextLink(c, more, items[len(items)-1].PetID)
	}
	return c.JSON(nonNil(items))
}

// GetInventory is GET /api/store/inventory/{petId}.
func (h *Handler) GetInventory(c *fiber.Ctx) error {
	it, err := web.FindByPath(c, "petId", h.Store.FindInventoryItem)
	if err != nil {
		return err
	}
	return c.JSON(it)
}

// SetInventory is PUT /api/store/inventory/{petId} (beta).
func (h *Handler) SetInventory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	var in db.InventoryUpdate
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	it, err := h.Store.SetInventory(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(it)
}
