package db

import (
	"context"
	"errors"
	"fmt"

	"petstore/db/secrets"
)

// Secrets at rest: webhook signing secrets and TOTP secrets are sealed
// (db/secrets) under Store.Secrets before they are written, and opened
// when read, so a copy of the database without the key (a backup, a dump)
// neither signs webhooks nor passes anyone's second factor.

// ErrNoKeyring is returned when a secret is to be written or read by a
// store without a keyring: it never writes one in plain text.
var ErrNoKeyring = errors.New("no secret keys (PETSTORE_SECRET_KEYS) given to the store: refusing to store a secret in plain text")

// Purposes of the sealed columns: the associated data of each value.
const (
	purposeWebhookSecret    = "webhooks.secret"
	purposeWebhookOldSecret = "webhooks.old_secret"
	purposeTOTPSecret       = "staff_users.totp_secret"
)

// sealedColumns are every column holding a sealed secret.
var sealedColumns = []struct{ table, column, purpose string }{
	{"webhooks", "secret", purposeWebhookSecret},
	{"webhooks", "old_secret", purposeWebhookOldSecret},
	{"staff_users", "totp_secret", purposeTOTPSecret},
}

// seal seals plain for the column of purpose. Errors: ErrNoKeyring.
func (s *Store) seal(purpose, plain string) (string, error) {
	if s.Secrets == nil {
		return "", ErrNoKeyring
	}
	return s.Secrets.Seal(purpose, plain)
}

// open opens a value read from the column of purpose. A value not sealed
// is one written before secrets were (SealSecrets seals those at start):
// it is returned as it is.
func (s *Store) open(purpose, v string) (string, error) {
	if !secrets.IsSealed(v) {
		return v, nil
	}
	if s.Secrets == nil {
		return "", ErrNoKeyring
	}
	return s.Secrets.Open(purpose, v)
}

// openWebhook opens w's secrets as read from its row.
func (s *Store) openWebhook(w *Webhook) error {
	var err error
	if w.Secret, err = s.open(purposeWebhookSecret, w.Secret); err != nil {
		return fmt.Errorf("webhook %d: %w", w.ID, err)
	}
	if w.OldSecret != nil {
		old, err := s.open(purposeWebhookOldSecret, *w.OldSecret)
		if err != nil {
			return fmt.Errorf("webhook %d: %w", w.ID, err)
		}
		w.OldSecret = &old
	}
	return nil
}

// SecretKeyError says which stored secret the keyring cannot open.
type SecretKeyError struct {
	Table, Column string
	ID            int64
	Err           error
}

func (e *SecretKeyError) Error() string {
	return fmt.Sprintf("cannot open the secret in %s.%s of row %d: %v", e.Table, e.Column, e.ID, e.Err)
}

func (e *SecretKeyError) Unwrap() error { return e.Err }

// SealSecrets seals every secret still in plain text (written before
// secrets were sealed) and checks the keyring opens every sealed one: run
// at start, after the migrations (SQL cannot hold the key). It is
// idempotent and returns how many rows it sealed. Errors: a
// *SecretKeyError wrapping secrets.ErrNoKey or ErrNoKeyring when a stored
// secret cannot be opened, so a start with the wrong key is refused.
func (s *Store) SealSecrets(ctx context.Context) (int, error) {
	return s.reseal(ctx, false)
}

// RotateSecrets re-seals under the keyring's first key every secret sealed
// under another one (or not sealed at all), after the operator put a new
// key first in PETSTORE_SECRET_KEYS; it returns how many it re-sealed.
// Once it has run, the old keys can leave the ring. Errors: as SealSecrets.
func (s *Store) RotateSecrets(ctx context.Context) (int, error) {
	return s.reseal(ctx, true)
}

// reseal seals the plain values and, when rotate, re-seals the values not
// under the first key. Each row is written only if it still holds what
// was read, so a change made meanwhile (a rotated webhook secret) wins.
func (s *Store) reseal(ctx context.Context, rotate bool) (int, error) {
	n := 0
	for _, c := range sealedColumns {
		var rows []struct {
			ID    int64  `db:"id"`
			Value string `db:"value"`
		}
		q := fmt.Sprintf(`SELECT id, %s AS value FROM %s WHERE %s IS NOT NULL ORDER BY id`, c.column, c.table, c.column)
		if err := s.db.SelectContext(ctx, &rows, q); err != nil {
			return n, fmt.Errorf("read %s.%s: %w", c.table, c.column, err)
		}
		for _, r := range rows {
			sealed := secrets.IsSealed(r.Value)
			plain, err := s.open(c.purpose, r.Value)
			if err == nil && s.Secrets == nil {
				err = ErrNoKeyring
			}
			if err != nil {
				return n, &SecretKeyError{Table: c.table, Column: c.column, ID: r.ID, Err: err}
			}
			if sealed && (!rotate || secrets.KeyID(r.Value) == s.Secrets.SealingKeyID()) {
				continue
			}
			v, err := s.seal(c.purpose, plain)
			if err != nil {
				return n, err
			}
			u := fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE id = $2 AND %s = $3`, c.table, c.column, c.column)
			res, err := s.db.ExecContext(ctx, u, v, r.ID, r.Value)
			if err != nil {
				return n, fmt.Errorf("seal %s.%s: %w", c.table, c.column, err)
			}
			if k, _ := res.RowsAffected(); k == 1 {
				n++
			}
		}
	}
	return n, nil
}
