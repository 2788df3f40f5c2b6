package db

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// Two-factor sign-in (SPEC §16): TOTP of RFC 6238, 30-second steps, 6
// digits, SHA-1 (what every authenticator app reads), a code of the step
// before or after accepted too. A code is accepted once: the user's row
// keeps the last step whose code was used, and a code is taken by an
// UPDATE that moves it forward, so of two sign-ins with one code (on two
// instances at once, or a code overheard) exactly one gets it. Ten
// recovery codes stand in for a lost phone, each used once, stored as
// SHA-256 hashes.

// TOTP parameters and the number of recovery codes.
const (
	TOTPPeriod        = 30
	TOTPDigits        = 6
	totpSkew          = 1
	RecoveryCodeCount = 10
)

// TOTPIssuer names the store in authenticator apps.
const TOTPIssuer = "Pet Store"

var totpOpts = totp.ValidateOpts{Period: TOTPPeriod, Skew: totpSkew, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// NewTOTPKey makes a new TOTP secret for username: its text, its otpauth://
// URL and the QR code of it (otp.Key.Image).
func NewTOTPKey(username string) (*otp.Key, error) {
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer: TOTPIssuer, AccountName: username, Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		return nil, fmt.Errorf("make TOTP secret: %w", err)
	}
	return k, nil
}

// totpStep is the time step whose code code is, for secret, within one
// step of now; ok is false for any other code.
func totpStep(secret, code string, now time.Time) (step int64, ok bool) {
	for _, d := range []int64{0, -1, 1} {
		t := now.Add(time.Duration(d*TOTPPeriod) * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / TOTPPeriod, true
		}
	}
	return 0, false
}

