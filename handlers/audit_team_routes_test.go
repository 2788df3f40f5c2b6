package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/pquerna/otp/totp"

	"petstore/db"
	"petstore/handlers/handlerstest"
)

// The team's and the account's forms (SPEC §16) in TestEveryChangeIsAudited:
// each leaves one entry by the signed-in admin. The users they act on are
// made through the store, under a context without an origin.
func init() {
	auditExcluded["POST /staff/login/code"] = "the sign-in's second step is audited by the sign-in (signin.*), not a change to the store"
	for route, c := range map[string]auditCase{
		"POST /staff/team": {"staff.create", func(e *auditEnv) int {
			e.n++
			return e.form("/staff/team", "username", fmt.Sprintf("clerk%d", e.n), "role", db.RoleClerk)
		}},
		"POST /staff/team/:staffId/role": {"staff.role", func(e *auditEnv) int {
			return e.form("/staff/team/"+id(e.teammate().ID)+"/role", "role", db.RoleAdmin)
		}},
		"POST /staff/team/:staffId/password": {"staff.password_reset", func(e *auditEnv) int {
			return e.form("/staff/team/" + id(e.teammate().ID) + "/password")
		}},
		"POST /staff/team/:staffId/disable": {"staff.disable", func(e *auditEnv) int {
			return e.form("/staff/team/" + id(e.teammate().ID) + "/disable")
		}},
		"POST /staff/team/:staffId/enable": {"staff.enable", func(e *auditEnv) int {
			u := e.teammate()
			if _, err := e.a.Store.SetStaffDisabled(e.ctx, u.ID, true); err != nil {
				e.t.Fatal(err)
			}
			return e.form("/staff/team/" + id(u.ID) + "/enable")
		}},
		"POST /staff/team/:staffId/2fa-off": {"staff.2fa_off", func(e *auditEnv) int {
			u := e.teammate()
			e.twoFactorOn(u.ID)
			return e.form("/staff/team/" + id(u.ID) + "/2fa-off")
		}},
		"POST /staff/account/password": {"staff.password_change", func(e *auditEnv) int {
			return e.form("/staff/account/password", "current", e.alicePassword(), "password", aliceNewPassword, "confirm", aliceNewPassword)
		}},
		"POST /staff/account/2fa": {"staff.2fa_on", func(e *auditEnv) int {
			secret := strings.TrimSpace(e.b.Get("/staff/account/2fa").WantStatus(http.StatusOK).ID("totp-secret").Text())
			code, err := totp.GenerateCode(secret, e.a.Clock.Now())
			if err != nil {
				e.t.Fatal(err)
			}
			return e.b.Post("/staff/account/2fa", handlerstest.Form("code", code)).Status
		}},
		"POST /staff/account/2fa/off": {"staff.2fa_off", func(e *auditEnv) int {
			alice, err := e.a.Store.FindStaffUserByUsername(e.ctx, handlerstest.StaffName)
			if err != nil {
				e.t.Fatal(err)
			}
			if !alice.TwoFactor() {
				e.twoFactorOn(alice.ID)
			}
			return e.form("/staff/account/2fa/off", "current", e.alicePassword())
		}},
	} {
		auditCases[route] = c
	}
}

// aliceNewPassword is the signed-in admin's password once the account's
// password form changed it.
const aliceNewPassword = "a new and longer passphrase"

// alicePassword is the signed-in admin's password now.
func (e *auditEnv) alicePassword() string {
	alice, err := e.a.Store.FindStaffUserByUsername(e.ctx, handlerstest.StaffName)
	if err != nil {
		e.t.Fatal(err)
	}
	if db.PasswordMatches(alice.PasswordHash, aliceNewPassword) {
		return aliceNewPassword
	}
	return handlerstest.StaffPassword
}

// teammate is a fresh clerk for a team form to act on.
func (e *auditEnv) teammate() *db.StaffUser {
	e.n++
	return e.a.AddStaffAs(fmt.Sprintf("mate%d", e.n), handlerstest.StaffPassword, db.RoleClerk)
}

// twoFactorOn turns a user's two-factor sign-in on through the store.
func (e *auditEnv) twoFactorOn(userID int64) {
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DP"
	code, err := totp.GenerateCode(secret, e.a.Clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.a.Store.EnableStaffTwoFactor(context.Background(), userID, secret, code, ""); err != nil {
		e.t.Fatal(err)
	}
}
