package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// allowConcurrently makes n concurrent requests for subject, spread over
// limiters, and returns how many were allowed.
func allowConcurrently(t *testing.T, limiters []*Limiter, subject string, lim Limits, n int) int64 {
	t.Helper()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			d, err := limiters[i%len(limiters)].Allow(context.Background(), subject, lim)
			if err != nil {
				errs <- err
				return
			}
			if d.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return allowed.Load()
}

// exactLimits hold 100 a minute; strikes are out of reach so that every
// refused request stays a plain 429.
var exactLimits = Limits{PerMinute: 100, PerDay: 100000}

func TestExactMemory(t *testing.T) {
	clock := newClock(t, "12:00:10")
	l := New(Config{Strikes: 1 << 30, Now: clock.Now})
	if got := allowConcurrently(t, []*Limiter{l}, "key:1", exactLimits, 1000); got != 100 {
		t.Errorf("allowed %d of 1000, want exactly 100", got)
	}
}

func TestExactRedisTwoInstances(t *testing.T) {
	// Two clients, two stores, two limiters: two instances sharing Redis.
	c1, c2 := redisClient(t), redisClient(t)
	prefix := redisPrefix(t, c1)
	clock := newClock(t, "12:00:10")
	bans := NewMemoryBanStore()
	limiters := []*Limiter{
		New(Config{Store: NewRedisStore(c1, WithKeyPrefix(prefix)), Bans: bans, Strikes: 1 << 30, Now: clock.Now}),
		New(Config{Store: NewRedisStore(c2, WithKeyPrefix(prefix)), Bans: bans, Strikes: 1 << 30, Now: clock.Now}),
	}
	if got := allowConcurrently(t, limiters, "key:1", exactLimits, 1000); got != 100 {
		t.Errorf("allowed %d of 1000 across two instances, want exactly 100", got)
	}
	u, err := limiters[1].Usage(context.Background(), "key:1", exactLimits)
	if err != nil {
		t.Fatal(err)
	}
	if u.Minute.Used != 100 || u.Limited429Today != 900 {
		t.Errorf("Usage: minute used %d, 429s %d; want 100 and 900", u.Minute.Used, u.Limited429Today)
	}
}

func TestExactBanOnce(t *testing.T) {
	// 1000 concurrent requests against 1/min with 20 strikes: the strikes
	// pile up far beyond 20, but the store reports the ban to one request
	// and the others see it, so exactly one ban exists.
	clock := newClock(t, "12:00:10")
	bans := NewMemoryBanStore()
	l := New(Config{Bans: bans, Now: clock.Now})
	allowConcurrently(t, []*Limiter{l}, "key:1", Limits{PerMinute: 1, PerDay: 1000}, 1000)
	n, err := bans.CountBans(context.Background(), "key:1", clock.Now().Add(-banLookback))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("bans = %d, want 1", n)
	}
}
