package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDocsBrowser shows that /api/docs renders the OpenAPI document in a
// real browser under the page's Content-Security-Policy: the operations
// appear, the deprecated one is marked, and nothing loads from elsewhere.
func TestDocsBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	browse(t, ctx,
		chromedp.Navigate(ts.URL+"/api/docs"),
		chromedp.WaitVisible(chromedp.CSS(`.opblock-summary-path`)),
	)
	paths := read(t, ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('.opblock-summary-path')].map(e => e.getAttribute('data-path'))`))
	want := map[string]bool{"/pets": false, "/pets/{petId}": false, "/store/orders": false, "/store/inventory/{petId}": false,
		"/keys/{keyId}/usage": false, "/events": false, "/rate-limit": false}
	for _, p := range paths {
		if _, ok := want[p]; ok {
			want[p] = true
		}
	}
	for p, seen := range want {
		if !seen {
			t.Errorf("the docs page does not show %s (shown: %s)", p, strings.Join(paths, " "))
		}
	}
	deprecated := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.opblock-deprecated').length`))
	if deprecated != 1 {
		t.Errorf("%d operations are marked deprecated, want 1 (GET /pets/{petId})", deprecated)
	}
	title := read(t, ctx, chromedp.Evaluate[string](`document.querySelector('.info .title')?.textContent || ''`))
	if !strings.Contains(title, "1.0.0") {
		t.Errorf("title = %q, want the version 1.0.0", title)
	}
	foreign := read(t, ctx, chromedp.Evaluate[int](
		`performance.getEntriesByType('resource').filter(r => !r.name.startsWith(location.origin)).length`))
	if foreign != 0 {
		t.Errorf("%d resources came from another origin", foreign)
	}
	screenshot(t, ctx, "api-docs")
}
