package handlers_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/ratelimit"
)

// hammer sends allowed requests that must pass, then limited ones that
// must be 429.
func (a *testApp) hammer(t *testing.T, key string, allowed, limited int) {
	t.Helper()
	for range allowed {
		a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 200)
	}
	for range limited {
		a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 429, "rate_limited")
	}
}

// wantBanned fails unless the key's next request is 403 api_key_banned
// with Retry-After retry.
func (a *testApp) wantBanned(t *testing.T, key, retry string) {
	t.Helper()
	r := a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 403, "api_key_banned")
	if got := r.Header.Get("Retry-After"); got != retry {
		t.Fatalf("Retry-After = %q, want %q", got, retry)
	}
}

// usage is GET /keys/{id}/usage as staff.
func (a *testApp) usage(t *testing.T, id int64) map[string]any {
	t.Helper()
	var u map[string]any
	a.getJSON(t, a.staff, "/api/keys/"+itoa(id)+"/usage", &u)
	return u
}

// TestRateLimitBans covers SPEC §6's bans through the whole stack, on both
// counter stores: 20 requests after a 429 ban the key for 15 minutes, an
// earlier ban in 24 hours doubles it, a lifted one does not.
func TestRateLimitBans(t *testing.T) {
	counterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := newTestApp(t, withCounters(fresh()))
		key, k := a.issueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		keyPath := "/api/keys/" + itoa(k.ID)
		bannedUntil := jsonTime(a.start.Add(15 * time.Minute))

		a.hammer(t, key, 60, 20) // the first 429 and 19 strikes
		a.wantBanned(t, key, "900")
		a.wantBanned(t, key, "900")
		t.Run("state while banned", func(t *testing.T) {
			want := map[string]any{"plan": "free", "minute": window(60, 0, a.minuteReset()), "day": window(1000, 940, a.dayReset()),
				"banned": true, "bannedUntil": bannedUntil}
			if diff := cmp.Diff(want, a.rateStatus(t, key)); diff != "" {
				t.Errorf("GET /rate-limit while banned (-want +got):\n%s", diff)
			}
			u := a.usage(t, k.ID)
			got := map[string]any{"banned": u["banned"], "bannedUntil": u["bannedUntil"], "bansLast24h": u["bansLast24h"], "limited429Today": u["limited429Today"]}
			if diff := cmp.Diff(map[string]any{"banned": true, "bannedUntil": bannedUntil, "bansLast24h": float64(1), "limited429Today": float64(20)}, got); diff != "" {
				t.Errorf("usage while banned (-want +got):\n%s", diff)
			}
			var keys []map[string]any
			a.getJSON(t, a.staff, "/api/keys", &keys)
			for _, listed := range keys {
				if listed["id"] == float64(k.ID) && listed["bannedUntil"] != bannedUntil {
					t.Errorf("listed key = %v, want bannedUntil %s", listed, bannedUntil)
				}
			}
		})

		a.clock.Add(time.Minute) // a fresh minute does not end the ban
		a.wantBanned(t, key, "840")
		a.do(req{method: "DELETE", path: keyPath + "/ban", key: a.customer}).want(t, 403, "forbidden")
		a.do(req{method: "DELETE", path: "/api/keys/999999/ban", key: a.staff}).want(t, 404, "not_found")
		a.do(req{method: "DELETE", path: keyPath + "/ban", key: a.staff}).want(t, 204)
		if got := a.rateStatus(t, key)["banned"]; got != false {
			t.Errorf("banned after lifting = %v, want false", got)
		}

		a.hammer(t, key, 60, 20)
		a.wantBanned(t, key, "900") // the lifted ban does not double this one
		if got := a.usage(t, k.ID)["bansLast24h"]; got != float64(1) {
			t.Errorf("bansLast24h = %v, want 1 (the lifted ban does not count)", got)
		}

		a.clock.Set(a.start.Add(16 * time.Minute)) // that ban is over
		a.hammer(t, key, 60, 20)
		a.wantBanned(t, key, "1800") // an earlier ban within 24 hours doubles it

		// Lifting clears the strikes of the window: the still exhausted
		// minute answers 429 again, and a new ban needs 20 more strikes.
		a.do(req{method: "DELETE", path: keyPath + "/ban", key: a.staff}).want(t, 204)
		a.hammer(t, key, 0, 20)
		a.wantBanned(t, key, "1800")

		a.clock.Add(25 * time.Hour) // a day later, bans no longer double
		a.hammer(t, key, 60, 20)
		a.wantBanned(t, key, "900")
		a.do(req{method: "DELETE", path: keyPath + "/ban", key: a.staff}).want(t, 204)
		a.do(req{method: "DELETE", path: keyPath + "/ban", key: a.staff}).want(t, 204) // not banned: still 204
		a.hammer(t, key, 0, 1)
	})
}

