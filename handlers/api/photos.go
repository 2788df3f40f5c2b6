package api

import (
	"bytes"
	"errors"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/photo"
)

// PhotoType refuses an upload whose Content-Type is not one of SPEC §14's
// image types (415), from the header alone, before a byte of its body is
// read: it goes before web.ReadBody on the upload's route.
func (h *Handler) PhotoType(c *fiber.Ctx) error {
	if err := photo.CheckContentType(c.Get(fiber.HeaderContentType)); err != nil {
		return db.Errorf(web.EUnsupportedMediaType, "Send the photo as image/jpeg, image/png, image/gif or image/webp.")
	}
	return c.Next()
}

// AddPhoto is POST /api/pets/{petId}/photos: the body is the image itself
// (SPEC §14), read by web.ReadBody (at most 8 MiB). A pet that does not
// exist, or has all its photos, is refused before the image is decoded;
// the store checks the count again under the pet's lock. The answer is the
// Photo, its Location the large size's address.
func (h *Handler) AddPhoto(c *fiber.Ctx) error {
	petID, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	p, err := h.Store.FindPetByID(ctx, petID)
	if err != nil {
		return err
	}
	if len(p.Photos) >= db.MaxPhotos {
		return db.Errorf(db.ETooManyPhotos, "Pet %d has %d photos already, the most a pet may have.", petID, len(p.Photos))
	}
	// fasthttp's Body, not Fiber's: no content coding (web.ReadBody
	// refuses compressed bodies anyway).
	res, err := h.Photos.Reencode(ctx, bytes.NewReader(c.Request().Body()), c.Get(fiber.HeaderContentType), h.PhotoLimits)
	if err != nil {
		return photoError(err)
	}
	ph, err := h.Store.AddPhoto(ctx, petID, db.NewPhoto{
		Large:  db.PhotoSize{JPEG: res.Large.Bytes, Width: res.Large.Width, Height: res.Large.Height},
		Medium: db.PhotoSize{JPEG: res.Medium.Bytes, Width: res.Medium.Width, Height: res.Medium.Height},
		Thumb:  db.PhotoSize{JPEG: res.Thumb.Bytes, Width: res.Thumb.Width, Height: res.Thumb.Height},
	})
	if err != nil {
		return err
	}
	c.Location(ph.URL)
	return c.Status(fiber.StatusCreated).JSON(ph)
}

// photoError is the API's answer to what photo.Reencode refused; the
// package's messages are safe to show.
func photoError(err error) error {
	switch {
	case errors.Is(err, photo.ErrUnsupportedType):
		return db.Errorf(web.EUnsupportedMediaType, "Send the photo as image/jpeg, image/png, image/gif or image/webp.")
	case errors.Is(err, photo.ErrTooLarge):
		return db.Errorf(web.EPayloadTooLarge, "The request body is larger than 8 MiB.")
	case errors.Is(err, photo.ErrUndecodable), errors.Is(err, photo.ErrTooManyPixels):
		return db.Invalid("body", "%s", err.Error())
	case errors.Is(err, photo.ErrTimeout):
		// The image may be fine and the server busy: 503 with Retry-After.
		return web.Busy("The photo could not be processed in time; try again shortly.")
	case errors.Is(err, photo.ErrBusy):
		// SPEC §17: the line of waiting uploads is full; 503 with Retry-After.
		return web.Busy("Too many photos are waiting to be processed; try again shortly.")
	}
	return err
}

// DeletePhoto is DELETE /api/pets/{petId}/photos/{photoId}.
func (h *Handler) DeletePhoto(c *fiber.Ctx) error {
	petID, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	photoID, err := web.PathID(c, "photoId")
	if err != nil {
		return err
	}
	if err := h.Store.DeletePhoto(c.UserContext(), petID, photoID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
