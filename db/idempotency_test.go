package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// mustBegin claims a key and fails unless the caller now holds it.
func mustBegin(t *testing.T, ctx context.Context, s *db.Store, owner, key, hash string) {
	t.Helper()
	got, err := s.BeginIdempotent(ctx, owner, key, hash)
	if err != nil || got != nil {
		t.Fatalf("begin %s/%s: got %+v, %v; want nil, nil (claimed)", owner, key, got, err)
	}
}

// wantReplay fails unless Begin returns the stored response.
func wantReplay(t *testing.T, ctx context.Context, s *db.Store, owner, key, hash string, want db.StoredResponse) {
	t.Helper()
	got, err := s.BeginIdempotent(ctx, owner, key, hash)
	if err != nil {
		t.Fatalf("begin %s/%s: %v, want the stored response", owner, key, err)
	}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Fatalf("replay (-want +got):\n%s", diff)
	}
}

// begun opens a fresh store with its clock pinned at t0 and key:1 holding
// the idempotency key k1 for the request hash-a.
func begun(t *testing.T, open dbtest.Open, t0 time.Time) (*db.Store, *dbtest.Clock) {
	t.Helper()
	s := open(t)
	clock := pinClock(t, s, t0)
	mustBegin(t, context.Background(), s, "key:1", "k1", "hash-a")
	return s, clock
}

func mustFinish(t *testing.T, ctx context.Context, s *db.Store, owner, key string, r db.StoredResponse) {
	t.Helper()
	if err := s.FinishIdempotent(ctx, owner, key, r); err != nil {
		t.Fatalf("finish %s/%s: %v", owner, key, err)
	}
}

func TestIdempotency(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t0 := dbtest.Present(t)
		created := db.StoredResponse{Status: 201, ContentType: "application/json", Body: []byte(`{"id":7,"petId":1,"quantity":1,"complete":false}`)}
		t.Run("OK", func(t *testing.T) {
			s, clock := begun(t, open, t0)
			mustFinish(t, ctx, s, "key:1", "k1", created)
			clock.Set(t0.Add(time.Hour))
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", created)
			// Replaying does not consume the key.
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", created)
		})
		t.Run("OKErrorResponseIsReplayed", func(t *testing.T) {
			s := open(t)
			pinClock(t, s, t0)
			conflict := db.StoredResponse{Status: 409, ContentType: "application/json", Body: []byte(`{"code":"insufficient_stock"}`)}
			mustBegin(t, ctx, s, "key:1", "k1", "hash-a")
			mustFinish(t, ctx, s, "key:1", "k1", conflict)
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", conflict)
		})
		t.Run("ErrIdempotencyInProgress", func(t *testing.T) {
			s, clock := begun(t, open, t0)
			_, err := s.BeginIdempotent(ctx, "key:1", "k1", "hash-a")
			wantCode(t, err, db.EIdempotencyInProgress)
			clock.Set(t0.Add(59 * time.Second))
			_, err = s.BeginIdempotent(ctx, "key:1", "k1", "hash-a")
			wantCode(t, err, db.EIdempotencyInProgress)
		})
		t.Run("ErrIdempotencyKeyReused", func(t *testing.T) {
			s, _ := begun(t, open, t0)
			_, err := s.BeginIdempotent(ctx, "key:1", "k1", "hash-b")
			wantCode(t, err, db.EIdempotencyKeyReused)
			mustFinish(t, ctx, s, "key:1", "k1", created)
			_, err = s.BeginIdempotent(ctx, "key:1", "k1", "hash-b")
			wantCode(t, err, db.EIdempotencyKeyReused)
			// The refused attempts did not replace the stored request.
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", created)
		})
		t.Run("OKKeysArePerOwner", func(t *testing.T) {
			s, _ := begun(t, open, t0)
			mustFinish(t, ctx, s, "key:1", "k1", created)
			mustBegin(t, ctx, s, "key:2", "k1", "hash-b")
			mustBegin(t, ctx, s, "shopper:x", "k1", "hash-a")
			other := db.StoredResponse{Status: 422, ContentType: "application/json", Body: []byte(`{}`)}
			mustFinish(t, ctx, s, "key:2", "k1", other)
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", created)
			wantReplay(t, ctx, s, "key:2", "k1", "hash-b", other)
		})
		t.Run("OKExpiresAfter24h", func(t *testing.T) {
			s, clock := begun(t, open, t0)
			mustFinish(t, ctx, s, "key:1", "k1", created)
			clock.Set(t0.Add(db.IdempotencyTTL - time.Second))
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", created)
			_, err := s.BeginIdempotent(ctx, "key:1", "k1", "hash-b")
			wantCode(t, err, db.EIdempotencyKeyReused)
			clock.Set(t0.Add(db.IdempotencyTTL + time.Second))
			mustBegin(t, ctx, s, "key:1", "k1", "hash-b")
			_, err = s.BeginIdempotent(ctx, "key:1", "k1", "hash-b")
			wantCode(t, err, db.EIdempotencyInProgress)
		})
		t.Run("OKAbandonFreesTheKey", func(t *testing.T) {
			s, _ := begun(t, open, t0)
			if err := s.AbandonIdempotent(ctx, "key:1", "k1"); err != nil {
				t.Fatal(err)
			}
			mustBegin(t, ctx, s, "key:1", "k1", "hash-b")
			mustFinish(t, ctx, s, "key:1", "k1", created)
			// A finished key is not abandoned: its answer stays.
			if err := s.AbandonIdempotent(ctx, "key:1", "k1"); err != nil {
				t.Fatal(err)
			}
			wantReplay(t, ctx, s, "key:1", "k1", "hash-b", created)
		})
		t.Run("OKStaleClaimIsTakenOver", func(t *testing.T) {
			s, clock := begun(t, open, t0)
			clock.Set(t0.Add(61 * time.Second))
			mustBegin(t, ctx, s, "key:1", "k1", "hash-a")
			// The new holder's claim is fresh again.
			clock.Set(t0.Add(90 * time.Second))
			_, err := s.BeginIdempotent(ctx, "key:1", "k1", "hash-a")
			wantCode(t, err, db.EIdempotencyInProgress)
			// A stale claim with a different request is still a reuse.
			clock.Set(t0.Add(5 * time.Minute))
			_, err = s.BeginIdempotent(ctx, "key:1", "k1", "hash-b")
			wantCode(t, err, db.EIdempotencyKeyReused)
			mustFinish(t, ctx, s, "key:1", "k1", created)
			wantReplay(t, ctx, s, "key:1", "k1", "hash-a", created)
		})
		t.Run("OKConcurrentBeginsClaimOnce", func(t *testing.T) {
			s := open(t)
			pinClock(t, s, t0)
			var got codes
			claimed := make(chan struct{}, 20)
			run(20, func(int) {
				r, err := s.BeginIdempotent(ctx, "key:1", "race", "hash-a")
				if err == nil && r == nil {
					claimed <- struct{}{}
				}
				got.add(err)
			})
			got.wantOnly(t, "", db.EIdempotencyInProgress)
			if n := len(claimed); n != 1 {
				t.Fatalf("claims: got %d, want exactly 1 (%v)", n, got.n)
			}
		})
	})
}
