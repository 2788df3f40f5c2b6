package shop

import (
	"context"
	"io"

	"petstore/web/lru"
)

// rendered keeps HTML the shop rendered from the catalog alone, each with
// the catalog version (db.Store.CatalogVersion) it was rendered at, so a
// page whose catalog did not change is not queried and rendered again for
// every shopper. The keys are the shopper's query: entries and bytes are
// bounded.
type rendered struct {
	kept *lru.Sized[renderedAt]
}

// renderedAt is one kept rendering and the catalog version it shows.
type renderedAt struct {
	version int64
	html    renderedHTML
}

// The bounds of what the shop keeps rendered: a catalog page's content is
// about 12 KiB, so some 300 pages of filters and cursors.
const (
	renderedEntries = 1024
	renderedBudget  = 4 << 20
)

func newRendered() *rendered {
	return &rendered{kept: lru.NewSized(renderedEntries, renderedBudget, func(r renderedAt) int { return len(r.html) + 16 })}
}

// get returns what was rendered under key at version, if it was.
func (r *rendered) get(key string, version int64) (renderedHTML, bool) {
	at, ok := r.kept.Get(key)
	if !ok || at.version != version {
		return nil, false
	}
	return at.html, true
}

// add keeps html, rendered under key at version.
func (r *rendered) add(key string, version int64, html renderedHTML) {
	r.kept.Add(key, renderedAt{version: version, html: html})
}

// renderedHTML is HTML rendered before, written out as it is: a templ
// component to place in a page. It is shared by concurrent requests and
// never changed.
type renderedHTML []byte

// Render writes the HTML.
func (h renderedHTML) Render(_ context.Context, w io.Writer) error {
	_, err := w.Write(h)
	return err
}
