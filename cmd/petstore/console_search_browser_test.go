package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"petstore/db"
)

// TestConsoleBrowserSearch (issue 42, SPEC §10): at 1280 and 360 px a
// clerk finds an order by the buyer's name with the orders page's search
// box: the box keeps what was typed, the matching orders and only those
// are listed, and the first is on the first screen. At 360 px the
// navigation folds behind a menu button (Escape closes it) so the first
// row of every list is on the first screen. The README's screenshots of
// the search are copies of this test's orders-search-*.png.
func TestConsoleBrowserSearch(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	bella := cb.pet("Bella")
	store := ts.Store
	if _, err := store.SetInventory(context.Background(), bella.ID, db.InventoryUpdate{Quantity: ptrTo(int64(100))}); err != nil {
		t.Fatal(err)
	}
	line := func() []db.NewOrder { return []db.NewOrder{{PetID: &bella.ID, Quantity: ptrTo(int64(1))}} }
	var ada []int64
	for i := range 3 {
		ck, err := store.PlaceCheckout(context.Background(), "ada-"+strconv.Itoa(i), 100,
			db.NewCheckout{Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+44 20 7946 0958"}, line())
		if err != nil {
			t.Fatal(err)
		}
		ada = append(ada, ck.Orders[0].ID)
	}
	for i := range 12 {
		if _, err := store.PlaceCheckout(context.Background(), "other-"+strconv.Itoa(i), 100,
			db.NewCheckout{Name: fmt.Sprintf("Buyer %d", i), Email: fmt.Sprintf("buyer%d@example.org", i)}, line()); err != nil {
			t.Fatal(err)
		}
	}
	cb.signIn()

	firstRowOnScreen := func(path, row string) {
		t.Helper()
		top := read(t, ctx, chromedp.Evaluate[float64](`(() => {
			window.scrollTo(0, 0);
			const r = document.querySelector(`+q(`[data-testid="`+row+`"]`)+`);
			// Its heading line and first cell at least: 100 px of it.
			return r ? r.getBoundingClientRect().top + 100 - window.innerHeight : 1e6;
		})()`))
		if top > 0 {
			t.Errorf("%s: the first %s's first 100 px end %.0f px below the first screen", path, row, top)
		}
	}

	for _, size := range []struct{ w, h int64 }{{1280, 800}, {360, 740}} {
		browse(t, ctx, chromedp.EmulateViewport(size.w, size.h))
		cb.navigate(chromedp.Navigate(ts.URL + "/staff/orders"))
		cb.setField("#f-q", "ada LOVE")
		cb.navigate(chromedp.Click(chromedp.CSS(`form[role=search] button[type=submit]`)))
		cb.waitJS(`location.search.includes("q=ada+LOVE")`)
		if got := read(t, ctx, chromedp.Evaluate[string](`document.querySelector("#f-q").value`)); got != "ada LOVE" {
			t.Errorf("%d px: the search box holds %q after the search", size.w, got)
		}
		got := read(t, ctx, chromedp.Evaluate[[]int64](`[...document.querySelectorAll("[data-testid=order-row]")].map(r => +r.dataset.orderId)`))
		if fmt.Sprint(got) != fmt.Sprint([]int64{ada[2], ada[1], ada[0]}) {
			t.Errorf("%d px: the search lists orders %v, want Ada's %v newest first", size.w, got, ada)
		}
		firstRowOnScreen(fmt.Sprintf("orders search at %d px", size.w), "order-row")
		cb.wantFits("/staff/orders?q=ada+LOVE", int(size.w))
		cb.wantControlsOnScreen("/staff/orders?q=ada+LOVE", int(size.w))
		viewScreenshot(t, ctx, fmt.Sprintf("orders-search-%dpx", size.w))
	}

	// 360 px: the menu button folds the navigation; every list's first
	// row is on the first screen.
	for _, list := range []struct{ path, row string }{
		{"/staff/orders", "order-row"}, {"/staff/inventory", "inventory-row"}, {"/staff/catalog", "pet-row"},
	} {
		cb.navigate(chromedp.Navigate(ts.URL + list.path))
		firstRowOnScreen(list.path+" at 360 px", list.row)
	}
	menuOpen := func() bool {
		return read(t, ctx, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector("#console-nav")).display !== "none"`))
	}
	if menuOpen() {
		t.Errorf("at 360 px the navigation is open before the menu button is pressed")
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="menu-toggle"]`)))
	if !menuOpen() || cb.value(`[data-testid="menu-toggle"]`, "ariaExpanded") != "true" {
		t.Fatalf("the menu button did not open the navigation")
	}
	screenshot(t, ctx, "menu-open-360px")
	cb.wantControlsOnScreen("the open menu", 360)
	browse(t, ctx, chromedp.KeyEvent("\x1b")) // Escape, focus in the menu
	if menuOpen() {
		t.Errorf("Escape left the menu open")
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="menu-toggle"]`)))
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-inventory"]`)))
	cb.waitJS(`location.pathname === "/staff/inventory"`)

	// 1280 px: no menu button; the navigation is always there.
	browse(t, ctx, chromedp.EmulateViewport(1280, 800))
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/orders"))
	if !menuOpen() || read(t, ctx, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector("[data-testid=menu-toggle]")).display !== "none"`)) {
		t.Errorf("at 1280 px the menu button shows, or the navigation is folded")
	}
}

// TestConsoleBrowserWebhookNarrow (issue 42): a webhook's page at 360 px
// does not scroll sideways: its heading, a long URL, wraps, and its four
// actions (Disable, Send a test event, Rotate secret, Delete…) are on the
// screen.
func TestConsoleBrowserWebhookNarrow(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	u := "https://hooks.example.com/a/rather/long/path/to/the/receiver/of/the/pet/store/events?token=abcdefghijklmnopqrstuvwxyz"
	w, err := ts.Store.CreateWebhook(context.Background(), db.NewWebhook{URL: &u, Events: &[]string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}
	cb.signIn()
	browse(t, ctx, chromedp.EmulateViewport(360, 740))
	path := "/staff/webhooks/" + strconv.FormatInt(w.ID, 10)
	cb.navigate(chromedp.Navigate(ts.URL + path))
	cb.wantFits(path, 360)
	cb.wantControlsOnScreen(path, 360)
	screenshot(t, ctx, "webhook-360px")
}
