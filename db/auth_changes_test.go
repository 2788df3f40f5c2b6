package db_test

import (
	"context"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/ratelimit"
)

// twoStores opens two stores on one database, as two instances (or an
// instance and the CLI) would: each has its own caches.
func twoStores(t *testing.T, rawURL string) (a, b *db.Store) {
	t.Helper()
	a = dbtest.OpenURL(t, rawURL)
	b = dbtest.OpenURL(t, rawURL)
	return a, b
}

func mustAuthenticate(t *testing.T, s *db.Store, plain string) *db.APIKey {
	t.Helper()
	k, err := s.Authenticate(context.Background(), plain)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return k
}

// TestAuthenticateSeesOtherStoresChanges: a key revoked or changed through
// one store is refused or changed on the very next Authenticate of another
// store that had just used it, with no wait.
func TestAuthenticateSeesOtherStoresChanges(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		a, b := twoStores(t, rawURL)
		name, role, plan := "partner", db.RoleCustomer, db.PlanFree
		k, plain, err := b.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: &role, Plan: &plan})
		if err != nil {
			t.Fatal(err)
		}

		t.Run("OK", func(t *testing.T) {
			for range 3 { // the second and third may come from a's cache
				if got := mustAuthenticate(t, a, plain); got.ID != k.ID || got.PerMinute != 60 {
					t.Fatalf("authenticated %+v, want key %d on free", got, k.ID)
				}
			}
		})
		t.Run("PlanChange", func(t *testing.T) {
			pro := db.PlanPro
			if _, err := b.UpdateAPIKey(ctx, k.ID, db.NewAPIKey{Plan: &pro}); err != nil {
				t.Fatal(err)
			}
			if got := mustAuthenticate(t, a, plain); got.Plan != db.PlanPro || got.PerMinute != 300 || got.PerDay != 10_000 {
				t.Fatalf("after the plan change elsewhere: %s %d/%d, want pro 300/10000", got.Plan, got.PerMinute, got.PerDay)
			}
		})
		t.Run("ErrUnauthorizedRevokedElsewhere", func(t *testing.T) {
			mustAuthenticate(t, a, plain)
			if err := b.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			_, err := a.Authenticate(ctx, plain)
			wantCode(t, err, db.EUnauthorized)
		})
	})
}

// TestBanCacheSeesOtherStoresChanges: a limiter caching bans read through
// one store sees a ban started, and then lifted, through another store on
// its very next decision.
func TestBanCacheSeesOtherStoresChanges(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		a, b := twoStores(t, rawURL)
		now := dbtest.NextMinute(dbtest.Present(t)).Add(42 * time.Second)
		clock := func() time.Time { return now }
		lim := ratelimit.Limits{Plan: db.PlanFree, PerMinute: 60, PerDay: 1000}
		onA := ratelimit.New(ratelimit.Config{Bans: a, Now: clock})
		onB := ratelimit.New(ratelimit.Config{Bans: b, Now: clock})

		for range 2 { // the second answer may come from the cache
			if d, err := onA.Status(ctx, "key:7", lim); err != nil || d.Banned {
				t.Fatalf("before any ban: banned=%v, %v", d.Banned, err)
			}
		}
		if err := b.CreateBan(ctx, "key:7", now, now.Add(15*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if d, err := onA.Allow(ctx, "key:7", lim); err != nil || !d.Banned || !d.BannedUntil.Equal(now.Add(15*time.Minute)) {
			t.Fatalf("right after a ban elsewhere: %+v, %v; want banned for 15m", d, err)
		}
		if err := onB.LiftBan(ctx, "key:7"); err != nil {
			t.Fatal(err)
		}
		if d, err := onA.Allow(ctx, "key:7", lim); err != nil || d.Banned || !d.Allowed {
			t.Fatalf("right after the lift elsewhere: banned=%v allowed=%v, %v", d.Banned, d.Allowed, err)
		}
	})
}

