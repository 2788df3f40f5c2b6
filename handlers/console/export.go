package console

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web/browser"
	"petstore/web/ordercsv"
)

// ExportOrders is the orders page's export (SPEC §16, any staff role):
// GET /staff/orders/export?from=YYYY-MM-DD&to=YYYY-MM-DD downloads the CSV
// of the orders placed within those days (UTC, both included, at most
// 366), streamed, and writes order.export to the audit log. Bad dates
// bring the orders page back (422) with the export form open, the dates
// as typed and an error summary that takes focus (SPEC §10).
func (h *Handler) ExportOrders(c *fiber.Ctx) error {
	from, to := c.Query("from"), c.Query("to")
	r, err := ordercsv.ParseRange(from, to)
	var coded *db.Error
	if errors.As(err, &coded) && coded.Code == db.EValidationFailed {
		errs, other := view.FieldErrorsOf(coded, "from", "to")
		if other != "" {
			errs["to"] = other
		}
		c.Status(fiber.StatusUnprocessableEntity)
		return h.ordersPage(c, &view.OrdersView{ExportFrom: browser.Printable(from, false), ExportTo: browser.Printable(to, false), ExportErrors: errs})
	}
	if err != nil {
		return err
	}
	return ordercsv.Send(c, h.Store, h.Logger, r)
}
