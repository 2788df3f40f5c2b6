package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"petstore/db"
)

// Request bodies. The server streams them (fiber.Config's
// StreamRequestBody), so nothing is read into memory before the route's
// line says how much (Route.Body) and its chain says when (ReadBody):
//
//   - Most routes take at most MaxBody (SPEC §2's 64 KiB), read into
//     memory by ReadBody, so c.Body() and form values work as ever and no
//     one can make them hold more.
//   - A route given a larger Body (a photo upload, SPEC §14: 8 MiB) has it
//     read by ReadBody too, placed after the checks that need no body (the
//     key, the role, the content type): a refused upload costs its
//     headers, not megabytes.
//   - A route whose Body streams (a catalog import's file, a browser's
//     upload) reads it as it arrives (StreamedBody), never whole.
//   - A body announced larger than any route takes is refused from the
//     headers alone (HeaderReceived): not one byte of it is read. One
//     announced larger than its own route takes is refused by ReadBody,
//     inside the route's chain, so the 413 is its audience's answer (the
//     API's headers and counted limit, the console's page).
//
// Whatever a route leaves unread is drained, up to drainLimit, or the
// connection is closed, so unread bytes are never taken for the next
// request on it.

// Body is the request body a route takes (Route.Body).
type Body struct {
	// Max is the most it may be, in bytes; 0 is MaxBody.
	Max int64
	// Stream: the route's handler reads the body as it arrives
	// (StreamedBody), never whole; otherwise ReadBody reads it into memory.
	Stream bool
}

// limit is b's Max, MaxBody when unset.
func (b Body) limit() int64 {
	if b.Max <= 0 {
		return MaxBody
	}
	return b.Max
}

type bodyLocal struct{}

// ReadBody is the step of a route's chain that applies its Body: a body
// announced larger than the route takes, or compressed (415: a few
// kilobytes of Content-Encoding can inflate to gigabytes, and no client of
// ours compresses what it sends), is refused with the connection closed
// and the body unread; otherwise the body is read into memory, at most
// Max bytes (c.Body() and form values hold it), or, for a Body that
// streams, left for the handler (StreamedBody). An audience places it in
// its chains where its order requires; a chain that does not gets it first
// (Routes.Add). Nothing before it may ask for the body: c.Body(), form
// values and c.MultipartForm would read a chunked body to its end.
//
// Routes.Add puts the route's own step in ReadBody's place; where no
// route's Body is known (the middleware of a group) ReadBody applies the
// default, MaxBody read whole.
func ReadBody(c *fiber.Ctx) error { return Body{}.read(c) }

// bind returns handlers with ReadBody in place, bound to b: first when the
// chain does not place it. A Body other than the default is known from the
// chain's start (StreamedBody, finishBody).
func (b Body) bind(handlers []fiber.Handler) []fiber.Handler {
	read := b.read
	hs := make([]fiber.Handler, 0, len(handlers)+2)
	if b != (Body{}) {
		hs = append(hs, func(c *fiber.Ctx) error {
			c.Locals(bodyLocal{}, b)
			return c.Next()
		})
	}
	placed := false
	for _, h := range handlers {
		if isReadBody(h) {
			h, placed = read, true
		}
		hs = append(hs, h)
	}
	if !placed {
		hs = slices.Insert(hs, len(hs)-len(handlers), fiber.Handler(read))
	}
	return hs
}

// read is ReadBody bound to b.
func (b Body) read(c *fiber.Ctx) error {
	req := c.Request()
	max := b.limit()
	if len(req.Header.Peek(bodyRefusedHeader)) > 0 || int64(req.Header.ContentLength()) > max {
		return refuseBody(c, tooLarge(max))
	}
	if enc := strings.TrimSpace(string(req.Header.ContentEncoding())); enc != "" && !strings.EqualFold(enc, "identity") &&
		req.Header.ContentLength() != 0 {
		return refuseBody(c, db.Errorf(EUnsupportedMediaType, "Request bodies must not be compressed (Content-Encoding)."))
	}
	if b.Stream {
		return c.Next()
	}
	if max > MaxBody {
		extendBodyDeadline(c)
	}
	if err := readBody(c, max); err != nil {
		return err
	}
	return c.Next()
}

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
// body was over every route's limit, holding the announced length. It is
// removed from every request first, so no client can set it.
const bodyRefusedHeader = "X-Petstore-Refused-Body-Length"

