package console

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// Orders lists orders newest first; htmx refetches the table body
// on every order event, so new orders appear without a reload.
func (h *Handler) Orders(c *fiber.Ctx) error {
	return h.ordersPage(c, nil)
}

// ordersPage renders the orders page; export, when set, is what a refused
// export leaves in its form (the dates as typed, the problems).
func (h *Handler) ordersPage(c *fiber.Ctx, export *view.OrdersView) error {
	ctx := c.UserContext()
	f, err := orderQuery.parse(c)
	if err != nil {
		return err
	}
	dbf := db.ConsoleOrderFilter{PetID: f.id, Search: f.search, BeforeID: f.from, Limit: pageSize}
	if f.word != "" {
		complete := f.word == db.OrderComplete
		dbf.Complete = &complete
	}
	orders, next, err := h.Store.FindConsoleOrders(ctx, dbf)
	if err != nil {
		return err
	}
	csrf := browser.CSRFToken(c)
	today := h.Now().UTC()
	v := view.OrdersView{CSRF: csrf, State: f.word, PetID: f.id, Search: f.search, RowsURL: f.url(f.from),
		ExportFrom: today.AddDate(0, 0, -30).Format(time.DateOnly), ExportTo: today.Format(time.DateOnly)}
	if export != nil {
		v.ExportFrom, v.ExportTo, v.ExportOpen, v.ExportErrors = export.ExportFrom, export.ExportTo, true, export.ExportErrors
	}
	for _, o := range orders {
		v.Rows = append(v.Rows, view.OrderRow{Order: o, CSRF: csrf})
	}
	if next > 0 {
		v.NextURL = f.url(next)
	}
	if web.IsHTMX(c) && export == nil {
		return web.Render(c, view.OrderRows(v))
	}
	if f.id > 0 {
		if p, err := h.Store.FindPetByID(ctx, f.id); err == nil {
			v.PetName = p.Name
		} else if len(orders) > 0 {
			v.PetName = orders[0].PetName
		}
	}
	ch, err := h.chrome(c, "Orders", "orders")
	if err != nil {
		return err
	}
	ch.Live = true
	return web.Render(c, view.OrdersPage(ch, v))
}

// CompleteOrder completes an order (Store.UpdateOrder) and answers
// with its row; a refusal (already complete…) comes back in the row.
func (h *Handler) CompleteOrder(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	complete := true
	_, err = h.Store.UpdateOrder(ctx, id, db.OrderUpdate{Complete: &complete})
	if err != nil {
		return h.refused(c, err, "/staff/orders", func(msg string) error {
			return h.renderOrderRow(c, id, msg)
		})
	}
	return h.done(c, "/staff/orders", "Order #"+strconv.FormatInt(id, 10)+" is complete.", func() error {
		return h.renderOrderRow(c, id, "")
	})
}

// CancelOrder cancels an open order (Store.CancelOrder): its pets
// go back in stock and the row says so.
func (h *Handler) CancelOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	if err := h.Store.CancelOrder(c.UserContext(), id, nil); err != nil {
		return h.refused(c, err, "/staff/orders", func(msg string) error {
			return h.renderOrderRow(c, id, msg)
		})
	}
	return h.done(c, "/staff/orders", "Order #"+strconv.FormatInt(id, 10)+" is cancelled.", func() error {
		return web.Render(c, view.OrderCancelled(id))
	})
}

func (h *Handler) renderOrderRow(c *fiber.Ctx, id int64, msg string) error {
	o, err := h.Store.FindConsoleOrder(c.UserContext(), id)
	if err != nil {
		return err
	}
	return web.Render(c, view.OrderLine(view.OrderRow{Order: o, CSRF: browser.CSRFToken(c), Error: msg}))
}
