package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"petstore/db"
)

// The demo catalog (db.SeedDemo) has 21 pets; the shop shows 12 a page.
const demoPets, shopPage = 21, 12

// TestShopBrowser drives the storefront with JavaScript on: search as you
// type, filters, load more, add to cart, update it, a checkout that fails
// on a stock change and keeps the cart, a checkout that succeeds, My
// orders and cancel, all through htmx swaps.
func TestShopBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}

	browse(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#results`)))
	if got := len(sb.names()); got != shopPage {
		t.Fatalf("catalog shows %d pets, want %d", got, shopPage)
	}
	screenshot(t, ctx, "catalog")

	// Search as you type: htmx swaps #results and pushes the URL.
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`#q`), "Lu"))
	sb.waitNames("Luna", "Blue")
	sb.waitLocation("q=Lu")

	// Filters: category, then availability, with the search cleared.
	sb.choose("#q", "") // as the search box's clear button does
	sb.waitNames(sb.firstPage()...)
	sb.choose("#category", sb.categoryID("Cats"))
	sb.waitNames("Milo", "Cleo", "Oliver", "Nala", "Simba")
	sb.choose("#status", db.StatusAvailable)
	sb.waitNames("Cleo", "Oliver", "Nala", "Simba")
	sb.waitLocation("status=available")
	screenshot(t, ctx, "catalog-filtered")

	// Load more appends the next page in place.
	browse(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.Click(chromedp.CSS(`[data-testid="load-more-link"]`)))
	sb.waitJS(`document.querySelectorAll('[data-testid="pet-card"]').length === ` + strconv.Itoa(demoPets))
	sb.waitJS(`!document.querySelector('[data-testid="load-more"]')`)
	if !strings.HasSuffix(read(t, ctx, chromedp.Location()), "/") {
		t.Error("load more changed the address")
	}

	// The pet page and "add to cart" (htmx: the form and the count update).
	bella, max, nala := sb.pet("Bella"), sb.pet("Max"), sb.pet("Nala")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`a[href="/pets/`+fmtID(bella.ID)+`"][data-testid="pet-name"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-to-cart"]`)))
	screenshot(t, ctx, "pet")
	sb.addToCart(2)
	sb.waitText(`#flash`, "Added 2 × Bella to your cart.")
	sb.waitText(`#cart-count`, "2")
	browse(t, ctx, chromedp.Navigate(ts.URL+"/pets/"+fmtID(max.ID)))
	sb.addToCart(1)
	sb.waitText(`#cart-count`, "3")

	// A refused quantity comes back as a 422 the form shows.
	sb.addToCart(5)
	sb.waitText(`[data-testid="form-error"]`, "Only 3 left. Your cart has 1 already.")

	// The cart: update a line in place.
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="nav-cart"]`)), chromedp.WaitVisible(chromedp.CSS(`#cart`)))
	sb.setLine(max.ID, 2)
	sb.waitText(`#flash`, "Updated Max to 2.")
	sb.waitText(`#cart-count`, "4")
	screenshot(t, ctx, "cart")

	// Checkout fails on a stock change: the line says why, the cart stays.
	browse(t, ctx, chromedp.Navigate(ts.URL+"/pets/"+fmtID(nala.ID)))
	sb.addToCart(2)
	sb.waitText(`#cart-count`, "6")
	sb.setStock(nala.ID, 1)
	browse(t, ctx, chromedp.Navigate(ts.URL+"/cart"), chromedp.WaitVisible(chromedp.CSS(`#checkout-form`)))
	sb.fillDetails("Ada Lovelace", "ada@example.com", "", "")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="checkout"]`)))
	sb.waitText(`[data-pet-id="`+fmtID(nala.ID)+`"] [data-testid="line-error"]`, "Only 1 left.")
	sb.waitText(`[data-testid="cart-error"]`, "Nothing was ordered.")
	screenshot(t, ctx, "cart-checkout-failed")
	if got := sb.stock(bella.ID); got != 2 {
		t.Errorf("Bella's stock = %d after a failed checkout, want 2", got)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-pet-id="`+fmtID(nala.ID)+`"] [data-testid="line-remove"]`)))
	sb.waitJS(`!document.querySelector('[data-pet-id="` + fmtID(nala.ID) + `"]')`)

	// The details typed survived the line's htmx swap. Checkout:
	// HX-Redirect to the confirmation, then My orders.
	if got := read(t, ctx, chromedp.Evaluate[string](`document.querySelector("#checkout-email").value`)); got != "ada@example.com" {
		t.Errorf("email after removing a line = %q", got)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="checkout"]`)))
	sb.waitLocation("/orders/confirmation/")
	sb.waitText(`[data-testid="confirmation-heading"]`, "Thank you, Ada Lovelace!")
	sb.waitText(`#cart-count`, "0")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="nav-orders"]`)))
	sb.waitLocation("/orders")
	sb.waitJS(`!!document.querySelector('[data-testid="orders"]')`)
	if got := sb.texts(`[data-testid="order"][data-state="open"] [data-testid="order-pet"]`); !slices.Equal(got, []string{"Bella", "Max"}) {
		t.Errorf("open orders = %q, want [Bella Max]", got)
	}
	screenshot(t, ctx, "orders")
	if got := sb.stock(bella.ID); got != 0 {
		t.Errorf("Bella's stock = %d after checkout, want 0", got)
	}

	// Cancel Bella's order: the list updates in place, the stock returns.
	browse(t, ctx, chromedp.Click(chromedp.CSS(sb.cancelOf(bella.ID))))
	sb.waitText(`#flash`, "is cancelled.")
	sb.waitJS(`document.querySelectorAll('[data-testid="order"][data-state="open"]').length === 1`)
	if got := sb.stock(bella.ID); got != 2 {
		t.Errorf("Bella's stock = %d after cancel, want 2", got)
	}

	// Phones: the catalog fits 360 px without sideways scrolling.
	browse(t, ctx, chromedp.EmulateViewport(360, 740), chromedp.Navigate(ts.URL+"/"))
	sb.waitJS(`document.documentElement.scrollWidth <= 360`)
	screenshot(t, ctx, "catalog-360px")
	browse(t, ctx, chromedp.Navigate(ts.URL+"/orders"))
	sb.waitJS(`document.documentElement.scrollWidth <= 360`)
	screenshot(t, ctx, "orders-360px")
	browse(t, ctx, chromedp.Navigate(ts.URL+"/pets/"+fmtID(nala.ID)))
	sb.addToCart(1)
	sb.waitText(`#cart-count`, "1")
	sb.waitJS(`document.documentElement.scrollWidth <= 360`)
	screenshot(t, ctx, "pet-360px")
	browse(t, ctx, chromedp.Navigate(ts.URL+"/cart"))
	sb.waitJS(`document.documentElement.scrollWidth <= 360`)
	screenshot(t, ctx, "cart-360px")
}

