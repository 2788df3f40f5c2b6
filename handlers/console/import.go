package console

import (
	"errors"
	"io"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/imports"
)

// importField names the import form's file input.
const importField = "file"

// ImportLimit is the most an import form's body may be: the file's 50 MiB
// and 1 MiB for the token, multipart's headers and slack.
func (h *Handler) ImportLimit() int64 { return imports.MaxBytes + 1<<20 }

// ImportForm is the Import page: GET /staff/import (any staff user: SPEC
// §16's clerks run the catalog).
func (h *Handler) ImportForm(c *fiber.Ctx) error {
	return h.renderImportForm(c, fiber.StatusOK, view.ImportFormView{})
}

func (h *Handler) renderImportForm(c *fiber.Ctx, status int, v view.ImportFormView) error {
	active, err := h.Store.ActiveImport(c.UserContext())
	if err != nil {
		return err
	}
	v.CSRF, v.Active = browser.CSRFToken(c), active
	ch, err := h.chrome(c, "Import", "import")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, view.ImportPage(ch, v))
}

// StartImport takes the import form: POST /staff/import, a multipart form
// whose file part ("file") is streamed into the import as it arrives
// (browser.UploadParts), never held whole. A refused file comes back on
// the form with its problems (422), as does a second import while one is
// queued or running (409) and a file over 50 MiB (413); an accepted one
// leads to its page.
func (h *Handler) StartImport(c *fiber.Ctx) error {
	refuse := func(status int, msg string, problems []db.FieldError) error {
		return h.renderImportForm(c, status, view.ImportFormView{Problem: msg, Problems: problems})
	}
	// A second import is refused by Imports.Create (one place), before
	// the file part is read.
	parts, err := browser.UploadParts(c)
	if errors.Is(err, browser.ErrNotMultipart) {
		return refuse(fiber.StatusUnprocessableEntity, "Choose a CSV file to import.", nil)
	} else if err != nil {
		return err
	}
	for {
		part, err := parts.NextPart()
		if err == io.EOF {
			return refuse(fiber.StatusUnprocessableEntity, "Choose a CSV file to import.", nil)
		}
		if err != nil {
			return h.importReadFailure(c, err, refuse)
		}
		if part.FormName() != importField || part.FileName() == "" {
			continue
		}
		im, err := h.Imports.Create(c.UserContext(), &partReader{r: part})
		var coded *db.Error
		switch {
		case err == nil:
			c.Context().SetConnectionClose() // whatever follows the file stays unread
			return c.Redirect("/staff/imports/"+strconv.FormatInt(im.ID, 10), fiber.StatusSeeOther)
		case errors.As(err, &coded) && coded.Code == db.EValidationFailed:
			c.Context().SetConnectionClose()
			return refuse(fiber.StatusUnprocessableEntity, coded.Message, coded.Details)
		case errors.As(err, &coded) && coded.Code == db.EImportRunning:
			c.Context().SetConnectionClose()
			return refuse(fiber.StatusConflict, coded.Message, nil)
		case errors.As(err, new(partReadError)):
			return h.importReadFailure(c, err, refuse)
		}
		return err
	}
}

// importReadFailure answers an upload whose body could not be read to its
// end: past the limit (413 on the form) or cut off (the client is gone).
func (h *Handler) importReadFailure(c *fiber.Ctx, err error, refuse func(int, string, []db.FieldError) error) error {
	c.Context().SetConnectionClose()
	if errors.Is(err, web.ErrBodyTooLarge) {
		return refuse(fiber.StatusRequestEntityTooLarge, "The file is larger than 50 MiB, the most one import takes.", nil)
	}
	return refuse(fiber.StatusBadRequest, "The upload was cut off before the end of the file; nothing was imported.", nil)
}

// partReader reads the file part, marking its failures (the upload cut
// off or too long) apart from the store's.
type partReader struct{ r io.Reader }

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF {
		err = partReadError{err}
	}
	return n, err
}

type partReadError struct{ err error }

func (e partReadError) Error() string { return "read the upload: " + e.err.Error() }
func (e partReadError) Unwrap() error { return e.err }

// ImportStatus is an import's page: GET /staff/imports/{importId}, its
// progress while it is queued or running (the part htmx asks for every
// second), then its outcome.
func (h *Handler) ImportStatus(c *fiber.Ctx) error {
	im, err := web.FindByPath(c, "importId", h.Imports.Find)
	if err != nil {
		return err
	}
	v := view.ImportView{Import: im}
	ch, err := h.chrome(c, "Import "+strconv.FormatInt(im.ID, 10), "import")
	if err != nil {
		return err
	}
	return web.RenderPage(c, view.ImportStatusPage(ch, v), view.ImportStatus(v))
}
