package console

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
)

// Dashboard shows the counts, low stock and the newest open orders;
// htmx refetches the panels on every event.
func (h *Handler) Dashboard(c *fiber.Ctx) error {
	ctx := c.UserContext()
	counts, err := h.Store.CountDashboard(ctx)
	if err != nil {
		return err
	}
	low, err := h.Store.FindLowStock(ctx, 10)
	if err != nil {
		return err
	}
	open := false
	recent, _, err := h.Store.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Complete: &open, Limit: 5})
	if err != nil {
		return err
	}
	v := view.DashboardView{Counts: counts, LowStock: low, LowStockMax: db.LowStockMax, Recent: recent, KeysHref: "/staff/usage"}
	if currentStaff(c).IsAdmin() {
		v.KeysHref = "/staff/keys"
	}
	if web.IsHTMX(c) {
		return web.Render(c, view.DashboardPanels(v))
	}
	ch, err := h.chrome(c, "Dashboard", "dashboard")
	if err != nil {
		return err
	}
	ch.Live = true
	return web.RenderPage(c, view.DashboardPage(ch, v), view.DashboardPanels(v))
}
