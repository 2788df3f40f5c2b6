package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"petstore/db"
)

// TestRedisUnreachableAtStart starts an instance while Redis refuses
// connections (SPEC §13, "at start or later"): it serves with in-process
// counting, says so once in its log, in /readyz and in /metrics, and counts
// in Redis by itself once Redis is there.
func TestRedisUnreachableAtStart(t *testing.T) {
	n, proxy, rc := startBehindRedisProxy(t, true)
	key, k := issueKey(t, n.srv.Store, "reader", db.RoleCustomer, 1000, 100_000)
	c := newClient(t)

	// Known before the first request: the probe ran at start.
	if !logHas(n.logs.String(), "WARN", "REDIS_URL") {
		t.Fatalf("no warning naming REDIS_URL at start:\n%s", lastLines(n.logs.String(), 20))
	}
	if status, r := ready(t, c, n); status != 200 || !strings.HasPrefix(r.Redis, "down") {
		t.Errorf("/readyz at start without Redis: %d %+v, want 200 with redis down", status, r)
	}
	for range 3 {
		ans := call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		if ans.header.Get("X-RateLimit-Remaining") == "" {
			t.Error("a request counted in process lacks X-RateLimit-Remaining")
		}
	}
	if f := metric(t, c, n, "petstore_ratelimit_redis_fallbacks_total"); f != 3 {
		t.Errorf("petstore_ratelimit_redis_fallbacks_total = %v, want 3", f)
	}

	proxy.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, r := ready(t, c, n); r.Redis == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz does not report Redis up 10 s after it came")
		}
		time.Sleep(100 * time.Millisecond)
	}
	call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
	counter := fmt.Sprintf("%s{%s}:d:%d", n.cfg.RedisPrefix, k.Subject(), n.clock.Now().Unix()/86400)
	if v, err := rc.Get(context.Background(), counter).Int64(); err != nil || v != 1 {
		t.Errorf("Redis %s = %d (%v), want 1: the decision after recovery did not land in Redis", counter, v, err)
	}
	if got := strings.Count(n.logs.String(), "Redis unreachable"); got != 1 {
		t.Errorf("%d outage warnings, want one:\n%s", got, lastLines(n.logs.String(), 20))
	}
}
