package db

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Roles and plans of SPEC §3 and §6.
const (
	RoleCustomer = "customer"
	RoleStaff    = "staff"

	PlanFree       = "free"
	PlanPro        = "pro"
	PlanBusiness   = "business"
	PlanEnterprise = "enterprise"
)

// Plans are the plan names, in the order the console offers them.
var Plans = []string{PlanFree, PlanPro, PlanBusiness, PlanEnterprise}

// Limits are the two windows' sizes of a plan.
type Limits struct {
	PerMinute int64
	PerDay    int64
}

// PlanLimits is SPEC §6's table of the fixed plans, the only copy: a key
// stores its limits when issued or changed, and the rate limiter takes
// them from the key (anonymous callers from the free plan here).
// Enterprise is absent on purpose: its keys carry their own numbers.
var PlanLimits = map[string]Limits{
	PlanFree:     {60, 1_000},
	PlanPro:      {300, 10_000},
	PlanBusiness: {1_000, 100_000},
}

// KeyPrefix starts every plain API key.
const KeyPrefix = "psk_"

// APIKey is an issued key. Only its hash and a display prefix are stored.
type APIKey struct {
	ID          int64      `db:"id" json:"id"`
	Name        string     `db:"name" json:"name"`
	Prefix      string     `db:"prefix" json:"prefix"`
	Hash        string     `db:"hash" json:"-"`
	Role        string     `db:"role" json:"role"`
	Plan        string     `db:"plan" json:"plan"`
	PerMinute   int64      `db:"per_minute" json:"perMinute"`
	PerDay      int64      `db:"per_day" json:"perDay"`
	CreatedAt   time.Time  `db:"created_at" json:"createdAt"`
	RevokedAt   *time.Time `db:"revoked_at" json:"revokedAt,omitempty"`
	BannedUntil *time.Time `db:"-" json:"bannedUntil,omitempty"`
}

// Subject is the key's name in the rate limiter and the bans table.
func (k *APIKey) Subject() string { return fmt.Sprintf("key:%d", k.ID) }

// NewAPIKey is the body of POST /keys and, partially, PATCH /keys/{id}.
type NewAPIKey struct {
	Name      *string `json:"name"`
	Role      *string `json:"role"`
	Plan      *string `json:"plan"`
	PerMinute *int64  `json:"perMinute"`
	PerDay    *int64  `json:"perDay"`
}

// validate checks k as a whole key (partial=false) or a change to current.
func (k *NewAPIKey) validate(current *APIKey) (Limits, error) {
	var p Problems
	if k.Name != nil || current == nil {
		checkName(&p, "name", k.Name)
	}
	if k.Role != nil || current == nil {
		if k.Role == nil {
			p.Add("role", "is required")
		} else if *k.Role != RoleCustomer && *k.Role != RoleStaff {
			p.Add("role", "must be customer or staff")
		}
	}
	plan := ""
	switch {
	case k.Plan != nil:
		plan = *k.Plan
	case current != nil:
		plan = current.Plan
	default:
		p.Add("plan", "is required")
	}
	var lim Limits
	if fixed, ok := PlanLimits[plan]; ok {
		lim = fixed
		if k.PerMinute != nil {
			p.Add("perMinute", "only enterprise keys have their own limits")
		}
		if k.PerDay != nil {
			p.Add("perDay", "only enterprise keys have their own limits")
		}
	} else if plan == PlanEnterprise {
		if current != nil && current.Plan == PlanEnterprise {
			lim = Limits{current.PerMinute, current.PerDay}
		}
		for _, f := range []struct {
			name string
			v    *int64
			dst  *int64
		}{{"perMinute", k.PerMinute, &lim.PerMinute}, {"perDay", k.PerDay, &lim.PerDay}} {
			switch {
			case f.v != nil && *f.v < 1:
				p.Add(f.name, "must be a positive integer")
			case f.v != nil:
				*f.dst = *f.v
			case *f.dst == 0:
				p.Add(f.name, "is required for enterprise keys")
			}
		}
	} else if k.Plan != nil {
		// Any plan sent that is none of these, "" included (a missing plan
		// was reported above).
		p.Add("plan", "must be one of %s", strings.Join(Plans, ", "))
	}
	return lim, p.Err()
}

// HashKey is the stored form of a plain key.
func HashKey(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

func newPlainKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random key: %w", err)
	}
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

const keyCols = `k.id, k.name, k.prefix, k.hash, k.role, k.plan, k.per_minute, k.per_day, k.created_at, k.revoked_at`

