package api

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// maxIDs bounds the `ids` filter (SPEC §4).
const maxIDs = 100

// ListPets is GET /api/pets: filtered and paged.
func (h *Handler) ListPets(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	f := db.PetFilter{Page: page, Query: c.Query("q")}
	if f.Statuses, err = web.QueryStatuses(c); err != nil {
		return err
	}
	if f.CategoryID, err = web.QueryID(c, "categoryId"); err != nil {
		return err
	}
	if f.ImportID, err = web.QueryID(c, "importId"); err != nil {
		return err
	}
	ids, err := web.QueryParam(c, "ids")
	if err != nil {
		return err
	}
	if f.IDs, err = parseIDs(ids); err != nil {
		return err
	}
	if len(f.Query) > db.MaxNameLen*4 {
		return web.BadParam("q", "must be at most %d characters", db.MaxNameLen)
	}
	if msg := db.SearchProblem(f.Query); msg != "" {
		return web.BadParam("q", "%s", msg)
	}
	pets, more, err := h.Store.FindPets(c.UserContext(), f)
	if err != nil {
		return err
	}
	if len(pets) > 0 {
		web.SetNextLink(c, more, pets[len(pets)-1].ID)
	}
	return c.JSON(nonNil(pets))
}

// parseIDs reads the comma list of the `ids` filter.
func parseIDs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxIDs {
		return nil, web.BadParam("ids", "lists at most %d ids", maxIDs)
	}
	ids := make([]int64, 0, len(parts))
	for _, p := range parts {
		id, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || id < 1 {
			return nil, web.BadParam("ids", "must be a comma-separated list of positive integers")
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// CreatePet is POST /api/pets.
func (h *Handler) CreatePet(c *fiber.Ctx) error {
	var in db.NewPet
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	p, err := h.Store.CreatePet(c.UserContext(), in)
	if err != nil {
		return err
	}
	c.Location("/api/pets/" + strconv.FormatInt(p.ID, 10))
	return c.Status(fiber.StatusCreated).JSON(p)
}

// GetPet is GET /api/pets/{petId} (deprecated, SPEC §7).
func (h *Handler) GetPet(c *fiber.Ctx) error {
	p, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// UpdatePet is PUT /api/pets/{petId}.
func (h *Handler) UpdatePet(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	var in db.NewPet
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	p, err := h.Store.UpdatePet(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// DeletePet is DELETE /api/pets/{petId}.
func (h *Handler) DeletePet(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	if err := h.Store.DeletePet(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
