package web

import (
	"io/fs"
	"net/http"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
)

// PrivateCache is the Cache-Control of every answer that depends on who
// asks (SPEC §17): anything behind a key or a session but the catalog's
// shared answers. X-API-Key is not Authorization, so a shared cache would
// not know on its own.
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

// StaticAssets serves fsys; mount it with app.Use("/static", …). A URL
// /static/<version>/<name> whose version is name's current one (version
// returns it, as static.Version does) is served with ImmutableCache; with an
// older version (a page from before a deploy) it gets the current file and
// a short max-age, as does the plain /static/<name>.
func StaticAssets(fsys fs.FS, version func(name string) string) fiber.Handler {
	files := filesystem.New(filesystem.Config{Root: http.FS(fsys), MaxAge: plainAssetAge})
	return func(c *fiber.Ctx) error {
		v, name, ok := strings.Cut(strings.TrimPrefix(c.Path(), "/static/"), "/")
		if !ok || !looksVersioned.MatchString(v) {
			return files(c)
		}
		current := version(name)
		if current == "" {
			return files(c)
		}
		// Decide before c.Path rewrites the buffer v and name point into.
		immutable := current == v
		c.Path("/static/" + name)
		if err := files(c); err != nil {
			return err
		}
		if immutable && c.Response().StatusCode() == fiber.StatusOK {
			c.Set(fiber.HeaderCacheControl, ImmutableCache)
		}
		return nil
	}
}
