package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
	"petstore/web/ratelimit"
)

// auditActions lists the audit log's actions, oldest first.
func auditActions(t *testing.T, a *handlerstest.App) string {
	t.Helper()
	var actions []string
	if err := a.Store.DB().Select(&actions, `SELECT action FROM audit_log ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	return strings.Join(actions, " ")
}

// TestTeamOneTimePassword: an admin adds a clerk and sees a one-time
// password once; the clerk signs in with it and every console page sends
// them to choose their own, which then opens the console.
func TestTeamOneTimePassword(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		admin, _ := a.SignInAs(t, "ada", db.RoleAdmin)

		// Bad input comes back on the form.
		p := admin.Post("/staff/team", url.Values{"username": {strings.Repeat("x", 101)}, "role": {"clerk"}}).WantStatus(http.StatusUnprocessableEntity)
		p.WantText("error-username-error", "at most 100")
		p = admin.Post("/staff/team", url.Values{"username": {"bob"}, "role": {"owner"}}).WantStatus(http.StatusUnprocessableEntity)
		p.WantText("error-role-error", "admin or clerk")

		p = admin.Post("/staff/team", url.Values{"username": {"bob"}, "role": {"clerk"}}).WantStatus(http.StatusCreated)
		password, _ := p.ID("one-time-value").Attr("value")
		if len(password) < db.MinPasswordLength {
			t.Fatalf("one-time password %q", password)
		}
		p = admin.Get("/staff/team").WantStatus(http.StatusOK)
		if strings.Contains(p.Body, password) {
			t.Fatal("the one-time password is shown again")
		}
		if got := p.Find(`[data-username="bob"] [data-testid="staff-one-time"]`).Length(); got != 1 {
			t.Fatal("the team list does not say bob's password is one-time")
		}

		bob := a.Browser(t)
		bob.Follow(bob.Login("bob", password).WantRedirect("/staff")).WantRedirect("/staff/account")
		for _, path := range []string{"/staff", "/staff/inventory", "/staff/orders?state=open"} {
			bob.Get(path).WantRedirect("/staff/account")
		}
		bob.HX("/staff/inventory").WantStatus(http.StatusForbidden)
		p = bob.Get("/staff/account").WantStatus(http.StatusOK)
		p.WantText("forced-change", "one-time")
		if p.ID("nav-inventory").Length() != 0 || p.ID("twofactor").Length() != 0 {
			t.Fatal("the forced change shows more than the password form")
		}
		// Issue 42: the form says which password it asks for first, and
		// promises no ending of sign-ins the user never made.
		if got := browsertest.Text(p.Find(`label[for="current-password"]`)); !strings.Contains(got, "One-time password") {
			t.Errorf("the forced change's first field is labelled %q", got)
		}
		if strings.Contains(p.Text("password-rules"), "sign-ins end") {
			t.Errorf("the forced change says %q", p.Text("password-rules"))
		}
		bob.Post("/staff/account/password", url.Values{"current": {"wrong"}, "password": {"a good long password"}, "confirm": {"a good long password"}}).
			WantStatus(http.StatusUnprocessableEntity).WantText("error-current-password-error", "one-time password you signed in with")
		for _, tc := range []struct {
			form  url.Values
			field string
		}{
			{url.Values{"current": {"wrong"}, "password": {"a good long password"}, "confirm": {"a good long password"}}, "error-current-password-error"},
			{url.Values{"current": {password}, "password": {"short"}, "confirm": {"short"}}, "error-new-password-error"},
			{url.Values{"current": {password}, "password": {"bob"}, "confirm": {"bob"}}, "error-new-password-error"},
			{url.Values{"current": {password}, "password": {strings.Repeat("y", 201)}, "confirm": {strings.Repeat("y", 201)}}, "error-new-password-error"},
			{url.Values{"current": {password}, "password": {password}, "confirm": {password}}, "error-new-password-error"},
			{url.Values{"current": {password}, "password": {"a good long password"}, "confirm": {"another one"}}, "error-confirm-password-error"},
		} {
			p := bob.Post("/staff/account/password", tc.form).WantStatus(http.StatusUnprocessableEntity)
			if p.ID(tc.field).Length() != 1 {
				t.Fatalf("%v: no %s in\n%s", tc.form, tc.field, p.Body)
			}
		}
		bob.Post("/staff/account/password", url.Values{"current": {password}, "password": {"bob's own long password"}, "confirm": {"bob's own long password"}}).WantRedirect("/staff")
		if welcome := bob.Get("/staff").WantStatus(http.StatusOK).Text("flash"); strings.Contains(welcome, "other sign-ins") || !strings.Contains(welcome, "password is set") {
			t.Errorf("after the first change the console says %q", welcome)
		}
		bob.Get("/staff/inventory").WantStatus(http.StatusOK)
		bob.Get("/staff/team").WantStatus(http.StatusForbidden)
		// The one-time password no longer signs in; the new one does.
		again := a.Browser(t)
		again.Login("bob", password).WantStatus(http.StatusUnauthorized)
		again.Login("bob", "bob's own long password").WantRedirect("/staff")
		if got := auditActions(t, a); !strings.Contains(got, "staff.create signin.success") || !strings.Contains(got, "staff.password_change") || !strings.Contains(got, "signin.failure") {
			t.Fatalf("audit: %s", got)
		}
	})
}

// TestTeamActionsEndSessions: disabling, resetting, demoting and turning
// 2FA off sign the user out at once; a disabled user cannot sign in until
// enabled again; an admin's own row takes no team action.
func TestTeamActionsEndSessions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		admin, me := a.SignInAs(t, "ada", db.RoleAdmin)
		bg := context.Background()
		for _, action := range []string{"disable", "password", "role", "2fa-off"} {
			t.Run(action, func(t *testing.T) {
				name := "user-" + action
				user, u := a.SignInAs(t, name, db.RoleAdmin)
				if action == "2fa-off" { // on from the user's Account page: its sign-in stays
					secret := strings.TrimSpace(user.Get("/staff/account/2fa").WantStatus(http.StatusOK).ID("totp-secret").Text())
					code, _ := totp.GenerateCode(secret, a.Clock.Now())
					user.Post("/staff/account/2fa", url.Values{"code": {code}}).WantStatus(http.StatusOK)
				}
				user.Get("/staff/inventory").WantStatus(http.StatusOK)
				admin.Get("/staff/team").WantStatus(http.StatusOK)
				form := url.Values{}
				if action == "role" {
					form.Set("role", db.RoleClerk)
				}
				p := admin.Post("/staff/team/"+itoa(u.ID)+"/"+action, form)
				if action == "password" {
					p.WantStatus(http.StatusOK)
					if v, _ := p.ID("one-time-value").Attr("value"); len(v) < db.MinPasswordLength {
						t.Fatalf("reset shows %q", v)
					}
				} else {
					admin.Follow(p.WantRedirect("/staff/team"))
				}
				// The user's open page: the next request goes to the sign-in.
				user.Get("/staff/inventory").WantRedirect("/staff/login?next=%2Fstaff%2Finventory")
				user.HX("/staff/orders").WantStatus(http.StatusUnauthorized)
				if action == "disable" {
					again := a.Browser(t)
					p := again.Login(name, handlerstest.StaffPassword).WantStatus(http.StatusForbidden)
					p.WantText("login-error", "disabled")
					admin.Get("/staff/team")
					admin.Post("/staff/team/"+itoa(u.ID)+"/enable", nil).WantRedirect("/staff/team")
					again.Login(name, handlerstest.StaffPassword).WantRedirect("/staff")
				}
			})
		}
		// Own row: no action.
		admin.Get("/staff/team")
		admin.Post("/staff/team/"+itoa(me.ID)+"/disable", nil).WantStatus(http.StatusForbidden)
		admin.Post("/staff/team/"+itoa(me.ID)+"/role", url.Values{"role": {"clerk"}}).WantStatus(http.StatusForbidden)
		// Hostile ids and roles are refused, never a 500.
		admin.Post("/staff/team/424242/disable", nil).WantStatus(http.StatusNotFound)
		if p := admin.Post("/staff/team/x'1/disable", nil); p.Status != http.StatusNotFound && p.Status != http.StatusBadRequest {
			t.Fatalf("a malformed id: %d", p.Status)
		}
		admin.Get("/staff/team")
		users, _ := a.Store.FindStaffUsers(bg)
		p := admin.Post("/staff/team/"+itoa(users[len(users)-1].ID)+"/role", url.Values{"role": {"<script>"}})
		if p.Status != http.StatusUnprocessableEntity && p.Status != http.StatusSeeOther {
			t.Fatalf("a bad role: %d", p.Status)
		}
		if strings.Contains(p.Body, "<script>") {
			t.Fatal("the bad role is echoed unescaped")
		}
	})
}

// toCodeStep signs name in up to the code step.
func toCodeStep(t *testing.T, a *handlerstest.App, name string) *handlerstest.Browser {
	t.Helper()
	b := a.Browser(t)
	b.Login(name, handlerstest.StaffPassword).WantRedirect("/staff/login/code")
	b.Get("/staff/login/code").WantStatus(http.StatusOK).WantText("code-user", name)
	return b
}

// TestTwoFactorSignIn: a user turns 2FA on from the account page (the
// secret as text and as a QR code), gets 10 recovery codes once, and
// then signs in with a code after the password: a code is accepted once,
// a recovery code once, and code guesses count toward the lockout.
func TestTwoFactorSignIn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b, _ := a.SignInAs(t, "carol", db.RoleClerk)
		p := b.Get("/staff/account").WantStatus(http.StatusOK)
		p.WantText("twofactor-state", "off")
		p = b.Get("/staff/account/2fa").WantStatus(http.StatusOK)
		secret := strings.TrimSpace(p.ID("totp-secret").Text())
		if src, _ := p.ID("totp-qr").Attr("src"); len(secret) < 16 || !strings.HasPrefix(src, "data:image/png;base64,") {
			t.Fatalf("secret %q, QR %.40q", secret, src)
		}
		// The page shows the same secret until it is confirmed.
		if again := b.Get("/staff/account/2fa"); strings.TrimSpace(again.ID("totp-secret").Text()) != secret {
			t.Fatal("the secret changed between two views")
		}
		code := func() string {
			c, err := totp.GenerateCode(secret, a.Clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		b.Post("/staff/account/2fa", url.Values{"code": {"000000"}}).WantStatus(http.StatusUnprocessableEntity).WantText("error-code-error", "not the code")
		enrolCode := code()
		p = b.Post("/staff/account/2fa", url.Values{"code": {enrolCode}}).WantStatus(http.StatusOK)
		recovery := p.Texts("recovery-code")
		if len(recovery) != db.RecoveryCodeCount {
			t.Fatalf("%d recovery codes", len(recovery))
		}
		b.Get("/staff/account").WantText("twofactor-state", "10 recovery codes left")
		b.Get("/staff/account/2fa").WantRedirect("/staff/account")

		// Sign-in now takes a code: the password alone is not a session.
		c := toCodeStep(t, a, "carol")
		c.Get("/staff").WantRedirect("/staff/login")
		// The enrolment's code was used: replaying it is refused.
		c.Post("/staff/login/code", url.Values{"code": {enrolCode}}).WantStatus(http.StatusUnauthorized)
		a.Clock.Add(db.TOTPPeriod * time.Second)
		fresh := code()
		c.Post("/staff/login/code", url.Values{"code": {fresh}}).WantRedirect("/staff")
		c.Get("/staff").WantStatus(http.StatusOK)
		// The same code in another browser (a replay) is refused.
		d := toCodeStep(t, a, "carol")
		d.Post("/staff/login/code", url.Values{"code": {fresh}}).WantStatus(http.StatusUnauthorized)
		// A recovery code works once.
		d.Post("/staff/login/code", url.Values{"code": {recovery[0]}}).WantRedirect("/staff")
		e := toCodeStep(t, a, "carol")
		e.Post("/staff/login/code", url.Values{"code": {recovery[0]}}).WantStatus(http.StatusUnauthorized)
		// Hostile input: refused with the form, never a 500.
		e.Post("/staff/login/code", url.Values{"code": {strings.Repeat("9", 1000)}}).WantStatus(http.StatusUnprocessableEntity)
		e.Post("/staff/login/code", url.Values{"code": {"<b>' OR 1=1"}}).WantStatus(http.StatusUnauthorized)
		e.Post("/staff/login/code", url.Values{"code": {""}}).WantStatus(http.StatusUnprocessableEntity)

		// Guesses count toward the lockout: with the password's attempt,
		// four wrong codes make five failures; then even a right code is
		// refused, and so is the password.
		a.Clock.Add(16 * time.Minute)  // the failures above leave the window
		g := toCodeStep(t, a, "carol") // failure 1 until a code is right
		for i := 2; i <= 5; i++ {
			p := g.Post("/staff/login/code", url.Values{"code": {"111111"}}).WantStatus(http.StatusUnauthorized)
			if i == 5 && !strings.Contains(p.Body, "locked for 15 minutes") {
				t.Fatalf("the fifth failure does not say it locks:\n%s", p.Body)
			}
		}
		g.Post("/staff/login/code", url.Values{"code": {code()}}).WantStatus(http.StatusTooManyRequests)
		g.Login("carol", handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests)
		// After the window, the code signs in.
		a.Clock.Add(16 * time.Minute)
		h := toCodeStep(t, a, "carol")
		h.Post("/staff/login/code", url.Values{"code": {code()}}).WantRedirect("/staff")

		// A pending sign-in expires.
		i := toCodeStep(t, a, "carol")
		a.Clock.Add(6 * time.Minute)
		i.Post("/staff/login/code", url.Values{"code": {code()}}).WantRedirect("/staff/login")

		// Turning it off takes the password, ends the other sign-ins.
		h.Get("/staff/account")
		h.Post("/staff/account/2fa/off", url.Values{"current": {"wrong"}}).WantStatus(http.StatusUnprocessableEntity)
		h.Post("/staff/account/2fa/off", url.Values{"current": {handlerstest.StaffPassword}}).WantRedirect("/staff/account")
		h.Get("/staff/account").WantText("twofactor-state", "off")
		c.Get("/staff").WantRedirect("/staff/login")
		a.Browser(t).Login("carol", handlerstest.StaffPassword).WantRedirect("/staff")
		actions := auditActions(t, a)
		for _, want := range []string{"staff.2fa_on", "staff.2fa_off", "signin.failure", "signin.success"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit lacks %s: %s", want, actions)
			}
		}
		var reasons []string
		if err := a.Store.DB().Select(&reasons, `SELECT changes FROM audit_log WHERE action = 'signin.failure' ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		for _, r := range reasons {
			if strings.Contains(r, secret) || strings.Contains(r, recovery[0]) {
				t.Fatalf("a failure's changes hold a code: %s", r)
			}
		}
	})
}

