package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db/dbtest"
)

// Twenty wrong passwords at once: each attempt is recorded before it is
// checked, so at most five reach bcrypt (answered 401), the rest are
// refused unchecked (429), and then even the right password is refused.
func TestSignInConcurrentGuesses(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		a.addStaff(staffName, staffPassword)
		b := a.browser(t)
		b.get("/staff/login").wantStatus(http.StatusOK)
		body := url.Values{"username": {staffName}, "password": {"wrong"}, "_csrf": {b.csrf}}.Encode()

		statuses := postAtOnce(t, a, 20, "/staff/login", body, func(r *http.Request) {
			for _, c := range b.cookies {
				r.AddCookie(c)
			}
		})
		checked, locked := statuses[http.StatusUnauthorized], statuses[http.StatusTooManyRequests]
		if checked > 5 || checked+locked != 20 {
			t.Fatalf("answers = %v: want at most 5 checked (401), the rest locked (429)", statuses)
		}
		if n := countRows(t, a, "login_failures"); n != 20 {
			t.Fatalf("attempts recorded = %d, want 20", n)
		}
		b.login(staffName, staffPassword).wantStatus(http.StatusTooManyRequests).wantText("login-error", "Try again in 15 minutes")
		b.get("/staff").wantRedirect("/staff/login")
	})
}

// A username the console could never have is refused on the form (422)
// before any database work: nothing is looked up or recorded.
func TestSignInUsernameRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		a.addStaff(staffName, staffPassword)
		for name, tc := range map[string]struct{ username, want string }{
			"101 characters":    {strings.Repeat("a", 101), "Username must be at most 100 characters."},
			"NUL":               {"ali\x00ce", "Username must not contain control characters."},
			"control character": {"ali\x1bce", "Username must not contain control characters."},
			"invalid UTF-8":     {"ali\xffce", "Username must be valid UTF-8."},
		} {
			t.Run(name, func(t *testing.T) {
				b := a.browser(t)
				p := b.login(tc.username, staffPassword).wantStatus(http.StatusUnprocessableEntity)
				p.wantText("login-error", tc.want)
				if v, _ := p.find("#username").Attr("value"); v != "" {
					t.Errorf("the refused username was echoed back: %q", v)
				}
			})
		}
		if n := countRows(t, a, "login_failures"); n != 0 {
			t.Fatalf("attempts recorded for refused usernames: %d, want 0", n)
		}
		// 100 characters is a username: checked (and wrong) like any other.
		a.browser(t).login(strings.Repeat("é", 100), staffPassword).wantStatus(http.StatusUnauthorized)
		if n := countRows(t, a, "login_failures"); n != 1 {
			t.Fatalf("attempts recorded = %d, want 1", n)
		}
	})
}
