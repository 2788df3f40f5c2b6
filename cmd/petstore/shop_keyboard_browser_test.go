package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The storefront from the keyboard and on small screens (issue 29): the
// cart's Remove with the checkout's details still empty, where focus goes
// after the swaps that replace the pressed button, the error summary of a
// refused checkout in full view under the sticky header, and the first
// pet in view on a phone.

// TestShopBrowserRemoveWithEmptyDetails: Remove works while the checkout's
// required name and email are still empty (htmx checks every field a
// request includes, and Remove sends the details along).
func TestShopBrowserRemoveWithEmptyDetails(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	bella, max := sb.pet("Bella"), sb.pet("Max")
	sb.fillCart(bella.ID, max.ID)

	sb.navigate(chromedp.Navigate(ts.URL + "/cart"))
	sb.waitHTMX()
	if got := read(t, ctx, chromedp.Evaluate[string](`document.querySelector("#checkout-name").value + document.querySelector("#checkout-email").value`)); got != "" {
		t.Fatalf("details = %q, want them empty", got)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-pet-id="`+fmtID(max.ID)+`"] [data-testid="line-remove"]`)))
	sb.waitText(`#flash`, "Max")
	sb.waitJS(`!document.querySelector('[data-pet-id="` + fmtID(max.ID) + `"]')`)
	sb.waitText(`#cart-count`, "1")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-pet-id="`+fmtID(bella.ID)+`"] [data-testid="line-remove"]`)))
	sb.waitText(`[data-testid="cart-empty"]`, "Your cart is empty.")
	sb.waitText(`#cart-count`, "0")
}

// TestShopBrowserFocusAfterCartAndCancel: from the keyboard, Update and
// Remove in the cart and Cancel in My orders replace the button pressed;
// focus lands on the same line's button, on the cart's summary, on the
// checkout's heading (or, once a checkout has no order left, on the list):
// never on <body>.
func TestShopBrowserFocusAfterCartAndCancel(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	bella, max, luna := sb.pet("Bella"), sb.pet("Max"), sb.pet("Luna")
	sb.fillCart(bella.ID, max.ID, luna.ID)
	sb.navigate(chromedp.Navigate(ts.URL + "/cart"))
	sb.waitHTMX()

	line := `[data-pet-id="` + fmtID(max.ID) + `"]`
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#qty-`+fmtID(max.ID)), "2"),
		chromedp.Focus(chromedp.CSS(line+` [data-testid="line-update"]`)), chromedp.KeyEvent(kb.Enter))
	sb.waitText(`#flash`, "Updated Max to 2.")
	sb.wantFocus("Update", `document.querySelector(`+q(line+` [data-testid="line-update"]`)+`)`)

	browse(t, ctx, chromedp.Focus(chromedp.CSS(line+` [data-testid="line-remove"]`)), chromedp.KeyEvent(kb.Enter))
	sb.waitJS(`!document.querySelector(` + q(line) + `)`)
	sb.wantFocus("Remove", `document.getElementById("cart-status")`)

	sb.fillDetails("Ada Lovelace", "ada@example.com", "", "")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="checkout"]`)))
	sb.waitLocation("/orders/confirmation/")
	sb.navigate(chromedp.Navigate(ts.URL + "/orders"))
	sb.waitHTMX()
	browse(t, ctx, chromedp.Focus(chromedp.CSS(sb.cancelOf(bella.ID))), chromedp.KeyEvent(kb.Enter))
	sb.waitText(`#flash`, "is cancelled.")
	sb.wantFocus("Cancel", `document.querySelector('[data-testid="checkout-group"] h2')`)
	screenshot(t, ctx, "cancel-focused")
	browse(t, ctx, chromedp.Focus(chromedp.CSS(sb.cancelOf(luna.ID))), chromedp.KeyEvent(kb.Enter))
	sb.waitText(`[data-testid="orders-empty"]`, "No orders yet.")
	sb.wantFocus("the last Cancel", `document.getElementById("orders")`)
}

// TestShopBrowserErrorSummaryInView: at 1280×800 a refused checkout's
// error summary is in full view below the sticky header, and each of its
// links brings its field, label included, into view below the header too.
func TestShopBrowserErrorSummaryInView(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	sb.fillCart(sb.pet("Bella").ID, sb.pet("Max").ID, sb.pet("Luna").ID)
	browse(t, ctx, chromedp.EmulateViewport(1280, 800))
	sb.navigate(chromedp.Navigate(ts.URL + "/cart"))
	sb.waitHTMX()
	browse(t, ctx, chromedp.Focus(chromedp.CSS(`[data-testid="checkout"]`)), chromedp.KeyEvent(kb.Enter))
	sb.waitJS(`document.activeElement?.dataset.testid === "error-summary"`)
	sb.wantInView("the error summary", `document.querySelector('[data-testid="error-summary"]')`)
	screenshot(t, ctx, "error-summary")

	for _, field := range []string{"checkout-name", "checkout-email"} {
		browse(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
			chromedp.Click(chromedp.CSS(`[data-testid="error-summary"] a[href="#`+field+`"]`)))
		sb.waitJS(`location.hash === "#` + field + `"`)
		sb.wantInView(field, `document.getElementById("`+field+`")`)
		sb.wantInView(field+"'s label", `document.querySelector('label[for="`+field+`"]')`)
	}
}

