package db

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"
)

// SignIn is a completed console sign-in: what StartStaffSession needs.
type SignIn struct {
	User *StaffUser
	// TTL is how long the session lasts.
	TTL time.Duration
	// Bucket is the client's sign-in bucket (its address, an IPv6 client's
	// /64), whose failures for the username are forgotten.
	Bucket string
	// Replace is the session id the browser's cookie held, if any: it ends,
	// so no copy of the old cookie outlives the next sign-out.
	Replace string
	// Origin is the request's id and client address, for the audit log
	// (its actor is the user).
	Origin Origin
}

// StartStaffSession completes a sign-in in one transaction: the session
// (its id returned for the cookie), the user's last sign-in, its failures
// from the bucket forgotten and signin.success audited with the origin of
// the request. A user disabled since the password was checked is refused.
// Errors: forbidden (disabled).
func (s *Store) StartStaffSession(ctx context.Context, in SignIn) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random session id: %w", err)
	}
	sid := base64.RawURLEncoding.EncodeToString(b)
	return inTx(ctx, s, func(tx *Tx) (string, error) {
		res, err := tx.exec(ctx, `UPDATE staff_users SET last_sign_in_at = $1 WHERE id = $2 AND disabled_at IS NULL`, tx.now, in.User.ID)
		if err != nil {
			return "", fmt.Errorf("record sign-in: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return "", fmt.Errorf("record sign-in: %w", err)
		} else if n == 0 {
			return "", ErrStaffDisabled
		}
		if in.Replace != "" {
			if _, err := tx.exec(ctx, `DELETE FROM staff_sessions WHERE id = $1`, HashKey(in.Replace)); err != nil {
				return "", fmt.Errorf("end staff session: %w", err)
			}
		}
		if _, err := tx.exec(ctx, `INSERT INTO staff_sessions (id, staff_user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			HashKey(sid), in.User.ID, tx.now, tx.now.Add(in.TTL)); err != nil {
			return "", fmt.Errorf("create staff session: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM login_failures WHERE username = $1 AND client_ip = $2`, in.User.Username, in.Bucket); err != nil {
			return "", fmt.Errorf("clear login failures: %w", err)
		}
		o := in.Origin
		o.Actor = StaffActor(in.User.ID, in.User.Username)
		if err := tx.writeAudit(o, "signin.success", TargetID("staff", in.User.ID), nil); err != nil {
			return "", err
		}
		return sid, nil
	})
}

// ErrStaffDisabled refuses a disabled user's sign-in.
var ErrStaffDisabled = Errorf(EForbidden, "This account is disabled. Ask an admin to enable it.")

// AuditSignInFailure records a refused sign-in of username (u when there
// is such a user) made from o's request, and why (reason: "password",
// "code", "locked", "disabled"), in a transaction of its own. Its actor is
// anonymous (SPEC §16's actor is who made a change, and whoever typed
// the username is not known to be that user): the username typed is the
// entry's data (changes: username), and the user, when there is one, its
// target, so that a stranger's guesses are never filed under a real user.
func (s *Store) AuditSignInFailure(ctx context.Context, o Origin, username string, u *StaffUser, reason string) error {
	o.Actor = AnonymousActor()
	target := Target{Type: "staff"}
	if u != nil {
		target = TargetID("staff", u.ID)
	}
	ch := Changes{}
	ch.Set("username", nil, username)
	ch.Set("reason", nil, reason)
	return s.Audit(WithOrigin(ctx, o), "signin.failure", target, ch)
}

// AuditPasswordCheckFailure records that the signed-in user u (ctx's
// origin) gave a wrong current password where a form asks for it (form:
// "password_change", "2fa_off"), and why (reason: "password", "locked"),
// in a transaction of its own (action staff.password_failure): these
// checks count toward the sign-in lockout, and a picked-up console
// searching for the password leaves a trail.
func (s *Store) AuditPasswordCheckFailure(ctx context.Context, u *StaffUser, form, reason string) error {
	ch := Changes{}
	ch.Set("form", nil, form)
	ch.Set("reason", nil, reason)
	return s.Audit(ctx, "staff.password_failure", TargetID("staff", u.ID), ch)
}
