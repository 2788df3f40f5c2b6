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

// categoryForm reads the category form; a blank description is none.
func categoryForm(c *fiber.Ctx) (db.NewCategory, console.CategoryFormView) {
	v := console.CategoryFormView{CSRF: web.CSRFToken(c), Name: c.FormValue("name"), Description: c.FormValue("description"), Errors: console.FieldErrors{}}
	in := db.NewCategory{Name: &v.Name}
	if strings.TrimSpace(v.Description) != "" {
		in.Description = &v.Description
	}
	return in, v
}

func (h *Handler) renderCategoryForm(c *fiber.Ctx, status int, v console.CategoryFormView) error {
	title := "New category"
	if v.ID > 0 {
		title = "Edit category #" + strconv.FormatInt(v.ID, 10)
	}
	ch, err := h.consoleChrome(c, title, "catalog")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, console.CategoryFormPage(ch, v), nil)
}

// categoryFormFailed re-renders the form with the store's messages: 422
// for invalid values, 409 for a taken name.
func (h *Handler) categoryFormFailed(c *fiber.Ctx, err error, v console.CategoryFormView) error {
	var coded *db.Error
	status := web.ProblemOf(err).Status
	if !errors.As(err, &coded) || (status != fiber.StatusUnprocessableEntity && status != fiber.StatusConflict) {
		return err
	}
	v.Errors, v.Problem = console.FieldErrorsOf(coded, "name", "description")
	if coded.Code == db.ECategoryExists {
		v.Errors["name"], v.Problem = coded.Message, ""
	}
	return h.renderCategoryForm(c, status, v)
}

func (h *Handler) consoleNewCategory(c *fiber.Ctx) error {
	return h.renderCategoryForm(c, fiber.StatusOK, console.CategoryFormView{CSRF: web.CSRFToken(c)})
}

// consoleCreateCategory adds a category (Store.CreateCategory).
func (h *Handler) consoleCreateCategory(c *fiber.Ctx) error {
	in, v := categoryForm(c)
	cat, err := h.Store.CreateCategory(c.UserContext(), in)
	if err != nil {
		return h.categoryFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "ok", "Category “"+cat.Name+"” created.", "/staff/catalog")
}

func (h *Handler) consoleEditCategory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "categoryId")
	if err != nil {
		return err
	}
	cat, err := h.Store.FindCategoryByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	v := console.CategoryFormView{CSRF: web.CSRFToken(c), ID: cat.ID, Name: cat.Name}
	if cat.Description != nil {
		v.Description = *cat.Description
	}
	return h.renderCategoryForm(c, fiber.StatusOK, v)
}

// consoleUpdateCategory replaces a category's name and description.
func (h *Handler) consoleUpdateCategory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "categoryId")
	if err != nil {
		return err
	}
	in, v := categoryForm(c)
	v.ID = id
	cat, err := h.Store.UpdateCategory(c.UserContext(), id, in)
	if err != nil {
		return h.categoryFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "ok", "Category “"+cat.Name+"” saved.", "/staff/catalog")
}

// consoleDeleteCategory removes a category no live pet uses.
func (h *Handler) consoleDeleteCategory(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "categoryId")
	if err != nil {
		return err
	}
	cat, err := h.Store.FindCategoryByID(ctx, id)
	if err != nil {
		return err
	}
	if err := h.Store.DeleteCategory(ctx, id); err != nil {
		return h.consoleRefused(c, err, "/staff/catalog", nil)
	}
	return h.flashRedirect(c, "ok", "Category “"+cat.Name+"” deleted.", "/staff/catalog")
}
