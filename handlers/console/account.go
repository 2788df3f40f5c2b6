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
	u := currentStaff(c)
	v := view.AccountView{
		CSRF: browser.CSRFToken(c), User: u, Forced: u.MustChangePassword, Password: pf,
		TwoFactorRequired: h.TwoFactorRequired, OffError: offError,
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
	return web.Render(c, view.AccountPage(ch, v), nil)
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
	if len(current) > 4*db.MaxPasswordLength || !db.PasswordMatches(u.PasswordHash, current) {
		pf.Errors["current"] = "is not your current password"
	} else if len(pf.Errors) == 0 && db.PasswordMatches(u.PasswordHash, password) {
		pf.Errors["password"] = "must differ from your current password"
	}
	if len(pf.Errors) > 0 {
		return h.renderAccount(c, fiber.StatusUnprocessableEntity, pf, "")
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
	to := "/staff/account"
	if u.MustChangePassword {
		to = "/staff" // on to the console (or to the next step)
	}
	return h.flashRedirect(c, "Your password is changed. Your other sign-ins have ended.", to)
}

// TurnOffTwoFactor turns the user's own two-factor sign-in off: POST
// /staff/account/2fa/off with their password. Not when the store
// requires it (PETSTORE_STAFF_2FA=required).
func (h *Handler) TurnOffTwoFactor(c *fiber.Ctx) error {
	u := currentStaff(c)
	if h.TwoFactorRequired {
		return h.renderAccount(c, fiber.StatusConflict, view.PasswordForm{}, "This store requires two-factor sign-in: it cannot be turned off.")
	}
	current := c.FormValue("current")
	if len(current) > 4*db.MaxPasswordLength || !db.PasswordMatches(u.PasswordHash, current) {
		return h.renderAccount(c, fiber.StatusUnprocessableEntity, view.PasswordForm{}, "Your password is not right.")
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
