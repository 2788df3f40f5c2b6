package static

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"time"
)

// The stylesheet bundles: each area of the site links exactly one
// stylesheet, its bundle, which is its files concatenated in cascade
// order, comments and indentation dropped (Pico's licence comment, /*!,
// is kept). They are made from FS once, when first asked for, and served
// under /static/ like any file, at a URL that names their content's
// version (URL), so a change to any part gives the bundle a new address.
//
// One request instead of one per file: the console's sign-in page linked
// eleven stylesheets before, every one of them render-blocking.
const (
	// ShopCSS is the storefront's stylesheet (and the plain error page's).
	ShopCSS = "css/shop.bundle.css"
	// ConsoleCSS is the staff console's stylesheet.
	ConsoleCSS = "css/console.bundle.css"
)

// bundleParts lists each bundle's files of FS, in cascade order.
var bundleParts = map[string][]string{
	ShopCSS: {
		"vendor/pico.min.css", "css/app.css",
		"css/shop-pictures.css", "css/shop.css", "css/shop-checkout.css", "css/shop-gallery.css",
	},
	ConsoleCSS: {
		"vendor/pico.min.css", "css/app.css",
		"css/console/base.css", "css/console/frame.css", "css/console/live.css",
		"css/console/messages.css", "css/console/dashboard.css", "css/console/tables.css",
		"css/console/forms.css", "css/console/photos.css", "css/console/usage.css",
		"css/console/signin.css", "css/console/emails.css",
	},
}

// BundleParts returns the files of FS a bundle is made of, in order; nil
// for a name that is not a bundle.
func BundleParts(name string) []string {
	return append([]string(nil), bundleParts[name]...)
}

// bundles holds every bundle's bytes, made once.
var bundles = sync.OnceValue(func() map[string][]byte {
	out := make(map[string][]byte, len(bundleParts))
	for name, parts := range bundleParts {
		b, err := Bundle(FS, parts)
		if err != nil {
			panic(fmt.Sprintf("static: bundle %s: %v", name, err))
		}
		out[name] = b
	}
	return out
})

// Bundle concatenates the stylesheets of fsys named by parts, each
// minified (MinifyCSS) and on a line of its own.
func Bundle(fsys fs.FS, parts []string) ([]byte, error) {
	var out bytes.Buffer
	for _, name := range parts {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out.Write(MinifyCSS(b))
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// Assets is FS with the bundles added: what /static/ serves.
func Assets() fs.FS { return withBundles{} }

// withBundles is FS plus the bundles, which only Open knows.
type withBundles struct{}

// Open opens a bundle from memory, any other name from FS.
func (withBundles) Open(name string) (fs.File, error) {
	if b, ok := bundles()[name]; ok {
		return &memFile{Reader: bytes.NewReader(b), name: name, size: int64(len(b))}, nil
	}
	return FS.Open(name)
}

// memFile is a bundle opened for reading; it seeks, as http.FS needs.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *memFile) Close() error               { return nil }

// The file's own fs.FileInfo: a read-only file with no time of its own
// (embedded files have none either).
func (f *memFile) Name() string       { return path.Base(f.name) }
func (f *memFile) Size() int64        { return f.size }
func (f *memFile) Mode() fs.FileMode  { return 0o444 }
func (f *memFile) ModTime() time.Time { return time.Time{} }
func (f *memFile) IsDir() bool        { return false }
func (f *memFile) Sys() any           { return nil }
