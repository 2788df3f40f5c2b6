package shop

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// Pet is a pet's page: GET /pets/{id}, showing the photo ?photo=N large
// (the first when N is not one of the pet's photos). The pet's part is
// rendered once per catalog version and day (petContent); the frame and
// the order form are this shopper's.
func (h *Handler) Pet(c *fiber.Ctx) error {
	id, err := parseID(c.Params("id"), "pet")
	if err != nil {
		return err
	}
	kept, err := h.petContent(c.UserContext(), id, c.Query("photo"))
	if err != nil {
		return err
	}
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	v := kept.view
	v.InCart = st.cart.qty(id)
	if v.Chrome, err = h.pageChrome(c, view.NavCatalog); err != nil {
		return err
	}
	return web.Render(c, view.PetPageWith(v, around{head: kept.head, middle: view.OrderFormPart(v), tail: kept.tail}))
}

// petRendered is a pet page's part rendered for every shopper: the HTML
// before and after the order form, and the view it was rendered from
// (read only: each request copies it to fill in its own form).
type petRendered struct {
	view       view.PetView
	head, tail renderedHTML
}

// petViewSize is about what a kept pet's view holds beyond its HTML.
const petViewSize = 4096

// orderFormSlot marks where the order form goes in a pet's rendered part:
// a comment no text of the page can produce (templ escapes "<").
const orderFormSlot = "<!--order-form-->"

// petContent is the pet's part of its page for the photo the query
// names, rendered anew only when the catalog changed or the day did (the
// pet's age) since it was last rendered. Errors: not_found, worded for
// shoppers.
func (h *Handler) petContent(ctx context.Context, id int64, photo string) (*petRendered, error) {
	version, err := h.Store.CatalogVersion(ctx)
	if err != nil {
		return nil, err
	}
	now := h.Store.Now()
	if n, err := strconv.Atoi(photo); err != nil || n < 1 || n > db.MaxPhotos {
		photo = "" // the first photo, as for any N the pet does not have
	}
	key := strconv.FormatInt(id, 10) + " " + photo + " " + now.UTC().Format(time.DateOnly)
	if kept, ok := h.pets.get(key, version); ok {
		return kept, nil
	}
	p, err := h.Store.FindPetByID(ctx, id)
	if db.ErrorCode(err) == db.ENotFound {
		return nil, db.Errorf(db.ENotFound, "We could not find that pet. It may have left the catalog.")
	}
	if err != nil {
		return nil, err
	}
	v := view.PetView{Pet: p, Age: petAge(p.BirthDate, now), Photo: view.ChosenPhoto(photo, len(p.Photos))}
	if cat, err := h.Store.FindCategoryByID(ctx, p.CategoryID); err == nil && cat.Description != nil {
		v.Description = *cat.Description
	}
	var buf bytes.Buffer
	if err := view.PetContent(v).Render(templ.WithChildren(ctx, templ.Raw(orderFormSlot)), &buf); err != nil {
		return nil, err
	}
	head, tail, ok := bytes.Cut(buf.Bytes(), []byte(orderFormSlot))
	if !ok {
		return nil, errors.New("pet page: the order form's place is missing")
	}
	kept := &petRendered{view: v, head: head, tail: tail}
	h.pets.add(key, version, kept)
	return kept, nil
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
			return web.Render(c, view.OrderFormPart(*v))
		}
		if v.Chrome, err = h.pageChrome(c, view.NavCatalog); err != nil {
			return err
		}
		return web.Render(c, view.PetPage(*v))
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
