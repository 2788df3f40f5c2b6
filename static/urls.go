package static

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sync"
)

// versions maps each file of Assets (FS and the bundles) to its version,
// computed once.
var versions = sync.OnceValue(func() map[string]string {
	v, err := Versions(FS)
	if err != nil {
		panic(fmt.Sprintf("static: %v", err))
	}
	for name, b := range bundles() {
		v[name] = version(b)
	}
	return v
})

// URL is the versioned address of the file name of Assets ("css/app.css",
// ShopCSS):
// /static/<version>/css/app.css, which changes whenever the file does, so
// it can be cached for good (see Version). A name FS lacks gets its plain
// /static/ address, which answers 404.
func URL(name string) string {
	if v, ok := versions()[name]; ok {
		return "/static/" + v + "/" + name
	}
	return "/static/" + name
}

// Version is the current version of the file name, "" when FS has none.
func Version(name string) string { return versions()[name] }

// Versions names the version of every file of fsys: the first 12 hex digits
// of the SHA-256 of its content.
func Versions(fsys fs.FS) (map[string]string, error) {
	out := make(map[string]string)
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		out[name] = version(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("version assets: %w", err)
	}
	return out, nil
}

// version is the version of content b: the first 12 hex digits of its
// SHA-256.
func version(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}
