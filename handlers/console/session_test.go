package console_test

import (
	"maps"
	"net/http"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestConsoleSignOutEndsCopies: the console's sign-in lives on the server
// (SPEC §10). A copy of the cookie taken while signed in is refused once
// the owner signs out, and once the owner signs in again with that cookie
// (the new sign-in replaces the old one).
func TestConsoleSignOutEndsCopies(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		owner := a.SignedIn(t)
		copyOf := func(b *handlerstest.Browser) *handlerstest.Browser {
			c := a.Browser(t)
			c.Cookies = maps.Clone(b.Cookies)
			return c
		}

		t.Run("SignOut", func(t *testing.T) {
			thief := copyOf(owner)
			thief.Get("/staff").WantStatus(http.StatusOK)
			owner.Post("/staff/logout", nil).WantRedirect("/staff/login")
			thief.Get("/staff").WantRedirect("/staff/login")
			if p := thief.Get("/staff/events"); p.Status != http.StatusUnauthorized {
				t.Fatalf("GET /staff/events with the copy: %d, want 401", p.Status)
			}
			// The sign-in page no longer takes the copy for signed in.
			thief.Get("/staff/login").WantStatus(http.StatusOK)
		})
		t.Run("SignInAgain", func(t *testing.T) {
			owner.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
			thief := copyOf(owner)
			thief.Get("/staff").WantStatus(http.StatusOK)
			owner.Get("/staff").WantStatus(http.StatusOK) // the signed-in CSRF token
			owner.Post("/staff/login", map[string][]string{"username": {handlerstest.StaffName}, "password": {handlerstest.StaffPassword}}).WantRedirect("/staff")
			thief.Get("/staff").WantRedirect("/staff/login")
			owner.Get("/staff").WantStatus(http.StatusOK)
		})
	})
}
