package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pquerna/otp/totp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestTurningTwoFactorOnEndsOtherSessions: a sign-in made with the
// password alone (perhaps by whoever the second factor is meant to stop)
// ends when the user turns two-factor sign-in on elsewhere; the session
// that turned it on goes on.
func TestTurningTwoFactorOnEndsOtherSessions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b, _ := a.SignInAs(t, "carol", db.RoleClerk)
		other := a.Browser(t)
		other.Follow(other.Login("carol", handlerstest.StaffPassword).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
		other.Get("/staff").WantStatus(http.StatusOK)

		secret := strings.TrimSpace(b.Get("/staff/account/2fa").WantStatus(http.StatusOK).ID("totp-secret").Text())
		code, err := totp.GenerateCode(secret, a.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		b.Post("/staff/account/2fa", url.Values{"code": {code}}).WantStatus(http.StatusOK).WantText("other-sessions-ended", "other sign-ins have ended")
		other.Get("/staff").WantRedirect("/staff/login")
		b.Get("/staff").WantStatus(http.StatusOK)
	})
}
