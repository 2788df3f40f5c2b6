package db_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// demoPets and demoCategories are the size of the demo catalog.
const (
	demoPets       = 21
	demoCategories = 5
)

// countRows counts a table's rows, deleted ones included.
func countRows(t *testing.T, s *db.Store, table string) int {
	t.Helper()
	var n int
	if err := s.DB().Get(&n, `SELECT count(*) FROM `+table); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// wantCatalog fails unless the database holds exactly one demo catalog.
func wantCatalog(t *testing.T, s *db.Store) {
	t.Helper()
	for table, want := range map[string]int{"categories": demoCategories, "pets": demoPets, "inventory": demoPets} {
		if got := countRows(t, s, table); got != want {
			t.Errorf("%s: %d rows, want %d (one demo catalog)", table, got, want)
		}
	}
}

func firstStartSeed() db.FirstStartSeed {
	return db.FirstStartSeed{Username: "admin", PasswordHash: "$2a$10$not.a.real.hash",
		DemoKey: db.NewAPIKey{Name: ptr("demo"), Role: ptr(db.RoleStaff), Plan: ptr(db.PlanPro)}}
}

func TestSeedDemo(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		seeded, err := s.SeedDemo(ctx)
		if err != nil || !seeded {
			t.Fatalf("first SeedDemo = %v, %v; want true, nil", seeded, err)
		}
		wantCatalog(t, s)
		pets, _, err := s.FindPets(ctx, db.PetFilter{Page: db.Page{Limit: db.MaxLimit}})
		if err != nil {
			t.Fatal(err)
		}
		stock := map[string]int{}
		for _, p := range pets {
			stock[p.Status]++
		}
		if stock[db.StatusAvailable] == 0 || stock[db.StatusSold] == 0 || stock[db.StatusPending] != 0 {
			t.Errorf("statuses %v: want pets available and sold, none pending (no orders)", stock)
		}
		evs, err := s.EventsAfter(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != demoPets {
			t.Errorf("%d events, want %d (pet.created per pet)", len(evs), demoPets)
		}

		seeded, err = s.SeedDemo(ctx)
		if err != nil || seeded {
			t.Fatalf("second SeedDemo = %v, %v; want false, nil", seeded, err)
		}
		wantCatalog(t, s)
	})
}

func TestSeedDemoLeavesAnEmptiedCatalogAlone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Ferrets")
		if err := s.DeleteCategory(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if seeded, err := s.SeedDemo(ctx); err != nil || seeded {
			t.Fatalf("SeedDemo = %v, %v; want false: the staff emptied this catalog", seeded, err)
		}
		if n := countRows(t, s, "pets"); n != 0 {
			t.Fatalf("%d pets, want 0", n)
		}
	})
}

func TestSeedFirstStart(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		fs, err := s.SeedFirstStart(ctx, firstStartSeed())
		if err != nil || fs == nil {
			t.Fatalf("SeedFirstStart = %+v, %v; want what it created", fs, err)
		}
		if fs.Pets != demoPets || fs.Staff == nil || fs.Staff.Username != "admin" || fs.Key == nil {
			t.Fatalf("created %+v, want %d pets, admin and a key", fs, demoPets)
		}
		k, err := s.Authenticate(ctx, fs.PlainKey)
		if err != nil || k.ID != fs.Key.ID || k.Role != db.RoleStaff || k.Plan != db.PlanPro {
			t.Fatalf("the demo key authenticates as %+v, %v; want staff key %d on pro", k, err, fs.Key.ID)
		}
		if u, err := s.FindStaffUserByUsername(ctx, "admin"); err != nil || u.PasswordHash != firstStartSeed().PasswordHash {
			t.Fatalf("admin = %+v, %v", u, err)
		}

		again, err := s.SeedFirstStart(ctx, firstStartSeed())
		if err != nil || again != nil {
			t.Fatalf("second SeedFirstStart = %+v, %v; want nil, nil", again, err)
		}
		wantCatalog(t, s)
		if n := countRows(t, s, "staff_users"); n != 1 {
			t.Errorf("%d staff users, want 1", n)
		}
		if n := countRows(t, s, "api_keys"); n != 1 {
			t.Errorf("%d API keys, want 1", n)
		}
	})
}

func TestSeedFirstStartKeepsExistingStaff(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		if _, err := s.CreateStaffUser(ctx, "ops", "$2a$10$another.hash"); err != nil {
			t.Fatal(err)
		}
		fs, err := s.SeedFirstStart(ctx, firstStartSeed())
		if err != nil || fs == nil {
			t.Fatalf("SeedFirstStart = %+v, %v", fs, err)
		}
		if fs.Staff != nil || fs.Key == nil {
			t.Fatalf("created staff %+v, key %+v; want no staff user and a key", fs.Staff, fs.Key)
		}
		if _, err := s.FindStaffUserByUsername(ctx, "admin"); db.ErrorCode(err) != db.ENotFound {
			t.Fatalf("admin: %v, want not_found", err)
		}
		wantCatalog(t, s)
	})
}

func TestSeedFirstStartRollsBackWhole(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		in := firstStartSeed()
		in.DemoKey.Plan = ptr("platinum") // fails last, after the catalog and admin
		if _, err := s.SeedFirstStart(ctx, in); db.ErrorCode(err) != db.EValidationFailed {
			t.Fatalf("err = %v, want validation_failed", err)
		}
		for _, table := range []string{"categories", "pets", "inventory", "events", "staff_users", "api_keys"} {
			if n := countRows(t, s, table); n != 0 {
				t.Errorf("%s: %d rows after the failed first start, want 0", table, n)
			}
		}
		if fs, err := s.SeedFirstStart(ctx, firstStartSeed()); err != nil || fs == nil {
			t.Fatalf("retry = %+v, %v; want the first start", fs, err)
		}
	})
}

// eachURL runs fn once per database with the URL of a fresh one, so that
// the test can open several stores on it as several instances would:
// "sqlite" always, "postgres" when configured (required in CI).
func eachURL(t *testing.T, fn func(t *testing.T, url string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "sqlite:"+filepath.Join(t.TempDir(), "shared.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, dbtest.PostgresURL(t)) })
}

// TestSeedFirstStartRace starts several stores, as instances, on one
// empty database at once: exactly one seeds, the others find it seeded,
// and the database holds one catalog, one admin and one demo key.
func TestSeedFirstStartRace(t *testing.T) {
	const instances = 4
	eachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		clock := dbtest.NewClock(t)
		stores := make([]*db.Store, instances)
		for i := range stores {
			s, err := db.Open(ctx, url, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s
		}
		if err := stores[0].Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		results := make([]*db.FirstStart, instances)
		errs := make([]error, instances)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = s.SeedFirstStart(ctx, firstStartSeed())
			}()
		}
		close(start)
		wg.Wait()
		seeded := 0
		for i := range stores {
			if errs[i] != nil {
				t.Fatalf("instance %d: %v", i, errs[i])
			}
			if results[i] != nil {
				seeded++
			}
		}
		if seeded != 1 {
			t.Fatalf("%d instances seeded, want exactly 1", seeded)
		}
		wantCatalog(t, stores[0])
		if n := countRows(t, stores[0], "staff_users"); n != 1 {
			t.Errorf("%d staff users, want 1", n)
		}
		if n := countRows(t, stores[0], "api_keys"); n != 1 {
			t.Errorf("%d API keys, want 1", n)
		}
	})
}
