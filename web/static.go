package web

import (
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
)

// PrivateCache is the Cache-Control of every answer that depends on who
// asks (SPEC §17): anything behind a credential or a session but the
// catalog's shared answers. A shared cache tells a per-caller answer apart
// on its own only by an Authorization header, so the answer says it.
const PrivateCache = "private, no-store"

// PrivateAnswer marks the request's answer PrivateCache, errors included.
func PrivateAnswer(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, PrivateCache)
	return c.Next()
}

// ImmutableCache is the Cache-Control of a versioned asset: its URL changes
// with its content, so a browser may keep it for a year without asking.
const ImmutableCache = "public, max-age=31536000, immutable"

// plainAssetAge is the max-age, in seconds, of an asset served at an
// address without its current version.
const plainAssetAge = 3600

// looksVersioned matches the version segment of a versioned asset URL.
var looksVersioned = regexp.MustCompile(`^[0-9a-f]{12}$`)

// Precompressed is what an fs.FS given to StaticAssets may also do: hand
// out a file already compressed in a coding ("br", "gzip"), ok false when
// it has none (static.Assets compresses its text files once, at the best
// level, which answering each request could not afford).
type Precompressed interface {
	Encoded(name, coding string) (b []byte, ok bool)
}

// StaticAssets serves fsys; mount it with app.Use("/static", …). A URL
// /static/<version>/<name> whose version is name's current one (version
// returns it, as static.Version does) is served with ImmutableCache; with an
// older version (a page from before a deploy) it gets the current file and
// a short max-age, as does the plain /static/<name>. When fsys is
// Precompressed and the client accepts a coding it has the file in (br
// first, then gzip), those bytes are sent, with Content-Encoding, and
// Compress leaves them alone.
func StaticAssets(fsys fs.FS, version func(name string) string) fiber.Handler {
	files := filesystem.New(filesystem.Config{Root: http.FS(fsys), MaxAge: plainAssetAge})
	pre, _ := fsys.(Precompressed)
	return func(c *fiber.Ctx) error {
		v, name, ok := strings.Cut(strings.TrimPrefix(c.Path(), "/static/"), "/")
		if !ok || !looksVersioned.MatchString(v) {
			return sendPrecompressed(c, pre, strings.TrimPrefix(c.Path(), "/static/"), false, files)
		}
		current := version(name)
		if current == "" {
			return files(c)
		}
		// Decide before c.Path rewrites the buffer v and name point into.
		immutable := current == v
		name = strings.Clone(name)
		c.Path("/static/" + name)
		return sendPrecompressed(c, pre, name, immutable, files)
	}
}

// sendPrecompressed answers a GET or HEAD of the file name with its bytes
// in a coding the client accepts, when pre has them; else files serves it.
// immutable says the URL named the file's current version.
func sendPrecompressed(c *fiber.Ctx, pre Precompressed, name string, immutable bool, files fiber.Handler) error {
	if pre != nil && (c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead) {
		for _, coding := range []string{"br", "gzip"} {
			if !acceptsCoding(c.Get(fiber.HeaderAcceptEncoding), coding) {
				continue
			}
			b, ok := pre.Encoded(name, coding)
			if !ok {
				break
			}
			c.Type(strings.TrimPrefix(path.Ext(name), "."))
			c.Vary(fiber.HeaderAcceptEncoding)
			c.Set(fiber.HeaderContentEncoding, coding)
			c.Set(fiber.HeaderCacheControl, "public, max-age="+strconv.Itoa(plainAssetAge))
			if immutable {
				c.Set(fiber.HeaderCacheControl, ImmutableCache)
			}
			return c.Send(b)
		}
	}
	if err := files(c); err != nil {
		return err
	}
	if immutable && c.Response().StatusCode() == fiber.StatusOK {
		c.Set(fiber.HeaderCacheControl, ImmutableCache)
	}
	return nil
}

// acceptsCoding reports whether an Accept-Encoding header accepts coding
// (named, or by "*"), with a weight above zero.
func acceptsCoding(header, coding string) bool {
	for _, part := range strings.Split(header, ",") {
		token, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		token = strings.ToLower(strings.TrimSpace(token))
		if token != coding && token != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
