package main

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// staffBrowser is a console visitor: a shopper that keeps the console's
// cookie by hand, so that it can be copied to another client, as a thief
// would.
type staffBrowser = shopper

func newStaffBrowser(t *testing.T) *staffBrowser {
	return &shopper{t: t, name: "petstore_staff", c: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// token is the CSRF token of the page at target.
func (b *staffBrowser) token(target string) string {
	b.t.Helper()
	page := b.visit("GET", target, nil)
	m := csrfInput.FindSubmatch(page.body)
	if page.status != 200 || m == nil {
		b.t.Fatalf("GET %s: %d, CSRF token found %v", target, page.status, m != nil)
	}
	return string(m[1])
}

// wantSignedIn checks that the console's dashboard at base answers the
// cookie (200) or sends it to the sign-in page (303).
func (b *staffBrowser) wantSignedIn(base string, signedIn bool) {
	b.t.Helper()
	ans := b.visit("GET", base+"/staff", nil)
	switch {
	case signedIn && ans.status != 200:
		b.t.Fatalf("GET %s/staff: %d, want 200 (signed in)", base, ans.status)
	case !signedIn && (ans.status != http.StatusSeeOther || ans.header.Get("Location") != "/staff/login"):
		b.t.Fatalf("GET %s/staff: %d to %q, want 303 to /staff/login (signed out)", base, ans.status, ans.header.Get("Location"))
	}
}

// TestConsoleSignOutEverywhere: signing out on A ends the sign-in on the
// server (SPEC §10): a copy of the cookie taken before is refused on A and
// on B, and a console event stream open on B with it ends within 15 s.
func TestConsoleSignOutEverywhere(t *testing.T) {
	eachPair(t, nil, func(t *testing.T, a, b *node) {
		// The cheapest bcrypt cost: the test is about sessions, and the
		// default cost takes seconds under the race detector on a busy host.
		hash, err := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.srv.Store.CreateStaffUser(context.Background(), "ada", string(hash)); err != nil {
			t.Fatal(err)
		}
		ada := newStaffBrowser(t)
		token := ada.token(a.base + "/staff/login")
		signIn := ada.visit("POST", a.base+"/staff/login", url.Values{"_csrf": {token}, "username": {"ada"}, "password": {"correct horse battery"}})
		if signIn.status != http.StatusSeeOther || signIn.header.Get("Location") != "/staff" {
			t.Fatalf("sign-in on A: %d to %q\n%s", signIn.status, signIn.header.Get("Location"), signIn.body)
		}
		thief := newStaffBrowser(t)
		thief.cookie = ada.cookie
		thief.wantSignedIn(b.base, true)
		s := openStream(t, b.base+"/staff/events", "Cookie", thief.cookie)

		signedOut := time.Now()
		out := ada.visit("POST", a.base+"/staff/logout", url.Values{"_csrf": {ada.token(a.base + "/staff")}})
		if out.status != http.StatusSeeOther {
			t.Fatalf("sign-out on A: %d\n%s", out.status, out.body)
		}
		thief.wantSignedIn(b.base, false)
		thief.wantSignedIn(a.base, false)
		if ans := thief.visit("GET", b.base+"/staff/events", nil); ans.status != http.StatusUnauthorized {
			t.Fatalf("GET /staff/events on B with the copied cookie: %d, want 401", ans.status)
		}
		s.wantEndWithin(t, signedOut, 15*time.Second, "the sign-out on A")
		ada.wantSignedIn(a.base, false)
	})
}
