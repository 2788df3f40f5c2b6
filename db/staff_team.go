package db

import (
	"context"
	"fmt"
)

// The staff team (SPEC §16): admins add users, change their roles, reset
// their passwords, disable and enable them. Every change is audited in
// its own transaction, and a change that takes something away from a user
// (disabling, a reset, a demotion, their 2FA turned off) ends their
// sessions in that transaction: every instance reads sessions from
// staff_sessions, so the next request of any of them is signed out.

// NewStaffUser is a user to add. PasswordHash is HashPassword's; OneTime
// makes the user choose a new password at their first sign-in.
type NewStaffUser struct {
	Username     string
	Role         string
	PasswordHash string
	OneTime      bool
}

// teamLockSpace ("TEAM") is the PostgreSQL advisory lock that serialises
// the team's changes, so that the count of enabled admins a change reads
// stays true until it commits: two admins demoting each other at once
// cannot leave the store without one. SQLite serialises writers anyway.
const teamLockSpace = 0x5445414d

// lockTeam takes the team's lock for the rest of the transaction.
func (tx *Tx) lockTeam(ctx context.Context) error {
	if tx.dialect() != DialectPostgres {
		return nil
	}
	if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock($1)`, teamLockSpace); err != nil {
		return fmt.Errorf("lock team: %w", err)
	}
	return nil
}

// ELastAdmin (409) refuses to disable or demote the last enabled admin;
// only the console and the command line's users meet it.
const ELastAdmin = "last_admin"

// errLastAdmin refuses to leave the store without an enabled admin.
var errLastAdmin = Errorf(ELastAdmin, "This is the last enabled admin: make another user an admin first.")

// AddStaffUser adds a console user and audits it (staff.create). Errors:
// validation_failed (bad or taken username, unknown role).
func (s *Store) AddStaffUser(ctx context.Context, in NewStaffUser) (*StaffUser, error) {
	username, err := CheckNewUsername(in.Username)
	if err != nil {
		return nil, err
	}
	in.Username = username
	if !ValidRole(in.Role) {
		return nil, Invalid("role", "must be admin or clerk")
	}
	return inTx(ctx, s, func(tx *Tx) (*StaffUser, error) {
		u, err := tx.insertStaffUser(ctx, in)
		if err != nil {
			return nil, err
		}
		ch := Changes{}
		ch.Set("username", nil, u.Username)
		ch.Set("role", nil, u.Role)
		if in.OneTime {
			ch.Set("mustChangePassword", nil, true)
		}
		if err := tx.audit("staff.create", TargetID("staff", u.ID), ch); err != nil {
			return nil, err
		}
		return u, nil
	})
}

// FindStaffUsers lists every console user by username (a team is small).
func (s *Store) FindStaffUsers(ctx context.Context) ([]*StaffUser, error) {
	var out []*StaffUser
	if err := s.sel(ctx, &out, staffUserQuery+`ORDER BY username`); err != nil {
		return nil, fmt.Errorf("find staff users: %w", err)
	}
	return out, nil
}

// lockStaffUser takes the team's lock and reads user id. Errors: not_found.
func (tx *Tx) lockStaffUser(ctx context.Context, id int64) (*StaffUser, error) {
	if err := tx.lockTeam(ctx); err != nil {
		return nil, err
	}
	return findOne[StaffUser](ctx, tx.get, "staff user", errNoSuchUser, staffUserQuery+`WHERE id = $1`, id)
}

// otherEnabledAdmins counts the enabled admins other than id, under the
// team's lock.
func (tx *Tx) otherEnabledAdmins(ctx context.Context, id int64) (int, error) {
	var n int
	err := tx.get(ctx, &n, `SELECT count(*) FROM staff_users WHERE role = $1 AND disabled_at IS NULL AND id <> $2`, RoleAdmin, id)
	if err != nil {
		return 0, fmt.Errorf("count admins: %w", err)
	}
	return n, nil
}

// endSessions signs user id out everywhere, but for the session keep
// (its id as the cookie holds it; "" ends them all).
func (tx *Tx) endSessions(ctx context.Context, id int64, keep string) error {
	q, args := `DELETE FROM staff_sessions WHERE staff_user_id = $1`, []any{id}
	if keep != "" {
		q, args = q+` AND id <> $2`, append(args, HashKey(keep))
	}
	if _, err := tx.exec(ctx, q, args...); err != nil {
		return fmt.Errorf("end staff sessions: %w", err)
	}
	return nil
}

// SetStaffRole gives user id a role (staff.role). A demotion ends the
// user's sessions; the last enabled admin is not demoted. Errors:
// not_found, validation_failed (role), conflict (the last admin).
func (s *Store) SetStaffRole(ctx context.Context, id int64, role string) (*StaffUser, error) {
	if !ValidRole(role) {
		return nil, Invalid("role", "must be admin or clerk")
	}
	return inTx(ctx, s, func(tx *Tx) (*StaffUser, error) {
		u, err := tx.lockStaffUser(ctx, id)
		if err != nil {
			return nil, err
		}
		if u.Role == role {
			return u, nil
		}
		if u.Role == RoleAdmin && !u.Disabled() {
			if n, err := tx.otherEnabledAdmins(ctx, id); err != nil {
				return nil, err
			} else if n == 0 {
				return nil, errLastAdmin
			}
		}
		if _, err := tx.exec(ctx, `UPDATE staff_users SET role = $1 WHERE id = $2`, role, id); err != nil {
			return nil, fmt.Errorf("set staff role: %w", err)
		}
		if role == RoleClerk {
			if err := tx.endSessions(ctx, id, ""); err != nil {
				return nil, err
			}
		}
		ch := Changes{}
		ch.Set("role", u.Role, role)
		if err := tx.audit("staff.role", TargetID("staff", id), ch); err != nil {
			return nil, err
		}
		u.Role = role
		return u, nil
	})
}

// SetStaffDisabled disables user id (staff.disable), ending its sessions,
// or enables it again (staff.enable). The last enabled admin is not
// disabled. Errors: not_found, conflict (the last admin).
func (s *Store) SetStaffDisabled(ctx context.Context, id int64, disabled bool) (*StaffUser, error) {
	return inTx(ctx, s, func(tx *Tx) (*StaffUser, error) {
		u, err := tx.lockStaffUser(ctx, id)
		if err != nil {
			return nil, err
		}
		if u.Disabled() == disabled {
			return u, nil
		}
		action := "staff.enable"
		var at any // NULL: enabled
		if disabled {
			action = "staff.disable"
			at = tx.now
			if u.IsAdmin() {
				if n, err := tx.otherEnabledAdmins(ctx, id); err != nil {
					return nil, err
				} else if n == 0 {
					return nil, errLastAdmin
				}
			}
			if err := tx.endSessions(ctx, id, ""); err != nil {
				return nil, err
			}
		}
		if _, err := tx.exec(ctx, `UPDATE staff_users SET disabled_at = $1 WHERE id = $2`, at, id); err != nil {
			return nil, fmt.Errorf("disable staff user: %w", err)
		}
		ch := Changes{}
		ch.Set("disabled", !disabled, disabled)
		if err := tx.audit(action, TargetID("staff", id), ch); err != nil {
			return nil, err
		}
		if disabled {
			now := tx.now
			u.DisabledAt = &now
		} else {
			u.DisabledAt = nil
		}
		return u, nil
	})
}

// ResetStaffPassword gives user id a one-time password (its hash), to
// be replaced at the next sign-in, and ends its sessions
// (staff.password_reset). Errors: not_found.
func (s *Store) ResetStaffPassword(ctx context.Context, id int64, passwordHash string) error {
	return s.setPassword(ctx, id, passwordHash, true, "", "staff.password_reset")
}

// ChangeStaffPassword sets the password user id chose (its hash), no
// longer one-time, and ends the user's other sessions, keeping the
// session keep (staff.password_change). The caller checked the current
// password and CheckNewPassword. Errors: not_found.
func (s *Store) ChangeStaffPassword(ctx context.Context, id int64, passwordHash, keep string) error {
	return s.setPassword(ctx, id, passwordHash, false, keep, "staff.password_change")
}

func (s *Store) setPassword(ctx context.Context, id int64, passwordHash string, oneTime bool, keep, action string) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		u, err := tx.lockStaffUser(ctx, id)
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `UPDATE staff_users SET password_hash = $1, must_change_password = $2 WHERE id = $3`, passwordHash, oneTime, id); err != nil {
			return fmt.Errorf("set staff password: %w", err)
		}
		if err := tx.endSessions(ctx, id, keep); err != nil {
			return err
		}
		// The password itself, or its hash, is never in the log.
		ch := Changes{}
		ch.Set("mustChangePassword", u.MustChangePassword, oneTime)
		if err := tx.audit(action, TargetID("staff", id), ch); err != nil {
			return err
		}
		return nil
	})
}
