package console

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// The Account page (SPEC §16): every staff user changes their own
// password (the current one required; the other sessions end, this one
// stays) and turns two-factor sign-in on (account_2fa.go) or off.

// sessionID is the id of the request's sign-in, as its cookie holds it.
func (h *Handler) sessionID(c *fiber.Ctx) (string, error) {
	sess, err := h.session(c)
	if err != nil {
		return "", err
	}
	return sess.Value(keyStaffSession), nil
}

// Account shows the Account page: GET /staff/account.
func (h *Handler) Account(c *fiber.Ctx) error {
	return h.renderAccount(c, fiber.StatusOK, view.PasswordForm{}, "")
}

func (h *Handler) renderAccount(c *fiber.Ctx, status int, pf view.PasswordForm, offError string) error {
	return h.renderAccountWith(c, status, pf, offError, nil, nil)
}

// renderAccountWith is renderAccount with the email form as typed and its
// errors (nil: the user's stored preferences).
func (h *Handler) renderAccountWith(c *fiber.Ctx, status int, pf view.PasswordForm, offError string, prefs *db.StaffEmailPrefs, prefErrors view.FieldErrors) error {
	u := currentStaff(c)
	v := view.AccountView{
		CSRF: browser.CSRFToken(c), User: u, Forced: u.MustChangePassword, Password: pf,
		TwoFactorRequired: h.TwoFactorRequired, OffError: offError, EmailErrors: prefErrors,
	}
	if prefs != nil {
		v.Email = *prefs
	} else {
		p, err := h.Store.FindStaffEmailPrefs(c.UserContext(), u.ID)
		if err != nil {
			return err
		}
		v.Email = p
	}
	if u.TwoFactor() {
		n, err := h.Store.RecoveryCodesLeft(c.UserContext(), u.ID)
		if err != nil {
			return err
		}
		v.RecoveryLeft = n
	}
	title := "Your account"
	if v.Forced {
		title = "Choose your password"
	}
	ch, err := h.chrome(c, title, "account")
	if err != nil {
		return err
	}
	ch.Setup = v.Forced
	c.Status(status)
	return web.Render(c, view.AccountPage(ch, v))
}

// ChangePassword changes the user's own password: POST
// /staff/account/password with current, password and confirm. The new
// one is 12 to 200 characters, not the username, not the current one.
func (h *Handler) ChangePassword(c *fiber.Ctx) error {
	u := currentStaff(c)
	current, password, confirm := c.FormValue("current"), c.FormValue("password"), c.FormValue("confirm")
	pf := view.PasswordForm{Errors: view.FieldErrors{}}
	if err := db.CheckNewPassword(u.Username, password); err != nil {
		pf.Errors["password"] = fieldProblem(err)
	} else if confirm != password {
		pf.Errors["confirm"] = "does not match the new password"
	}
	check, err := h.checkCurrentPassword(c, u, current, "password_change")
	if err != nil {
		return err
	}
	status := fiber.StatusUnprocessableEntity
	switch check {
	case currentLocked:
		pf.Errors["current"] = "cannot be checked now: " + lockedCurrentMessage
		status = fiber.StatusTooManyRequests
	case currentWrong:
		pf.Errors["current"] = notCurrent(u)
	case currentWrongLocking:
		pf.Errors["current"] = notCurrent(u) + ". " + lockingCurrentMessage
	default:
		if len(pf.Errors) == 0 && db.PasswordMatches(u.PasswordHash, password) {
			pf.Errors["password"] = "must differ from your current password"
		}
	}
	if len(pf.Errors) > 0 {
		return h.renderAccount(c, status, pf, "")
	}
	hash, err := h.hashPassword(password)
	if err != nil {
		return err
	}
	sid, err := h.sessionID(c)
	if err != nil {
		return err
	}
	if err := h.Store.ChangeStaffPassword(c.UserContext(), u.ID, hash, sid); err != nil {
		return err
	}
	h.Logger.Info("staff password changed", "user", u.Username)
	if u.MustChangePassword {
		// A first sign-in (or one after a reset): nothing else was signed
		// in with the one-time password worth a word.
		return h.flashRedirect(c, "Your password is set. Welcome to the console.", "/staff") // on to the console (or to the next step)
	}
	return h.flashRedirect(c, "Your password is changed. Your other sign-ins have ended.", "/staff/account")
}

