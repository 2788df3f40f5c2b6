package ratelimit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"petstore/db/dbtest"
)

// downBanStore is a BanStore whose database can be taken away: while down
// every call fails, as db.Store's do when PostgreSQL is unreachable.
type downBanStore struct {
	*MemoryBanStore
	down atomic.Bool
}

var errBansDown = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (s *downBanStore) ActiveBan(ctx context.Context, subject string, now time.Time) (time.Time, bool, error) {
	if s.down.Load() {
		return time.Time{}, false, errBansDown
	}
	return s.MemoryBanStore.ActiveBan(ctx, subject, now)
}

func (s *downBanStore) CreateBan(ctx context.Context, subject string, start, until time.Time) error {
	if s.down.Load() {
		return errBansDown
	}
	return s.MemoryBanStore.CreateBan(ctx, subject, start, until)
}

func (s *downBanStore) CountBans(ctx context.Context, subject string, since time.Time) (int, error) {
	if s.down.Load() {
		return 0, errBansDown
	}
	return s.MemoryBanStore.CountBans(ctx, subject, since)
}

// TestBanStoreDown: when the database that keeps the bans is unreachable,
// requests are still counted and decided (so the 503 they get carries
// every rate-limit header), bans known here still hold, a ban earned
// meanwhile holds here, and the durable bans rule again once it is back.
func TestBanStoreDown(t *testing.T) {
	clock := dbtest.NewClock(t)
	t0 := clock.IntoNextMinute(10 * time.Second)
	bans := &downBanStore{MemoryBanStore: NewMemoryBanStore()}
	const strikes = 3
	l := New(Config{Store: NewMemoryStore(), Bans: bans, Strikes: strikes, Now: clock.Now})
	lim := Limits{PerMinute: 2, PerDay: 1000}
	ctx := context.Background()

	// "banned" is banned durably before the outage, and this process knows.
	if err := bans.CreateBan(ctx, "banned", t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if d := mustAllow(t, l, "banned", lim); !d.Banned || d.BanErr != nil {
		t.Fatalf("before the outage: %+v", d)
	}

	bans.down.Store(true)
	clock.Add(5 * time.Second) // past the ban cache's freshness
	d := mustAllow(t, l, "ip:192.0.2.1", lim)
	if !d.Allowed || d.Minute.Remaining != 1 || d.Day.Remaining != 999 || !errors.Is(d.BanErr, errBansDown) {
		t.Fatalf("first request while the bans are down: %+v, want allowed, counted, BanErr set", summarize(d))
	}
	headers := map[string]string{}
	d.Headers(func(k, v string) { headers[k] = v })
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"} {
		if headers[h] == "" {
			t.Errorf("no %s while the bans are down: %v", h, headers)
		}
	}
	if st, err := l.Status(ctx, "ip:192.0.2.1", lim); err != nil || st.Minute.Remaining != 1 || st.BanErr == nil {
		t.Errorf("Status while the bans are down: %+v %v", summarize(st), err)
	}
	if d := mustAllow(t, l, "banned", lim); !d.Banned || d.Allowed {
		t.Errorf("a ban known here was forgotten while the bans are down: %+v", summarize(d))
	}

	// Earning a ban while the store is down: it holds here.
	mustAllow(t, l, "ip:192.0.2.1", lim) // the minute's second and last
	for i := range strikes {
		if d := mustAllow(t, l, "ip:192.0.2.1", lim); d.Allowed || d.Banned {
			t.Fatalf("429 number %d: %+v", i+1, summarize(d))
		}
	}
	d = mustAllow(t, l, "ip:192.0.2.1", lim)
	if !d.Banned || !d.BanStarted || d.BanErr == nil || d.RetryAfter != DefaultBanBase {
		t.Fatalf("the striking request while the bans are down: %+v (started %v, err %v)", summarize(d), d.BanStarted, d.BanErr)
	}
	clock.Add(5 * time.Second)
	if d := mustAllow(t, l, "ip:192.0.2.1", lim); !d.Banned {
		t.Errorf("the ban earned during the outage did not hold: %+v", summarize(d))
	}

	// Back: the durable store decides again.
	bans.down.Store(false)
	clock.Add(5 * time.Second)
	if d := mustAllow(t, l, "banned", lim); !d.Banned || d.BanErr != nil {
		t.Errorf("after the outage, the durable ban: %+v %v", summarize(d), d.BanErr)
	}
	if err := bans.LiftBan(ctx, "banned", clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Add(5 * time.Second)
	if d := mustAllow(t, l, "banned", lim); d.Banned || d.BanErr != nil {
		t.Errorf("after the outage, a lifted ban still holds: %+v %v", summarize(d), d.BanErr)
	}
}
