package handlers

import (
	"context"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	"petstore/views/shop"
	"petstore/web"
)

// shopCart is the cart page: GET /cart.
func (h *Handler) shopCart(c *fiber.Ctx) error {
	st, err := h.shopState(c)
	if err != nil {
		return err
	}
	v, err := h.cartView(c.UserContext(), st)
	if err != nil {
		return err
	}
	if v.Chrome, err = h.pageChrome(c, shop.NavCart); err != nil {
		return err
	}
	return web.Render(c, shop.CartPage(v), nil)
}

// cartView joins the cart's lines with their pets; a pet that left the
// catalog keeps its line, with Pet nil, until the shopper removes it.
func (h *Handler) cartView(ctx context.Context, st *shopState) (shop.CartView, error) {
	v := shop.CartView{}
	if len(st.cart) == 0 {
		return v, nil
	}
	ids := make([]int64, len(st.cart))
	for i, l := range st.cart {
		ids[i] = l.PetID
	}
	pets, _, err := h.Store.FindPets(ctx, db.PetFilter{IDs: ids, Page: db.Page{Limit: db.MaxLimit}})
	if err != nil {
		return v, err
	}
	byID := make(map[int64]*db.Pet, len(pets))
	for _, p := range pets {
		byID[p.ID] = p
	}
	for _, l := range st.cart {
		v.Lines = append(v.Lines, shop.CartLine{PetID: l.PetID, Quantity: l.Qty, Pet: byID[l.PetID]})
	}
	return v, nil
}

// renderCart answers a refused cart action with the cart and the reasons
// (v.Error, and the line at fault's Error): the cart fragment for htmx,
// else the whole page, with status (422).
func (h *Handler) renderCart(c *fiber.Ctx, st *shopState, v shop.CartView, status int) error {
	c.Status(status)
	if isPartial(c) {
		v.Chrome = partialChrome(c, st)
		return web.Render(c, nil, templ.Join(shop.CartPart(v), shop.Chromed(v.Chrome)))
	}
	var err error
	if v.Chrome, err = h.pageChrome(c, shop.NavCart); err != nil {
		return err
	}
	return web.Render(c, shop.CartPage(v), nil)
}

// cartFragment makes the cart fragment for afterPost.
func (h *Handler) cartFragment(ctx context.Context, st *shopState) (func(shop.Chrome) templ.Component, error) {
	v, err := h.cartView(ctx, st)
	if err != nil {
		return nil, err
	}
	return func(ch shop.Chrome) templ.Component {
		v.Chrome = ch
		return shop.CartPart(v)
	}, nil
}

// cartLineID reads the pet id of POST /cart/lines/{petId}[/remove].
// Errors: bad_request, not_found (not in the cart).
func (h *Handler) cartLineID(c *fiber.Ctx, st *shopState) (int64, error) {
	id, err := shopID(c.Params("petId"), "pet")
	if err != nil {
		return 0, err
	}
	if st.cart.index(id) < 0 {
		return 0, db.Errorf(db.ENotFound, "That pet is not in your cart (any more).")
	}
	return id, nil
}

// shopUpdateLine sets a line's quantity: POST /cart/lines/{petId}. A
// quantity out of range or beyond the stock comes back on the line (422).
func (h *Handler) shopUpdateLine(c *fiber.Ctx) error {
	st, err := h.shopState(c)
	if err != nil {
		return err
	}
	id, err := h.cartLineID(c, st)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	v, err := h.cartView(ctx, st)
	if err != nil {
		return err
	}
	i := st.cart.index(id)
	line := &v.Lines[i]
	raw := c.FormValue("quantity")
	qty, msg := parseQuantity(raw)
	switch {
	case msg != "":
	case line.Pet == nil:
		msg = "This pet is no longer in the catalog. Remove it to check out."
	case line.Pet.Status != db.StatusAvailable || line.Pet.Stock < 1:
		msg = "Sorry, " + line.Pet.Name + " is no longer available. Remove it to check out."
	case qty > line.Pet.Stock:
		msg = onlyLeft(line.Pet.Stock)
	}
	if msg != "" {
		line.Input, line.Error = truncate(raw, 10), msg
		v.Error = "That quantity was not saved: " + msg
		return h.renderCart(c, st, v, fiber.StatusUnprocessableEntity)
	}
	st.cart[i].Qty = qty
	frag, err := h.cartFragment(ctx, st)
	if err != nil {
		return err
	}
	f := components.Flash{Kind: components.FlashSuccess, Text: "Updated " + line.Pet.Name + " to " + strconv.FormatInt(qty, 10) + "."}
	return h.afterPost(c, st, f, "/cart", frag)
}

// shopRemoveLine takes a line out of the cart: POST /cart/lines/{petId}/remove.
func (h *Handler) shopRemoveLine(c *fiber.Ctx) error {
	st, err := h.shopState(c)
	if err != nil {
		return err
	}
	id, err := h.cartLineID(c, st)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	name := "pet #" + strconv.FormatInt(id, 10)
	if p, err := h.Store.FindPetByID(ctx, id); err == nil {
		name = p.Name
	}
	i := st.cart.index(id)
	st.cart = append(st.cart[:i], st.cart[i+1:]...)
	frag, err := h.cartFragment(ctx, st)
	if err != nil {
		return err
	}
	f := components.Flash{Kind: components.FlashSuccess, Text: "Removed " + name + " from your cart."}
	return h.afterPost(c, st, f, "/cart", frag)
}
