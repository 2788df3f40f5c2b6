package console

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// The Team page (SPEC §16, admins): the staff, adding a user with a
// one-time password, changing a role, resetting a password, disabling and
// enabling, turning another user's two-factor sign-in off. The store ends
// the user's sessions in the same transaction where a change takes
// something away, and keeps the last enabled admin.

// teamFields are the add form's fields.
var teamFields = []string{"username", "role"}

// Team lists the staff: GET /staff/team.
func (h *Handler) Team(c *fiber.Ctx) error {
	return h.renderTeam(c, fiber.StatusOK, view.TeamForm{Role: db.RoleClerk}, nil)
}

func (h *Handler) renderTeam(c *fiber.Ctx, status int, f view.TeamForm, oneTime *view.OneTimePassword) error {
	rows, err := h.Store.FindStaffUsers(c.UserContext())
	if err != nil {
		return err
	}
	ch, err := h.chrome(c, "Team", "team")
	if err != nil {
		return err
	}
	v := view.TeamView{CSRF: browser.CSRFToken(c), Me: currentStaff(c).ID, Form: f, OneTime: oneTime, Rows: rows}
	c.Status(status)
	return web.Render(c, view.TeamPage(ch, v))
}

// AddStaff adds a user with a one-time password, shown this once:
// POST /staff/team with username and role.
func (h *Handler) AddStaff(c *fiber.Ctx) error {
	f := view.TeamForm{Username: c.FormValue("username"), Role: c.FormValue("role"), Errors: view.FieldErrors{}}
	// The form's own checks first: a refused form costs no bcrypt.
	if _, err := db.CheckNewUsername(f.Username); err != nil {
		f.Errors["username"] = fieldProblem(err)
	}
	if !db.ValidRole(f.Role) {
		f.Errors["role"] = "must be admin or clerk"
	}
	if len(f.Errors) > 0 {
		if len(f.Username) > 200 {
			f.Username = "" // not echoed back whole
		}
		return h.renderTeam(c, fiber.StatusUnprocessableEntity, f, nil)
	}
	password, err := db.GeneratePassword()
	if err != nil {
		return err
	}
	hash, err := h.hashPassword(password)
	if err != nil {
		return err
	}
	u, err := h.Store.AddStaffUser(c.UserContext(), db.NewStaffUser{Username: f.Username, Role: f.Role, PasswordHash: hash, OneTime: true})
	if err != nil {
		coded, status := refusalOf(err, fiber.StatusUnprocessableEntity)
		if coded == nil {
			return err
		}
		f.Problem = mergeFieldErrors(f.Errors, coded, teamFields...)
		if len(f.Username) > 200 {
			f.Username = "" // not echoed back whole
		}
		return h.renderTeam(c, status, f, nil)
	}
	h.Logger.Info("staff user added in the console", "user", u.Username, "role", u.Role, "by", currentStaff(c).Username)
	return h.renderTeam(c, fiber.StatusCreated, view.TeamForm{Role: db.RoleClerk}, &view.OneTimePassword{User: u, Password: password})
}

// errOwnAccount refuses an admin's team action on their own account.
var errOwnAccount = db.Errorf(db.EForbidden, "Change your own account on the Account page; another admin changes your role or state.")

// member is the user the path's :staffId names, never the signed-in
// admin. Errors: not_found, bad_request, forbidden (oneself).
func (h *Handler) member(c *fiber.Ctx) (*db.StaffUser, error) {
	u, err := web.FindByPath(c, "staffId", h.Store.FindStaffUserByID)
	if err != nil {
		return nil, err
	}
	if u.ID == currentStaff(c).ID {
		return nil, errOwnAccount
	}
	return u, nil
}

// teamRefused answers a change the store refused (the last admin, a bad
// role) back on the Team page, or passes any other error on.
func (h *Handler) teamRefused(c *fiber.Ctx, err error) error {
	return h.refused(c, err, "/staff/team", nil)
}

// SetStaffRole changes a user's role: POST /staff/team/:staffId/role.
func (h *Handler) SetStaffRole(c *fiber.Ctx) error {
	u, err := h.member(c)
	if err != nil {
		return err
	}
	role := c.FormValue("role")
	if _, err := h.Store.SetStaffRole(c.UserContext(), u.ID, role); err != nil {
		return h.teamRefused(c, err)
	}
	return h.flashRedirect(c, u.Username+" is now "+role+".", "/staff/team")
}

// ResetStaffPassword gives a user a new one-time password, shown this
// once, and signs them out: POST /staff/team/:staffId/password.
func (h *Handler) ResetStaffPassword(c *fiber.Ctx) error {
	u, err := h.member(c)
	if err != nil {
		return err
	}
	password, err := db.GeneratePassword()
	if err != nil {
		return err
	}
	hash, err := h.hashPassword(password)
	if err != nil {
		return err
	}
	if err := h.Store.ResetStaffPassword(c.UserContext(), u.ID, hash); err != nil {
		return h.teamRefused(c, err)
	}
	h.Logger.Info("staff password reset in the console", "user", u.Username, "by", currentStaff(c).Username)
	return h.renderTeam(c, fiber.StatusOK, view.TeamForm{Role: db.RoleClerk}, &view.OneTimePassword{User: u, Password: password, Reset: true})
}

// DisableStaff disables a user and signs them out: POST
// /staff/team/:staffId/disable.
func (h *Handler) DisableStaff(c *fiber.Ctx) error { return h.setDisabled(c, true) }

// EnableStaff lets a disabled user sign in again: POST
// /staff/team/:staffId/enable.
func (h *Handler) EnableStaff(c *fiber.Ctx) error { return h.setDisabled(c, false) }

func (h *Handler) setDisabled(c *fiber.Ctx, disabled bool) error {
	u, err := h.member(c)
	if err != nil {
		return err
	}
	if _, err := h.Store.SetStaffDisabled(c.UserContext(), u.ID, disabled); err != nil {
		return h.teamRefused(c, err)
	}
	msg := u.Username + " can sign in again."
	if disabled {
		msg = u.Username + " is disabled and signed out."
	}
	return h.flashRedirect(c, msg, "/staff/team")
}

// TurnOffStaffTwoFactor turns another user's two-factor sign-in off (a
// lost phone) and signs them out: POST /staff/team/:staffId/2fa-off.
func (h *Handler) TurnOffStaffTwoFactor(c *fiber.Ctx) error {
	u, err := h.member(c)
	if err != nil {
		return err
	}
	if err := h.Store.DisableStaffTwoFactor(c.UserContext(), u.ID, ""); err != nil {
		return h.teamRefused(c, err)
	}
	return h.flashRedirect(c, "Two-factor sign-in of "+u.Username+" is off; they are signed out.", "/staff/team")
}
