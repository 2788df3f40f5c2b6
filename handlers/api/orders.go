package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// ListOrders is GET /api/store/orders: all for staff, else the key's own.
func (h *Handler) ListOrders(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	f := db.OrderFilter{Page: page, Owner: orderOwner(c)}
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

// PlaceOrder is POST /api/store/orders.
func (h *Handler) PlaceOrder(c *fiber.Ctx) error {
	var in db.NewOrder
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	owner := db.Owner{APIKeyID: currentKey(c).ID}
	o, err := h.Store.PlaceOrder(c.UserContext(), owner, in)
	if err != nil {
		return err
	}
	h.ordersPlaced(1)
	c.Location("/api/store/orders/" + strconv.FormatInt(o.ID, 10))
	return c.Status(fiber.StatusCreated).JSON(o)
}

// GetOrder is GET /api/store/orders/{orderId}.
func (h *Handler) GetOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	o, err := h.Store.FindOrderByID(c.UserContext(), id, orderOwner(c))
	if err != nil {
		return err
	}
	return c.JSON(o)
}

// UpdateOrder is PATCH /api/store/orders/{orderId} (staff).
func (h *Handler) UpdateOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	var in db.OrderUpdate
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	o, err := h.Store.UpdateOrder(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(o)
}

// CancelOrder is DELETE /api/store/orders/{orderId}.
func (h *Handler) CancelOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	if err := h.Store.CancelOrder(c.UserContext(), id, orderOwner(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
