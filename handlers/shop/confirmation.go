package shop

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/shop"
	"petstore/web"
)

// errNoConfirmation is the answer to a confirmation this browser may not
// see: the same for one that does not exist, so the page tells nobody
// which order numbers do.
var errNoConfirmation = db.Errorf(db.ENotFound,
	"This browser placed no order with that number. To see an order placed elsewhere, use Find an order with its number and email.")

// Confirmation is what a shopper sees after a checkout: GET
// /orders/confirmation/{checkoutId}, its number, orders, totals and
// preferred date, and how to find it again. Only the browser that placed
// it may see it; any other gets 404.
func (h *Handler) Confirmation(c *fiber.Ctx) error {
	n, err := parseID(c.Params("checkoutId"), "order")
	if err != nil {
		return err
	}
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	ck, err := h.Store.FindCheckoutByID(ctx, n)
	if db.ErrorCode(err) == db.ENotFound || (err == nil && (st.shopper == "" || ck.ShopperID != st.shopper)) {
		return errNoConfirmation
	}
	if err != nil {
		return err
	}
	v := view.ConfirmationView{Name: ck.Name, Email: ck.Email, Phone: ck.Phone}
	if v.Group, err = h.loadCheckoutGroup(ctx, ck); err != nil {
		return err
	}
	if v.Chrome, err = h.pageChrome(c, view.NavOrders); err != nil {
		return err
	}
	return web.Render(c, view.ConfirmationPage(v))
}
