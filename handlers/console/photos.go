package console

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/photo"
)

// photoField names the upload form's file input.
const photoField = "photos"

// UploadLimit is the most a photo upload's body may be (web.Body):
// as many photos as a pet may have, each at most the upload limit (SPEC
// §14: 8 × 8 MiB), and 1 MiB for the token, multipart's headers and slack.
func (h *Handler) UploadLimit() int64 {
	return db.MaxPhotos*h.photoLimits().MaxBytes + 1<<20
}

// photoLimits are the limits a console upload is processed with: the
// handler's, any zero field SPEC §14's.
func (h *Handler) photoLimits() photo.Limits {
	l, d := h.PhotoLimits, photo.DefaultLimits()
	l.MaxBytes, l.MaxPixels, l.MaxSide = cmp.Or(l.MaxBytes, d.MaxBytes), cmp.Or(l.MaxPixels, d.MaxPixels), cmp.Or(l.MaxSide, d.MaxSide)
	return l
}

// UploadPhotos adds photos to a pet: POST /staff/pets/{petId}/photos, a
// multipart form of one or more files named "photos", from the plain form
// or console.js (which shows the upload's progress). The body is read a
// part at a time (browser.UploadParts), each file streamed through
// photo.Worker.Reencode with its own 8 MiB limit, so memory holds one image
// at a time however many are sent. A file that is not an image, too large
// or too many pixels is refused with its reason while the others are
// stored; past the pet's 8 photos the rest are refused too. Once 8 files
// have been seen the rest of the body is not read. The answer is the
// photos section (htmx, console.js) or the edit page with the outcome;
// but when the worker's line is full before any photo was added, it is
// SPEC §17's 503 with Retry-After, on the console's error page.
func (h *Handler) UploadPhotos(c *fiber.Ctx) error {
	p, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	parts, err := browser.UploadParts(c)
	if errors.Is(err, browser.ErrNotMultipart) {
		return h.photosDone(c, p.ID, fiber.StatusOK, components.Flash{Kind: components.FlashError, Text: "Choose one or more photos to upload."}, "photos-status")
	} else if err != nil {
		return err
	}
	out, err := h.receivePhotos(c, p, parts)
	if err != nil {
		return err
	}
	return h.photosDone(c, p.ID, fiber.StatusOK, out.message(), "photos-status")
}

// uploadOutcome is what became of an upload's files.
type uploadOutcome struct {
	added, files int
	// refused lists "“name”: reason" for each file not added.
	refused []string
	// stopped says why the rest of the upload was not read, if it was not.
	stopped string
}

// receivePhotos stores the upload's files one at a time. Errors are only
// those the upload's outcome cannot explain: the database failing, or the
// worker's line full before any photo was added (503).
func (h *Handler) receivePhotos(c *fiber.Ctx, p *db.Pet, parts *multipart.Reader) (uploadOutcome, error) {
	ctx, limits := c.UserContext(), h.photoLimits()
	room := db.MaxPhotos - len(p.Photos)
	var out uploadOutcome
	for {
		part, err := parts.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			out.stopped = readFailure(err, h.UploadLimit())
			return out, nil
		}
		// Other fields (the token sent again, a button's name) are skipped;
		// so is an empty file input, which browsers send without a name.
		if part.FormName() != photoField || part.FileName() == "" {
			continue
		}
		if out.files == db.MaxPhotos {
			out.stopped = fmt.Sprintf("At most %d photos can be sent at once: the rest of the upload was not read.", db.MaxPhotos)
			return out, nil
		}
		out.files++
		name := fileLabel(part.FileName())
		if room <= 0 {
			out.refused = append(out.refused, name+": "+fullReason(p.Name))
			continue
		}
		res, err := h.Photos.Reencode(ctx, part, part.Header.Get(fiber.HeaderContentType), limits)
		if errors.Is(err, photo.ErrBusy) && out.added == 0 {
			return out, web.Busy("Too many photos are waiting to be processed: none of this upload was added. Try again in a few seconds.")
		}
		if reason := refusedPhoto(err, limits); reason != "" {
			out.refused = append(out.refused, name+": "+reason)
			if errors.Is(err, photo.ErrTimeout) || errors.Is(err, photo.ErrBusy) {
				out.stopped = "The server is busy: the rest of the upload was not processed. Try again shortly."
				return out, nil
			}
			continue
		} else if err != nil {
			out.stopped = readFailure(err, h.UploadLimit())
			return out, nil
		}
		_, err = h.Store.AddPhoto(ctx, p.ID, db.NewPhoto{
			Large:  db.PhotoSize{JPEG: res.Large.Bytes, Width: res.Large.Width, Height: res.Large.Height},
			Medium: db.PhotoSize{JPEG: res.Medium.Bytes, Width: res.Medium.Width, Height: res.Medium.Height},
			Thumb:  db.PhotoSize{JPEG: res.Thumb.Bytes, Width: res.Thumb.Width, Height: res.Thumb.Height},
		})
		switch db.ErrorCode(err) {
		case "":
			out.added++
			room--
		case db.ETooManyPhotos: // another upload filled the pet meanwhile
			room = 0
			out.refused = append(out.refused, name+": "+fullReason(p.Name))
		default:
			return out, err
		}
	}
}

