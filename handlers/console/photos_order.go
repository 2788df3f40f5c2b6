package console

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// ReorderPhotos puts a pet's photos in a new order: POST
// /staff/pets/{petId}/photos/order with every photo's id once, in "photo"
// fields (the move buttons post the order they make; "moved" and "dir"
// name the button, for the message and the focus). An order that does not
// name each of the pet's photos once (another pet's photo, a photo deleted
// meanwhile) changes nothing.
func (h *Handler) ReorderPhotos(c *fiber.Ctx) error {
	p, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	refused := "That order does not name each of " + p.Name + "'s photos once (they may have changed since the page was loaded): nothing was moved. Here they are as they are now."
	ids, ok := photoOrder(c)
	if !ok {
		return h.photosRefused(c, p.ID, refused)
	}
	after, err := h.Store.ReorderPhotos(c.UserContext(), p.ID, ids)
	if db.ErrorCode(err) == db.EValidationFailed {
		return h.photosRefused(c, p.ID, refused)
	} else if err != nil {
		return err
	}
	moved, _ := strconv.ParseInt(c.FormValue("moved"), 10, 64)
	i := slices.IndexFunc(after.Photos, func(ph db.Photo) bool { return ph.ID == moved })
	if i < 0 {
		return h.photosDone(c, p.ID, fiber.StatusOK, components.Flash{Kind: components.FlashSuccess, Text: "Photos reordered."}, "photos-status")
	}
	msg := components.Flash{Kind: components.FlashSuccess, Text: fmt.Sprintf("Photo moved to place %d of %d.", i+1, len(after.Photos))}
	return h.photosDone(c, p.ID, fiber.StatusOK, msg, moveFocus(after.Photos, i, c.FormValue("dir")))
}

// photoOrder reads the posted order: at most db.MaxPhotos ids.
func photoOrder(c *fiber.Ctx) ([]int64, bool) {
	var raw []string
	for _, v := range c.Request().PostArgs().PeekMulti("photo") {
		raw = append(raw, string(v))
	}
	if len(raw) == 0 {
		if f, err := c.MultipartForm(); err == nil {
			raw = f.Value["photo"]
		}
	}
	if len(raw) == 0 || len(raw) > db.MaxPhotos {
		return nil, false
	}
	ids := make([]int64, len(raw))
	for i, s := range raw {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			return nil, false
		}
		ids[i] = id
	}
	return ids, true
}

// moveFocus is the control focus returns to after a photo moved to place
// i: the button pressed, in the photo's new place, or its other button
// when the photo cannot go further that way.
func moveFocus(ps db.Photos, i int, dir string) string {
	id := "photo-" + strconv.FormatInt(ps[i].ID, 10) + "-"
	switch {
	case len(ps) < 2:
		return "photos-status"
	case dir == "earlier" && i > 0, dir == "later" && i == len(ps)-1:
		return id + "earlier"
	default:
		return id + "later"
	}
}

// DeletePhoto deletes one of a pet's photos, bytes and all: POST
// /staff/pets/{petId}/photos/{photoId}/delete. A photo that is not the
// pet's (any more) is refused with a message.
func (h *Handler) DeletePhoto(c *fiber.Ctx) error {
	p, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	photoID, err := web.PathID(c, "photoId")
	if err != nil {
		return err
	}
	i := slices.IndexFunc(p.Photos, func(ph db.Photo) bool { return ph.ID == photoID })
	err = h.Store.DeletePhoto(c.UserContext(), p.ID, photoID)
	if db.ErrorCode(err) == db.ENotFound || (err == nil && i < 0) {
		return h.photosRefused(c, p.ID, "That photo is not one of "+p.Name+"'s (any more): nothing was deleted.")
	} else if err != nil {
		return err
	}
	return h.photosDone(c, p.ID, fiber.StatusOK, components.Flash{Kind: components.FlashSuccess, Text: fmt.Sprintf("Photo %d deleted.", i+1)}, "photos-status")
}

// photosRefused answers a photo action the store refused: the section as
// it is now with why (409 for htmx, which swaps it), or the edit page.
func (h *Handler) photosRefused(c *fiber.Ctx, petID int64, why string) error {
	return h.photosDone(c, petID, fiber.StatusConflict, components.Flash{Kind: components.FlashError, Text: why}, "photos-status")
}

// photosDone ends a photo action: for htmx and console.js the pet's photos
// section with msg (status, and focus on the control named), else 303 back
// to the edit page at the section, msg kept in the session for it
// (photosFlash).
func (h *Handler) photosDone(c *fiber.Ctx, petID int64, status int, msg components.Flash, focus string) error {
	return h.reply(c, browser.Reply{
		To:    "/staff/pets/" + strconv.FormatInt(petID, 10) + "/edit#photos",
		Flash: msg, Flashes: photosFlash, Status: status,
		Fragment: func() error {
			p, err := h.Store.FindPetByID(c.UserContext(), petID)
			if err != nil {
				return err
			}
			v := h.photosView(c, p)
			v.Message, v.Focus = msg, focus
			return web.Render(c, view.PhotosSection(v))
		},
	})
}

// photosView is a pet's photos section, without a message.
func (h *Handler) photosView(c *fiber.Ctx, p *db.Pet) view.PhotosView {
	l := h.photoLimits()
	return view.PhotosView{
		CSRF: browser.CSRFToken(c), PetID: p.ID, PetName: p.Name, Photos: p.Photos,
		Limits: fmt.Sprintf("JPEG, PNG, GIF or WebP, each at most %s and %d megapixels.", mebibytes(l.MaxBytes), l.MaxPixels/1_000_000),
	}
}
