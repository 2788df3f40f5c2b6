package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// keyCache remembers live keys by hash, with the change counter they were
// read at (see auth_changes.go), for SQLite: looking the key up on every
// request was about a third of the CPU of a cached read, while the counter
// is one integer of a one-row table. Entries of another counter are never
// used.
type keyCache struct {
	mu      sync.Mutex
	version int64
	m       map[string]APIKey
}

func (c *keyCache) get(hash string, version int64) (*APIKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.m[hash]
	if !ok || version != c.version {
		return nil, false
	}
	return &k, true
}

func (c *keyCache) put(hash string, k *APIKey, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case version < c.version:
		return // read before a newer change: worth nothing
	case version > c.version || c.m == nil || len(c.m) >= 10_000:
		c.m = make(map[string]APIKey) // forget all rather than track ages
		c.version = version
	}
	c.m[hash] = *k
}

// authQuery looks a key up by hash together with the change counter, in
// one statement and so one snapshot. The LEFT JOIN returns the counter even
// for an unknown key, whose columns are then NULL.
const authQuery = `SELECT v.version AS auth_version, ` + keyCols + `
	FROM auth_changes v LEFT JOIN api_keys k ON k.hash = $1 WHERE v.id = 1`

// authRow is one row of authQuery.
type authRow struct {
	Version   int64          `db:"auth_version"`
	ID        sql.NullInt64  `db:"id"`
	Name      sql.NullString `db:"name"`
	Prefix    sql.NullString `db:"prefix"`
	Hash      sql.NullString `db:"hash"`
	Role      sql.NullString `db:"role"`
	Plan      sql.NullString `db:"plan"`
	PerMinute sql.NullInt64  `db:"per_minute"`
	PerDay    sql.NullInt64  `db:"per_day"`
	CreatedAt sql.NullTime   `db:"created_at"`
	RevokedAt sql.NullTime   `db:"revoked_at"`
}

// key is the row's key, nil when the hash matched none.
func (r *authRow) key() *APIKey {
	if !r.ID.Valid {
		return nil
	}
	k := &APIKey{ID: r.ID.Int64, Name: r.Name.String, Prefix: r.Prefix.String, Hash: r.Hash.String,
		Role: r.Role.String, Plan: r.Plan.String, PerMinute: r.PerMinute.Int64, PerDay: r.PerDay.Int64,
		CreatedAt: r.CreatedAt.Time}
	if r.RevokedAt.Valid {
		at := r.RevokedAt.Time
		k.RevokedAt = &at
	}
	return k
}

// Authenticate finds the live key for a plain key. A key revoked or changed
// by any instance or process is seen on the very next call: on PostgreSQL
// every call is the one indexed query authQuery (a cache would need a round
// trip to validate anyway); on SQLite a cached key is used only while the
// change counter is unchanged. Errors: unauthorized (malformed, unknown or
// revoked).
func (s *Store) Authenticate(ctx context.Context, plain string) (*APIKey, error) {
	if !strings.HasPrefix(plain, KeyPrefix) || len(plain) > 128 {
		return nil, Errorf(EUnauthorized, "The API key is not valid.")
	}
	hash := HashKey(plain)
	if s.dialect == DialectSQLite {
		v, err := s.AuthVersion(ctx)
		if err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		if k, ok := s.keys.get(hash, v); ok {
			return k, nil
		}
	}
	var row authRow
	if err := s.get(ctx, &row, authQuery, hash); err != nil {
		err = fmt.Errorf("authenticate: %w", err)
		snapshotOf(ctx).fail(err)
		return nil, err
	}
	snapshotOf(ctx).remember(row.Version)
	k := row.key()
	if k == nil {
		return nil, Errorf(EUnauthorized, "The API key is not valid.")
	}
	if k.RevokedAt != nil {
		return nil, Errorf(EUnauthorized, "The API key has been revoked.")
	}
	if s.dialect == DialectSQLite {
		s.keys.put(hash, k, row.Version)
	}
	return k, nil
}
