package api

import (
	"github.com/gofiber/fiber/v2"

	"petstore/web"
	"petstore/web/ordercsv"
)

// ExportOrders is GET /api/store/orders/export?from=YYYY-MM-DD&to=YYYY-MM-DD
// (SPEC §16): the orders placed within those days (UTC, both included, at
// most 366) as CSV, streamed, and an order.export entry in the audit log.
func (h *Handler) ExportOrders(c *fiber.Ctx) error {
	from, err := web.QueryParam(c, "from")
	if err != nil {
		return err
	}
	to, err := web.QueryParam(c, "to")
	if err != nil {
		return err
	}
	r, err := ordercsv.ParseRange(from, to)
	if err != nil {
		return badQuery(err)
	}
	return ordercsv.Send(c, h.Store, h.Logger, r)
}
