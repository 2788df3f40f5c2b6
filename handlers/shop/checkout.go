package shop

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web"
)

// Checkout places every cart line in one transaction
// (Store.PlaceCheckout, all or nothing): POST /checkout. On success the
// cart empties and the shopper lands on My orders with a message; on
// failure the cart stays as it was and the line at fault says why (422),
// or, past the cap on open units, the cart says so (409).
func (h *Handler) Checkout(c *fiber.Ctx) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if len(st.cart) == 0 {
		return h.renderCart(c, st, view.CartView{Error: "Your cart is empty: add a pet first."}, fiber.StatusUnprocessableEntity)
	}
	lines := make([]db.NewOrder, len(st.cart))
	for i, l := range st.cart {
		lines[i] = db.NewOrder{PetID: &l.PetID, Quantity: &l.Qty}
	}
	buyer := db.NewCheckout{Name: c.FormValue("name"), Email: c.FormValue("email"), Phone: c.FormValue("phone"), PreferredDate: c.FormValue("date")}
	checkout, err := h.Store.PlaceCheckout(ctx, st.shopper, h.MaxOpenUnits, buyer, lines)
	if db.ErrorCode(err) == db.ETooManyOpenUnits {
		v, verr := h.cartView(ctx, st)
		if verr != nil {
			return verr
		}
		v.Error = web.ProblemOf(err).Message
		return h.renderCart(c, st, v, fiber.StatusConflict)
	}
	var le *db.LineError
	if errors.As(err, &le) && le.Line >= 0 && le.Line < len(st.cart) {
		v, verr := h.cartView(ctx, st)
		if verr != nil {
			return verr
		}
		line := &v.Lines[le.Line]
		line.Error = h.lineProblem(c, line, le.Err)
		v.Error = "Nothing was ordered. " + lineName(line) + ": " + line.Error + " Change or remove that line and try again."
		return h.renderCart(c, st, v, fiber.StatusUnprocessableEntity)
	}
	if err != nil {
		return err
	}
	orders := checkout.Orders
	if h.Metrics != nil {
		h.Metrics.OrdersPlaced(len(orders))
	}
	st.cart = nil
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = "#" + strconv.FormatInt(o.ID, 10)
	}
	text := "Thank you! Your order is placed: " + plural(len(orders), "order ", "orders ") + strings.Join(ids, ", ") + "."
	flash(st, components.FlashSuccess, text)
	if err := h.saveState(c, st); err != nil {
		return err
	}
	if isPartial(c) {
		c.Set("HX-Redirect", "/orders")
		return c.SendStatus(fiber.StatusOK)
	}
	return c.Redirect("/orders", fiber.StatusSeeOther)
}

// lineProblem words why a checkout line failed: out of stock ("Only N
// left", from the stock now), no longer available, or gone from the
// catalog. It refreshes the line's pet so the page shows the stock now.
func (h *Handler) lineProblem(c *fiber.Ctx, line *view.CartLine, err error) string {
	p, ferr := h.Store.FindPetByID(c.UserContext(), line.PetID)
	if ferr == nil {
		line.Pet = p
	} else {
		line.Pet = nil
	}
	switch db.ErrorCode(err) {
	case db.EInsufficientStock:
		if line.Pet != nil && line.Pet.Stock > 0 {
			return onlyLeft(line.Pet.Stock)
		}
		return "None left."
	case db.EPetNotAvailable:
		return "No longer available."
	case db.EValidationFailed:
		var coded *db.Error
		if errors.As(err, &coded) && len(coded.Details) > 0 && coded.Details[0].Field == "quantity" {
			return quantityMessage
		}
		return "This pet is no longer in the catalog."
	}
	return "This line cannot be ordered."
}

// lineName names a cart line's pet in a sentence.
func lineName(l *view.CartLine) string {
	if l.Pet != nil {
		return l.Pet.Name
	}
	return "Pet #" + strconv.FormatInt(l.PetID, 10)
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
