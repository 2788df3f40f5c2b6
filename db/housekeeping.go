package db

import (
	"context"
	"fmt"
	"time"
)

// How long housekeeping keeps what it purges (SPEC §11). Idempotency
// records live IdempotencyTTL.
const (
	// LoginFailureRetention keeps failed logins a day; the lockout looks
	// back 15 minutes.
	LoginFailureRetention = 24 * time.Hour
	// EventRetention bounds the outbox: a stream resuming from an older
	// Last-Event-ID misses what was purged.
	EventRetention = 30 * 24 * time.Hour
	// BanRetention keeps a ban this long after it ended.
	// Nothing reads a ban that ended more than a day ago (doubling and
	// bansLast24h look back 24 hours): the rest is history for whoever
	// investigates an abuse, kept as long as the events.
	BanRetention = 30 * 24 * time.Hour
)

// PurgeBatch is how many rows one DELETE of housekeeping removes at most.
const PurgeBatch = 1000

// PurgeStep is one kind of row that housekeeping removes once expired.
type PurgeStep struct {
	Name  string                                   // what it removes, for the log
	Purge func(ctx context.Context) (int64, error) // removes it, returns the count
}

// PurgeSteps lists everything that grows without bound and is purged by
// housekeeping, and the one step that compacts instead (MergeSearchIndex).
// A table that gains rows with use and never needs them all gets a step
// here. Kept on purpose: orders (history), deleted pets and categories
// (their orders point at them), revoked keys (likewise).
func (s *Store) PurgeSteps() []PurgeStep {
	return []PurgeStep{
		{"idempotency records", s.PurgeIdempotencyKeys},
		{"login failures", s.PurgeLoginFailures},
		{"events", s.PurgeEvents},
		{"bans", s.PurgeBans},
		{"console sessions", s.PurgeStaffSessions},
		{"webhook deliveries", s.PurgeWebhookDeliveries},
		{"email bodies", s.PurgeEmailBodies},
		{"audit entries", s.PurgeAudit},
		// Not a purge: the search index's segments, merged (SQLite).
		{"search index merge steps", s.MergeSearchIndex},
	}
}

// PurgeIdempotencyKeys deletes the Idempotency-Key records older than
// IdempotencyTTL, which BeginIdempotent no longer replays.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context) (int64, error) {
	return s.purge(ctx, "idempotency_keys", "created_at <= $1", s.Now().UTC().Add(-IdempotencyTTL))
}

// PurgeLoginFailures deletes failed logins older than LoginFailureRetention.
func (s *Store) PurgeLoginFailures(ctx context.Context) (int64, error) {
	return s.purge(ctx, "login_failures", "at < $1", s.Now().UTC().Add(-LoginFailureRetention))
}

// PurgeEvents deletes events older than EventRetention. Event ids are never
// reused (an identity column; AUTOINCREMENT on SQLite), so streams keep
// resuming correctly even when every event is gone.
func (s *Store) PurgeEvents(ctx context.Context) (int64, error) {
	return s.purge(ctx, "events", "created_at < $1", s.Now().UTC().Add(-EventRetention))
}

// PurgeBans deletes bans that ended more than BanRetention ago (a lifted
// ban counts from the end it was given).
func (s *Store) PurgeBans(ctx context.Context) (int64, error) {
	return s.purge(ctx, "bans", "ends_at < $1", s.Now().UTC().Add(-BanRetention))
}

// purge deletes the rows of table matching cond (with $1 bound to arg) in
// batches of PurgeBatch rows, each its own statement and so its own
// transaction: a large backlog never holds one long transaction and its
// locks on PostgreSQL, nor SQLite's single write lock for long. It stops
// early, with what it deleted so far, when ctx ends.
func (s *Store) purge(ctx context.Context, table, cond string, arg time.Time) (int64, error) {
	// Rows are named by their physical address, which every table has
	// whatever its key (login_failures has none): rowid on SQLite, ctid on
	// PostgreSQL, where "= ANY(ARRAY(...))" makes a TID scan of the batch.
	var q string
	if s.dialect == DialectPostgres {
		q = `DELETE FROM ` + table + ` WHERE ctid = ANY(ARRAY(SELECT ctid FROM ` + table + ` WHERE ` + cond + ` LIMIT $2))`
	} else {
		q = `DELETE FROM ` + table + ` WHERE rowid IN (SELECT rowid FROM ` + table + ` WHERE ` + cond + ` LIMIT $2)`
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		res, err := s.exec(ctx, q, arg, PurgeBatch)
		if err != nil {
			return total, fmt.Errorf("purge %s: %w", table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("purge %s: %w", table, err)
		}
		total += n
		if n < PurgeBatch {
			return total, nil
		}
	}
}
