package browser

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"

	"github.com/gofiber/fiber/v2"

	"petstore/web"
)

// A browser's file upload (a multipart/form-data form, like the console's
// photos) on a route whose web.Body streams is read as a stream, one part
// after another, never as a whole form: c.MultipartForm would read every
// file first (up to the route's tens of megabytes), and fasthttp would
// spill them to disk.
//
// Its CSRF token is read the same way. A plain form (no JavaScript, so no
// X-CSRF-Token header) puts the _csrf field before its file inputs, and
// browsers send fields in document order: the token is the first part.
// CSRF reads that part through the body's gate (web.BodyReader.Gate),
// which lets at most csrfPrefixMax bytes through until the token is
// proven, and hands the multipart reader, positioned after it, to the
// route (UploadParts). A forged or stale post thus costs the server at
// most 8 KiB of its body: the refusal (403) closes the connection without
// reading or draining the rest.

// csrfPrefixMax is how much of an upload's body may be read before its
// CSRF token is proven: the boundary, the first part's headers and the
// token take a few hundred bytes, and mime/multipart reads up to 4 KiB
// ahead of what it has handed out, looking for the next boundary. With
// less room, whether a token that ends near 4 KiB got through would
// depend on how the body's bytes happened to arrive.
const csrfPrefixMax = 8 << 10

// maxTokenLen bounds the token part read: CSRF's tokens are 43 characters.
const maxTokenLen = 256

// ErrNotMultipart: the body of an upload route is not multipart/form-data
// (with a boundary), so it holds no files.
var ErrNotMultipart = errors.New("the request is not a multipart/form-data upload")

type multipartLocal struct{}

// UploadParts returns the parts of a file upload's body, on a route whose
// web.Body streams (in a group with CSRF): the reader CSRF has read the
// token part from, or a new one over the body when the token came in the
// X-CSRF-Token header. Reading goes no further than the route's limit
// (web.ErrBodyTooLarge past it, wrapped in the reader's error;
// web.BodyError answers it). A body that is not multipart/form-data is
// ErrNotMultipart.
func UploadParts(c *fiber.Ctx) (*multipart.Reader, error) {
	body, ok := web.StreamedBody(c)
	if !ok {
		return nil, errors.New("browser.UploadParts on a route whose web.Body does not stream")
	}
	body.Open() // the route has checked the session (and CSRF) by now
	if mr, ok := c.Locals(multipartLocal{}).(*multipart.Reader); ok {
		return mr, nil
	}
	boundary, ok := formBoundary(c)
	if !ok {
		return nil, ErrNotMultipart
	}
	return multipart.NewReader(body, boundary), nil
}

// formToken is the CSRF token a form sent in its body. On an upload route
// a multipart body's token must be its first part, read through the gate
// (see above); any other body there is an ordinary small form, read like
// every route's, at most web.MaxBody. Elsewhere it is the form value, from
// the body ReadBody has read already. "" when there is none.
func formToken(c *fiber.Ctx) (string, error) {
	body, streamed := web.StreamedBody(c)
	if !streamed {
		return bodyField(c, CSRFField), nil
	}
	boundary, ok := formBoundary(c)
	if !ok {
		if err := web.ReadBodyAtMost(c, web.MaxBody); err != nil {
			return "", err
		}
		return bodyField(c, CSRFField), nil
	}
	body.Gate(csrfPrefixMax)
	mr := multipart.NewReader(body, boundary)
	part, err := mr.NextPart()
	if err != nil || part.FormName() != CSRFField || part.FileName() != "" {
		return "", nil
	}
	token, err := io.ReadAll(io.LimitReader(part, maxTokenLen+1))
	if err != nil || len(token) > maxTokenLen {
		return "", nil
	}
	c.Locals(multipartLocal{}, mr)
	return string(token), nil
}

// formBoundary is the boundary of a multipart/form-data body.
func formBoundary(c *fiber.Ctx) (string, bool) {
	mediaType, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mediaType != fiber.MIMEMultipartForm || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// bodyField is a field of the form in the request's body: never one of its
// URL's query (c.FormValue would take either), so a token never travels
// in a URL that logs, Referer headers and history keep (SPEC §17).
func bodyField(c *fiber.Ctx, name string) string {
	if v := c.Request().PostArgs().Peek(name); len(v) > 0 {
		return string(v)
	}
	if form, err := c.MultipartForm(); err == nil {
		if vs := form.Value[name]; len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}
