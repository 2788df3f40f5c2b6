package console

import (
	"context"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// Catalog lists pets and categories with their edit and delete actions.
func (h *Handler) Catalog(c *fiber.Ctx) error {
	ctx := c.UserContext()
	after, err := web.FormQueryID(c, "after")
	if err != nil {
		return err
	}
	search, err := querySearch(c)
	if err != nil {
		return err
	}
	v := view.CatalogView{CSRF: browser.CSRFToken(c), Search: search}
	var more bool
	if v.Pets, more, err = h.Store.FindPets(ctx, db.PetFilter{Query: search, Page: db.Page{AfterID: after, Limit: pageSize}}); err != nil {
		return err
	}
	if more {
		next := url.Values{"after": {strconv.FormatInt(v.Pets[len(v.Pets)-1].ID, 10)}}
		if search != "" {
			next.Set(searchParam, search)
		}
		v.NextURL = "/staff/catalog?" + next.Encode()
	}
	if v.Categories, _, err = h.Store.FindCategories(ctx, db.Page{Limit: db.MaxLimit}); err != nil {
		return err
	}
	if v.PetCounts, err = h.Store.CountPetsByCategory(ctx); err != nil {
		return err
	}
	ch, err := h.chrome(c, "Catalog", "catalog")
	if err != nil {
		return err
	}
	return web.Render(c, view.CatalogPage(ch, v))
}

// NewPet is the form for a new pet: GET /staff/pets/new.
func (h *Handler) NewPet(c *fiber.Ctx) error {
	return h.renderPetForm(c, fiber.StatusOK, view.PetFormView{CSRF: browser.CSRFToken(c), Status: db.StatusAvailable, Errors: view.FieldErrors{}})
}

// CreatePet adds a pet (Store.CreatePet).
func (h *Handler) CreatePet(c *fiber.Ctx) error {
	in, v := petForm(c, true)
	if len(v.Errors) > 0 {
		return h.petFormInvalid(c, in, v)
	}
	p, err := h.Store.CreatePet(c.UserContext(), in)
	if err != nil {
		return h.petFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "Pet “"+p.Name+"” created.", "/staff/catalog")
}

// EditPet is a pet's form and, below it, its photos: GET
// /staff/pets/{petId}/edit.
func (h *Handler) EditPet(c *fiber.Ctx) error {
	p, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	v := petFormOf(c, p)
	photos := h.photosView(c, p)
	if photos.Message, err = h.takeFlash(c, photosFlash); err != nil {
		return err
	}
	v.Photos = &photos
	return h.renderPetForm(c, fiber.StatusOK, v)
}

// UpdatePet replaces a pet's name and category, sets its shop fields and
// applies a status change by hand (Store.UpdatePet).
func (h *Handler) UpdatePet(c *fiber.Ctx) error {
	cur, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	id := cur.ID
	in, v := petForm(c, true)
	v.ID, v.Current = id, cur.Status
	photos := h.photosView(c, cur)
	v.Photos = &photos
	if len(v.Errors) > 0 {
		return h.petFormInvalid(c, in, v)
	}
	p, err := h.Store.UpdatePet(c.UserContext(), id, in)
	if err != nil {
		return h.petFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "Pet “"+p.Name+"” saved.", "/staff/catalog")
}

// DeletePet soft-deletes a pet (Store.DeletePet); a pet with open
// orders stays, with the reason in the flash message.
func (h *Handler) DeletePet(c *fiber.Ctx) error {
	return deleteFromCatalog(h, c, "petId", h.Store.FindPetByID, h.Store.DeletePet, func(p *db.Pet) string {
		return "Pet “" + p.Name + "” deleted."
	})
}

// deleteFromCatalog deletes what the path parameter names (find it, then
// del it) and goes back to the catalog with the message deleted words, or
// with the store's refusal (a category in use, a pet with open orders).
func deleteFromCatalog[T any](h *Handler, c *fiber.Ctx, param string, find func(context.Context, int64) (T, error), del func(context.Context, int64) error, deleted func(T) string) error {
	id, err := web.PathID(c, param)
	if err != nil {
		return err
	}
	x, err := find(c.UserContext(), id)
	if err != nil {
		return err
	}
	if err := del(c.UserContext(), id); err != nil {
		return h.refused(c, err, "/staff/catalog", nil)
	}
	return h.flashRedirect(c, deleted(x), "/staff/catalog")
}
