package handlers

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/console"
	"petstore/web"
)

// orderFilter is the orders page's query: ?state=open|complete&pet=&before=.
type orderFilter struct {
	state    string
	petID    int64
	beforeID int64
}

func parseOrderFilter(c *fiber.Ctx) (orderFilter, error) {
	f := orderFilter{state: c.Query("state")}
	if f.state != "" && f.state != db.OrderOpen && f.state != db.OrderComplete {
		return f, web.BadParam("state", "must be open or complete")
	}
	var err error
	if f.petID, err = consoleQueryID(c, "pet"); err != nil {
		return f, err
	}
	if f.beforeID, err = consoleQueryID(c, "before"); err != nil {
		return f, err
	}
	return f, nil
}

func (f orderFilter) url(before int64) string {
	q := url.Values{}
	if f.state != "" {
		q.Set("state", f.state)
	}
	if f.petID > 0 {
		q.Set("pet", strconv.FormatInt(f.petID, 10))
	}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if len(q) == 0 {
		return "/staff/orders"
	}
	return "/staff/orders?" + q.Encode()
}

// consoleOrders lists orders newest first; htmx refetches the table body
// on every order event, so new orders appear without a reload.
func (h *Handler) consoleOrders(c *fiber.Ctx) error {
	ctx := c.UserContext()
	f, err := parseOrderFilter(c)
	if err != nil {
		return err
	}
	dbf := db.ConsoleOrderFilter{PetID: f.petID, BeforeID: f.beforeID, Limit: consolePageSize}
	if f.state != "" {
		complete := f.state == db.OrderComplete
		dbf.Complete = &complete
	}
	orders, more, err := h.Store.FindConsoleOrders(ctx, dbf)
	if err != nil {
		return err
	}
	csrf := web.CSRFToken(c)
	v := console.OrdersView{CSRF: csrf, State: f.state, PetID: f.petID, RowsURL: f.url(f.beforeID)}
	for _, o := range orders {
		v.Rows = append(v.Rows, console.OrderRow{Order: o, CSRF: csrf})
	}
	if more {
		v.NextURL = f.url(orders[len(orders)-1].ID)
	}
	if web.IsHTMX(c) {
		return web.Render(c, nil, console.OrderRows(v))
	}
	if f.petID > 0 {
		if p, err := h.Store.FindPetByID(ctx, f.petID); err == nil {
			v.PetName = p.Name
		} else if len(orders) > 0 {
			v.PetName = orders[0].PetName
		}
	}
	ch, err := h.consoleChrome(c, "Orders", "orders")
	if err != nil {
		return err
	}
	ch.Live = true
	return web.Render(c, console.OrdersPage(ch, v), console.OrderRows(v))
}

// consoleCompleteOrder completes an order (Store.UpdateOrder) and answers
// with its row; a refusal (already complete…) comes back in the row.
func (h *Handler) consoleCompleteOrder(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	complete := true
	_, err = h.Store.UpdateOrder(ctx, id, db.OrderUpdate{Complete: &complete})
	if err != nil {
		return h.consoleRefused(c, err, "/staff/orders", func(msg string) error {
			return h.renderOrderRow(c, id, msg)
		})
	}
	return h.consoleDone(c, "/staff/orders", "Order #"+strconv.FormatInt(id, 10)+" is complete.", func() error {
		return h.renderOrderRow(c, id, "")
	})
}

// consoleCancelOrder cancels an open order (Store.CancelOrder): its pets
// go back in stock and the row says so.
func (h *Handler) consoleCancelOrder(c *fiber.Ctx) error {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return err
	}
	if err := h.Store.CancelOrder(c.UserContext(), id, nil); err != nil {
		return h.consoleRefused(c, err, "/staff/orders", func(msg string) error {
			return h.renderOrderRow(c, id, msg)
		})
	}
	return h.consoleDone(c, "/staff/orders", "Order #"+strconv.FormatInt(id, 10)+" is cancelled.", func() error {
		return web.Render(c, nil, console.OrderCancelled(id))
	})
}

func (h *Handler) renderOrderRow(c *fiber.Ctx, id int64, msg string) error {
	o, err := h.Store.FindConsoleOrder(c.UserContext(), id)
	if err != nil {
		return err
	}
	return web.Render(c, nil, console.OrderLine(console.OrderRow{Order: o, CSRF: web.CSRFToken(c), Error: msg}))
}
