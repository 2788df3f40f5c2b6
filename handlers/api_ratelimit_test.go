package handlers_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"petstore/db"
	"petstore/handlers"
	"petstore/web/ratelimit"
)

// withCounters makes the app count in s instead of a fresh in-process store.
func withCounters(s ratelimit.Store) appOption {
	return func(_ *handlers.Handler, c *ratelimit.Config) { c.Store = s }
}

// withProxies sets the trusted proxies (TRUSTED_PROXIES).
func withProxies(t *testing.T, list string) appOption {
	t.Helper()
	p, err := ratelimit.ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return func(h *handlers.Handler, _ *ratelimit.Config) { h.Proxies = p }
}

var redisPrefixes atomic.Int64

// counterStores runs fn once per rate-limit counter store: in process, and
// Redis when PETSTORE_TEST_REDIS_URL is set (required in CI). fresh returns
// an empty store each time it is called.
func counterStores(t *testing.T, fn func(t *testing.T, fresh func() ratelimit.Store)) {
	t.Run("memory", func(t *testing.T) {
		fn(t, func() ratelimit.Store { return ratelimit.NewMemoryStore() })
	})
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("PETSTORE_TEST_REDIS_URL")
		if url == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("PETSTORE_TEST_REDIS_URL is not set; CI requires the Redis tests")
			}
			t.Skip("PETSTORE_TEST_REDIS_URL not set: skipping the Redis run")
		}
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("PETSTORE_TEST_REDIS_URL: %v", err)
		}
		client := redis.NewClient(opt)
		t.Cleanup(func() { client.Close() })
		if err := client.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("PETSTORE_TEST_REDIS_URL: %v", err)
		}
		fn(t, func() ratelimit.Store {
			prefix := fmt.Sprintf("petstore-handlers-test:%d:%d:%d:", os.Getpid(), time.Now().UnixNano(), redisPrefixes.Add(1))
			t.Cleanup(func() {
				ctx := context.Background()
				keys, _ := client.Keys(ctx, prefix+"*").Result()
				if len(keys) > 0 {
					client.Del(ctx, keys...)
				}
			})
			return ratelimit.NewRedisStore(client, ratelimit.WithKeyPrefix(prefix))
		})
	})
}

var rateHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day",
	"X-RateLimit-Remaining-Day", "RateLimit-Policy", "RateLimit", "Retry-After"}

// limitHeaders picks the rate-limit headers of an answer.
func limitHeaders(r *response) map[string]string {
	m := map[string]string{}
	for _, h := range rateHeaders {
		if v := r.Header.Get(h); v != "" {
			m[h] = v
		}
	}
	return m
}

// freeMinute is what a free key's answer carries with `remaining` left in
// the minute and `day` left in the day, t seconds before the minute resets;
// retry is the Retry-After of a refusal, "" when allowed.
func freeMinute(remaining, day, t int64, reset int64, retry string) map[string]string {
	m := map[string]string{
		"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": itoa(remaining), "X-RateLimit-Reset": itoa(reset),
		"X-RateLimit-Limit-Minute": "60", "X-RateLimit-Remaining-Minute": itoa(remaining),
		"X-RateLimit-Limit-Day": "1000", "X-RateLimit-Remaining-Day": itoa(day),
		"RateLimit-Policy": `"minute";q=60;w=60, "day";q=1000;w=86400`,
		"RateLimit":        fmt.Sprintf(`"minute";r=%d;t=%d`, remaining, t),
	}
	if retry != "" {
		m["Retry-After"] = retry
	}
	return m
}

// wantHeaders fails unless the answer's rate-limit headers are exactly want.
func wantHeaders(t *testing.T, r *response, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, limitHeaders(r)); diff != "" {
		t.Fatalf("rate-limit headers (-want +got):\n%s", diff)
	}
}

// rateStatus is GET /rate-limit's body.
func (a *testApp) rateStatus(t *testing.T, key string) map[string]any {
	t.Helper()
	var m map[string]any
	a.getJSON(t, key, "/api/rate-limit", &m)
	return m
}

func window(limit, remaining, reset int64) map[string]any {
	return map[string]any{"limit": float64(limit), "remaining": float64(remaining), "reset": float64(reset)}
}

// TestRateLimitWindows covers SPEC §6's windows and headers through the
// whole stack, on both counter stores.
func TestRateLimitWindows(t *testing.T) {
	counterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := newTestApp(t, withCounters(fresh()))
		key, k := a.issueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		paths := []string{"/api/pets", "/api/pets/999999", "/api/nope", "/api/store/orders/999999"} // 4xx count too
		for i := int64(1); i <= 60; i++ {
			r := a.do(req{method: "GET", path: paths[i%4], key: key})
			if r.Status >= 429 || r.Status == 403 {
				t.Fatalf("request %d: status %d, want it let through", i, r.Status)
			}
			wantHeaders(t, r, freeMinute(60-i, 1000-i, 30, a.minuteReset(), ""))
			if i == 30 {
				for range 3 { // not counted
					got := a.rateStatus(t, key)
					want := map[string]any{"plan": "free", "minute": window(60, 30, a.minuteReset()), "day": window(1000, 970, a.dayReset()), "banned": false}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("GET /rate-limit (-want +got):\n%s", diff)
					}
				}
			}
		}
		r := a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 429, "rate_limited")
		wantHeaders(t, r, freeMinute(0, 940, 30, a.minuteReset(), "30"))
		r = a.do(req{method: "POST", path: "/api/store/orders", key: key, body: map[string]any{"petId": 1, "quantity": 1}}).want(t, 429, "rate_limited")
		wantHeaders(t, r, freeMinute(0, 940, 30, a.minuteReset(), "30"))

		status := a.do(req{method: "GET", path: "/api/rate-limit", key: key}).want(t, 200)
		var got map[string]any
		status.decode(t, &got)
		if diff := cmp.Diff(map[string]any{"plan": "free", "minute": window(60, 0, a.minuteReset()), "day": window(1000, 940, a.dayReset()), "banned": false}, got); diff != "" {
			t.Errorf("GET /rate-limit while limited (-want +got):\n%s", diff)
		}

		a.clock.Set(a.at(10*time.Hour + 59*time.Second + 500*time.Millisecond))
		r = a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 429, "rate_limited")
		wantHeaders(t, r, freeMinute(0, 940, 1, a.minuteReset(), "1")) // 0.5 s rounds up

		a.clock.Set(a.at(10*time.Hour + time.Minute)) // the next whole minute
		r = a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 200)
		wantHeaders(t, r, freeMinute(59, 939, 60, a.minuteReset()+60, ""))

		var u map[string]any
		a.getJSON(t, a.staff, "/api/keys/"+itoa(k.ID)+"/usage", &u)
		if got, want := u["limited429Today"], float64(3); got != want {
			t.Errorf("limited429Today = %v, want %v", got, want)
		}
	})
}

