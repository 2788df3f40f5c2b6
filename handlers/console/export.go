package console

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web/ordercsv"
)

// ExportOrders is the orders page's export (SPEC §16, any staff role):
// GET /staff/orders/export?from=YYYY-MM-DD&to=YYYY-MM-DD downloads the CSV
// of the orders placed within those days (UTC, both included, at most
// 366), streamed, and writes order.export to the audit log. Bad dates
// answer the console's error page saying what is wrong (422).
func (h *Handler) ExportOrders(c *fiber.Ctx) error {
	r, err := ordercsv.ParseRange(c.Query("from"), c.Query("to"))
	if msg, ok := problemsText(err); ok {
		return db.Errorf(db.EValidationFailed, "No export: %s", msg)
	}
	if err != nil {
		return err
	}
	return ordercsv.Send(c, h.Store, h.Logger, r)
}