// TestTwoFactorRequired: PETSTORE_STAFF_2FA=required sends a user without
// 2FA to enrol before any other page, and 2FA cannot be turned off.
func TestTwoFactorRequired(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open, func(h *handlers.Handler, _ *ratelimit.Config) { h.Config.StaffTwoFactorRequired = true })
		b, _ := a.SignInAs(t, "dan", db.RoleAdmin)
		for _, path := range []string{"/staff", "/staff/inventory", "/staff/account", "/staff/team"} {
			b.Get(path).WantRedirect("/staff/account/2fa")
		}
		p := b.Get("/staff/account/2fa").WantStatus(http.StatusOK)
		p.WantText("twofactor-required", "requires two-factor")
		secret := strings.TrimSpace(p.ID("totp-secret").Text())
		code, err := totp.GenerateCode(secret, a.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		b.Post("/staff/account/2fa", url.Values{"code": {code}}).WantStatus(http.StatusOK)
		b.Get("/staff/inventory").WantStatus(http.StatusOK)
		b.Get("/staff/account")
		b.Post("/staff/account/2fa/off", url.Values{"current": {handlerstest.StaffPassword}}).WantStatus(http.StatusConflict)
		// Signing out works during the step too.
		c, _ := a.SignInAs(t, "eve", db.RoleClerk)
		c.Get("/staff/account/2fa")
		c.Post("/staff/logout", nil).WantRedirect("/staff/login")
	})
}