// refusedPhoto is why photo.Reencode refused a file, in words for staff;
// "" for success and for failures of the request rather than the file.
func refusedPhoto(err error, l photo.Limits) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, photo.ErrUnsupportedType):
		return "not an image: send JPEG, PNG, GIF or WebP files."
	case errors.Is(err, photo.ErrTooLarge):
		return fmt.Sprintf("too large: at most %s a photo.", mebibytes(l.MaxBytes))
	case errors.Is(err, photo.ErrTooManyPixels):
		return fmt.Sprintf("too many pixels: at most %d megapixels, %d on a side.", l.MaxPixels/1_000_000, l.MaxSide)
	case errors.Is(err, photo.ErrUndecodable):
		return "not an image that can be read (JPEG, PNG, GIF or WebP)."
	case errors.Is(err, photo.ErrTimeout):
		return "could not be processed in time."
	case errors.Is(err, photo.ErrBusy):
		return "not processed: too many photos are waiting."
	}
	return ""
}

// fullReason is why a file past the pet's last free place was refused.
func fullReason(pet string) string {
	return fmt.Sprintf("%s has %d photos, the most a pet may have.", pet, db.MaxPhotos)
}

// readFailure says why the rest of an upload could not be read.
func readFailure(err error, limit int64) string {
	if errors.Is(err, web.ErrBodyTooLarge) {
		return fmt.Sprintf("The upload is larger than %s: the rest of it was not read.", mebibytes(limit))
	}
	return "The rest of the upload could not be read."
}

func mebibytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// maxMessageBytes bounds an upload's outcome: it crosses the redirect
// of the plain form in the session cookie, which holds about 4 KiB in all.
const maxMessageBytes = 1000

// message is the outcome as the photos section shows it: what was added,
// then a line per file not added, as many as fit maxMessageBytes (names
// are cut to 40 characters), then how many more were not.
func (o uploadOutcome) message() components.Flash {
	var summary string
	switch {
	case o.files == 0 && o.stopped == "":
		return components.Flash{Kind: components.FlashError, Text: "Choose one or more photos to upload."}
	case o.added == 1:
		summary = "Added 1 photo."
	case o.added > 1:
		summary = fmt.Sprintf("Added %d photos.", o.added)
	default:
		summary = "No photo was added."
	}
	if o.stopped != "" {
		summary += " " + o.stopped
	}
	if n := len(o.refused); n == 1 {
		summary += " 1 file was not added:"
	} else if n > 1 {
		summary += fmt.Sprintf(" %d files were not added:", n)
	}
	kind := components.FlashSuccess
	if len(o.refused) > 0 || o.stopped != "" {
		kind = components.FlashError
	}
	lines, size := []string{summary}, len(summary)
	for i, line := range o.refused {
		if size+len(line)+1 > maxMessageBytes-40 {
			lines = append(lines, fmt.Sprintf("and %d more files.", len(o.refused)-i))
			break
		}
		lines, size = append(lines, line), size+len(line)+1
	}
	return components.Flash{Kind: kind, Text: strings.Join(lines, "\n")}
}

// fileLabel is a file's name as a message may show it: printable, one
// line, at most 40 characters, in quotes.
func fileLabel(name string) string {
	name = strings.Join(strings.Fields(browser.Printable(name, true)), " ")
	if utf8.RuneCountInString(name) > 40 {
		name = string([]rune(name)[:39]) + "…"
	}
	return "“" + name + "”"
}
