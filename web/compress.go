package web

import (
	"bytes"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"petstore/web/lru"
)

// Compress compresses text answers (HTML, JSON, CSS, JS, SVG) of at least
// minCompressSize bytes in the coding the client asks for (Accept-Encoding:
// br, gzip), with fasthttp's compressor at its fastest level (what Fiber's
// compress middleware runs). It leaves alone: smaller bodies, which fit one
// packet either way, so encoding them would cost both ends CPU for no
// round trip saved (the size gziphandler and most CDNs use); types that
// are not text (fasthttp's rule: images are compressed already); the event
// streams (an SSE stream must reach the client event by event); and files
// that are compressed already by their name. Every text answer (and 304)
// says Vary: Accept-Encoding, and a compressed one carries its own strong
// ETag (encodedTag).
//
// An answer with a strong ETag (Conditional's: the hash of its body) is
// compressed once per coding: the encoded bytes are kept under the path,
// the tag and the coding, within a memory budget, and reused while the
// route answers the same body.
func Compress() fiber.Handler {
	compressor := fasthttp.CompressHandlerBrotliLevel(func(*fasthttp.RequestCtx) {},
		fasthttp.CompressBrotliBestSpeed, fasthttp.CompressBestSpeed)
	encoded := lru.NewSized(encodedEntries, encodedBudget, func(b []byte) int { return len(b) })
	return func(c *fiber.Ctx) error {
		if !compressible(c) {
			return c.Next()
		}
		if err := c.Next(); err != nil {
			return err
		}
		// A streaming route is known only once routed (markStreaming runs
		// in its chain, after this middleware's check above): its body is a
		// stream, which reading here would hold whole in memory.
		if IsStreaming(c) || c.Response().IsBodyStream() {
			return nil
		}
		if !isText(string(c.Response().Header.ContentType())) && c.Response().StatusCode() != fiber.StatusNotModified {
			return nil
		}
		c.Vary(fiber.HeaderAcceptEncoding)
		if len(c.Response().Body()) < minCompressSize || len(c.Response().Header.ContentEncoding()) > 0 {
			return nil
		}
		etag := c.GetRespHeader(fiber.HeaderETag)
		kept := ""
		if strings.HasPrefix(etag, `"`) {
			if enc := acceptedCoding(c); enc != "" {
				kept = c.Path() + " " + etag + " " + enc
				if b, ok := encoded.Get(kept); ok {
					c.Response().SetBody(b) // a copy: the kept bytes are shared
					c.Response().Header.SetContentEncoding(enc)
					c.Set(fiber.HeaderETag, encodedTag(etag, enc))
					return nil
				}
			}
		}
		compressor(c.Context())
		if enc := string(c.Response().Header.ContentEncoding()); enc != "" && etag != "" {
			c.Set(fiber.HeaderETag, encodedTag(etag, enc))
			if kept != "" && strings.HasSuffix(kept, " "+enc) {
				encoded.Add(kept, bytes.Clone(c.Response().Body()))
			}
		}
		return nil
	}
}

// encodedEntries and encodedBudget bound the compressed bodies Compress
// keeps.
const (
	encodedEntries = 4096
	encodedBudget  = 4 << 20
)

// acceptedCoding is the coding fasthttp's compressor picks for the
// request (br, then gzip, then deflate), "" for none.
func acceptedCoding(c *fiber.Ctx) string {
	h := &c.Request().Header
	for _, enc := range tagEncodings {
		if h.HasAcceptEncoding(enc) {
			return enc
		}
	}
	return ""
}

// minCompressSize is the smallest body Compress encodes: about one
// Ethernet packet's payload.
const minCompressSize = 1400

// compressible reports whether the request may get a compressed answer:
// not an event stream, not a file compressed already.
func compressible(c *fiber.Ctx) bool {
	p := c.Path()
	if IsStreaming(c) || strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
		return false
	}
	switch path.Ext(p) {
	case ".gz", ".br", ".zip", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".woff", ".woff2":
		return false
	}
	return true
}

// isText reports whether a content type is one Compress compresses.
func isText(contentType string) bool {
	ct := strings.ToLower(contentType)
	return strings.HasPrefix(ct, "text/") && !strings.HasPrefix(ct, "text/event-stream") ||
		strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/javascript") ||
		strings.HasPrefix(ct, "image/svg+xml")
}
