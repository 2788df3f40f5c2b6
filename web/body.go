package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"petstore/db"
)

// The body limits decide how much of a request body the app reads, per
// route, and when. The server streams request bodies (fiber.Config's
// StreamRequestBody), so nothing is read into memory before they say so:
//
//   - Most routes take at most MaxBody (SPEC §2's 64 KiB). The body
//     handler reads their bodies before any other handler runs, so c.Body()
//     and form values work as ever, and no one can make them hold more.
//   - A route given a larger Route.Body (a photo upload, SPEC §14: 8 MiB)
//     reads its body itself, with ReadBody, placed after the checks that
//     need no body (the key, the role, the content type): a refused upload
//     costs its headers, not megabytes.
//   - A body announced larger than its route takes is refused from the
//     headers alone (HeaderReceived): not one byte of it is read.
//
// Whatever a route leaves unread is drained, up to drainLimit, or the
// connection is closed, so unread bytes are never taken for the next
// request on it. The limits are read off the route table (Routes), the
// same lines Fiber routes by.

// drainLimit is how much of a body its route did not read is read and
// dropped to keep the connection open for the next request; past it the
// connection is closed instead (net/http drains 256 KiB the same way).
const drainLimit = 256 << 10

// StreamedReadTimeout is how long a route allowed a larger body gives its
// body to arrive once the route has checked the request (ExtendBodyDeadline):
// 8 MiB at 15 s (the server's ReadTimeout) would need 4.5 Mbit/s of upload,
// more than many phones have. Until then the request has the server's
// ReadTimeout, like every other: a request nobody may make cannot hold a
// connection for 90 s (SPEC §17).
const StreamedReadTimeout = 90 * time.Second

// bodyRefusedHeader is set by HeaderReceived on a request whose announced
// body was over its route's limit, holding the announced length. It is
// removed from every request first, so no client can set it.
const bodyRefusedHeader = "X-Petstore-Refused-Body-Length"

// HeaderReceived is the server's fasthttp.Server.HeaderReceived: it runs
// once a request's headers are read, before any of its body. A body
// announced (Content-Length) larger than the route takes is not read at
// all: its length moves to bodyRefusedHeader, Content-Length becomes 0 and
// the connection closes after the answer, which the body handler makes a
// 413. A route allowed a larger body gets its longer deadline only once its
// checks have passed (ExtendBodyDeadline).
func (t *Routes) HeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	h.Del(bodyRefusedHeader)
	max, streamed := t.bodyLimit(h.Method(), requestPath(h.RequestURI()))
	cfg := fasthttp.RequestConfig{MaxRequestBodySize: int(max)}
	if streamed && h.ContentLength() > fasthttpPrefetch {
		// fasthttp reads the first 8 KiB of a longer body before the app
		// sees the request; a body trickled in would hold the route's
		// checks that long. A limit of one byte has it hand the request
		// over as soon as some of the body is in and stream the rest, which
		// the route reads (or refuses) within its own limit
		// (bodyLimitLocal).
		cfg.MaxRequestBodySize = 1
	}
	if n := h.ContentLength(); int64(n) > max {
		h.Set(bodyRefusedHeader, strconv.Itoa(n))
		h.SetContentLength(0)
		h.Del(fiber.HeaderExpect) // no "100 Continue": the client need not send it
		h.SetConnectionClose()
	}
	return cfg
}

// requestPath is the path of a request target as Fiber routes it: without
// the query, and without scheme and host in the absolute form.
func requestPath(uri []byte) []byte {
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if len(uri) > 0 && uri[0] != '/' {
		if i := bytes.Index(uri, []byte("://")); i >= 0 {
			rest := uri[i+3:]
			if j := bytes.IndexByte(rest, '/'); j >= 0 {
				return rest[j:]
			}
			return []byte("/")
		}
	}
	return uri
}

type bodyLimitLocal struct{}

