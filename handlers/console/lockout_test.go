package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// Twenty wrong passwords at once: each attempt is recorded before it is
// checked, so at most five reach bcrypt (answered 401), the rest are
// refused unchecked (429), and then even the right password is refused.
func TestSignInConcurrentGuesses(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
		b := a.Browser(t)
		b.Get("/staff/login").WantStatus(http.StatusOK)
		body := url.Values{"username": {handlerstest.StaffName}, "password": {"wrong"}, "_csrf": {b.CSRF}}.Encode()

		statuses := handlerstest.PostAtOnce(t, a, 20, "/staff/login", body, func(r *http.Request) {
			for _, c := range b.Cookies {
				r.AddCookie(c)
			}
		})
		checked, locked := statuses[http.StatusUnauthorized], statuses[http.StatusTooManyRequests]
		if checked > 5 || checked+locked != 20 {
			t.Fatalf("answers = %v: want at most 5 checked (401), the rest locked (429)", statuses)
		}
		if n := handlerstest.CountRows(t, a, "login_failures"); n != 20 {
			t.Fatalf("attempts recorded = %d, want 20", n)
		}
		b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests).WantText("login-error", "Try again in 15 minutes")
		b.Get("/staff").WantRedirect("/staff/login")
	})
}

// A username the console could never have is refused on the form (422)
// before any database work: nothing is looked up or recorded.
func TestSignInUsernameRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
		for name, tc := range map[string]struct{ username, want string }{
			"101 characters":    {strings.Repeat("a", 101), "Username must be at most 100 characters."},
			"NUL":               {"ali\x00ce", "Username must not contain control characters."},
			"control character": {"ali\x1bce", "Username must not contain control characters."},
			"invalid UTF-8":     {"ali\xffce", "Username must be valid UTF-8."},
		} {
			t.Run(name, func(t *testing.T) {
				b := a.Browser(t)
				p := b.Login(tc.username, handlerstest.StaffPassword).WantStatus(http.StatusUnprocessableEntity)
				p.WantText("login-error", tc.want)
				if v, _ := p.Find("#username").Attr("value"); v != "" {
					t.Errorf("the refused username was echoed back: %q", v)
				}
			})
		}
		if n := handlerstest.CountRows(t, a, "login_failures"); n != 0 {
			t.Fatalf("attempts recorded for refused usernames: %d, want 0", n)
		}
		// 100 characters is a username: checked (and wrong) like any other.
		a.Browser(t).Login(strings.Repeat("é", 100), handlerstest.StaffPassword).WantStatus(http.StatusUnauthorized)
		if n := handlerstest.CountRows(t, a, "login_failures"); n != 1 {
			t.Fatalf("attempts recorded = %d, want 1", n)
		}
	})
}

// The lockout counts an IPv6 client by its /64 (SPEC §6): five failures
// from addresses of one /64 lock the username for the whole block, while
// another /64, and an IPv4 client, still sign in.
func TestSignInLockoutByIPv6Block(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0")) // app.Test's peer
		a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
		b := a.Browser(t)
		for i := 1; i <= 5; i++ {
			b.Header["X-Forwarded-For"] = "2001:db8:7:7::" + handlerstest.Itoa(int64(i))
			b.Login(handlerstest.StaffName, "wrong").WantStatus(http.StatusUnauthorized)
		}
		b.Header["X-Forwarded-For"] = "2001:db8:7:7:ffff::1"
		b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests)

		other := a.Browser(t)
		other.Header["X-Forwarded-For"] = "2001:db8:7:8::1"
		other.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusSeeOther)
		v4 := a.Browser(t)
		v4.Header["X-Forwarded-For"] = "192.0.2.77"
		v4.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusSeeOther)
	})
}
