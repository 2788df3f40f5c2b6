package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"petstore/db"
)

// TestConsoleBrowserTeam drives the team and the account pages in
// chromium (SPEC §16): an admin adds a clerk and reads the one-time
// password off the page; the clerk signs in with it, is held on the
// password change until they choose their own, turns on two-factor
// sign-in with a code computed here from the secret the page writes out,
// and signs in again with the password and a fresh code.
func TestConsoleBrowserTeam(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.watchConsole()
	cb.signIn() // alice, an admin

	oneTime := cb.addStaff("bob")
	screenshot(t, ctx, "team-added")
	cb.logout()

	// The first sign-in: every page leads to the password change.
	cb.login("bob", oneTime)
	cb.waitJS(`location.pathname === "/staff/account" && !!document.querySelector('[data-testid="forced-change"]')`)
	screenshot(t, ctx, "forced-password-change")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/orders"))
	cb.waitJS(`location.pathname === "/staff/account"`)
	cb.changePassword(oneTime, "bob's very own password")
	cb.waitJS(`location.pathname === "/staff" && !!document.querySelector('[data-testid="nav-inventory"]')`)
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="nav-team"], [data-testid="nav-keys"], [data-testid="nav-webhooks"]').length`)); n != 0 {
		t.Fatalf("a clerk's navigation shows %d admin entries", n)
	}

	// Two-factor sign-in on, with the secret the page shows as text.
	secret := cb.enrolTwoFactor()
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="recovery-code"]').length`)); n != db.RecoveryCodeCount {
		t.Fatalf("%d recovery codes shown", n)
	}
	screenshot(t, ctx, "recovery-codes")
	cb.logout()

	// Sign in again: the password, then a code of the next 30 s step.
	cb.login("bob", "bob's very own password")
	cb.waitJS(`location.pathname === "/staff/login/code"`)
	screenshot(t, ctx, "sign-in-code")
	ts.Clock.Add(db.TOTPPeriod * time.Second)
	cb.typeCode(totpCode(t, secret, ts.Clock.Now()), "code-submit")
	cb.waitJS(`location.pathname === "/staff" && document.querySelector('[data-testid="staff-user"]')?.textContent === "bob"`)
	u, err := ts.Store.FindStaffUserByUsername(context.Background(), "bob")
	if err != nil || !u.TwoFactor() || u.MustChangePassword || u.LastSignInAt == nil {
		t.Fatalf("bob = %+v, %v", u, err)
	}
	cb.wantQuietConsole()
}

// totpCode is the TOTP code of secret at the time at.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// addStaff adds a clerk on the Team page and returns the one-time
// password the page shows.
func (cb *consoleBrowser) addStaff(name string) string {
	cb.t.Helper()
	cb.navigate(chromedp.Navigate(cb.ts.URL + "/staff/team"))
	browse(cb.t, cb.ctx, chromedp.Click(chromedp.CSS(`[data-testid="add-staff-toggle"]`)),
		chromedp.SendKeys(chromedp.CSS(`#staff-username`), name))
	cb.setField(`#staff-role`, db.RoleClerk)
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="add-staff"]`)))
	cb.waitJS(`!!document.querySelector('[data-testid="one-time-value"]')`)
	password := read(cb.t, cb.ctx, chromedp.Value(chromedp.CSS(`[data-testid="one-time-value"]`)))
	if len(password) < db.MinPasswordLength {
		cb.t.Fatalf("one-time password %q", password)
	}
	cb.waitText(`[data-username="`+name+`"] [data-testid="staff-one-time"]`, "one-time")
	return password
}

// login signs in with the form.
func (cb *consoleBrowser) login(name, password string) {
	cb.t.Helper()
	cb.navigate(chromedp.Navigate(cb.ts.URL + "/staff/login"))
	cb.navigate(chromedp.SendKeys(chromedp.ID("username"), name),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)))
}

// logout signs out with the button.
func (cb *consoleBrowser) logout() {
	cb.t.Helper()
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="logout"]`)))
	cb.waitJS(`location.pathname === "/staff/login"`)
}

// changePassword fills the Account page's password form.
func (cb *consoleBrowser) changePassword(current, password string) {
	cb.t.Helper()
	cb.navigate(chromedp.SendKeys(chromedp.ID("current-password"), current),
		chromedp.SendKeys(chromedp.ID("new-password"), password),
		chromedp.SendKeys(chromedp.ID("confirm-password"), password),
		chromedp.Click(chromedp.CSS(`[data-testid="change-password"]`)))
}

// enrolTwoFactor turns two-factor sign-in on from the Account page with a
// code computed from the secret the page writes out, and returns it.
func (cb *consoleBrowser) enrolTwoFactor() string {
	cb.t.Helper()
	cb.navigate(chromedp.Navigate(cb.ts.URL + "/staff/account"))
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="twofactor-on"]`)))
	cb.waitJS(`location.pathname === "/staff/account/2fa" && document.querySelector('[data-testid="totp-qr"]')?.complete`)
	if w := read(cb.t, cb.ctx, chromedp.Evaluate[int](`document.querySelector('[data-testid="totp-qr"]').naturalWidth`)); w == 0 {
		cb.t.Fatal("the QR code did not load")
	}
	secret := strings.TrimSpace(cb.text(`[data-testid="totp-secret"]`))
	if len(secret) < 16 {
		cb.t.Fatalf("secret %q", secret)
	}
	cb.typeCode(totpCode(cb.t, secret, cb.ts.Clock.Now()), "enrol-submit")
	cb.waitJS(`!!document.querySelector('[data-testid="recovery-codes"]')`)
	return secret
}

// typeCode types a code into the page's code field and submits it with
// the button of that test id.
func (cb *consoleBrowser) typeCode(code, submit string) {
	cb.t.Helper()
	cb.navigate(chromedp.SendKeys(chromedp.ID("code"), code),
		chromedp.Click(chromedp.CSS(`[data-testid="`+submit+`"]`)))
}
