package web

import (
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
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
func Compress() fiber.Handler {
	compressor := fasthttp.CompressHandlerBrotliLevel(func(*fasthttp.RequestCtx) {},
		fasthttp.CompressBrotliBestSpeed, fasthttp.CompressBestSpeed)
	return func(c *fiber.Ctx) error {
		if !compressible(c) {
			return c.Next()
		}
		if err := c.Next(); err != nil {
			return err
		}
		if !isText(string(c.Response().Header.ContentType())) && c.Response().StatusCode() != fiber.StatusNotModified {
			return nil
		}
		c.Vary(fiber.HeaderAcceptEncoding)
		if len(c.Response().Body()) < minCompressSize {
			return nil
		}
		compressor(c.Context())
		if enc := string(c.Response().Header.ContentEncoding()); enc != "" {
			if etag := c.GetRespHeader(fiber.HeaderETag); etag != "" {
				c.Set(fiber.HeaderETag, encodedTag(etag, enc))
			}
		}
		return nil
	}
}

// minCompressSize is the smallest body Compress encodes: about one
// Ethernet packet's payload.
const minCompressSize = 1400

// compressible reports whether the request may get a compressed answer:
// not an event stream, not a file compressed already.
func compressible(c *fiber.Ctx) bool {
	p := strings.TrimSuffix(c.Path(), "/")
	if p == "/api/events" || p == "/staff/events" || strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
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
