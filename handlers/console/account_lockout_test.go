package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// TestAccountPasswordChecksLockOut: the current password the Account
// page's forms ask for (change the password, turn 2FA off) is checked by
// the sign-in's rules on its counter: five wrong ones lock it, and the
// sign-in from that address, for 15 minutes (even the right password is
// refused); each wrong or locked attempt is audited as the user's
// staff.password_failure; a right one forgets the failures, as a sign-in
// does.
func TestAccountPasswordChecksLockOut(t *testing.T) {
	for _, form := range []struct{ name, path, field string }{
		{"password_change", "/staff/account/password", "current"},
		{"2fa_off", "/staff/account/2fa/off", "current"},
	} {
		t.Run(form.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
				a := handlerstest.NewOn(t, open)
				b, u := a.SignInAs(t, "carol", db.RoleAdmin)
				if form.name == "2fa_off" { // on, so that there is something to turn off
					secret := strings.TrimSpace(b.Get("/staff/account/2fa").WantStatus(http.StatusOK).ID("totp-secret").Text())
					code, err := totp.GenerateCode(secret, a.Clock.Now())
					if err != nil {
						t.Fatal(err)
					}
					b.Post("/staff/account/2fa", url.Values{"code": {code}}).WantStatus(http.StatusOK)
				}
				post := func(current string) *browsertest.Page {
					b.Get("/staff/account").WantStatus(http.StatusOK)
					return b.Post(form.path, url.Values{form.field: {current}, "password": {"a brand new passphrase"}, "confirm": {"a brand new passphrase"}})
				}
				// Four wrong, then the right one (with a new password the form
				// refuses, so nothing changes): the failures are forgotten.
				for range 4 {
					post("wrong password").WantStatus(http.StatusUnprocessableEntity)
				}
				if form.name == "password_change" {
					b.Get("/staff/account")
					b.Post(form.path, url.Values{"current": {handlerstest.StaffPassword}, "password": {"short"}, "confirm": {"short"}}).WantStatus(http.StatusUnprocessableEntity)
				} else {
					a.Clock.Add(16 * time.Minute) // 2FA off has nothing to refuse: let the window pass instead
				}
				// Five wrong: the fifth says it locks.
				for i := 1; i <= 5; i++ {
					p := post("wrong password").WantStatus(http.StatusUnprocessableEntity)
					if locks := strings.Contains(p.Body, "locked for 15 minutes"); locks != (i == 5) {
						t.Fatalf("wrong password %d: says it locks = %v, want %v", i, locks, i == 5)
					}
				}
				// Locked: the right password is refused too, here and at sign-in.
				p := post(handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests)
				if !strings.Contains(p.Body, "Try again in 15 minutes") {
					t.Errorf("locked: the page does not say so:\n%s", p.Body)
				}
				a.Browser(t).Login("carol", handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests)
				if got, err := a.Store.FindStaffUserByUsername(t.Context(), "carol"); err != nil || got.PasswordHash != u.PasswordHash {
					t.Fatalf("the password changed while locked: %v", err)
				}

				// Each wrong or locked check is the user's audit entry.
				var entries []struct {
					ActorType string `db:"actor_type"`
					ActorID   string `db:"actor_id"`
					TargetID  string `db:"target_id"`
					Changes   string `db:"changes"`
				}
				if err := a.Store.DB().Select(&entries, `SELECT actor_type, actor_id, target_id, changes FROM audit_log WHERE action = 'staff.password_failure' ORDER BY id`); err != nil {
					t.Fatal(err)
				}
				if len(entries) != 10 {
					t.Fatalf("%d staff.password_failure entries, want 10 (9 wrong, 1 locked): %+v", len(entries), entries)
				}
				for i, e := range entries {
					reason := "password"
					if i == 9 {
						reason = "locked"
					}
					want := `{"form":[null,"` + form.name + `"],"reason":[null,"` + reason + `"]}`
					if e.ActorType != db.ActorStaff || e.ActorID != itoa(u.ID) || e.TargetID != itoa(u.ID) || e.Changes != want {
						t.Errorf("entry %d = %+v, want the user's, changes %s", i, e, want)
					}
				}

				// After the window, the right password works again.
				a.Clock.Add(16 * time.Minute)
				post(handlerstest.StaffPassword).WantStatus(http.StatusSeeOther)
			})
		})
	}
}
