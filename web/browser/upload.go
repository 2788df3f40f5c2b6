package browser

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"

	"github.com/gofiber/fiber/v2"

	"petstore/web"
)

// A browser's file upload (a multipart/form-data form, like the console's
// photos) on a route web.BodyLimits.Allow gives a large body is read as a
// stream, one part after another, never as a whole form: c.MultipartForm
// would read every file first (up to the route's tens of megabytes), and
// fasthttp would spill them to disk.
//
// Its CSRF token is read the same way. A plain form (no JavaScript, so no
// X-CSRF-Token header) puts the _csrf field before its file inputs, and
// browsers send fields in document order: the token is the first part.
// CSRF reads that part through a gate that lets at most csrfPrefixMax bytes
// of the body through until the token is proven, and hands the reader,
// positioned after it, to the route (UploadParts). A forged or stale post
// thus costs the server at most 8 KiB of its body: the refusal (403)
// closes the connection without reading or draining the rest.

// csrfPrefixMax is how much of an upload's body may be read before its
// CSRF token is proven: the boundary, the first part's headers and the
// token take a few hundred bytes, and mime/multipart reads up to 4 KiB
// ahead of what it has handed out, looking for the next boundary. With
// less room, whether a token that ends near 4 KiB got through would
// depend on how the body's bytes happened to arrive.
const csrfPrefixMax = 8 << 10

// maxTokenLen bounds the token part read: CSRF's tokens are 43 characters.
const maxTokenLen = 256

// ErrUploadTooLarge: a chunked upload went on past its route's limit
// (web.BodyLimits.Allow); a body announced longer is refused from its headers.
var ErrUploadTooLarge = errors.New("the upload is larger than this form takes")

// ErrNotMultipart: the body of an upload route is not multipart/form-data
// (with a boundary), so it holds no files.
var ErrNotMultipart = errors.New("the request is not a multipart/form-data upload")

// errTokenNotFirst: the body's first 8 KiB hold no complete CSRF token part.
var errTokenNotFirst = errors.New("the CSRF token is not the upload's first part")

type multipartLocal struct{}

// UploadParts returns the parts of a file upload's body, on a route
// web.BodyLimits.Allow names (in a group with CSRF): the reader CSRF has read
// the token part from, or a new one over the body when the token came in
// the X-CSRF-Token header. Reading goes no further than the route's limit
// (ErrUploadTooLarge past it, wrapped in the reader's error). A body that
// is not multipart/form-data is ErrNotMultipart.
func UploadParts(c *fiber.Ctx) (*multipart.Reader, error) {
	web.ExtendBodyDeadline(c) // the route has checked the session (and CSRF) by now
	if mr, ok := c.Locals(multipartLocal{}).(*multipart.Reader); ok {
		return mr, nil
	}
	max, ok := web.StreamedLimit(c)
	if !ok {
		return nil, errors.New("browser.UploadParts on a route web.BodyLimits.Allow did not name")
	}
	boundary, ok := formBoundary(c)
	if !ok {
		return nil, ErrNotMultipart
	}
	return multipart.NewReader(&uploadBody{r: bodyReader(c), limit: max, max: max}, boundary), nil
}

// formToken is the CSRF token a form sent in its body. On an upload route
// a multipart body's token must be its first part, read through the gate
// (see above); any other body there is an ordinary small form, read like
// every route's, at most web.MaxBody. Elsewhere it is the form value, from
// the body web.BodyLimits has read already. "" when there is none.
func formToken(c *fiber.Ctx) (string, error) {
	max, streamed := web.StreamedLimit(c)
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
	body := &uploadBody{r: bodyReader(c), limit: csrfPrefixMax, max: max}
	mr := multipart.NewReader(body, boundary)
	part, err := mr.NextPart()
	if err != nil || part.FormName() != CSRFField || part.FileName() != "" {
		return "", nil
	}
	token, err := io.ReadAll(io.LimitReader(part, maxTokenLen+1))
	if err != nil || len(token) > maxTokenLen {
		return "", nil
	}
	body.limit = max
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

// bodyReader reads the request body where it is: the stream still to be
// read, or the bytes fasthttp read with the headers. (c.Body() would read
// a stream to its end.)
func bodyReader(c *fiber.Ctx) io.Reader {
	if req := c.Request(); req.IsBodyStream() {
		return req.BodyStream()
	}
	return bytes.NewReader(c.Request().Body())
}

// uploadBody reads a request body up to limit bytes: past it, while the
// limit is the CSRF gate (below max), errTokenNotFirst, else
// ErrUploadTooLarge. Like http.MaxBytesReader it reads one byte past the
// limit to tell a body that ends there from one that goes on.
type uploadBody struct {
	r           io.Reader
	read, limit int64
	max         int64
	err         error
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	left := b.limit - b.read
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := b.r.Read(p)
	if int64(n) <= left {
		b.read += int64(n)
		return n, err
	}
	n = int(left)
	b.read = b.limit
	b.err = ErrUploadTooLarge
	if b.limit < b.max {
		b.err = errTokenNotFirst
	}
	return n, b.err
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
