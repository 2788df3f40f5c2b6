package db

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// StaffUser can log in to the console.
type StaffUser struct {
	ID           int64     `db:"id"`
	Username     string    `db:"username"`
	PasswordHash string    `db:"password_hash"`
	Role         string    `db:"role"`
	CreatedAt    time.Time `db:"created_at"`
	// MustChangePassword: the password is one-time (an admin set it); every
	// console page leads to the password change until a new one is chosen.
	MustChangePassword bool `db:"must_change_password"`
	// DisabledAt is when an admin disabled the user: no sign-in since.
	DisabledAt *time.Time `db:"disabled_at"`
	// LastSignInAt is the last completed sign-in (both steps with 2FA).
	LastSignInAt *time.Time `db:"last_sign_in_at"`
	// TwoFactorSince is when two-factor sign-in (TOTP) was turned on; nil
	// while it is off. The secret is read only where codes are checked.
	TwoFactorSince *time.Time `db:"totp_enabled_at"`
}

// Staff roles (SPEC §16): an admin may do everything; a clerk runs the
// catalog, photos, inventory and orders and sees usage, but cannot touch
// API keys, bans, webhooks, the team or the audit log.
const (
	RoleAdmin = "admin"
	RoleClerk = "clerk"
)

// IsAdmin reports whether u has the admin role.
func (u *StaffUser) IsAdmin() bool { return u.Role == RoleAdmin }

// Disabled reports whether an admin disabled u.
func (u *StaffUser) Disabled() bool { return u.DisabledAt != nil }

// TwoFactor reports whether u signs in with a TOTP code after the password.
func (u *StaffUser) TwoFactor() bool { return u.TwoFactorSince != nil }

// ValidRole reports whether role is a staff role.
func ValidRole(role string) bool { return role == RoleAdmin || role == RoleClerk }

// CreateStaffUser adds an admin whose password is not one-time (the
// command line's users, the tests'), with a bcrypt hash made by the caller
// (HashPassword). Errors: validation_failed (bad or taken username).
func (s *Store) CreateStaffUser(ctx context.Context, username, passwordHash string) (*StaffUser, error) {
	return s.AddStaffUser(ctx, NewStaffUser{Username: username, Role: RoleAdmin, PasswordHash: passwordHash})
}

// errUsernameTaken refuses a username another user has, letter case aside.
var errUsernameTaken = Invalid("username", "is taken")

