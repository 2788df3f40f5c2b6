package db_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// insertKeyQuietly writes a key row for plain straight into the database
// without bumping the change counter: a change no cache is told about, so
// a test can see whether an answer came from a cache or from a lookup.
func insertKeyQuietly(t *testing.T, s *db.Store, plain string) {
	t.Helper()
	_, err := s.DB().ExecContext(context.Background(), `INSERT INTO api_keys (name, prefix, hash, role, plan, per_minute, per_day, created_at)
		VALUES ('quiet', $1, $2, 'customer', 'free', 60, 1000, $3)`, plain[:12], db.HashKey(plain), s.Now().UTC())
	if err != nil {
		t.Fatalf("insert key: %v", err)
	}
}

// TestAuthenticateRemembersRefusals: a hash that matched no live key is
// refused again for a few seconds without a lookup (a guessing flood costs
// no key query per request), while the change counter is unchanged; any
// change to keys made anywhere — a key issued on another instance — ends
// that at once.
func TestAuthenticateRemembersRefusals(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		a, b := twoStores(t, rawURL)
		clock := pinClock(t, a, dbtest.Present(t))

		t.Run("FloodCostsNoLookup", func(t *testing.T) {
			guess := "psk_" + strings.Repeat("G", 43)
			_, err := a.Authenticate(ctx, guess)
			wantCode(t, err, db.EUnauthorized)
			insertKeyQuietly(t, a, guess)
			for range 3 {
				_, err := a.Authenticate(ctx, guess)
				wantCode(t, err, db.EUnauthorized) // remembered: not looked up
			}
			clock.Add(10 * time.Second) // the refusal has expired
			mustAuthenticate(t, a, guess)
		})
		t.Run("KeyIssuedElsewhereWorksAtOnce", func(t *testing.T) {
			plain := "psk_" + strings.Repeat("N", 43)
			_, err := a.Authenticate(ctx, plain)
			wantCode(t, err, db.EUnauthorized)
			insertKeyQuietly(t, a, plain)
			// Another instance issues a key: the counter moves, and a's
			// remembered refusals are of an older counter.
			name, role, plan := "elsewhere", db.RoleCustomer, db.PlanFree
			if _, _, err := b.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: &role, Plan: &plan}); err != nil {
				t.Fatal(err)
			}
			mustAuthenticate(t, a, plain)
		})
		t.Run("RevokedStaysRevoked", func(t *testing.T) {
			name, role, plan := "gone", db.RoleCustomer, db.PlanFree
			k, plain, err := b.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: &role, Plan: &plan})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				_, err := a.Authenticate(ctx, plain)
				wantCode(t, err, db.EUnauthorized)
				if !strings.Contains(err.Error(), "revoked") {
					t.Errorf("refusal = %q, want it to say the key was revoked", err)
				}
			}
		})
	})
}
