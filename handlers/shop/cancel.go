package shop

import (
	"context"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web/browser"
)

// CancelOrder cancels one of this browser's open orders and puts its
// quantity back in stock: POST /orders/{id}/cancel. Someone else's order
// is 404; a complete one is 409.
func (h *Handler) CancelOrder(c *fiber.Ctx) error {
	id, err := parseID(c.Params("id"), "order")
	if err != nil {
		return err
	}
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	notFound := db.Errorf(db.ENotFound, "We could not find order #%d among your orders.", id)
	text, err := h.cancelFor(ctx, id, &db.Owner{ShopperID: st.shopper}, notFound)
	if err != nil {
		return err
	}
	f := components.Flash{Kind: components.FlashSuccess, Text: text}
	if !browser.Partial(c) {
		return h.afterPost(c, st, f, "/orders", nil)
	}
	v, err := h.ordersView(ctx, st)
	if err != nil {
		return err
	}
	return h.afterPost(c, st, f, "/orders", func(ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.OrdersPart(v)
	})
}

// cancelFor cancels the order id on behalf of owner and words what was
// cancelled for the shopper, by pet ("Your order of Max × 2 is
// cancelled."): the pages show a checkout's order number, not each order's
// id. Errors: notFound when owner has no such order, order_complete.
func (h *Handler) cancelFor(ctx context.Context, id int64, owner *db.Owner, notFound error) (string, error) {
	o, err := h.Store.FindOrderByID(ctx, id, owner)
	if db.ErrorCode(err) == db.ENotFound {
		return "", notFound
	}
	if err != nil {
		return "", err
	}
	err = h.Store.CancelOrder(ctx, id, owner)
	switch db.ErrorCode(err) {
	case "":
	case db.ENotFound:
		return "", notFound
	case db.EOrderComplete:
		return "", db.Errorf(db.EOrderComplete, "Your order of %s is complete and can no longer be cancelled.", h.petOfOrder(ctx, o))
	default:
		return "", err
	}
	return "Your order of " + h.petOfOrder(ctx, o) + " is cancelled.", nil
}

// petOfOrder names an order's pet and quantity: "Max × 2" ("pet #7 × 2"
// when the name cannot be read).
func (h *Handler) petOfOrder(ctx context.Context, o *db.Order) string {
	name := "pet #" + strconv.FormatInt(o.PetID, 10)
	if pets, err := h.Store.FindPetSummaries(ctx, []int64{o.PetID}); err == nil && pets[o.PetID] != nil {
		name = pets[o.PetID].Name
	}
	return name + " × " + strconv.FormatInt(o.Quantity, 10)
}
