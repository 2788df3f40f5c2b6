package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"petstore/db/internal/counters"
)

// keyCache remembers, by hash and tagged with the change counter they were
// read at (see auth_changes.go), the live keys (looking the key up on every
// request was about a third of the CPU of a cached read on SQLite, and a
// round trip of its own on PostgreSQL, where concurrent requests share the
// counter's reads) and the hashes that matched no live key: a flood of guessed or revoked keys costs
// the counter read every API request makes anyway (the rate limiter's ban
// check shares it), not a key lookup each. Entries of another counter are
// never used, so a key issued or changed by any instance or process is seen
// on the very next request: issuing a key bumps the counter too.
type keyCache struct {
	mu      sync.Mutex
	version int64
	m       map[string]APIKey
	unknown map[string]refusedKey
}

// refusedKey is a hash that authenticated no key, remembered until until.
type refusedKey struct {
	until   time.Time
	message string
}

// Bounds of the remembered refusals: a few seconds each, so the cache holds
// only a flood in progress, and at most maxRefusedKeys of them (past it,
// the cache starts afresh rather than track ages).
const (
	refusedKeyTTL  = 10 * time.Second
	maxRefusedKeys = 10_000
)

// advance moves the cache to version, dropping every entry of an older one,
// and reports whether an entry read at version may be stored.
func (c *keyCache) advance(version int64) bool {
	switch {
	case version < c.version:
		return false // read before a newer change: worth nothing
	case version > c.version || c.m == nil:
		c.m = make(map[string]APIKey) // forget all rather than track ages
		c.unknown = make(map[string]refusedKey)
		c.version = version
	}
	return true
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
	if !c.advance(version) {
		return
	}
	if len(c.m) >= 10_000 {
		c.m = make(map[string]APIKey)
	}
	c.m[hash] = *k
}

// refused returns the refusal remembered for hash at version, if it has
// not expired.
func (c *keyCache) refused(hash string, version int64, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.unknown[hash]
	if !ok || version != c.version || !now.Before(r.until) {
		return "", false
	}
	return r.message, true
}

// refuse remembers that hash authenticated no key at version.
func (c *keyCache) refuse(hash, message string, version int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.advance(version) {
		return
	}
	if len(c.unknown) >= maxRefusedKeys {
		c.unknown = make(map[string]refusedKey)
	}
	c.unknown[hash] = refusedKey{until: now.Add(refusedKeyTTL), message: message}
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

// Authenticate finds the live key for a plain key. A key issued, revoked or
// changed by any instance or process is seen on the very next call: a
// cached key, or a hash refused in the last few seconds, is used only while
// the change counter read for this request is the one it was cached at
// (keyCache); otherwise the one indexed query authQuery reads the key and
// the counter together. On PostgreSQL the counter reads of concurrent
// requests are shared (counters.SharedReads), so a hot key costs a fraction of a
// round trip. Errors: unauthorized (malformed, unknown or revoked).
func (s *Store) Authenticate(ctx context.Context, plain string) (*APIKey, error) {
	if !strings.HasPrefix(plain, KeyPrefix) || len(plain) > 128 {
		return nil, Errorf(EUnauthorized, "The API key is not valid.")
	}
	hash := HashKey(plain)
	now := s.Now()
	v, err := s.AuthVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if msg, ok := s.keys.refused(hash, v, now); ok {
		return nil, Errorf(EUnauthorized, "%s", msg)
	}
	if k, ok := s.keys.get(hash, v); ok {
		return k, nil
	}
	var row authRow
	if err := s.get(ctx, &row, authQuery, hash); err != nil {
		err = fmt.Errorf("authenticate: %w", err)
		failCounters(ctx, err)
		return nil, err
	}
	counters.Of(ctx).Remember(row.Version)
	k := row.key()
	msg := ""
	switch {
	case k == nil:
		msg = "The API key is not valid."
	case k.RevokedAt != nil:
		msg = "The API key has been revoked."
	}
	if msg != "" {
		s.keys.refuse(hash, msg, row.Version, now)
		return nil, Errorf(EUnauthorized, "%s", msg)
	}
	s.keys.put(hash, k, row.Version)
	return k, nil
}
