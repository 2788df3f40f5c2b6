package main

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"golang.org/x/crypto/bcrypt"

	"petstore/db"
)

// TestConsoleTeamEndsSessions: an admin on A disables one user, resets
// another's password, demotes a third and turns a fourth's two-factor
// sign-in off (SPEC §16). Each of them had a page and the console's event
// stream open on B: the next page on either instance goes to the sign-in,
// and every stream ends within 15 s.
func TestConsoleTeamEndsSessions(t *testing.T) {
	eachPair(t, nil, func(t *testing.T, a, b *node) {
		bg := context.Background()
		hash, err := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		signIn := func(name string) *staffBrowser {
			t.Helper()
			if _, err := a.srv.Store.AddStaffUser(bg, db.NewStaffUser{Username: name, Role: db.RoleAdmin, PasswordHash: string(hash)}); err != nil {
				t.Fatal(err)
			}
			sb := newStaffBrowser(t)
			token := sb.token(a.base + "/staff/login")
			ans := sb.visit("POST", a.base+"/staff/login", url.Values{"_csrf": {token}, "username": {name}, "password": {"correct horse battery"}})
			if ans.status != http.StatusSeeOther || ans.header.Get("Location") != "/staff" {
				t.Fatalf("sign-in of %s: %d to %q\n%s", name, ans.status, ans.header.Get("Location"), ans.body)
			}
			return sb
		}
		boss := signIn("boss")
		actions := []string{"disable", "password", "role", "2fa-off"}
		users := map[string]*staffBrowser{}
		streams := map[string]*stream{}
		for _, action := range actions {
			users[action] = signIn("user-" + action)
		}
		// The fourth turns 2FA on from its Account page (the sign-in that
		// turns it on stays; any other would end).
		u4 := users["2fa-off"]
		enrol := a.base + "/staff/account/2fa"
		m := regexp.MustCompile(`data-secret="([A-Z2-7]+)"`).FindSubmatch(u4.visit("GET", enrol, nil).body)
		if m == nil {
			t.Fatal("no secret on the enrolment page")
		}
		code, _ := totp.GenerateCode(string(m[1]), a.srv.Store.Now())
		if ans := u4.visit("POST", enrol, url.Values{"_csrf": {u4.token(enrol)}, "code": {code}}); ans.status != http.StatusOK {
			t.Fatalf("turning 2FA on: %d\n%s", ans.status, ans.body)
		}
		for _, action := range actions {
			users[action].wantSignedIn(b.base, true)
			streams[action] = openStream(t, b.base+"/staff/events", "Cookie", users[action].cookie)
		}

		acted := map[string]time.Time{}
		for _, action := range actions {
			u, err := a.srv.Store.FindStaffUserByUsername(bg, "user-"+action)
			if err != nil {
				t.Fatal(err)
			}
			form := url.Values{"_csrf": {boss.token(a.base + "/staff/team")}}
			if action == "role" {
				form.Set("role", db.RoleClerk)
			}
			ans := boss.visit("POST", a.base+"/staff/team/"+fmtID(u.ID)+"/"+action, form)
			// The change commits as its answer is written: the 15 s count
			// from there (a password reset hashes a new one-time password
			// first, seconds under -race on a busy machine).
			acted[action] = time.Now()
			if ans.status != http.StatusSeeOther && ans.status != http.StatusOK {
				t.Fatalf("%s on A: %d\n%s", action, ans.status, ans.body)
			}
		}
		for _, action := range actions {
			users[action].wantSignedIn(b.base, false)
			users[action].wantSignedIn(a.base, false)
		}
		// Every stream ends within 15 s of its user's change (its answer).
		for _, action := range actions {
			streams[action].wantEndWithin(t, acted[action], 15*time.Second, "the "+action+" on A")
		}
		boss.wantSignedIn(b.base, true)
	})
}