// openURL opens a new store on rawURL each time it is called, as a
// restarted process would.
func openURL(rawURL string) dbtest.Open {
	return func(tb testing.TB) *db.Store {
		tb.Helper()
		s, err := db.Open(context.Background(), rawURL, dbtest.NewClock(tb).Now)
		if err != nil {
			tb.Fatalf("open %s: %v", rawURL, err)
		}
		tb.Cleanup(func() { s.Close() })
		if err := s.Migrate(context.Background()); err != nil {
			tb.Fatalf("migrate: %v", err)
		}
		return s
	}
}

// TestRateLimitBanSurvivesRestart bans a key on one app, then builds a second app
// (new store connection, Handler, Limiter and in-process counters) on the
// same database: the ban holds there, and lifting it there frees the key
// on the first app too.
func TestRateLimitBanSurvivesRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "shared.db") }},
		{"postgres", dbtest.PostgresURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			first := newTestAppOn(t, openURL(url))
			key, k := first.issueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
			first.hammer(t, key, 60, 20)
			first.wantBanned(t, key, "900")

			second := newTestAppOn(t, openURL(url))
			second.wantBanned(t, key, "900")
			if got := second.rateStatus(t, key)["banned"]; got != true {
				t.Errorf("banned on the second app = %v, want true", got)
			}
			if got, want := second.usage(t, k.ID)["bannedUntil"], jsonTime(first.start.Add(15*time.Minute)); got != want {
				t.Errorf("bannedUntil on the second app = %v, want %s", got, want)
			}

			second.do(req{method: "DELETE", path: "/api/keys/" + itoa(k.ID) + "/ban", key: second.staff}).want(t, 204)
			second.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 200) // its counters are its own
			first.clock.Add(time.Second)                                            // past the first app's ban cache
			first.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 429, "rate_limited")
		})
	}
}

// TestRateLimitKeyUsage covers GET /keys/{id}/usage on both counter stores.
func TestRateLimitKeyUsage(t *testing.T) {
	counterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := newTestApp(t, withCounters(fresh()))
		key, k := a.issueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		want := func(now time.Time, minuteUsed, dayUsed, limited int64, counts map[int]int64) map[string]any {
			current := now.Truncate(time.Minute)
			per := make([]any, 60)
			for i := range per {
				per[i] = map[string]any{"minute": current.Add(time.Duration(i-59) * time.Minute).Format(time.RFC3339), "count": float64(counts[i])}
			}
			return map[string]any{
				"keyId": float64(k.ID), "plan": "free",
				"minute":          map[string]any{"limit": float64(60), "used": float64(minuteUsed), "remaining": float64(60 - minuteUsed), "reset": float64(current.Add(time.Minute).Unix())},
				"day":             map[string]any{"limit": float64(1000), "used": float64(dayUsed), "remaining": float64(1000 - dayUsed), "reset": float64(a.dayReset())},
				"limited429Today": float64(limited), "banned": false, "bansLast24h": float64(0), "perMinute": per,
			}
		}
		check := func(name string, w map[string]any) {
			t.Helper()
			if diff := cmp.Diff(w, a.usage(t, k.ID)); diff != "" {
				t.Errorf("%s: usage (-want +got):\n%s", name, diff)
			}
		}
		check("fresh key", want(a.clock.Now(), 0, 0, 0, nil))
		a.hammer(t, key, 5, 0)
		a.rateStatus(t, key) // not counted
		check("after 5", want(a.clock.Now(), 5, 5, 0, map[int]int64{59: 5}))

		a.clock.Set(a.at(10*time.Hour + time.Minute + 10*time.Second))
		a.hammer(t, key, 3, 0)
		check("next minute", want(a.clock.Now(), 3, 8, 0, map[int]int64{58: 5, 59: 3}))
		a.hammer(t, key, 57, 2)
		check("limited", want(a.clock.Now(), 60, 65, 2, map[int]int64{58: 5, 59: 60}))

		a.clock.Set(a.at(11*time.Hour + 10*time.Second)) // 10:01 is now the oldest minute
		check("an hour on", want(a.clock.Now(), 0, 65, 2, map[int]int64{0: 60}))

		a.run(t, []apiCase{
			{"unknown key", "GET", "/api/keys/999999/usage", a.staff, nil, 404, "not_found", ""},
			{"bad id", "GET", "/api/keys/abc/usage", a.staff, nil, 400, "bad_request", "keyId"},
			{"customer", "GET", "/api/keys/" + itoa(k.ID) + "/usage", a.customer, nil, 403, "forbidden", ""},
			{"anonymous", "GET", "/api/keys/" + itoa(k.ID) + "/usage", "", nil, 401, "unauthorized", ""},
		})
	})
}
