package console

import (
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// categoryForm reads the category form; a blank description is none.
func categoryForm(c *fiber.Ctx) (db.NewCategory, view.CategoryFormView) {
	v := view.CategoryFormView{CSRF: browser.CSRFToken(c), Name: c.FormValue("name"), Description: c.FormValue("description"), Errors: view.FieldErrors{}}
	in := db.NewCategory{Name: &v.Name}
	if strings.TrimSpace(v.Description) != "" {
		in.Description = &v.Description
	}
	return in, v
}

func (h *Handler) renderCategoryForm(c *fiber.Ctx, status int, v view.CategoryFormView) error {
	v.Name, v.Description = browser.Printable(v.Name, true), browser.Printable(v.Description, true)
	return h.renderCatalogForm(c, status, "category", v.ID, func(ch view.Chrome) templ.Component { return view.CategoryFormPage(ch, v) })
}

// renderCatalogForm renders the form page of a pet or a category, thing,
// titled "New thing", or "Edit thing #id" for an existing one.
func (h *Handler) renderCatalogForm(c *fiber.Ctx, status int, thing string, id int64, page func(view.Chrome) templ.Component) error {
	title := "New " + thing
	if id > 0 {
		title = "Edit " + thing + " #" + strconv.FormatInt(id, 10)
	}
	ch, err := h.chrome(c, title, "catalog")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, page(ch))
}

// categoryFormFailed re-renders the form with the store's messages: 422
// for invalid values, 409 for a taken name.
func (h *Handler) categoryFormFailed(c *fiber.Ctx, err error, v view.CategoryFormView) error {
	coded, status := refusalOf(err, fiber.StatusUnprocessableEntity, fiber.StatusConflict)
	if coded == nil {
		return err
	}
	v.Errors, v.Problem = view.FieldErrorsOf(coded, "name", "description")
	if coded.Code == db.ECategoryExists {
		v.Errors["name"], v.Problem = coded.Message, ""
	}
	return h.renderCategoryForm(c, status, v)
}

// NewCategory is the form for a new category: GET /staff/categories/new.
func (h *Handler) NewCategory(c *fiber.Ctx) error {
	return h.renderCategoryForm(c, fiber.StatusOK, view.CategoryFormView{CSRF: browser.CSRFToken(c)})
}

// CreateCategory adds a category (Store.CreateCategory).
func (h *Handler) CreateCategory(c *fiber.Ctx) error {
	in, v := categoryForm(c)
	cat, err := h.Store.CreateCategory(c.UserContext(), in)
	if err != nil {
		return h.categoryFormFailed(c, err, v)
	}
	return h.flashRedirect(c, "Category “"+cat.Name+"” created.", "/staff/catalog")
}

// EditCategory is a category's form: GET /staff/categories/{categoryId}/edit.
func (h *Handler) EditCategory(c *fiber.Ctx) error {
	cat, err := web.FindByPath(c, "categoryId", h.Store.FindCategoryByID)
	if err != nil {
		return err
	}
	v := view.CategoryFormView{CSRF: browser.CSRFToken(c), ID: cat.ID, Name: cat.Name}
	if cat.Description != nil {
		v.Description = *cat.Description
	}
	return h.renderCategoryForm(c, fiber.StatusOK, v)
}

// UpdateCategory replaces a category's name and description.
func (h *Handler) UpdateCategory(c *fiber.Ctx) error {
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
	return h.flashRedirect(c, "Category “"+cat.Name+"” saved.", "/staff/catalog")
}

// DeleteCategory removes a category no live pet uses.
func (h *Handler) DeleteCategory(c *fiber.Ctx) error {
	return deleteFromCatalog(h, c, "categoryId", h.Store.FindCategoryByID, h.Store.DeleteCategory, func(cat *db.Category) string {
		return "Category “" + cat.Name + "” deleted."
	})
}