// bodies is the app's middleware for request bodies; it runs before every
// route. It refuses a body that is compressed (415: a few kilobytes of
// Content-Encoding can inflate to gigabytes, and no client of ours
// compresses what it sends) or announced or found larger than its route
// takes (413, the connection closed). It reads the body of every route but
// those given a larger Route.Body, at most MaxBody bytes. After the route, a body it left
// unread is drained or the connection closed.
func (t *Routes) bodies(c *fiber.Ctx) error {
	req := c.Request()
	max, streamed := t.bodyLimit(c.Request().Header.Method(), c.Request().URI().PathOriginal())
	if len(req.Header.Peek(bodyRefusedHeader)) > 0 {
		return refuseBody(c, tooLarge(max))
	}
	if n := int64(req.Header.ContentLength()); n > max {
		return refuseBody(c, tooLarge(max))
	}
	if enc := strings.TrimSpace(string(req.Header.ContentEncoding())); enc != "" && !strings.EqualFold(enc, "identity") &&
		req.Header.ContentLength() != 0 {
		return refuseBody(c, db.Errorf(EUnsupportedMediaType, "Request bodies must not be compressed (Content-Encoding)."))
	}
	if streamed {
		c.Locals(bodyLimitLocal{}, max)
	} else if err := readBody(c, max); err != nil {
		return err
	}
	err := c.Next()
	finishBody(c)
	return err
}

// ReadBody reads the body of a route allowed a larger one (Route.Body), at most
// its limit, so that c.Body() holds it: a longer body is 413 and the
// connection closes without reading the rest. Put it after the checks that
// need no body.
//
// On such a route nothing may ask for the body before ReadBody: c.Body(),
// form values and c.MultipartForm read a chunked body to its end, however
// long (a body with a Content-Length is bounded by the body handler's check). CSRF
// knows such routes: it reads a form's token from the first part of a
// multipart body only (UploadParts then reads the rest, part by part).
func ReadBody(c *fiber.Ctx) error {
	max, ok := c.Locals(bodyLimitLocal{}).(int64)
	if !ok {
		return errors.New("web.ReadBody on a route without a larger Route.Body")
	}
	ExtendBodyDeadline(c)
	if err := readBody(c, max); err != nil {
		return err
	}
	return c.Next()
}

// ExtendBodyDeadline gives the rest of a large body StreamedReadTimeout to
// arrive, from now: a route allowed a larger body calls it (through
// ReadBody, or before reading an upload's parts) once the key and the role,
// or the session and the CSRF token, have passed.
func ExtendBodyDeadline(c *fiber.Ctx) {
	if conn := c.Context().Conn(); conn != nil {
		_ = conn.SetReadDeadline(time.Now().Add(StreamedReadTimeout))
	}
}

// StreamedLimit is the body limit of a route that reads its body itself
// (a larger Route.Body), false on every other route: the browser kit's CSRF check and
// upload reader need it.
func StreamedLimit(c *fiber.Ctx) (int64, bool) {
	max, ok := c.Locals(bodyLimitLocal{}).(int64)
	return max, ok
}

// ReadBodyAtMost reads the body of a route that reads its own (a larger Route.Body) into
// memory when it is at most max bytes, as the body handler reads every other
// route's; a longer one is 413 and the connection closes. The browser
// kit's CSRF check reads a small form posted to an upload route with it.
func ReadBodyAtMost(c *fiber.Ctx, max int64) error {
	if int64(c.Request().Header.ContentLength()) > max {
		return refuseBody(c, tooLarge(max))
	}
	return readBody(c, max)
}

// fasthttpPrefetch is how much of a body fasthttp reads with the headers
// before it streams the rest: a body this short is in memory already.
const fasthttpPrefetch = 8 << 10

