package handlers_test

import (
	"maps"
	"net/http"
	"testing"

	"petstore/db/dbtest"
)

// TestConsoleSignOutEndsCopies: the console's sign-in lives on the server
// (SPEC §10). A copy of the cookie taken while signed in is refused once
// the owner signs out, and once the owner signs in again with that cookie
// (the new sign-in replaces the old one).
func TestConsoleSignOutEndsCopies(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		owner := a.signedIn(t)
		copyOf := func(b *browser) *browser {
			c := a.browser(t)
			c.cookies = maps.Clone(b.cookies)
			return c
		}

		t.Run("SignOut", func(t *testing.T) {
			thief := copyOf(owner)
			thief.get("/staff").wantStatus(http.StatusOK)
			owner.post("/staff/logout", nil).wantRedirect("/staff/login")
			thief.get("/staff").wantRedirect("/staff/login")
			if p := thief.get("/staff/events"); p.Status != http.StatusUnauthorized {
				t.Fatalf("GET /staff/events with the copy: %d, want 401", p.Status)
			}
			// The sign-in page no longer takes the copy for signed in.
			thief.get("/staff/login").wantStatus(http.StatusOK)
		})
		t.Run("SignInAgain", func(t *testing.T) {
			owner.login(staffName, staffPassword).wantRedirect("/staff")
			thief := copyOf(owner)
			thief.get("/staff").wantStatus(http.StatusOK)
			owner.get("/staff").wantStatus(http.StatusOK) // the signed-in CSRF token
			owner.post("/staff/login", map[string][]string{"username": {staffName}, "password": {staffPassword}}).wantRedirect("/staff")
			thief.get("/staff").wantRedirect("/staff/login")
			owner.get("/staff").wantStatus(http.StatusOK)
		})
	})
}