// isTOTPCode reports whether code has a TOTP code's shape: six digits.
func isTOTPCode(code string) bool {
	if len(code) != TOTPDigits {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// NormalizeCode is a typed code as it is checked: spaces dropped (apps
// show "123 456"), a recovery code in lower case without its hyphen.
func NormalizeCode(code string) string {
	code = strings.Join(strings.Fields(code), "")
	if isTOTPCode(code) {
		return code
	}
	return strings.ToLower(strings.ReplaceAll(code, "-", ""))
}

// recoveryAlphabet is what recovery codes are made of: lower case and
// digits without the ones that read alike.
const recoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// newRecoveryCodes makes RecoveryCodeCount codes like "k3m9p-x7q2w".
func newRecoveryCodes() ([]string, error) {
	codes := make([]string, RecoveryCodeCount)
	for i := range codes {
		c, err := randomGroups(recoveryAlphabet, 2, 5)
		if err != nil {
			return nil, err
		}
		codes[i] = c
	}
	return codes, nil
}

// EnableStaffTwoFactor turns two-factor sign-in on for user id with
// secret (NewTOTPKey's, which the user's app now holds), once code shows
// the app has it: the code's step counts as used. It ends the user's
// sessions but keep (the session id of the user turning theirs on): a
// sign-in made with the password alone, perhaps by whoever the second
// factor is meant to stop, does not outlive it. It returns the user's new
// recovery codes, to be shown this once (staff.2fa_on). Errors:
// not_found, validation_failed (field "code": not a current code).
func (s *Store) EnableStaffTwoFactor(ctx context.Context, id int64, secret, code, keep string) ([]string, error) {
	step, ok := totpStep(secret, NormalizeCode(code), s.Now())
	if !ok {
		return nil, Invalid("code", "is not the code your app shows now")
	}
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	sealed, err := s.seal(purposeTOTPSecret, secret)
	if err != nil {
		return nil, fmt.Errorf("enable two-factor sign-in: %w", err)
	}
	return inTx(ctx, s, func(tx *Tx) ([]string, error) {
		u, err := tx.lockStaffUser(ctx, id)
		if err != nil {
			return nil, err
		}
		if _, err := tx.exec(ctx, `UPDATE staff_users SET totp_secret = $1, totp_enabled_at = $2, totp_last_step = $3 WHERE id = $4`,
			sealed, tx.now, step, id); err != nil {
			return nil, fmt.Errorf("enable two-factor sign-in: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM staff_recovery_codes WHERE staff_user_id = $1`, id); err != nil {
			return nil, fmt.Errorf("replace recovery codes: %w", err)
		}
		for _, c := range codes {
			if _, err := tx.exec(ctx, `INSERT INTO staff_recovery_codes (staff_user_id, code_hash) VALUES ($1, $2)`, id, HashKey(NormalizeCode(c))); err != nil {
				return nil, fmt.Errorf("store recovery code: %w", err)
			}
		}
		if err := tx.endSessions(ctx, id, keep); err != nil {
			return nil, err
		}
		ch := Changes{}
		ch.Set("twoFactor", u.TwoFactor(), true)
		if err := tx.audit("staff.2fa_on", TargetID("staff", id), ch); err != nil {
			return nil, err
		}
		return codes, nil
	})
}

// DisableStaffTwoFactor turns user id's two-factor sign-in off, its secret
// and recovery codes deleted, and ends its sessions but keep (the
// session id of the user turning their own off; "" when an admin does it)
// (staff.2fa_off). Errors: not_found.
func (s *Store) DisableStaffTwoFactor(ctx context.Context, id int64, keep string) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		u, err := tx.lockStaffUser(ctx, id)
		if err != nil {
			return err
		}
		if !u.TwoFactor() {
			return nil
		}
		if _, err := tx.exec(ctx, `UPDATE staff_users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL WHERE id = $1`, id); err != nil {
			return fmt.Errorf("disable two-factor sign-in: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM staff_recovery_codes WHERE staff_user_id = $1`, id); err != nil {
			return fmt.Errorf("delete recovery codes: %w", err)
		}
		if err := tx.endSessions(ctx, id, keep); err != nil {
			return err
		}
		ch := Changes{}
		ch.Set("twoFactor", true, false)
		if err := tx.audit("staff.2fa_off", TargetID("staff", id), ch); err != nil {
			return err
		}
		return nil
	})
}

// UseStaffCode checks a code typed at sign-in for user id: a current TOTP
// code not used before, or one of the user's unused recovery codes. An
// accepted code is used up in the same statement that accepts it, so two
// sign-ins with one code get it once between them. A user without
// two-factor sign-in has no code to accept.
func (s *Store) UseStaffCode(ctx context.Context, id int64, code string) (bool, error) {
	code = NormalizeCode(code)
	if code == "" {
		return false, nil
	}
	if !isTOTPCode(code) {
		res, err := s.exec(ctx, `UPDATE staff_recovery_codes SET used_at = $1
			WHERE staff_user_id = $2 AND code_hash = $3 AND used_at IS NULL
			AND EXISTS (SELECT 1 FROM staff_users WHERE id = $2 AND totp_enabled_at IS NOT NULL)`,
			s.Now().UTC(), id, HashKey(code))
		if err != nil {
			return false, fmt.Errorf("use recovery code: %w", err)
		}
		n, err := res.RowsAffected()
		return n == 1, err
	}
	var secret sql.NullString
	err := s.get(ctx, &secret, `SELECT totp_secret FROM staff_users WHERE id = $1 AND totp_enabled_at IS NOT NULL`, id)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !secret.Valid) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read TOTP secret: %w", err)
	}
	plain, err := s.open(purposeTOTPSecret, secret.String)
	if err != nil {
		return false, fmt.Errorf("read TOTP secret: %w", err)
	}
	step, ok := totpStep(plain, code, s.Now())
	if !ok {
		return false, nil
	}
	res, err := s.exec(ctx, `UPDATE staff_users SET totp_last_step = $1
		WHERE id = $2 AND totp_enabled_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $1)`, step, id)
	if err != nil {
		return false, fmt.Errorf("use TOTP code: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RecoveryCodesLeft counts user id's unused recovery codes.
func (s *Store) RecoveryCodesLeft(ctx context.Context, id int64) (int, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT count(*) FROM staff_recovery_codes WHERE staff_user_id = $1 AND used_at IS NULL`, id); err != nil {
		return 0, fmt.Errorf("count recovery codes: %w", err)
	}
	return n, nil
}