// readBody moves a streamed body of at most max bytes into memory. A body
// of known length (at most max: the body handler checked) is read as long as it
// says; a chunked one up to max+1 bytes, one more being how it is found too
// long without ever holding more.
func readBody(c *fiber.Ctx, max int64) error {
	req := c.Request()
	if !req.IsBodyStream() {
		return nil // read already
	}
	var body []byte
	var err error
	switch n := req.Header.ContentLength(); {
	case n >= 0 && n <= fasthttpPrefetch:
		req.Body() // in fasthttp's own buffer, no copy
		return nil
	case n > 0:
		body = make([]byte, n)
		_, err = io.ReadFull(req.BodyStream(), body)
	default:
		body, err = io.ReadAll(io.LimitReader(req.BodyStream(), max+1))
	}
	switch {
	case err != nil:
		return refuseBody(c, BadRequest("The request body could not be read."))
	case int64(len(body)) > max:
		return refuseBody(c, tooLarge(max))
	}
	req.SetBodyRaw(body)
	return nil
}

// finishBody disposes of a body the route did not read: it is read and
// dropped when it ends within drainLimit bytes, so the connection can
// carry the next request; otherwise the connection is closed. An answer
// that closes the connection already reads none of it, and neither does
// one on a route allowed a larger body: a body such a route left unread was
// refused before it was read (no key, the wrong role, the limit, CSRF),
// and reading it would let anyone hold the connection (SPEC §17).
func finishBody(c *fiber.Ctx) {
	req := c.Request()
	if !req.IsBodyStream() || c.Response().ConnectionClose() {
		return
	}
	if _, streamed := c.Locals(bodyLimitLocal{}).(int64); streamed {
		c.Context().SetConnectionClose()
		return
	}
	n, err := io.Copy(io.Discard, io.LimitReader(req.BodyStream(), drainLimit+1))
	if err != nil || n > drainLimit {
		c.Context().SetConnectionClose()
	}
}

// refuseBody closes the connection after the answer, since the body (or
// its rest) stays unread, and returns err.
func refuseBody(c *fiber.Ctx, err error) error {
	c.Context().SetConnectionClose()
	return err
}

// tooLarge is the 413 for a body over max bytes.
func tooLarge(max int64) error {
	return db.Errorf(EPayloadTooLarge, "The request body is larger than %s.", byteSize(max))
}

// byteSize writes a limit as people read it: "64 KiB", "8 MiB".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ErrBodyTooLarge: a body read with BodyStream went on past its route's
// limit.
var ErrBodyTooLarge = errors.New("the request body is larger than its route takes")

// BodyStream is the body of a route that reads its own (a larger
// Route.Body) as a stream, never held whole: a catalog import's file is
// checked and stored as it arrives. Reading past the route's limit (a
// chunked body: one announced longer was refused from its headers) fails
// with ErrBodyTooLarge. It gives the body StreamedReadTimeout from now:
// call it once the route's checks have passed. StreamedBodyError is the
// answer to its errors.
func BodyStream(c *fiber.Ctx) io.Reader {
	ExtendBodyDeadline(c)
	max, _ := StreamedLimit(c)
	var r io.Reader
	if req := c.Request(); req.IsBodyStream() {
		r = req.BodyStream()
	} else {
		r = bytes.NewReader(req.Body())
	}
	return &limitedBody{r: r, left: max}
}

// limitedBody reads at most left bytes, then ErrBodyTooLarge if more follow.
type limitedBody struct {
	r    io.Reader
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	if int64(n) > b.left {
		b.left = 0
		return n - 1, ErrBodyTooLarge
	}
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		err = bodyReadError{err}
	}
	return n, err
}

// bodyReadError is a failure to read the request body itself (the client
// went away, the read deadline passed).
type bodyReadError struct{ err error }

func (e bodyReadError) Error() string { return "read request body: " + e.err.Error() }
func (e bodyReadError) Unwrap() error { return e.err }

// StreamedBodyError answers err, met while reading a BodyStream: 413 past
// the limit, 400 when the body could not be read (the client went away),
// the connection closed after the answer since the rest stays unread; any
// other error is returned as it is.
func StreamedBodyError(c *fiber.Ctx, err error) error {
	max, _ := StreamedLimit(c)
	var coded *db.Error
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return refuseBody(c, tooLarge(max))
	case errors.As(err, &coded), err == nil:
		return err
	case errors.As(err, new(bodyReadError)):
		return refuseBody(c, BadRequest("The request body could not be read."))
	}
	return err
}