// TestShopBrowserNoJS runs the same journey with JavaScript off: plain
// GET forms and links, POST forms and redirects, whole pages.
func TestShopBrowserNoJS(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, false)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}

	browse(t, ctx, chromedp.Navigate(ts.URL+"/"))
	if got := read(t, ctx, chromedp.Evaluate[bool](`!!window.htmx`)); got {
		t.Fatal("page scripts run: JavaScript is not off")
	}

	// Search: the form submits with its button.
	sb.navigate(chromedp.SendKeys(chromedp.CSS(`#q`), "Lu"), chromedp.Click(chromedp.CSS(`[data-testid="filter-submit"]`)))
	sb.waitLocation("q=Lu")
	if got := sb.names(); !slices.Equal(got, []string{"Luna", "Blue"}) {
		t.Errorf("search = %q", got)
	}

	// Filters: the same form, whole pages.
	sb.navigate(chromedp.Clear(chromedp.CSS(`#q`)),
		chromedp.SetValue(chromedp.CSS(`#category`), sb.categoryID("Cats")),
		chromedp.SetValue(chromedp.CSS(`#status`), db.StatusAvailable),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-submit"]`)))
	if got := sb.names(); !slices.Equal(got, []string{"Cleo", "Oliver", "Nala", "Simba"}) {
		t.Errorf("filtered = %q", got)
	}
	sb.waitLocation("status=available")

	// Load more: a link to the next page.
	sb.navigate(chromedp.Navigate(ts.URL + "/"))
	sb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="load-more-link"]`)))
	if got := len(sb.names()); got != demoPets-shopPage {
		t.Errorf("next page shows %d pets, want %d", got, demoPets-shopPage)
	}
	sb.waitLocation("cursor=")
	screenshot(t, ctx, "catalog-page2")

	// Add to cart: POST, then 303 to the cart with the message.
	bella, max := sb.pet("Bella"), sb.pet("Max")
	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(bella.ID)))
	sb.navigate(chromedp.SetValue(chromedp.CSS(`#quantity`), "2"), chromedp.Click(chromedp.CSS(`[data-testid="add-to-cart"]`)))
	sb.waitLocation("/cart")
	sb.waitText(`#flash`, "Added 2 × Bella to your cart.")
	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(max.ID)))
	sb.navigate(chromedp.SetValue(chromedp.CSS(`#quantity`), "0"), chromedp.Click(chromedp.CSS(`[data-testid="add-to-cart"]`)))
	sb.waitText(`[data-testid="form-error"]`, "Enter a whole number from 1 to 1000.")
	sb.navigate(chromedp.SetValue(chromedp.CSS(`#quantity`), "1"), chromedp.Click(chromedp.CSS(`[data-testid="add-to-cart"]`)))
	sb.waitText(`#cart-count`, "3")

	// Update a line, then check out.
	sb.navigate(chromedp.SetValue(chromedp.CSS(`#qty-`+fmtID(max.ID)), "2"),
		chromedp.Click(chromedp.CSS(`[data-pet-id="`+fmtID(max.ID)+`"] [data-testid="line-update"]`)))
	sb.waitText(`#flash`, "Updated Max to 2.")
	screenshot(t, ctx, "cart")
	sb.fillDetails("Ada Lovelace", "ada@example.com", "", "")
	sb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="checkout"]`)))
	sb.waitLocation("/orders/confirmation/")
	sb.waitText(`[data-testid="confirmation-heading"]`, "Thank you, Ada Lovelace!")
	sb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-orders"]`)))
	if got := sb.texts(`[data-testid="order"][data-state="open"] [data-testid="order-pet"]`); !slices.Equal(got, []string{"Bella", "Max"}) {
		t.Errorf("open orders = %q", got)
	}

	// Cancel: POST, 303 back to My orders.
	sb.navigate(chromedp.Click(chromedp.CSS(sb.cancelOf(bella.ID))))
	sb.waitText(`#flash`, "is cancelled.")
	if got := sb.texts(`[data-testid="order"][data-state="open"] [data-testid="order-pet"]`); !slices.Equal(got, []string{"Max"}) {
		t.Errorf("open orders after cancel = %q", got)
	}
	if got := sb.stock(bella.ID); got != 2 {
		t.Errorf("Bella's stock = %d after cancel, want 2", got)
	}
	screenshot(t, ctx, "orders")

	// A pet that cannot be ordered, and a friendly 404 in the shop's frame.
	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(sb.pet("Milo").ID)))
	sb.waitText(`[data-testid="unavailable"]`, "Milo has found a home")
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(ts.URL+"/pets/424242"))
	if err != nil || resp.Status != 404 {
		t.Fatalf("missing pet: %v, %v; want 404", resp, err)
	}
	sb.waitText(`[data-testid="error-message"]`, "We could not find that pet.")
	screenshot(t, ctx, "not-found")
}

