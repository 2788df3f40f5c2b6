package handlers

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/console"
	"petstore/web"
)

// consoleCatalog lists pets and categories with their edit and delete actions.
func (h *Handler) consoleCatalog(c *fiber.Ctx) error {
	ctx := c.UserContext()
	after, err := consoleQueryID(c, "after")
	if err != nil {
		return err
	}
	v := console.CatalogView{CSRF: web.CSRFToken(c)}
	var more bool
	if v.Pets, more, err = h.Store.FindPets(ctx, db.PetFilter{Page: db.Page{AfterID: after, Limit: consolePageSize}}); err != nil {
		return err
	}
	if more {
		v.NextURL = "/staff/catalog?after=" + strconv.FormatInt(v.Pets[len(v.Pets)-1].ID, 10)
	}
	if v.Categories, _, err = h.Store.FindCategories(ctx, db.Page{Limit: db.MaxLimit}); err != nil {
		return err
	}
	if v.PetCounts, err = h.Store.CountPetsByCategory(ctx); err != nil {
		return err
	}
	ch, err := h.consoleChrome(c, "Catalog", "catalog")
	if err != nil {
		return err
	}
	return web.Render(c, console.CatalogPage(ch, v), nil)
}

// petForm reads the pet form into the store's input, noting values that
// are not even numbers (the API would refuse their JSON with 400).
func petForm(c *fiber.Ctx, withStatus bool) (db.NewPet, console.PetFormView) {
	v := console.PetFormView{CSRF: web.CSRFToken(c), Name: c.FormValue("name"), Status: c.FormValue("status"), Errors: console.FieldErrors{}}
	in := db.NewPet{Name: &v.Name}
	if raw := strings.TrimSpace(c.FormValue("categoryId")); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			v.Errors["categoryId"] = "must be a positive integer"
		} else {
			in.CategoryID, v.CategoryID = &id, id
		}
	}
	if withStatus && v.Status != "" {
		in.Status = &v.Status
	}
	return in, v
}

// petFormFailed re-renders the pet form with the store's messages: 422
// for invalid values, 409 for a refused status change.
func (h *Handler) petFormFailed(c *fiber.Ctx, err error, v console.PetFormView) error {
	var coded *db.Error
	status := web.ProblemOf(err).Status
	if !errors.As(err, &coded) || (status != fiber.StatusUnprocessableEntity && status != fiber.StatusConflict) {
		return err
	}
	fe, problem := console.FieldErrorsOf(coded, "name", "categoryId", "status")
	for k, msg := range fe {
		if v.Errors[k] == "" {
			v.Errors[k] = msg
		}
	}
	v.Problem = problem
	return h.renderPetForm(c, status, v)
}

func (h *Handler) renderPetForm(c *fiber.Ctx, status int, v console.PetFormView) error {
	cats, _, err := h.Store.FindCategories(c.UserContext(), db.Page{Limit: db.MaxLimit})
	if err != nil {
		return err
	}
	v.Categories = cats
	title := "New pet"
	if v.ID > 0 {
		title = "Edit pet #" + strconv.FormatInt(v.ID, 10)
	}
	ch, err := h.consoleChrome(c, title, "catalog")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, console.PetFormPage(ch, v), nil)
}

func (h *Handler) consoleNewPet(c *fiber.Ctx) error {
	return h.renderPetForm(c, fiber.StatusOK, console.PetFormView{CSRF: web.CSRFToken(c), Status: db.StatusAvailable})
}

// consoleCreatePet adds a pet (Store.CreatePet).
func (h *Handler) consoleCreatePet(c *fiber.Ctx) error {
	in, v := petForm(c, true)
	if len(v.Errors) > 0 {
		return h.renderPetForm(c, fiber.StatusUnprocessableEntity, v)
	}
	p, err := h.Store.CreatePet(c.UserContext(), in)
	if err != nil {
		return h.petFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "ok", "Pet “"+p.Name+"” created.", "/staff/catalog")
}

func (h *Handler) consoleEditPet(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	p, err := h.Store.FindPetByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	return h.renderPetForm(c, fiber.StatusOK, console.PetFormView{
		CSRF: web.CSRFToken(c), ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status, Current: p.Status,
	})
}

// consoleUpdatePet replaces a pet's name and category and applies a status
// change by hand (Store.UpdatePet).
func (h *Handler) consoleUpdatePet(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	cur, err := h.Store.FindPetByID(ctx, id)
	if err != nil {
		return err
	}
	in, v := petForm(c, true)
	v.ID, v.Current = id, cur.Status
	if len(v.Errors) > 0 {
		return h.renderPetForm(c, fiber.StatusUnprocessableEntity, v)
	}
	p, err := h.Store.UpdatePet(ctx, id, in)
	if err != nil {
		return h.petFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "ok", "Pet “"+p.Name+"” saved.", "/staff/catalog")
}

// consoleDeletePet soft-deletes a pet (Store.DeletePet); a pet with open
// orders stays, with the reason in the flash message.
func (h *Handler) consoleDeletePet(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	p, err := h.Store.FindPetByID(ctx, id)
	if err != nil {
		return err
	}
	if err := h.Store.DeletePet(ctx, id); err != nil {
		return h.consoleRefused(c, err, "/staff/catalog", nil)
	}
	return h.flashRedirect(c, "ok", "Pet “"+p.Name+"” deleted.", "/staff/catalog")
}
