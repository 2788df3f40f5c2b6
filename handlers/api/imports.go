package api

import (
	"mime"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// ImportType refuses an import whose Content-Type is not text/csv (415),
// from the header alone, before a byte of its body is read.
func (h *Handler) ImportType(c *fiber.Ctx) error {
	mediaType, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mediaType != "text/csv" {
		return db.Errorf(web.EUnsupportedMediaType, "Send the catalog as text/csv.")
	}
	return c.Next()
}

// ImportPets is POST /api/pets/import (SPEC §18): the body is a CSV file,
// checked and stored as it arrives (at most 50 MiB). A second import while
// one is queued or running is refused before the body is read. The answer
// is 202 with the queued import; its job writes the catalog.
func (h *Handler) ImportPets(c *fiber.Ctx) error {
	// Create refuses a second import (409) before it reads the body.
	body, _ := web.StreamedBody(c) // the route's Body streams
	im, err := h.Imports.Create(c.UserContext(), body.Open())
	if err != nil {
		return web.BodyError(c, err)
	}
	c.Location("/api/imports/" + strconv.FormatInt(im.ID, 10))
	return c.Status(fiber.StatusAccepted).JSON(im)
}

// GetImport is GET /api/imports/{importId}: the import and its progress.
func (h *Handler) GetImport(c *fiber.Ctx) error {
	im, err := web.FindByPath(c, "importId", h.Imports.Find)
	if err != nil {
		return err
	}
	return c.JSON(im)
}
