package ratelimit

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"petstore/db/dbtest"
)

// countingBans counts the ban lookups that reach the BanStore.
type countingBans struct {
	*MemoryBanStore
	lookups atomic.Int64
}

func (c *countingBans) ActiveBan(ctx context.Context, subject string, now time.Time) (time.Time, bool, error) {
	c.lookups.Add(1)
	return c.MemoryBanStore.ActiveBan(ctx, subject, now)
}

// TestBanCacheAsksOncePerChange: while no ban changes, a subject's ban
// state is looked up once, however many requests it makes; any ban created
// or lifted (here, by another limiter on the same store) makes the next
// request look again.
func TestBanCacheAsksOncePerChange(t *testing.T) {
	bans := &countingBans{MemoryBanStore: NewMemoryBanStore()}
	now := dbtest.NextMinute(dbtest.Present(t)).Add(42 * time.Second)
	clock := func() time.Time { return now }
	l := New(Config{Bans: bans, Now: clock})
	other := New(Config{Bans: bans, Now: clock})
	lim := Limits{Plan: "free", PerMinute: 60, PerDay: 1000}
	ctx := context.Background()

	for range 10 {
		if d, err := l.Allow(ctx, "key:1", lim); err != nil || !d.Allowed {
			t.Fatalf("allow: %+v, %v", d, err)
		}
	}
	if n := bans.lookups.Load(); n != 1 {
		t.Fatalf("%d ban lookups for 10 requests with no change, want 1", n)
	}
	if err := bans.CreateBan(ctx, "key:2", now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if d, _ := l.Allow(ctx, "key:1", lim); d.Banned || bans.lookups.Load() != 2 {
		t.Fatalf("after another subject's ban: banned=%v, lookups %d, want a fresh lookup (2)", d.Banned, bans.lookups.Load())
	}
	for range 2 { // the second answer comes from the cache
		if d, err := l.Allow(ctx, "key:2", lim); err != nil || !d.Banned {
			t.Fatalf("key:2 while banned: %+v, %v", d, err)
		}
	}
	if err := other.LiftBan(ctx, "key:2"); err != nil {
		t.Fatal(err)
	}
	if d, err := l.Allow(ctx, "key:2", lim); err != nil || d.Banned {
		t.Fatalf("key:2 right after the lift on the other limiter: %+v, %v", d, err)
	}
}
