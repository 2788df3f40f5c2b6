package main

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// The storefront with a keyboard and a screen reader in mind (issue 15):
// where focus goes after htmx swaps, Space on links styled as buttons, the
// announced result count and the history the filters leave.

// TestShopBrowserSpaceOnButtonLinks: a link that looks like a button
// (role="button") answers Space as a button does, without scrolling.
func TestShopBrowserSpaceOnButtonLinks(t *testing.T) {
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}

	// A plain link: "Back to the catalog" on the not-found page.
	browse(t, ctx, chromedp.Navigate(ts.URL+"/pets/424242"))
	sb.waitHTMX()
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`main a[role="button"][href="/"]`), " "))
	sb.waitJS(`location.pathname === "/" && !!document.querySelector('[data-testid="grid"]')`)

	// An htmx link: "Load more", once (keydown and keyup make one press).
	// The page records whether keydown's default, scrolling, was cancelled
	// (its listener runs after shop.js's).
	sb.waitHTMX()
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](`document.addEventListener("keydown", e => {
		if (e.key === " ") window.__spaceScrolls = !e.defaultPrevented; })`))
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="load-more-link"]`), " "))
	sb.waitJS(`document.querySelectorAll('[data-testid="pet-card"]').length === ` + strconv.Itoa(demoPets))
	if got := read(t, ctx, chromedp.Evaluate[any](`window.__spaceScrolls`)); got != false {
		t.Errorf("Space on the link: scrolls = %v, want false (default prevented)", got)
	}
	if got := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="pet-card"]').length`)); got != demoPets {
		t.Errorf("%d cards after one Space, want %d", got, demoPets)
	}
}

// waitHTMX waits until the page has loaded and htmx has processed it, so a
// key press is handled by the page's scripts, not by the no-JS fallback.
func (b *shopBrowser) waitHTMX() {
	b.t.Helper()
	b.waitJS(`document.readyState === "complete" && !!window.htmx`)
}
