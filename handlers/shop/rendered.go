package shop

import (
	"context"
	"io"

	"github.com/a-h/templ"

	"petstore/web/lru"
)

// rendered keeps what the shop rendered from the catalog alone (V: HTML,
// or a pet page's parts), each with the catalog version
// (db.Store.CatalogVersion) it was rendered at, so a page whose catalog did
// not change is not queried and rendered again for every shopper. The keys
// come from the shopper's query: entries and bytes are bounded.
type rendered[V any] struct {
	kept *lru.Sized[renderedAt[V]]
}

// renderedAt is one kept rendering and the catalog version it shows.
type renderedAt[V any] struct {
	version int64
	v       V
}

// The bounds of what the shop keeps rendered, per kind: a catalog page's
// content is about 12 KiB, a pet page's about 4 KiB.
const (
	renderedEntries = 1024
	renderedBudget  = 4 << 20
)

// newRendered keeps values whose size in bytes is size.
func newRendered[V any](size func(V) int) *rendered[V] {
	return &rendered[V]{kept: lru.NewSized(renderedEntries, renderedBudget, func(r renderedAt[V]) int { return size(r.v) + 16 })}
}

// get returns what was rendered under key at version, if it was.
func (r *rendered[V]) get(key string, version int64) (V, bool) {
	at, ok := r.kept.Get(key)
	if !ok || at.version != version {
		var zero V
		return zero, false
	}
	return at.v, true
}

// add keeps v, rendered under key at version.
func (r *rendered[V]) add(key string, version int64, v V) {
	r.kept.Add(key, renderedAt[V]{version: version, v: v})
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

// around is a component rendered before with one of this request's in the
// middle: a pet page's parts around the shopper's order form.
type around struct {
	head, tail renderedHTML
	middle     templ.Component
}

// Render writes head, middle and tail.
func (a around) Render(ctx context.Context, w io.Writer) error {
	if err := a.head.Render(ctx, w); err != nil {
		return err
	}
	if err := a.middle.Render(ctx, w); err != nil {
		return err
	}
	return a.tail.Render(ctx, w)
}
