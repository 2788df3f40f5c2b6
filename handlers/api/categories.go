package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// ListCategories is GET /api/categories.
func (h *Handler) ListCategories(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	cs, more, err := h.Store.FindCategories(c.UserContext(), page)
	if err != nil {
		return err
	}
	if len(cs) > 0 {
		web.SetNextLink(c, more, cs[len(cs)-1].ID)
	}
	return c.JSON(nonNil(cs))
}

// CreateCategory is POST /api/categories.
func (h *Handler) CreateCategory(c *fiber.Ctx) error {
	var in db.NewCategory
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	cat, err := h.Store.CreateCategory(c.UserContext(), in)
	if err != nil {
		return err
	}
	c.Location("/api/categories/" + strconv.FormatInt(cat.ID, 10))
	return c.Status(fiber.StatusCreated).JSON(cat)
}

// GetCategory is GET /api/categories/{categoryId}.
func (h *Handler) GetCategory(c *fiber.Ctx) error {
	cat, err := web.FindByPath(c, "categoryId", h.Store.FindCategoryByID)
	if err != nil {
		return err
	}
	return c.JSON(cat)
}

// UpdateCategory is PUT /api/categories/{categoryId}.
func (h *Handler) UpdateCategory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "categoryId")
	if err != nil {
		return err
	}
	var in db.NewCategory
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	cat, err := h.Store.UpdateCategory(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(cat)
}

// DeleteCategory is DELETE /api/categories/{categoryId}.
func (h *Handler) DeleteCategory(c *fiber.Ctx) error {
	id, err := web.PathID(c, "categoryId")
	if err != nil {
		return err
	}
	if err := h.Store.DeleteCategory(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
