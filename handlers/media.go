package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// photoImage serves one size (db.PhotoLarge, db.PhotoMedium, db.PhotoThumb)
// of a pet's photo at GET /media/photos/{photoId}/{size}.jpg, to anyone
// (SPEC §14; medium is the pages' middle size, the large one for a photo
// stored before there was one).
// The JPEG comes from the database, so every instance serves every photo.
// A photo never changes under its address (another upload gets another
// id), so browsers and proxies may keep it a year without asking
// (web.ImmutableCache); its ETag is the hash of its bytes, kept beside
// them, and a revalidation naming it gets 304 from a query that reads the
// tag alone. An id that is unknown, or is not an id at all, and a deleted
// pet's photo are 404. JPEG bytes are not compressed again (web.Compress
// leaves .jpg alone).
func (h *Handler) photoImage(size string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := strconv.ParseInt(c.Params("photoId"), 10, 64)
		if err != nil || id < 1 {
			return db.Errorf(db.ENotFound, "There is no photo at this address.")
		}
		ctx := c.UserContext()
		revalidating := c.Get(fiber.HeaderIfNoneMatch) != ""
		img, err := h.Store.FindPhotoImage(ctx, id, size, revalidating)
		if err != nil {
			return err
		}
		if revalidating {
			if web.IfNoneMatch(c, img.ETag) {
				setPhotoHeaders(c)
				return web.NotModified(c, img.ETag)
			}
			if img, err = h.Store.FindPhotoImage(ctx, id, size, false); err != nil {
				return err
			}
		}
		setPhotoHeaders(c)
		c.Set(fiber.HeaderETag, img.ETag)
		c.Set(fiber.HeaderContentType, "image/jpeg")
		return c.Send(img.JPEG)
	}
}

// setPhotoHeaders marks a photo's answer (200 or 304, never an error,
// which must not be kept for a year) cacheable for good.
func setPhotoHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, web.ImmutableCache)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
}
