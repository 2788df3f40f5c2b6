package shop

import (
	"strconv"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// Cart is the cart page: GET /cart, with the checkout form.
func (h *Handler) Cart(c *fiber.Ctx) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	v, err := h.cartView(c, st)
	if err != nil {
		return err
	}
	if v.Chrome, err = h.pageChrome(c, view.NavCart); err != nil {
		return err
	}
	return web.Render(c, view.CartPage(v))
}

// cartView joins the cart's lines with their pets (and so their prices
// today); a pet that left the catalog keeps its line, with Pet nil, until
// the shopper removes it. The checkout form comes with it (detailsForm).
func (h *Handler) cartView(c *fiber.Ctx, st *shopState) (view.CartView, error) {
	ctx := c.UserContext()
	v := view.CartView{Currency: h.Store.Currency, Form: h.detailsForm(c, st)}
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
		v.Lines = append(v.Lines, view.CartLine{PetID: l.PetID, Quantity: l.Qty, Pet: byID[l.PetID]})
	}
	return v, nil
}

// renderCart answers a refused cart action with the cart and the reasons
// (v.Error, and the line at fault's Error): the cart fragment for htmx,
// else the whole page, with status (422).
func (h *Handler) renderCart(c *fiber.Ctx, st *shopState, v view.CartView, status int) error {
	c.Status(status)
	if browser.Partial(c) {
		v.Chrome = partialChrome(c, st)
		return web.Render(c, templ.Join(view.CartPart(v), view.Chromed(v.Chrome)))
	}
	var err error
	if v.Chrome, err = h.pageChrome(c, view.NavCart); err != nil {
		return err
	}
	return web.Render(c, view.CartPage(v))
}

// cartFragment makes the cart fragment for afterPost.
func (h *Handler) cartFragment(c *fiber.Ctx, st *shopState) (func(view.Chrome) templ.Component, error) {
	v, err := h.cartView(c, st)
	if err != nil {
		return nil, err
	}
	return func(ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.CartPart(v)
	}, nil
}

// lineOf reads the request's state and the cart line of POST
// /cart/lines/{petId}[/remove]: its index in st.cart.
// Errors: bad_request, not_found (not in the cart).
func (h *Handler) lineOf(c *fiber.Ctx) (st *shopState, i int, err error) {
	if st, err = h.loadState(c); err != nil {
		return nil, 0, err
	}
	id, err := parseID(c.Params("petId"), "pet")
	if err != nil {
		return nil, 0, err
	}
	if i = st.cart.index(id); i < 0 {
		return nil, 0, db.Errorf(db.ENotFound, "That pet is not in your cart (any more).")
	}
	return st, i, nil
}

// cartChanged ends a successful cart post with the cart and the message
// (afterPost).
func (h *Handler) cartChanged(c *fiber.Ctx, st *shopState, text string) error {
	frag, err := h.cartFragment(c, st)
	if err != nil {
		return err
	}
	return h.afterPost(c, st, components.Flash{Kind: components.FlashSuccess, Text: text}, "/cart", frag)
}

// UpdateLine sets a line's quantity: POST /cart/lines/{petId}. A
// quantity out of range or beyond the stock comes back on the line (422).
func (h *Handler) UpdateLine(c *fiber.Ctx) error {
	st, i, err := h.lineOf(c)
	if err != nil {
		return err
	}
	v, err := h.cartView(c, st)
	if err != nil {
		return err
	}
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
	return h.cartChanged(c, st, "Updated "+line.Pet.Name+" to "+strconv.FormatInt(qty, 10)+".")
}

// RemoveLine takes a line out of the cart: POST /cart/lines/{petId}/remove.
func (h *Handler) RemoveLine(c *fiber.Ctx) error {
	st, i, err := h.lineOf(c)
	if err != nil {
		return err
	}
	id := st.cart[i].PetID
	name := "pet #" + strconv.FormatInt(id, 10)
	if p, err := h.Store.FindPetByID(c.UserContext(), id); err == nil {
		name = p.Name
	}
	st.cart = append(st.cart[:i], st.cart[i+1:]...)
	return h.cartChanged(c, st, "Removed "+name+" from your cart.")
}
