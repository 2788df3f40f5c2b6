package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

func (h *Handler) apiListOrders(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	f := db.OrderFilter{Page: page, Owner: web.OrderOwner(c)}
	if f.Complete, err = web.QueryBool(c, "complete"); err != nil {
		return err
	}
	if f.PetID, err = web.QueryID(c, "petId"); err != nil {
		return err
	}
	os, more, err := h.Store.FindOrders(c.UserContext(), f)
	if err != nil {
		return err
	}
	if len(os) > 0 {
		web.SetNextLink(c, more, os[len(os)-1].ID)
	}
	return c.JSON(nonNil(os))
}

func (h *Handler) apiPlaceOrder(c *fiber.Ctx) error {
	var in db.NewOrder
	if err := web.DecodeJSON(c, &in); err != nil {
		return err
	}
	owner := db.Owner{APIKeyID: web.CurrentKey(c).ID}
	o, err := h.Store.PlaceOrder(c.UserContext(), owner, in)
	if err != nil {
		return err
	}
	h.ordersPlaced(1)
	c.Location("/api/store/orders/" + strconv.FormatInt(o.ID, 10))
	return c.Status(fiber.StatusCreated).JSON(o)
}

func (h *Handler) apiGetOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	o, err := h.Store.FindOrderByID(c.UserContext(), id, web.OrderOwner(c))
	if err != nil {
		return err
	}
	return c.JSON(o)
}

func (h *Handler) apiUpdateOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	var in db.OrderUpdate
	if err := web.DecodeJSON(c, &in); err != nil {
		return err
	}
	o, err := h.Store.UpdateOrder(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(o)
}

func (h *Handler) apiCancelOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	if err := h.Store.CancelOrder(c.UserContext(), id, web.OrderOwner(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *Handler) apiListInventory(c *fiber.Ctx) error {
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

func (h *Handler) apiGetInventory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	it, err := h.Store.FindInventoryItem(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(it)
}

func (h *Handler) apiSetInventory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	var in db.InventoryUpdate
	if err := web.DecodeJSON(c, &in); err != nil {
		return err
	}
	it, err := h.Store.SetInventory(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(it)
}
