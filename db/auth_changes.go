package db

import (
	"context"
	"fmt"
)

// The change counter of authentication (SPEC §3, §6): one row in
// auth_changes, bumped in the same transaction as every change to a key or
// a ban. Caches of keys (keyCache) and bans (the rate limiter's) tag each
// entry with the counter they read it at, and use it only while a read of
// the counter made during the current request still returns that value.
//
// Why that is exact: a change commits together with its bump, so a request
// that starts after the commit reads a counter at least as new, finds no
// entry with that tag that predates the change, and asks the database. The
// entries are filled with data read no earlier than their tag (in the same
// statement, or after reading the counter), so an entry never claims a
// newer counter than its data. This holds across instances and processes
// (the CLI) alike, because the counter lives in the database, not in memory.

// bumpAuthVersion marks the transaction as a change to authentication or
// bans. The row lock it takes on PostgreSQL orders such transactions, so
// the counter's values commit in increasing order.
func (tx *Tx) bumpAuthVersion(ctx context.Context) error {
	if _, err := tx.exec(ctx, `UPDATE auth_changes SET version = version + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("bump auth version: %w", err)
	}
	return nil
}

// BanVersion is AuthVersion for the rate limiter (ratelimit.BanStore): every
// ban created or lifted changes it.
func (s *Store) BanVersion(ctx context.Context) (int64, error) { return s.AuthVersion(ctx) }