// CreateAPIKey issues a key and returns it with the plain key, which is
// never stored. Errors: validation_failed.
func (s *Store) CreateAPIKey(ctx context.Context, in NewAPIKey) (*APIKey, string, error) {
	type issued struct {
		key   *APIKey
		plain string
	}
	r, err := inTx(ctx, s, func(tx *Tx) (issued, error) {
		k, plain, err := tx.insertAPIKey(ctx, in)
		if err != nil {
			return issued{}, err
		}
		if err := tx.audit(AuditKeyCreate, TargetID(auditTargetKey, k.ID), diff(nil, k.auditFields())); err != nil {
			return issued{}, err
		}
		return issued{k, plain}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return r.key, r.plain, nil
}

// insertAPIKey issues a key in the transaction. Errors: validation_failed.
func (tx *Tx) insertAPIKey(ctx context.Context, in NewAPIKey) (*APIKey, string, error) {
	lim, err := in.validate(nil)
	if err != nil {
		return nil, "", err
	}
	plain, err := newPlainKey()
	if err != nil {
		return nil, "", err
	}
	k := APIKey{Name: *in.Name, Prefix: plain[:12], Hash: HashKey(plain), Role: *in.Role, Plan: *in.Plan,
		PerMinute: lim.PerMinute, PerDay: lim.PerDay, CreatedAt: tx.now}
	err = tx.get(ctx, &k.ID, `INSERT INTO api_keys (name, prefix, hash, role, plan, per_minute, per_day, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, k.Name, k.Prefix, k.Hash, k.Role, k.Plan, k.PerMinute, k.PerDay, k.CreatedAt)
	if err != nil {
		return nil, "", fmt.Errorf("create key: %w", err)
	}
	// A new key changes no cached one, but the refusals keyCache remembers
	// (key_auth.go) may hold its hash: the counter covers every change to keys.
	if err := tx.bumpAuthVersion(ctx); err != nil {
		return nil, "", err
	}
	return &k, plain, nil
}

// FindAPIKeys lists keys, revoked ones included, by id.
func (s *Store) FindAPIKeys(ctx context.Context, page Page) ([]*APIKey, bool, error) {
	var w where
	tail := page.clause(&w, "k.id")
	ks, more, err := selectPage[*APIKey](ctx, s, "keys", page, `SELECT `+keyCols+` FROM api_keys k`+w.String()+tail, w.args...)
	if err != nil {
		return nil, false, err
	}
	return ks, more, s.fillBans(ctx, ks...)
}

// FindAPIKeyByID returns a key, revoked or not. Errors: not_found.
func (s *Store) FindAPIKeyByID(ctx context.Context, id int64) (*APIKey, error) {
	k, err := findAPIKey(ctx, s.get, id)
	if err != nil {
		return nil, err
	}
	return k, s.fillBans(ctx, k)
}

// findAPIKey reads a key, revoked or not, without its ban. Errors: not_found.
func findAPIKey(ctx context.Context, g getter, id int64) (*APIKey, error) {
	return findOne[APIKey](ctx, g, "key", notFound("API key", id), `SELECT `+keyCols+` FROM api_keys k WHERE k.id = $1`, id)
}

// UpdateAPIKey changes a key's name, role, plan or enterprise limits. A
// revoked key cannot be changed, whichever surface asks: not_found, as the
// console always answered and the only refusal besides 422 that the API
// document lists for PATCH /keys/{keyId}; checked before the input.
// Errors: validation_failed, not_found.
func (s *Store) UpdateAPIKey(ctx context.Context, id int64, in NewAPIKey) (*APIKey, error) {
	k, err := inTx(ctx, s, func(tx *Tx) (*APIKey, error) {
		k, err := findAPIKey(ctx, tx.get, id)
		if err != nil {
			return nil, err
		}
		if k.RevokedAt != nil {
			return nil, errKeyRevoked(id)
		}
		lim, err := in.validate(k)
		if err != nil {
			return nil, err
		}
		before := k.auditFields()
		if in.Name != nil {
			k.Name = *in.Name
		}
		if in.Role != nil {
			k.Role = *in.Role
		}
		if in.Plan != nil {
			k.Plan = *in.Plan
		}
		k.PerMinute, k.PerDay = lim.PerMinute, lim.PerDay
		// revoked_at again: on PostgreSQL a revocation committed since the read
		// above makes this match no row.
		res, err := tx.exec(ctx, `UPDATE api_keys SET name = $1, role = $2, plan = $3, per_minute = $4, per_day = $5
		WHERE id = $6 AND revoked_at IS NULL`, k.Name, k.Role, k.Plan, k.PerMinute, k.PerDay, id)
		if err != nil {
			return nil, fmt.Errorf("update key: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errKeyRevoked(id)
		}
		if err := tx.bumpAuthVersion(ctx); err != nil {
			return nil, err
		}
		if err := tx.audit(AuditKeyUpdate, TargetID(auditTargetKey, id), diff(before, k.auditFields())); err != nil {
			return nil, err
		}
		return k, nil
	})
	if err != nil {
		return nil, err
	}
	return k, s.fillBans(ctx, k)
}

func errKeyRevoked(id int64) error {
	return Errorf(ENotFound, "API key %d is revoked.", id)
}

// RevokeAPIKey revokes a key for good. Revoking twice is fine.
// Errors: not_found.
func (s *Store) RevokeAPIKey(ctx context.Context, id int64) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, tx.now, id)
		if err != nil {
			return fmt.Errorf("revoke key: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("API key", id)
		}
		if err := tx.bumpAuthVersion(ctx); err != nil {
			return err
		}
		if err := tx.audit(AuditKeyRevoke, TargetID(auditTargetKey, id), nil); err != nil {
			return err
		}
		return nil
	})
}

// fillBans sets BannedUntil on keys with an active ban.
func (s *Store) fillBans(ctx context.Context, ks ...*APIKey) error {
	if len(ks) == 0 {
		return nil
	}
	bans, err := s.ActiveBans(ctx)
	if err != nil {
		return err
	}
	for _, k := range ks {
		if until, ok := bans[k.Subject()]; ok {
			k.BannedUntil = &until
		}
	}
	return nil
}
