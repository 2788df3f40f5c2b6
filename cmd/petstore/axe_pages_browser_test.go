package main

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"petstore/db"
	"petstore/web/photo"
	"petstore/web/photo/phototest"
)

// Every page of both areas, in every state a shopper or staff reach with
// a form, checked by axe (wantAxeClean: WCAG 2.1 A and AA, at 1280 and
// 360 px, light and dark): zero violations, and no contrast axe cannot
// compute.
//
// The shop's and the console's walks take 20–30 s in CI (under -race,
// beside the other browser tests): a few dozen pages, each checked by axe
// in four views. One walk in one browser costs less than a test per page,
// each starting its own server and chromium.

// TestAxeBrowserShop walks the storefront: the catalog, pets with photos
// and without, the cart, a refused checkout, the confirmation, My orders,
// Find an order (refused and found) and the not-found pages.
func TestAxeBrowserShop(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	bella, milo := sb.pet("Bella"), sb.pet("Milo")
	addPhotos(t, ts.Store, bella.ID, 3)
	page := func(name, path string) {
		t.Helper()
		sb.navigate(chromedp.Navigate(ts.URL + path))
		sb.waitHTMX()
		wantAxeClean(t, ctx, name)
	}

	page("catalog", "/")
	page("catalog without results", "/?q=zzz")
	page("pet with photos", "/pets/"+fmtID(bella.ID))
	page("sold pet", "/pets/"+fmtID(milo.ID))
	page("empty cart", "/cart")

	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(bella.ID)))
	sb.waitHTMX()
	sb.addToCart(1)
	sb.waitText(`#flash`, "Added 1 × Bella to your cart.")
	wantAxeClean(t, ctx, "pet added to the cart")
	sb.addToCart(99)
	sb.waitText(`[data-testid="form-error"]`, "Only")
	wantAxeClean(t, ctx, "pet with a refused quantity")

	page("cart", "/cart")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="checkout"]`)))
	sb.waitText(`[data-testid="error-summary"]`, "There are 2 problems")
	wantAxeClean(t, ctx, "cart with a refused checkout")

	sb.fillDetails("Ada Lovelace", "ada@example.com", "", "")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="checkout"]`)))
	sb.waitLocation("/orders/confirmation/")
	sb.waitHTMX()
	number := sb.texts(`[data-testid="order-number"]`)[0]
	wantAxeClean(t, ctx, "confirmation")
	page("my orders", "/orders")

	page("find an order", "/orders/lookup")
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#lookup-number`), number),
		chromedp.SetValue(chromedp.CSS(`#lookup-email`), "someone@example.com"),
		chromedp.Click(chromedp.CSS(`[data-testid="lookup-submit"]`)))
	sb.waitText(`[data-testid="lookup-not-found"]`, "No order matches")
	wantAxeClean(t, ctx, "find an order, not found")
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#lookup-email`), "ada@example.com"),
		chromedp.Click(chromedp.CSS(`[data-testid="lookup-submit"]`)))
	sb.waitLocation("/orders/lookup/" + number)
	sb.waitHTMX()
	wantAxeClean(t, ctx, "found order")

	page("missing pet", "/pets/424242")
	page("missing page", "/no-such-page")
}

