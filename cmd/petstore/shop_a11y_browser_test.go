package main

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The storefront with a keyboard and a screen reader in mind (issue 15):
// where focus goes after htmx swaps, Space on links styled as buttons, the
// announced result count and the history the filters leave.

// TestShopBrowserSpaceOnButtonLinks: a link that looks like a button
// (role="button") answers Space as a button does, without scrolling.
func TestShopBrowserSpaceOnButtonLinks(t *testing.T) {
	t.Parallel()
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

// TestShopBrowserFocusFollowsSwaps: "Load more" and "Add to cart" replace
// the control the user pressed; focus moves to the new content instead of
// dropping to <body>.
func TestShopBrowserFocusFollowsSwaps(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}

	// Load more, from the keyboard: focus lands on the first new card's name.
	browse(t, ctx, chromedp.Navigate(ts.URL+"/"))
	sb.waitHTMX()
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="load-more-link"]`), kb.Enter))
	sb.waitJS(`document.querySelectorAll('[data-testid="pet-card"]').length === ` + strconv.Itoa(demoPets))
	first := `document.querySelectorAll('[data-testid="pet-card"]')[` + strconv.Itoa(shopPage) + `].querySelector('[data-testid="pet-name"]')`
	sb.waitJS(`document.activeElement === ` + first)

	// Add to cart with the button: focus lands on the confirmation in the
	// order section, which says what the cart holds now.
	bella := sb.pet("Bella")
	browse(t, ctx, chromedp.Navigate(ts.URL+"/pets/"+fmtID(bella.ID)))
	sb.waitHTMX()
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#quantity`), "2"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="add-to-cart"]`), kb.Enter))
	sb.waitText(`#flash`, "Added 2 × Bella to your cart.")
	sb.waitJS(`document.activeElement === document.querySelector('#order-form [data-testid="in-cart"]')`)
	if got := read(t, ctx, chromedp.Evaluate[string](`document.activeElement.textContent.replace(/\s+/g, " ").trim()`)); got != "You have 2 in your cart." {
		t.Errorf("focused text = %q, want the cart's new count", got)
	}
	screenshot(t, ctx, "added-focused")

	// A refused quantity: focus lands on the field to fix, which names its
	// error (aria-describedby).
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#quantity`), "999"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="add-to-cart"]`), kb.Enter))
	sb.waitText(`[data-testid="form-error"]`, "Only")
	sb.waitJS(`document.activeElement === document.querySelector('#quantity') && document.activeElement.getAttribute("aria-invalid") === "true"`)
}

// TestShopBrowserResultsLiveRegion: searching and filtering update a polite
// live region that says how many pets were found. It stays the same
// element, so screen readers announce the change.
func TestShopBrowserResultsLiveRegion(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}

	browse(t, ctx, chromedp.Navigate(ts.URL+"/"))
	sb.waitHTMX()
	region := `document.getElementById("results-count")`
	if got := read(t, ctx, chromedp.Evaluate[string](region+`?.getAttribute("aria-live") || ""`)); got != "polite" {
		t.Fatalf(`#results-count aria-live = %q, want "polite"`, got)
	}
	sb.waitText(`#results-count`, "The first "+strconv.Itoa(shopPage)+" pets found; more below.")
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__region = `+region))

	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`#q`), "Lu"))
	sb.waitNames("Luna", "Blue")
	sb.waitText(`#results-count`, "2 pets found.")
	sb.choose("#category", sb.categoryID("Cats"))
	sb.waitText(`#results-count`, "No pets found.")
	sb.choose("#q", "")
	sb.waitText(`#results-count`, "5 pets found.")
	if !read(t, ctx, chromedp.Evaluate[bool](`window.__region === `+region)) {
		t.Error("the live region was replaced; screen readers announce changes only inside a region that stays")
	}
}

// TestShopBrowserSelectKeepsHistory: stepping through a filter's options
// with the arrow keys replaces the address rather than adding a history
// entry per step, and Back from a pet returns to the filtered catalog.
func TestShopBrowserSelectKeepsHistory(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}

	browse(t, ctx, chromedp.Navigate(ts.URL+"/"))
	sb.waitHTMX()
	before := read(t, ctx, chromedp.Evaluate[int](`history.length`))
	for range 3 {
		browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`#category`), kb.ArrowDown))
		// Each step's answer arrives before the next step.
		sb.waitJS(`(() => { const v = document.querySelector("#category").value;
			return v !== "" && new URLSearchParams(location.search).get("category") === v &&
				!document.querySelector("#results.htmx-request, form.htmx-request, select.htmx-request"); })()`)
	}
	if got := read(t, ctx, chromedp.Evaluate[int](`history.length`)); got != before {
		t.Errorf("history.length = %d after three arrow-key steps, want %d", got, before)
	}
	category := read(t, ctx, chromedp.Evaluate[string](`document.querySelector("#category").value`))

	sb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="pet-name"]`)))
	sb.waitLocation("/pets/")
	// history.back(), not a wait for a load event: the page may come back
	// from the back/forward cache, which fires none.
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](`history.back()`))
	sb.waitJS(`new URLSearchParams(location.search).get("category") === ` + strconv.Quote(category) +
		` && document.querySelector("#category").value === ` + strconv.Quote(category))
}

// waitHTMX waits until the page has loaded and htmx has processed it, so a
// key press is handled by the page's scripts, not by the no-JS fallback.
func (b *shopBrowser) waitHTMX() {
	b.t.Helper()
	b.waitJS(`document.readyState === "complete" && !!window.htmx`)
}