// TestShopBrowserFirstPetInView: on a 360×740 phone the catalog's first
// pet card is on screen without scrolling.
func TestShopBrowserFirstPetInView(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	browse(t, ctx, chromedp.EmulateViewport(360, 740))
	sb.navigate(chromedp.Navigate(ts.URL + "/"))
	sb.waitHTMX()
	bottom := read(t, ctx, chromedp.Evaluate[float64](`document.querySelector('[data-testid="pet-card"]').getBoundingClientRect().bottom`))
	t.Logf("the first card ends at %.0f px", bottom)
	if bottom > 740 {
		t.Errorf("the first pet card ends at %.0f px, below the 740 px screen", bottom)
	}
	screenshot(t, ctx, "catalog-360x740")
}

// fillCart puts one of each pet into the cart through the pet pages.
func (b *shopBrowser) fillCart(ids ...int64) {
	b.t.Helper()
	for i, id := range ids {
		b.navigate(chromedp.Navigate(b.ts.URL + "/pets/" + fmtID(id)))
		b.waitHTMX()
		b.addToCart(1)
		b.waitText(`#cart-count`, strconv.Itoa(i+1))
	}
}

// wantFocus fails unless focus rests on the element expr finds, after the
// swap that followed what (it is never <body>).
func (b *shopBrowser) wantFocus(what, expr string) {
	b.t.Helper()
	b.waitJS(`(() => { const el = ` + expr + `; return !!el && document.activeElement === el; })()`)
	if tag := read(b.t, b.ctx, chromedp.Evaluate[string](`document.activeElement.tagName`)); tag == "BODY" {
		b.t.Errorf("after %s focus is on <body>", what)
	}
}

// wantInView fails unless the element expr finds lies wholly inside the
// viewport and below the sticky header, once the page has stopped
// scrolling (a jump to a fragment may scroll smoothly).
func (b *shopBrowser) wantInView(what, expr string) {
	b.t.Helper()
	browse(b.t, b.ctx, chromedp.Evaluate[chromedp.Void](`new Promise(done => {
		let last = -1, still = 0;
		const step = () => { still = scrollY === last ? still + 1 : 0; last = scrollY; if (still >= 5) done(); else requestAnimationFrame(step); };
		requestAnimationFrame(step);
	})`, chromedp.EvalAwaitPromise))
	got := read(b.t, b.ctx, chromedp.Evaluate[string](`(() => {
		const el = `+expr+`, r = el.getBoundingClientRect();
		const header = document.querySelector(".site-header").getBoundingClientRect();
		const top = getComputedStyle(document.querySelector(".site-header")).position === "sticky" ? Math.max(0, header.bottom) : 0;
		const problems = [];
		if (r.top < top - 0.5) problems.push("its top (" + Math.round(r.top) + " px) is under the header, which ends at " + Math.round(top) + " px");
		if (r.bottom > innerHeight + 0.5) problems.push("its bottom (" + Math.round(r.bottom) + " px) is below the " + innerHeight + " px viewport");
		return problems.join("; ");
	})()`))
	if got != "" {
		screenshot(b.t, b.ctx, "not-in-view")
		b.t.Errorf("%s is not in view: %s", what, got)
	}
}

// TestShopBrowserPetPageAt1280: at 1280 px a card's photo is the
// thumbnail and the pet page fetches the photo's middle size (800 px) for
// its some 545 px wide slot, not the 1600 px one; the gallery's panel
// ends under its thumbnails (no empty block down the page); each line of
// facts is filled to the edge.
func TestShopBrowserPetPageAt1280(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	bella := sb.pet("Bella")
	addPhotos(t, ts.Store, bella.ID, 3)
	browse(t, ctx, chromedp.EmulateViewport(1280, 900))
	// The card first: a browser that holds a larger size already uses it.
	sb.navigate(chromedp.Navigate(ts.URL + "/?q=Bella"))
	sb.waitJS(`(i => !!i && i.complete && i.naturalWidth > 0)(document.querySelector('[data-testid="card-photo"]'))`)
	if src := read(t, ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="card-photo"]').currentSrc`)); !strings.HasSuffix(src, "/thumb.jpg") {
		t.Errorf("the card's photo is %s, want its thumbnail", src)
	}
	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(bella.ID)))
	sb.waitJS(`(i => i.complete && i.naturalWidth > 0)(document.querySelector('[data-testid="gallery-main"]'))`)
	src := read(t, ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="gallery-main"]').currentSrc`))
	if !strings.HasSuffix(src, "/medium.jpg") {
		t.Errorf("the pet page's photo is %s, want its medium size", src)
	}
	gap := read(t, ctx, chromedp.Evaluate[float64](`document.querySelector(".pet-gallery").getBoundingClientRect().bottom -
		document.querySelector(".gallery-thumbs").getBoundingClientRect().bottom`))
	if gap > 32 {
		t.Errorf("the gallery's panel runs %.0f px below its thumbnails", gap)
	}
	holes := read(t, ctx, chromedp.Evaluate[[]string](`(() => {
		const dl = document.querySelector(".facts"), right = dl.getBoundingClientRect().right, out = [];
		const facts = [...dl.children], lines = new Map();
		for (const f of facts) { const r = f.getBoundingClientRect(); lines.set(Math.round(r.top), Math.max(lines.get(Math.round(r.top)) || 0, r.right)); }
		for (const [top, end] of lines) if (right - end > 1) out.push("the line at " + top + " px ends " + Math.round(right - end) + " px short");
		return out;
	})()`))
	for _, h := range holes {
		t.Errorf("facts: %s", h)
	}
	screenshot(t, ctx, "pet-1280")

}
