package db

import (
	"context"
	"fmt"
)

// demoCatalog is the demo data of a first start.
var demoCatalog = []struct {
	category, description string
	pets                  []string
}{
	{"Dogs", "Loyal companions of every size.", []string{"Rex", "Bella", "Max", "Luna", "Charlie", "Daisy"}},
	{"Cats", "Independent, curious and fond of naps.", []string{"Milo", "Cleo", "Oliver", "Nala", "Simba"}},
	{"Birds", "Singers and talkers.", []string{"Kiwi", "Sunny", "Blue", "Polly"}},
	{"Fish", "Quiet company for a calm home.", []string{"Bubbles", "Nemo", "Goldie"}},
	{"Reptiles", "Scales, patience and a warm lamp.", []string{"Spike", "Shelly", "Iggy"}},
}

// seedLockClass is the first key of the PostgreSQL advisory lock under
// which seeding decides whether the catalog is empty; the second key names
// the schema, so that stores on different schemas (each test has its own)
// do not wait for each other. The two-key form lives apart from the
// one-key locks of migrations.
const seedLockClass = 7215002

// IsEmpty reports whether the catalog has never had a category.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT count(*) FROM categories`); err != nil {
		return false, fmt.Errorf("count categories: %w", err)
	}
	return n == 0, nil
}

// seedIfEmpty runs fn in one write transaction when, and only when, the
// catalog has never had a category (deleted ones count: a catalog the
// staff emptied is not refilled). The check and fn are serialised across
// every process using the database, so of several callers racing on an
// empty database exactly one runs fn: on PostgreSQL under a
// transaction-level advisory lock taken before the check, on SQLite under
// the write lock the immediate transaction holds from BEGIN. It reports
// whether fn ran and committed.
func (s *Store) seedIfEmpty(ctx context.Context, fn func(*Tx) error) (bool, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if s.dialect == DialectPostgres {
		if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(COALESCE(current_schema(), '')))`, seedLockClass); err != nil {
			return false, fmt.Errorf("seed lock: %w", err)
		}
	}
	var n int
	if err := tx.get(ctx, &n, `SELECT count(*) FROM categories`); err != nil {
		return false, fmt.Errorf("count categories: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	if err := fn(tx); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	return true, nil
}

// SeedDemo adds the demo categories and pets, with varied stock, to an
// empty catalog, in one transaction. It reports whether it did: a catalog
// that has or had categories is left alone.
func (s *Store) SeedDemo(ctx context.Context) (bool, error) {
	return s.seedIfEmpty(ctx, func(tx *Tx) error {
		_, err := tx.seedDemo(ctx)
		return err
	})
}

// seedDemo writes the demo catalog and returns the number of pets.
func (tx *Tx) seedDemo(ctx context.Context) (int, error) {
	n := 0
	for _, c := range demoCatalog {
		name, desc := c.category, c.description
		cat, err := tx.insertCategory(ctx, NewCategory{Name: &name, Description: &desc})
		if err != nil {
			return 0, fmt.Errorf("seed category %s: %w", name, err)
		}
		for _, petName := range c.pets {
			n++
			stock := int64(n % 7) // some sold out, most in stock
			if _, err := tx.insertPet(ctx, petName, cat.ID, stock); err != nil {
				return 0, fmt.Errorf("seed pet %s: %w", petName, err)
			}
		}
	}
	return n, nil
}

// FirstStartSeed is what a first start creates beside the demo catalog.
type FirstStartSeed struct {
	// Username and PasswordHash (bcrypt, made by the caller) are the first
	// staff user, created only when there is no staff user yet.
	Username     string
	PasswordHash string
	// DemoKey describes the demo API key.
	DemoKey NewAPIKey
}

// FirstStart is what SeedFirstStart created.
type FirstStart struct {
	Pets     int        // demo pets added
	Staff    *StaffUser // nil when staff users existed already
	Key      *APIKey
	PlainKey string // the demo key, never stored
}

// SeedFirstStart seeds an empty database in ONE transaction: the demo
// catalog, the first staff user (when there is none yet, say one made with
// `petstore staff create` before the first start) and the demo API key.
// It returns nil when the catalog is not empty: an earlier start, or
// another instance starting at the same time, seeded it already.
// Errors: validation_failed (a bad username or key).
func (s *Store) SeedFirstStart(ctx context.Context, in FirstStartSeed) (*FirstStart, error) {
	var p Problems
	checkName(&p, "username", &in.Username)
	if err := p.Err(); err != nil {
		return nil, err
	}
	var out FirstStart
	seeded, err := s.seedIfEmpty(ctx, func(tx *Tx) error {
		var err error
		if out.Pets, err = tx.seedDemo(ctx); err != nil {
			return err
		}
		var staff int
		if err := tx.get(ctx, &staff, `SELECT count(*) FROM staff_users`); err != nil {
			return fmt.Errorf("count staff users: %w", err)
		}
		if staff == 0 {
			if out.Staff, err = tx.insertStaffUser(ctx, in.Username, in.PasswordHash); err != nil {
				return err
			}
		}
		out.Key, out.PlainKey, err = tx.insertAPIKey(ctx, in.DemoKey)
		return err
	})
	if err != nil || !seeded {
		return nil, err
	}
	return &out, nil
}