// shopBrowser holds the storefront steps both journeys share.
type shopBrowser struct {
	t   *testing.T
	ctx context.Context
	ts  *testServer
}

// names is the pet names on the catalog page, in order.
func (b *shopBrowser) names() []string {
	b.t.Helper()
	return b.texts(`[data-testid="pet-name"]`)
}

// texts is the trimmed text of every element the CSS selector matches.
func (b *shopBrowser) texts(css string) []string {
	b.t.Helper()
	return read(b.t, b.ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll(`+strconv.Quote(css)+`)].map(e => e.textContent.trim().replace(/\s+/g, " "))`))
}

// waitJS polls the page until the expression is true (ten seconds).
// Errors while a new page loads (an HX-Redirect, a form post) are retried.
func (b *shopBrowser) waitJS(expr string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			screenshot(b.t, b.ctx, "failure")
			b.t.Fatalf("waiting for %s: %v", expr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitNames waits until the catalog shows exactly these pets.
func (b *shopBrowser) waitNames(want ...string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := b.names()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			screenshot(b.t, b.ctx, "failure")
			b.t.Fatalf("catalog shows %q, want %q", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until the first element matching css contains text.
func (b *shopBrowser) waitText(css, text string) {
	b.t.Helper()
	b.waitJS(`(document.querySelector(` + strconv.Quote(css) + `)?.textContent || "").replace(/\s+/g, " ").includes(` + strconv.Quote(text) + `)`)
}

// waitLocation waits until the address contains part.
func (b *shopBrowser) waitLocation(part string) {
	b.t.Helper()
	b.waitJS(`location.href.includes(` + strconv.Quote(part) + `)`)
}

// navigate runs steps that load a new page and waits for it.
func (b *shopBrowser) navigate(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := chromedp.RunResponse(b.ctx, steps...); err != nil {
		screenshot(b.t, b.ctx, "failure")
		b.t.Fatalf("navigate: %v", err)
	}
}

// choose sets a field as a user does, with input, change and (for the
// search box) search events, which the htmx filters listen to.
func (b *shopBrowser) choose(css, value string) {
	b.t.Helper()
	browse(b.t, b.ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector(`+strconv.Quote(css)+`);
		s.value = `+strconv.Quote(value)+`; s.dispatchEvent(new Event("input", {bubbles: true}));
		s.dispatchEvent(new Event("change", {bubbles: true}));
		if (s.type === "search") s.dispatchEvent(new Event("search", {bubbles: true})); })()`))
}