// insertStaffUser writes a console user whose username and role were
// checked. Errors: validation_failed (taken, letter case aside).
func (tx *Tx) insertStaffUser(ctx context.Context, in NewStaffUser) (*StaffUser, error) {
	u := StaffUser{Username: in.Username, PasswordHash: in.PasswordHash, Role: in.Role, CreatedAt: tx.now, MustChangePassword: in.OneTime}
	if u.Role == "" {
		u.Role = RoleAdmin
	}
	// Taken by any name that is the same letter case aside: every name is
	// compared (a team is small), those made before the keys were kept
	// too; the unique index on the key settles two made at once.
	key := usernameKey(in.Username)
	var names []string
	if err := tx.sel(ctx, &names, `SELECT username FROM staff_users`); err != nil {
		return nil, fmt.Errorf("check username: %w", err)
	}
	for _, name := range names {
		if usernameKey(name) == key {
			return nil, errUsernameTaken
		}
	}
	err := tx.get(ctx, &u.ID, `INSERT INTO staff_users (username, username_key, password_hash, role, must_change_password, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		u.Username, key, u.PasswordHash, u.Role, u.MustChangePassword, u.CreatedAt)
	if isUniqueViolation(err) {
		return nil, errUsernameTaken
	}
	if err != nil {
		return nil, fmt.Errorf("create staff user: %w", err)
	}
	return &u, nil
}

// staffUserCols are the columns of a StaffUser (prefixed with u. where
// staff_users is joined as u).
const staffUserCols = `id, username, password_hash, role, created_at, must_change_password, disabled_at, last_sign_in_at, totp_enabled_at`

const staffUserQuery = `SELECT ` + staffUserCols + ` FROM staff_users `

var errNoSuchUser = Errorf(ENotFound, "No such user.")

// FindStaffUserByUsername returns a console user. Errors: not_found.
func (s *Store) FindStaffUserByUsername(ctx context.Context, username string) (*StaffUser, error) {
	return findOne[StaffUser](ctx, s.get, "staff user", errNoSuchUser, staffUserQuery+`WHERE username = $1`, username)
}

// FindStaffUserByID returns a console user. Errors: not_found.
func (s *Store) FindStaffUserByID(ctx context.Context, id int64) (*StaffUser, error) {
	return findOne[StaffUser](ctx, s.get, "staff user", errNoSuchUser, staffUserQuery+`WHERE id = $1`, id)
}

// CheckUsername trims a console username and checks it as any name (1 to
// 100 characters, valid UTF-8, no control characters), so that a sign-in
// can refuse a malformed name before any database work. A name a user is
// created with is held to CheckNewUsername's stricter rule; a sign-in
// takes the names users were created with before it. Errors:
// validation_failed.
func CheckUsername(username string) (string, error) {
	var p Problems
	checkName(&p, "username", &username)
	return username, p.Err()
}

// CheckNewUsername trims a username a user is created with and checks it:
// CheckUsername's rule, and no invisible character (a format character,
// such as the right-to-left override that makes "nimda" read "admin", a
// zero-width space or a byte order mark; a line or paragraph separator; a
// private-use or unassigned code point). Whether it is taken, letter case
// aside, is insertStaffUser's to say. Errors: validation_failed.
func CheckNewUsername(username string) (string, error) {
	username, err := CheckUsername(username)
	if err != nil {
		return username, err
	}
	if strings.IndexFunc(username, invisible) >= 0 {
		return username, Invalid("username", "must not contain invisible or direction-changing characters")
	}
	return username, nil
}

// invisible reports whether r is a character a name must not hold: of
// Unicode's "other" category (control and format characters, such as the
// bidirectional overrides and isolates and the zero-width characters;
// private-use, surrogate and unassigned code points), or a line or
// paragraph separator. (Go's tables name the unassigned Cn, within C; a
// code point in none of the categories is unassigned too.)
func invisible(r rune) bool {
	return unicode.In(r, unicode.C, unicode.Zl, unicode.Zp) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// usernameKey is what makes two usernames the same user's, letter case
// aside ("Admin" is "admin"): the name upper-cased, then lower-cased, a
// character at a time, so every case of a letter meets in one (σ, ς and
// Σ; k and the Kelvin sign). The unique index staff_users_username_nocase
// holds it. (Migration 00018 filled it for the users made before with
// SQL's lower(), A to Z only: the same key for any name of those letters;
// insertStaffUser compares every name by usernameKey besides.)
func usernameKey(username string) string {
	return strings.ToLower(strings.ToUpper(username))
}

// RecordLoginAttempt records a sign-in attempt of username from ip as a
// failure before its password is checked, and then returns the failures
// recorded since since, this one included; a successful sign-in takes them
// back with ClearLoginFailures. Recording first (committed) and counting
// after is what makes a lockout hold under concurrency: of N simultaneous
// attempts, the one that commits k-th counts at least k, so at most L of
// them ever see L or fewer and get their password checked (SPEC §10).
func (s *Store) RecordLoginAttempt(ctx context.Context, username, ip string, since time.Time) (int, error) {
	if err := s.RecordLoginFailure(ctx, username, ip); err != nil {
		return 0, err
	}
	return s.CountLoginFailures(ctx, username, ip, since)
}

// RecordLoginFailure notes a failed login of username from ip.
func (s *Store) RecordLoginFailure(ctx context.Context, username, ip string) error {
	_, err := s.exec(ctx, `INSERT INTO login_failures (username, client_ip, at) VALUES ($1, $2, $3)`, username, ip, s.Now().UTC())
	if err != nil {
		return fmt.Errorf("record login failure: %w", err)
	}
	return nil
}

// CountLoginFailures counts username's failed logins from ip since a time.
func (s *Store) CountLoginFailures(ctx context.Context, username, ip string, since time.Time) (int, error) {
	var n int
	err := s.get(ctx, &n, `SELECT count(*) FROM login_failures WHERE username = $1 AND client_ip = $2 AND at > $3`, username, ip, since.UTC())
	if err != nil {
		return 0, fmt.Errorf("count login failures: %w", err)
	}
	return n, nil
}

// ClearLoginFailures forgets username's failures from ip after a good login.
func (s *Store) ClearLoginFailures(ctx context.Context, username, ip string) error {
	if _, err := s.exec(ctx, `DELETE FROM login_failures WHERE username = $1 AND client_ip = $2`, username, ip); err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	return nil
}

// CountStaffUsers is the number of console users.
func (s *Store) CountStaffUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT count(*) FROM staff_users`); err != nil {
		return 0, fmt.Errorf("count staff users: %w", err)
	}
	return n, nil
}

// staffUserColsOf is staffUserCols prefixed with a table alias.
func staffUserColsOf(alias string) string {
	cols := strings.Split(staffUserCols, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}