// HeaderReceived is the server's fasthttp.Server.HeaderReceived: it runs
// once a request's headers are read, before any of its body, and before
// anything knows the route. A body announced (Content-Length) larger than
// any route takes is not read at all: its length moves to
// bodyRefusedHeader, Content-Length becomes 0 and the connection closes
// after the answer, which the route's ReadBody makes its 413. A body
// longer than fasthttp reads with the headers is handed over as a stream
// at once, for the route's ReadBody to read or refuse.
func (t *Routes) HeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	h.Del(bodyRefusedHeader)
	ceiling := max(t.ceiling, MaxBody)
	cfg := fasthttp.RequestConfig{MaxRequestBodySize: int(ceiling)}
	if h.ContentLength() > fasthttpPrefetch {
		// fasthttp reads the first 8 KiB of a longer body before the app
		// sees the request; a body trickled in would hold the route's
		// checks that long. A limit of one byte has it hand the request
		// over as soon as some of the body is in and stream the rest. (A
		// chunked body is always streamed.)
		cfg.MaxRequestBodySize = 1
	}
	if n := h.ContentLength(); int64(n) > ceiling {
		h.Set(bodyRefusedHeader, strconv.Itoa(n))
		h.SetContentLength(0)
		h.Del(fiber.HeaderExpect) // no "100 Continue": the client need not send it
		h.SetConnectionClose()
	}
	return cfg
}

// finishBodies is the app's middleware for request bodies, around every
// route: after it, a body the route left unread is drained or the
// connection closed (finishBody).
func finishBodies(c *fiber.Ctx) error {
	err := c.Next()
	finishBody(c)
	return err
}

// extendBodyDeadline gives the rest of a large body StreamedReadTimeout to
// arrive, from now: a route allowed a larger body gets it once the key and
// the role, or the session and the CSRF token, have passed (ReadBody,
// BodyReader.Open).
func extendBodyDeadline(c *fiber.Ctx) {
	if conn := c.Context().Conn(); conn != nil {
		_ = conn.SetReadDeadline(time.Now().Add(StreamedReadTimeout))
	}
}

// ReadBodyAtMost reads the body of a route whose Body streams into memory
// when it is at most max bytes, as ReadBody reads every other route's; a
// longer one is 413 and the connection closes. The browser kit's CSRF
// check reads a small form posted to an upload route with it.
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
	if _, larger := c.Locals(bodyLocal{}).(Body); larger {
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

// ErrBodyTooLarge: a body read with StreamedBody went on past its route's
// limit.
var ErrBodyTooLarge = errors.New("the request body is larger than its route takes")

// ErrBodyGated: a body read with StreamedBody went on past the gate
// BodyReader.Gate set, before Open.
var ErrBodyGated = errors.New("the request body went on past what may be read before its checks")

type bodyReaderLocal struct{}

// StreamedBody is the body of a route whose Body streams, read as it
// arrives and never held whole (a catalog import's file, a browser's
// upload), the same reader for every caller during the request; false on
// any other route. Reading past the route's Max (a chunked body: one
// announced longer was refused by ReadBody) fails with ErrBodyTooLarge.
// Open it once the route's checks have passed; BodyError answers its
// errors.
func StreamedBody(c *fiber.Ctx) (*BodyReader, bool) {
	if r, ok := c.Locals(bodyReaderLocal{}).(*BodyReader); ok {
		return r, true
	}
	b, _ := c.Locals(bodyLocal{}).(Body)
	if !b.Stream {
		return nil, false
	}
	var src io.Reader
	if req := c.Request(); req.IsBodyStream() {
		src = req.BodyStream()
	} else {
		src = bytes.NewReader(req.Body()) // the bytes fasthttp read with the headers
	}
	r := &BodyReader{r: src, limit: b.limit(), max: b.limit(), c: c}
	c.Locals(bodyReaderLocal{}, r)
	return r, true
}

// BodyReader reads a streamed body up to a limit: the route's Max, or a
// gate below it until the route's checks have passed. Like
// http.MaxBytesReader it reads one byte past the limit to tell a body that
// ends there from one that goes on.
type BodyReader struct {
	r           io.Reader
	read, limit int64
	max         int64
	c           *fiber.Ctx
	err         error
}

// Gate lets at most n bytes of the body be read until Open: the browser
// kit's CSRF check reads an upload's first part through it, so a forged
// post costs at most n bytes.
func (b *BodyReader) Gate(n int64) { b.limit = min(n, b.max) }

// Open lets the body be read up to the route's Max and gives its rest
// StreamedReadTimeout to arrive, from now (SPEC §17): call it once the
// route's checks have passed.
func (b *BodyReader) Open() *BodyReader {
	b.limit = b.max
	extendBodyDeadline(b.c)
	return b
}

func (b *BodyReader) Read(p []byte) (int, error) {
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
	if int64(n) > left {
		n = int(left)
		b.read = b.limit
		b.err = ErrBodyTooLarge
		if b.limit < b.max {
			b.err = ErrBodyGated
		}
		return n, b.err
	}
	b.read += int64(n)
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

// BodyError answers err, met while reading a StreamedBody: 413 past the
// limit, 400 when the body could not be read (the client went away), the
// connection closed after the answer since the rest stays unread; any
// other error is returned as it is.
func BodyError(c *fiber.Ctx, err error) error {
	b, _ := c.Locals(bodyLocal{}).(Body)
	var coded *db.Error
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return refuseBody(c, tooLarge(b.limit()))
	case errors.As(err, &coded), err == nil:
		return err
	case errors.As(err, new(bodyReadError)):
		return refuseBody(c, BadRequest("The request body could not be read."))
	}
	return err
}
