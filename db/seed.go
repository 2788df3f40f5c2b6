package db

import (
	"context"
	"fmt"
	"time"
)

// demoPet is a demo pet's profile; its birth date is ageMonths before the
// day of seeding, so the demo ages are right whenever it is seeded.
type demoPet struct {
	name, breed, price string
	ageMonths          int
	description        string
}

// demoCatalog is the demo data of a first start: prices, breeds and
// descriptions, so the storefront looks like a shop from the first start.
var demoCatalog = []struct {
	category, description string
	pets                  []demoPet
}{
	{"Dogs", "Loyal companions of every size.", []demoPet{
		{"Rex", "German Shepherd", "850.00", 14, "Alert and eager to learn. Rex knows sit, stay and fetch, and loves long walks."},
		{"Bella", "Labrador Retriever", "790.00", 9, "A gentle, food-motivated Labrador who gets on with children and other dogs."},
		{"Max", "Beagle", "560.00", 30, "Curious nose, happy tail. Max is house-trained and sleeps through the night."},
		{"Luna", "Border Collie", "720.00", 6, "Quick and clever. Luna needs an active home with room to run."},
		{"Charlie", "Cavalier King Charles Spaniel", "950.00", 18, "Affectionate lap dog. Charlie is calm indoors and friendly with everyone."},
		{"Daisy", "Dachshund", "640.00", 4, "A brave little hound with a big voice; vaccinated and microchipped."},
	}},
	{"Cats", "Independent, curious and fond of naps.", []demoPet{
		{"Milo", "British Shorthair", "480.00", 12, "Round-faced and easy-going. Milo enjoys quiet afternoons by the window."},
		{"Cleo", "Siamese", "520.00", 20, "Talkative and affectionate; Cleo will follow you from room to room."},
		{"Oliver", "Maine Coon", "690.00", 8, "A gentle giant in the making, with a luxurious coat and a soft chirp."},
		{"Nala", "Domestic Shorthair", "120.00", 36, "Rescued, neutered and looking for a calm home. Nala loves a warm lap."},
		{"Simba", "Bengal", "750.00", 5, "Playful and athletic; Simba likes climbing towers and puzzle toys."},
	}},
	{"Birds", "Singers and talkers.", []demoPet{
		{"Kiwi", "Budgerigar", "35.00", 7, "A cheerful budgie who whistles in the morning. Comes with care notes."},
		{"Sunny", "Cockatiel", "95.00", 11, "Hand-tame and curious; Sunny already whistles a short tune."},
		{"Blue", "Canary", "45.00", 10, "A bright singer for a sunny room."},
		{"Polly", "African Grey Parrot", "1450.00", 48, "Talks, whistles and solves puzzles. Polly needs time and company every day."},
	}},
	{"Fish", "Quiet company for a calm home.", []demoPet{
		{"Bubbles", "Betta", "18.50", 5, "A shimmering blue betta; keep alone in a heated tank."},
		{"Nemo", "Ocellaris Clownfish", "29.90", 8, "Captive bred and hardy; suits a reef tank."},
		{"Goldie", "Fancy Goldfish", "12.00", 6, "Round and graceful; best in a roomy, filtered tank."},
	}},
	{"Reptiles", "Scales, patience and a warm lamp.", []demoPet{
		{"Spike", "Bearded Dragon", "220.00", 16, "Calm and handleable; eats greens and insects. Setup advice included."},
		{"Shelly", "Hermann's Tortoise", "310.00", 60, "A slow, steady friend for decades to come."},
		{"Iggy", "Leopard Gecko", "140.00", 10, "Docile and easy to keep; active in the evening."},
	}},
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
		n, err := tx.seedDemo(ctx)
		if err != nil {
			return err
		}
		// One entry for the whole catalog (petstore seed), not one a pet.
		return tx.audit(AuditCatalogSeed, Target{Type: "catalog"}, Changes{"pets": {0, n}})
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
		for _, d := range c.pets {
			n++
			price, err := ParseMoney(d.price)
			if err != nil {
				return 0, fmt.Errorf("seed pet %s: price: %w", d.name, err)
			}
			born := tx.now.AddDate(0, -d.ageMonths, 0).Format(time.DateOnly)
			p := &Pet{Name: d.name, CategoryID: cat.ID, Stock: int64(n % 7), // some sold out, most in stock
				Price: price, Breed: &d.breed, Description: &d.description, BirthDate: &born}
			if err := tx.insertPet(ctx, p); err != nil {
				return 0, fmt.Errorf("seed pet %s: %w", d.name, err)
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
			if out.Staff, err = tx.insertStaffUser(ctx, NewStaffUser{Username: in.Username, Role: RoleAdmin, PasswordHash: in.PasswordHash}); err != nil {
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