// TestAuthSnapshot: within one request's context the change counters are
// read once (the key lookup, the ban check and a conditional GET share
// them); outside one every read is fresh, as an event stream's re-check
// needs. A request that does not bring the catalog's counter along reads
// it afresh when asked.
func TestAuthSnapshot(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		get := db.WithAuthSnapshot(ctx, true)
		post := db.WithAuthSnapshot(ctx, false)
		if _, err := s.AuthVersion(get); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AuthVersion(post); err != nil {
			t.Fatal(err)
		}
		catalog, err := s.CatalogVersion(get)
		if err != nil {
			t.Fatal(err)
		}
		MustCreateCategory(t, ctx, s, "Birds")
		if got, _ := s.CatalogVersion(get); got != catalog {
			t.Errorf("the GET read the catalog's counter again: %d, then %d", catalog, got)
		}
		if got, _ := s.CatalogVersion(post); got <= catalog {
			t.Errorf("a request that had read only the auth counter got the catalog's %d, want more than %d (read after the write)", got, catalog)
		}
		if got, _ := s.CatalogVersion(ctx); got <= catalog {
			t.Errorf("a fresh read after a write: %d, want more than %d", got, catalog)
		}

		req := db.WithAuthSnapshot(ctx, false)
		first, err := s.AuthVersion(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateBan(ctx, "ip:192.0.2.1", s.Now(), s.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.AuthVersion(req); got != first {
			t.Errorf("the request read the counter again: %d, then %d", first, got)
		}
		if got, _ := s.AuthVersion(ctx); got <= first {
			t.Errorf("a fresh read after a ban: %d, want more than %d", got, first)
		}
	})
}

// TestStaffSessions: a sign-in is found until it is ended or expires, and
// purging removes only the expired ones.
func TestStaffSessions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		now := dbtest.NextMinute(dbtest.Present(t)).Add(42 * time.Second)
		s.Now = func() time.Time { return now }
		u, err := s.CreateStaffUser(ctx, "ada", "$2a$10$notarealhashnotarealhashnotarealhashnotarealhashnota")
		if err != nil {
			t.Fatal(err)
		}
		short, err := s.CreateStaffSession(ctx, u.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		long, err := s.CreateStaffSession(ctx, u.ID, 12*time.Hour)
		if err != nil {
			t.Fatal(err)
		}

		t.Run("OK", func(t *testing.T) {
			got, err := s.FindStaffUserBySession(ctx, short)
			if err != nil || got.ID != u.ID || got.Username != "ada" {
				t.Fatalf("find = %+v, %v; want ada", got, err)
			}
		})
		t.Run("ErrNotFoundUnknown", func(t *testing.T) {
			_, err := s.FindStaffUserBySession(ctx, "no-such-session")
			wantCode(t, err, db.ENotFound)
			_, err = s.FindStaffUserBySession(ctx, "")
			wantCode(t, err, db.ENotFound)
		})
		t.Run("ErrNotFoundExpired", func(t *testing.T) {
			now = now.Add(time.Hour)
			_, err := s.FindStaffUserBySession(ctx, short)
			wantCode(t, err, db.ENotFound)
			if _, err := s.FindStaffUserBySession(ctx, long); err != nil {
				t.Fatalf("the 12-hour session after an hour: %v", err)
			}
		})
		t.Run("Purge", func(t *testing.T) {
			n, err := s.PurgeStaffSessions(ctx)
			if err != nil || n != 1 {
				t.Fatalf("purge = %d, %v; want 1 (the expired one)", n, err)
			}
			if _, err := s.FindStaffUserBySession(ctx, long); err != nil {
				t.Fatalf("purge removed a live session: %v", err)
			}
		})
		t.Run("ErrNotFoundEnded", func(t *testing.T) {
			if err := s.EndStaffSession(ctx, long); err != nil {
				t.Fatal(err)
			}
			_, err := s.FindStaffUserBySession(ctx, long)
			wantCode(t, err, db.ENotFound)
			if err := s.EndStaffSession(ctx, long); err != nil {
				t.Errorf("ending twice: %v", err)
			}
		})
	})
}