// firstPage is the names of the first catalog page, from the database.
func (b *shopBrowser) firstPage() []string {
	b.t.Helper()
	pets, _, err := b.ts.Store.FindPets(context.Background(), db.PetFilter{Page: db.Page{Limit: shopPage}})
	if err != nil {
		b.t.Fatal(err)
	}
	names := make([]string, len(pets))
	for i, p := range pets {
		names[i] = p.Name
	}
	return names
}

// addToCart submits the pet page's order form with a quantity.
func (b *shopBrowser) addToCart(qty int) {
	b.t.Helper()
	browse(b.t, b.ctx,
		chromedp.WaitVisible(chromedp.CSS(`#quantity`)),
		chromedp.SetValue(chromedp.CSS(`#quantity`), strconv.Itoa(qty)),
		chromedp.Click(chromedp.CSS(`[data-testid="add-to-cart"]`)))
}

// fillDetails types the checkout form's fields (date as YYYY-MM-DD, the
// value a date input holds whatever the browser's locale).
func (b *shopBrowser) fillDetails(name, email, phone, date string) {
	b.t.Helper()
	// DevTools sets them (chromedp.SetValue refuses ""), with page
	// scripts off too.
	js := ""
	for id, v := range map[string]string{"name": name, "email": email, "phone": phone, "date": date} {
		js += `document.querySelector("#checkout-` + id + `").value = ` + strconv.Quote(v) + `;`
	}
	browse(b.t, b.ctx, chromedp.WaitVisible(chromedp.CSS(`#checkout-form`)), chromedp.Evaluate[chromedp.Void](js))
}

// cancelOf is the cancel button of the open order of a pet in a list of
// orders.
func (b *shopBrowser) cancelOf(petID int64) string {
	return `[data-testid="order"][data-state="open"]:has(a[href="/pets/` + fmtID(petID) + `"]) [data-testid="cancel"]`
}

// setLine sets a cart line's quantity with its Update button.
func (b *shopBrowser) setLine(petID int64, qty int) {
	b.t.Helper()
	browse(b.t, b.ctx,
		chromedp.SetValue(chromedp.CSS(`#qty-`+fmtID(petID)), strconv.Itoa(qty)),
		chromedp.Click(chromedp.CSS(`[data-pet-id="`+fmtID(petID)+`"] [data-testid="line-update"]`)))
}

// pet finds a demo pet by name.
func (b *shopBrowser) pet(name string) *db.Pet {
	b.t.Helper()
	pets, _, err := b.ts.Store.FindPets(context.Background(), db.PetFilter{Query: name, Page: db.Page{Limit: db.MaxLimit}})
	if err != nil {
		b.t.Fatal(err)
	}
	for _, p := range pets {
		if p.Name == name {
			return p
		}
	}
	b.t.Fatalf("no demo pet %s", name)
	return nil
}

// categoryID is a demo category's id, as the filter's option value.
func (b *shopBrowser) categoryID(name string) string {
	b.t.Helper()
	cats, _, err := b.ts.Store.FindCategories(context.Background(), db.Page{Limit: db.MaxLimit})
	if err != nil {
		b.t.Fatal(err)
	}
	for _, c := range cats {
		if c.Name == name {
			return fmtID(c.ID)
		}
	}
	b.t.Fatalf("no demo category %s", name)
	return ""
}

// stock reads a pet's stock from the database.
func (b *shopBrowser) stock(petID int64) int64 {
	b.t.Helper()
	p, err := b.ts.Store.FindPetByID(context.Background(), petID)
	if err != nil {
		b.t.Fatal(err)
	}
	return p.Stock
}

// setStock changes a pet's stock behind the shopper's back.
func (b *shopBrowser) setStock(petID, qty int64) {
	b.t.Helper()
	if _, err := b.ts.Store.SetInventory(context.Background(), petID, db.InventoryUpdate{Quantity: &qty}); err != nil {
		b.t.Fatal(err)
	}
}

func fmtID(n int64) string { return strconv.FormatInt(n, 10) }
