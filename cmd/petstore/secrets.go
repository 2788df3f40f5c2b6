package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"petstore/db"
)

// Secrets at rest (PETSTORE_SECRET_KEYS): the database keeps webhook and
// TOTP secrets sealed under the keys; the server seals any left in plain
// text at start, and `petstore secrets rotate` re-seals them under a new
// first key.

// sealSecrets seals the secrets a database from before sealing keeps in
// plain text, after the migrations (SQL cannot hold the key), and checks
// the keys open every stored one: a start with the wrong
// PETSTORE_SECRET_KEYS is refused with one line naming it.
func sealSecrets(ctx context.Context, store *db.Store, logger *slog.Logger) error {
	n, err := store.SealSecrets(ctx)
	if ke := (*db.SecretKeyError)(nil); errors.As(err, &ke) {
		if errors.Is(err, db.ErrNoKeyring) {
			return &configError{"PETSTORE_SECRET_KEYS", errors.New("not set, and the database holds secrets sealed under a key: set it")}
		}
		return &configError{"PETSTORE_SECRET_KEYS", fmt.Errorf("no key opens the stored secrets (%s.%s of row %d): give the key they were sealed under", ke.Table, ke.Column, ke.ID)}
	}
	if err != nil {
		return fmt.Errorf("seal secrets: %w", err)
	}
	if n > 0 {
		logger.Info("stored secrets sealed", "rows", n)
	}
	return nil
}

// defineSecretsRotate re-seals every stored secret under the first key of
// PETSTORE_SECRET_KEYS (the operator put a new key first, the old one
// after it) and says how many rows it re-sealed; the old key can then
// leave the variable.
func defineSecretsRotate(*flag.FlagSet) action {
	return func(ctx context.Context, r *runner, operands []string) error {
		if err := r.cfg.EnsureSecretKeys(); err != nil {
			return fmt.Errorf("PETSTORE_SECRET_KEYS: %w", err)
		}
		return withStore(func(ctx context.Context, r *runner, s *db.Store, _ []string) error {
			if err := sealSecrets(ctx, s, r.logger); err != nil {
				return err
			}
			n, err := s.RotateSecrets(ctx)
			if err != nil {
				return fmt.Errorf("rotate secrets: %w", err)
			}
			fmt.Fprintf(r.stdout, "re-sealed %d secrets under key %s\n", n, r.cfg.SecretKeys.SealingKeyID())
			return nil
		})(ctx, r, operands)
	}
}
