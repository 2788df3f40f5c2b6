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

// Pet is a pet's page: GET /pets/{id}, showing the photo ?photo=N large
// (the first when N is not one of the pet's photos).
func (h *Handler) Pet(c *fiber.Ctx) error {
	id, err := parseID(c.Params("id"), "pet")
	if err != nil {
		return err
	}
	v, err := h.petView(c, id)
	if err != nil {
		return err
	}
	v.Photo = view.ChosenPhoto(c.Query("photo"), len(v.Pet.Photos))
	if v.Chrome, err = h.pageChrome(c, view.NavCatalog); err != nil {
		return err
	}
	return web.Render(c, view.PetPage(*v), nil)
}

// petView loads a live pet, its category's description, its age by the
// store's clock and how many the cart holds. Errors: not_found, worded for shoppers.
func (h *Handler) petView(c *fiber.Ctx, id int64) (*view.PetView, error) {
	ctx := c.UserContext()
	p, err := h.Store.FindPetByID(ctx, id)
	if db.ErrorCode(err) == db.ENotFound {
		return nil, db.Errorf(db.ENotFound, "We could not find that pet. It may have left the catalog.")
	}
	if err != nil {
		return nil, err
	}
	st, err := h.loadState(c)
	if err != nil {
		return nil, err
	}
	v := &view.PetView{Pet: p, InCart: st.cart.qty(id), Age: petAge(p.BirthDate, h.Store.Now())}
	if cat, err := h.Store.FindCategoryByID(ctx, p.CategoryID); err == nil && cat.Description != nil {
		v.Description = *cat.Description
	}
	return v, nil
}

// AddToCart puts a pet in the cart: POST /cart (pet_id, quantity).
// The quantity must be 1 to 1000 and, with what the cart holds already,
// within the stock; else the form comes back with the reason (422).
func (h *Handler) AddToCart(c *fiber.Ctx) error {
	id, err := parseID(c.FormValue("pet_id"), "pet")
	if err != nil {
		return err
	}
	v, err := h.petView(c, id)
	if err != nil {
		return err
	}
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	raw := c.FormValue("quantity")
	qty, msg := parseQuantity(raw)
	p := v.Pet
	switch {
	case msg != "":
	case p.Status != db.StatusAvailable || p.Stock < 1:
		msg = "Sorry, " + p.Name + " is no longer available."
	case v.InCart+qty > p.Stock:
		msg = onlyLeft(p.Stock)
		if v.InCart > 0 {
			msg += " Your cart has " + strconv.FormatInt(v.InCart, 10) + " already."
		}
	case v.InCart == 0 && len(st.cart) >= maxCartLines:
		msg = "Your cart is full (" + strconv.Itoa(maxCartLines) + " different pets). Check out or remove a pet first."
	}
	if msg != "" {
		v.Form = view.OrderForm{Quantity: truncate(raw, 10), Error: msg}
		c.Status(fiber.StatusUnprocessableEntity)
		if browser.Partial(c) {
			v.Chrome = partialChrome(c, st)
			return web.Render(c, nil, view.OrderFormPart(*v))
		}
		if v.Chrome, err = h.pageChrome(c, view.NavCatalog); err != nil {
			return err
		}
		return web.Render(c, view.PetPage(*v), nil)
	}
	if i := st.cart.index(id); i >= 0 {
		st.cart[i].Qty += qty
	} else {
		st.cart = append(st.cart, cartLine{PetID: id, Qty: qty})
	}
	v.InCart += qty
	f := components.Flash{Kind: components.FlashSuccess, Text: "Added " + strconv.FormatInt(qty, 10) + " × " + p.Name + " to your cart."}
	return h.afterPost(c, st, f, "/cart", func(ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.OrderFormPart(*v)
	})
}