// TestAxeBrowserConsole walks the staff console: the sign-in (and a
// refused one), every page, the forms with their messages, a key just
// issued and the not-found page.
func TestAxeBrowserConsole(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	customer, key := cb.issueKey("Axe partner", db.RoleCustomer, db.PlanEnterprise, 1000, 100000)
	bella := cb.pet("Bella")
	addPhotos(t, ts.Store, bella.ID, 2)
	cb.api(http.MethodPost, "/api/store/orders", customer, `{"petId": `+fmtID(bella.ID)+`, "quantity": 1}`, 201)
	page := func(name, path string) {
		t.Helper()
		cb.navigate(chromedp.Navigate(ts.URL + path))
		cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
		wantAxeClean(t, ctx, name)
	}

	page("sign-in", "/staff/login")
	cb.navigate(chromedp.SendKeys(chromedp.ID("username"), "nobody"),
		chromedp.SendKeys(chromedp.ID("password"), "not the password"),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)))
	cb.waitJS(`!!document.querySelector('[data-testid="login-error"]')`)
	wantAxeClean(t, ctx, "refused sign-in")
	cb.signIn()

	page("dashboard", "/staff")
	page("inventory", "/staff/inventory")
	page("orders", "/staff/orders")
	page("catalog", "/staff/catalog")
	page("keys", "/staff/keys")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="issue-toggle"]`)),
		chromedp.SendKeys(chromedp.CSS(`#key-name`), "Axe issued"))
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="issue-key"]`)))
	cb.waitJS(`!!document.querySelector('[data-testid="plain-key"]')`)
	wantAxeClean(t, ctx, "key issued")
	page("key", "/staff/keys/"+fmtID(key.ID))
	page("usage", "/staff/usage")
	page("new pet", "/staff/pets/new")
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="save-pet"]`)))
	cb.waitJS(`!!document.querySelector("#name-error")`)
	wantAxeClean(t, ctx, "refused new pet")
	page("pet with photos", "/staff/pets/"+fmtID(bella.ID)+"/edit")
	page("new category", "/staff/categories/new")
	page("category", "/staff/categories/"+fmtID(bella.CategoryID)+"/edit")
	page("missing page", "/staff/no-such-page")

	// Finding things (issue 42): searches with and without matches, a
	// search refused in the console's layout, a refused export with its
	// error summary, the audit log's filters and changes, the menu open.
	page("orders searched", "/staff/orders?q=1")
	page("orders searched, nothing found", "/staff/orders?q=nobody")
	page("orders, a search refused", "/staff/orders?q=a%00")
	page("catalog searched", "/staff/catalog?q=bel")
	page("inventory searched", "/staff/inventory?q=bel")
	page("orders, a refused export", "/staff/orders/export?from=2026-02-10&to=2026-01-01")
	page("audit log filtered", "/staff/audit?actor=ali&action=key")
	page("jobs", "/staff/jobs")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/orders"))
	cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("[data-testid=menu-toggle]").click()`))
	wantAxeClean(t, ctx, "orders, the menu open")
}

// TestAxeBrowserConsoleTeam walks the pages of SPEC §16: the Team page
// (and a user just added, its one-time password shown), the Account page,
// turning two-factor sign-in on (refused, then the recovery codes), the
// sign-in's code step (and a refused code), and the password change a
// one-time password leads to (and a refused one).
func TestAxeBrowserConsoleTeam(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	page := func(name, path string) {
		t.Helper()
		cb.navigate(chromedp.Navigate(ts.URL + path))
		cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
		wantAxeClean(t, ctx, name)
	}
	cb.signIn()
	page("team", "/staff/team")
	oneTime := cb.addStaff("bob")
	wantAxeClean(t, ctx, "team, a user added")
	page("account", "/staff/account")
	page("two-factor setup", "/staff/account/2fa")
	cb.typeCode("000000", "enrol-submit")
	cb.waitJS(`!!document.querySelector("#code-error")`)
	wantAxeClean(t, ctx, "two-factor setup, a refused code")
	cb.enrolTwoFactor()
	wantAxeClean(t, ctx, "recovery codes")
	page("account with two-factor sign-in", "/staff/account")
	cb.logout()
	cb.login("alice", "a long staff password")
	cb.waitJS(`location.pathname === "/staff/login/code"`)
	wantAxeClean(t, ctx, "sign-in code")
	cb.typeCode("000000", "code-submit")
	cb.waitJS(`!!document.querySelector("#code-error")`)
	wantAxeClean(t, ctx, "sign-in code, refused")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/login"))
	cb.login("bob", oneTime)
	cb.waitJS(`!!document.querySelector('[data-testid="forced-change"]')`)
	wantAxeClean(t, ctx, "forced password change")
	cb.changePassword("not it", "short")
	cb.waitJS(`!!document.querySelector("#current-password-error")`)
	wantAxeClean(t, ctx, "forced password change, refused")
}

// addPhotos gives a pet n photos, processed as an upload is, each wide
// enough to have all three sizes. The processing gets minutes, not the
// server's 10 s: under the race detector on a busy machine it is slow.
func addPhotos(t *testing.T, s *db.Store, petID int64, n int) {
	t.Helper()
	for i := range n {
		raw, err := phototest.JPEG(1000+40*i, 750)
		if err != nil {
			t.Fatal(err)
		}
		res, err := photo.NewWorker().Reencode(context.Background(), bytes.NewReader(raw), "image/jpeg", photo.Limits{Timeout: 3 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		in := db.NewPhoto{
			Large:  db.PhotoSize{JPEG: res.Large.Bytes, Width: res.Large.Width, Height: res.Large.Height},
			Medium: db.PhotoSize{JPEG: res.Medium.Bytes, Width: res.Medium.Width, Height: res.Medium.Height},
			Thumb:  db.PhotoSize{JPEG: res.Thumb.Bytes, Width: res.Thumb.Width, Height: res.Thumb.Height},
		}
		if _, err := s.AddPhoto(context.Background(), petID, in); err != nil {
			t.Fatal(err)
		}
	}
}