// TestRateLimitDayWindow shows the day binding the headers and the 429
// when it has fewer units left than the minute.
func TestRateLimitDayWindow(t *testing.T) {
	counterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := newTestApp(t, withCounters(fresh()))
		key, _ := a.issueKey("tiny day", db.RoleCustomer, db.PlanEnterprise, 100, 3)
		untilMidnight := a.dayReset() - a.start.Unix()
		for i := int64(1); i <= 4; i++ {
			r := a.do(req{method: "GET", path: "/api/pets", key: key})
			want := map[string]string{
				"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": itoa(max(0, 3-i)), "X-RateLimit-Reset": itoa(a.dayReset()),
				"X-RateLimit-Limit-Minute": "100", "X-RateLimit-Remaining-Minute": itoa(100 - min(i, 3)),
				"X-RateLimit-Limit-Day": "3", "X-RateLimit-Remaining-Day": itoa(max(0, 3-i)),
				"RateLimit-Policy": `"minute";q=100;w=60, "day";q=3;w=86400`,
				"RateLimit":        fmt.Sprintf(`"day";r=%d;t=%d`, max(0, 3-i), untilMidnight),
			}
			if i == 4 {
				r.want(t, 429, "rate_limited")
				want["Retry-After"] = itoa(untilMidnight)
			} else {
				r.want(t, 200)
			}
			wantHeaders(t, r, want)
		}
		a.clock.Add(time.Hour) // a new minute does not help
		a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 429, "rate_limited")
		a.clock.Set(time.Unix(a.dayReset(), 0)) // midnight UTC does
		a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 200)
	})
}

// TestRateLimitAnonymous shows callers without a valid key are limited per
// client IP, believing X-Forwarded-For only from trusted proxies.
func TestRateLimitAnonymous(t *testing.T) {
	counterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		t.Run("untrusted peer", func(t *testing.T) {
			a := newTestApp(t, withCounters(fresh()))
			for i := range 60 {
				hdr := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i)}
				r := a.do(req{method: "GET", path: "/api/pets", header: hdr}).want(t, 401, "unauthorized")
				wantHeaders(t, r, freeMinute(int64(59-i), int64(999-i), 30, a.minuteReset(), ""))
			}
			a.do(req{method: "GET", path: "/api/openapi.json", header: map[string]string{"X-Forwarded-For": "192.0.2.1"}}).want(t, 429, "rate_limited")
			a.do(req{method: "GET", path: "/api/pets", key: "psk_guess"}).want(t, 429, "rate_limited")
			a.do(req{method: "GET", path: "/api/pets", key: a.customer}).want(t, 200) // keys count apart
		})
		t.Run("trusted proxy", func(t *testing.T) {
			// app.Test's peer is 0.0.0.0.
			a := newTestApp(t, withCounters(fresh()), withProxies(t, "0.0.0.0"))
			client := map[string]string{"X-Forwarded-For": "203.0.113.7"}
			for range 60 {
				a.do(req{method: "GET", path: "/api/pets", header: client}).want(t, 401, "unauthorized")
			}
			a.do(req{method: "GET", path: "/api/pets", header: client}).want(t, 429, "rate_limited")
			a.do(req{method: "GET", path: "/api/pets", header: map[string]string{"X-Forwarded-For": "203.0.113.7, 0.0.0.0"}}).want(t, 429, "rate_limited")
			r := a.do(req{method: "GET", path: "/api/pets", header: map[string]string{"X-Forwarded-For": "203.0.113.8"}}).want(t, 401, "unauthorized")
			wantHeaders(t, r, freeMinute(59, 999, 30, a.minuteReset(), ""))
			a.do(req{method: "GET", path: "/api/openapi.json"}).want(t, 200) // the proxy itself
		})
	})
}

// TestRateLimitStatusHeaders shows GET /rate-limit answers carry the
// rate-limit headers, its refusals included, without counting.
func TestRateLimitStatusHeaders(t *testing.T) {
	a := newTestApp(t)
	for _, tc := range []struct{ name, key string }{{"no key", ""}, {"unknown key", "psk_nope"}} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(req{method: "GET", path: "/api/rate-limit", key: tc.key}).want(t, 401, "unauthorized")
			wantHeaders(t, r, freeMinute(60, 1000, 30, a.minuteReset(), ""))
		})
	}
	key, _ := a.issueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
	r := a.do(req{method: "GET", path: "/api/rate-limit", key: key}).want(t, 200)
	wantHeaders(t, r, freeMinute(60, 1000, 30, a.minuteReset(), ""))
}
