package main

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"petstore/db"
)

// The staff console on a phone, from the keyboard and in dark mode
// (issue 15).

// TestConsoleBrowserSpaceOnButtonLinks: Space presses the console's links
// styled as buttons, and opens a <summary role="button"> exactly once
// (natively; a second activation would close it again).
func TestConsoleBrowserSpaceOnButtonLinks(t *testing.T) {
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	_, key := cb.issueKey("Space partner", db.RoleCustomer, db.PlanFree, 0, 0)
	cb.signIn()

	cb.navigate(chromedp.Navigate(ts.URL + "/staff/catalog"))
	cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="new-pet"]`), " "))
	cb.waitJS(`location.pathname === "/staff/pets/new"`)

	cb.navigate(chromedp.Navigate(ts.URL + "/staff/keys"))
	cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
	summary := `#key-` + fmtID(key.ID) + ` summary[role="button"]`
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(summary), " "))
	cb.waitJS(`document.querySelector(` + q(summary) + `).parentElement.open === true`)
	cb.waitText(`#key-`+fmtID(key.ID)+` [data-testid="revoke-key-confirm"]`, "Revoke key")
}

// signIn creates a staff user and signs in with the form.
func (cb *consoleBrowser) signIn() {
	cb.t.Helper()
	if _, err := createStaff(context.Background(), cb.ts.Store, "alice", "a long staff password"); err != nil {
		cb.t.Fatal(err)
	}
	cb.navigate(chromedp.Navigate(cb.ts.URL + "/staff/login"))
	cb.navigate(chromedp.SendKeys(chromedp.ID("username"), "alice"),
		chromedp.SendKeys(chromedp.ID("password"), "a long staff password"),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)))
	cb.waitJS(`location.pathname === "/staff"`)
}