// TurnOffTwoFactor turns the user's own two-factor sign-in off: POST
// /staff/account/2fa/off with their password. Not when the store
// requires it (PETSTORE_STAFF_2FA=required).
func (h *Handler) TurnOffTwoFactor(c *fiber.Ctx) error {
	u := currentStaff(c)
	if h.TwoFactorRequired {
		return h.renderAccount(c, fiber.StatusConflict, view.PasswordForm{}, "This store requires two-factor sign-in: it cannot be turned off.")
	}
	check, err := h.checkCurrentPassword(c, u, c.FormValue("current"), "2fa_off")
	if err != nil {
		return err
	}
	switch check {
	case currentLocked:
		return h.renderAccount(c, fiber.StatusTooManyRequests, view.PasswordForm{}, "Your password cannot be checked now: "+lockedCurrentMessage)
	case currentWrong:
		return h.renderAccount(c, fiber.StatusUnprocessableEntity, view.PasswordForm{}, "Your password is not right.")
	case currentWrongLocking:
		return h.renderAccount(c, fiber.StatusUnprocessableEntity, view.PasswordForm{}, "Your password is not right. "+lockingCurrentMessage)
	}
	sid, err := h.sessionID(c)
	if err != nil {
		return err
	}
	if err := h.Store.DisableStaffTwoFactor(c.UserContext(), u.ID, sid); err != nil {
		return err
	}
	h.Logger.Info("staff two-factor sign-in turned off", "user", u.Username)
	return h.flashRedirect(c, "Two-factor sign-in is off. Your other sign-ins have ended.", "/staff/account")
}

// Outcomes of checkCurrentPassword.
type currentCheck int

const (
	currentRight        currentCheck = iota
	currentWrong                     // wrong
	currentWrongLocking              // wrong, and the failure that locks
	currentLocked                    // not checked: locked
)

// Messages of the lockout of a current password: on the failure that
// locks, and while locked.
const (
	lockingCurrentMessage = "That was the fifth failure: checking it, and signing in with this username from your address, are locked for 15 minutes."
	lockedCurrentMessage  = "too many wrong passwords for this account from your address. Try again in 15 minutes."
)

// checkCurrentPassword checks the current password a form of the signed-in
// user u asks for (form names it for the audit log) by the sign-in's rules
// (SPEC §10), on the sign-in's own counter: the attempt is recorded as a
// failure of u's username from the client's bucket before it is checked,
// so concurrent guesses get no more than loginMaxFailures; past those even
// the right password is refused for the window, and the sign-in is locked
// alike. A wrong or locked attempt is audited (staff.password_failure);
// the right one forgets the failures, as a sign-in does.
func (h *Handler) checkCurrentPassword(c *fiber.Ctx, u *db.StaffUser, current, form string) (currentCheck, error) {
	ctx := c.UserContext()
	ip := web.ClientBucket(c, h.Proxies)
	failures, err := h.Store.RecordLoginAttempt(ctx, u.Username, ip, h.Store.Now().Add(-loginWindow))
	if err != nil {
		return 0, err
	}
	if failures > loginMaxFailures {
		h.Logger.Warn("staff current password refused: locked", "user", u.Username, "ip", ip, "form", form)
		return currentLocked, h.Store.AuditPasswordCheckFailure(ctx, u, form, "locked")
	}
	if len(current) > 4*db.MaxPasswordLength || !db.PasswordMatches(u.PasswordHash, current) {
		if err := h.Store.AuditPasswordCheckFailure(ctx, u, form, "password"); err != nil {
			return 0, err
		}
		if failures == loginMaxFailures {
			h.Logger.Warn("staff current password locked after repeated failures", "user", u.Username, "ip", ip, "form", form)
			return currentWrongLocking, nil
		}
		return currentWrong, nil
	}
	return currentRight, h.Store.ClearLoginFailures(ctx, u.Username, ip)
}

// notCurrent says the password typed as the current one is not it, in the
// words of the form: at a forced change it is the one-time password.
func notCurrent(u *db.StaffUser) string {
	if u.MustChangePassword {
		return "is not the one-time password you signed in with"
	}
	return "is not your current password"
}
