package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"petstore/db"
)

// The Redis half of the outage tests (outage_test.go): without Redis the
// API keeps serving with in-process counting, says so in /readyz, /metrics
// and the log, and counts in Redis again once it answers.

// startBehindRedisProxy starts one instance on a fresh SQLite file that
// reaches the test Redis through a proxy the test can cut or stall, cut
// from the start when cut is set, with counters of its own in Redis. It
// returns the instance, the proxy and a client of Redis itself.
func startBehindRedisProxy(t *testing.T, cut bool) (*node, *tcpProxy, *redis.Client) {
	t.Helper()
	redisURL := requireRedis(t)
	proxied, proxy := viaProxy(t, redisURL)
	if cut {
		proxy.Cut()
	}
	rc := redisClient(t, redisURL)
	cfg := testConfig(t, map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "store.db"),
		"REDIS_URL":    proxied,
		"SESSION_KEYS": testSessionKey,
	})
	cfg.RedisPrefix = redisPrefix(t, rc)
	return startNode(t, "A", cfg, nil, nil), proxy, rc
}

// TestRedisOutage cuts Redis away from a serving instance, then brings it
// back.
func TestRedisOutage(t *testing.T) {
	n, proxy, rc := startBehindRedisProxy(t, false)
	key, k := issueKey(t, n.srv.Store, "reader", db.RoleCustomer, 1000, 100_000)
	small, _ := issueKey(t, n.srv.Store, "small", db.RoleCustomer, 3, 100_000)
	c := newClient(t)
	ctx := context.Background()

	// counted reads this minute's shared counter of the key.
	counted := func() (int64, string) {
		name := fmt.Sprintf("%s{%s}:m:%d", n.cfg.RedisPrefix, k.Subject(), n.clock.Now().Unix()/60)
		v, err := rc.Get(ctx, name).Int64()
		if err != nil {
			return 0, name
		}
		return v, name
	}
	call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
	if v, name := counted(); v < 1 {
		t.Fatalf("before the outage %s = %d: decisions do not land in Redis", name, v)
	}

	proxy.Cut()
	t.Log("Redis cut")
	for i := range 5 {
		began := time.Now()
		ans := call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"} {
			if ans.header.Get(h) == "" {
				t.Errorf("request %d during the outage lacks %s", i, h)
			}
		}
		if d := time.Since(began); d > maxAnswer {
			t.Errorf("request %d during the outage took %s", i, d)
		}
	}
	// In-process counting still limits: the small key gets 3, then 429
	// (in one minute window: the instance's clock is pinned).
	var got []int
	for range 4 {
		got = append(got, call(c, "GET", n.base+"/api/categories", small, nil).status)
	}
	if fmt.Sprint(got) != "[200 200 200 429]" {
		t.Errorf("small key during the outage: %v, want the fourth refused", got)
	}
	status, r := ready(t, c, n)
	if status != 200 || r.Database != "up" || !strings.HasPrefix(r.Redis, "down") {
		t.Errorf("/readyz during the outage: %d %+v, want 200 with redis down", status, r)
	}
	if f := metric(t, c, n, "petstore_ratelimit_redis_fallbacks_total"); f < 1 {
		t.Errorf("petstore_ratelimit_redis_fallbacks_total = %v during the outage", f)
	}
	if up := metric(t, c, n, "petstore_ratelimit_redis_up"); up != 0 {
		t.Errorf("petstore_ratelimit_redis_up = %v during the outage", up)
	}
	if !logHas(n.logs.String(), "WARN", "REDIS_URL") {
		t.Errorf("no warning naming REDIS_URL was logged:\n%s", lastLines(n.logs.String(), 20))
	}

	proxy.Restore()
	t.Log("Redis back")
	before, name := counted()
	deadline := time.Now().Add(10 * time.Second)
	for {
		call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		after, name2 := counted()
		if name2 == name && after > before {
			break // a decision landed in Redis again
		}
		before, name = after, name2
		if time.Now().After(deadline) {
			t.Fatal("decisions did not land in Redis within 10 s of it coming back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, r := ready(t, c, n); status != 200 || r.Redis != "up" {
		t.Errorf("/readyz after Redis came back: %d %+v", status, r)
	}
	if up := metric(t, c, n, "petstore_ratelimit_redis_up"); up != 1 {
		t.Errorf("petstore_ratelimit_redis_up = %v after Redis came back", up)
	}
}

// TestRedisStall makes Redis accept connections and never answer: a
// request is held 4.5s at most (until a PING goes unanswered after 3s of
// silence, not the longer wait granted to calls queueing behind a Redis
// that answers), later ones not at all, and counting resumes in Redis when
// it answers again.
func TestRedisStall(t *testing.T) {
	n, proxy, _ := startBehindRedisProxy(t, false)
	key, _ := issueKey(t, n.srv.Store, "reader", db.RoleCustomer, 1000, 100_000)
	c := newClient(t)
	call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)

	proxy.Stall()
	var slowest, last time.Duration
	for i := 0; i < 10; i++ {
		began := time.Now()
		call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		last = time.Since(began)
		slowest = max(slowest, last)
		time.Sleep(200 * time.Millisecond) // let probes come due
	}
	t.Logf("slowest request while Redis hangs: %s, last %s", slowest.Round(time.Millisecond), last.Round(time.Millisecond))
	if slowest > maxAnswer+time.Second { // 4.5s and room for a loaded machine
		t.Errorf("a request was held %s while Redis hangs", slowest)
	}
	if last > time.Second {
		t.Errorf("a request was held %s after the outage was found", last)
	}
	if status, r := ready(t, c, n); status != 200 || !strings.HasPrefix(r.Redis, "down") {
		t.Errorf("/readyz while Redis hangs: %d %+v", status, r)
	}

	proxy.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for {
		call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		if _, r := ready(t, c, n); r.Redis == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Redis not back in /readyz within 10 s of answering again")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
