package api_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

// TestRateLimitBans covers SPEC §6's bans through the whole stack, on both
// counter stores: 20 requests after a 429 ban the key for 15 minutes, an
// earlier ban in 24 hours doubles it, a lifted one does not.
func TestRateLimitBans(t *testing.T) {
	handlerstest.CounterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := handlerstest.New(t, handlerstest.WithCounters(fresh()))
		key, k := a.IssueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		keyPath := "/api/keys/" + handlerstest.Itoa(k.ID)
		bannedUntil := handlerstest.JSONTime(a.Start.Add(15 * time.Minute))

		a.Hammer(t, key, 60, 20) // the first 429 and 19 strikes
		a.WantBanned(t, key, "900")
		a.WantBanned(t, key, "900")
		t.Run("state while banned", func(t *testing.T) {
			want := map[string]any{"plan": "free", "minute": window(60, 0, a.MinuteReset()), "day": window(1000, 940, a.DayReset()),
				"banned": true, "bannedUntil": bannedUntil}
			if diff := cmp.Diff(want, a.RateStatus(t, key)); diff != "" {
				t.Errorf("GET /rate-limit while banned (-want +got):\n%s", diff)
			}
			u := a.Usage(t, k.ID)
			got := map[string]any{"banned": u["banned"], "bannedUntil": u["bannedUntil"], "bansLast24h": u["bansLast24h"], "limited429Today": u["limited429Today"]}
			if diff := cmp.Diff(map[string]any{"banned": true, "bannedUntil": bannedUntil, "bansLast24h": float64(1), "limited429Today": float64(20)}, got); diff != "" {
				t.Errorf("usage while banned (-want +got):\n%s", diff)
			}
			var keys []map[string]any
			a.GetJSON(t, a.Staff, "/api/keys", &keys)
			for _, listed := range keys {
				if listed["id"] == float64(k.ID) && listed["bannedUntil"] != bannedUntil {
					t.Errorf("listed key = %v, want bannedUntil %s", listed, bannedUntil)
				}
			}
		})

		a.Clock.Add(time.Minute) // a fresh minute does not end the ban
		a.WantBanned(t, key, "840")
		a.Do(handlerstest.Req{Method: "DELETE", Path: keyPath + "/ban", Key: a.Customer}).Want(t, 403, "forbidden")
		a.Do(handlerstest.Req{Method: "DELETE", Path: "/api/keys/999999/ban", Key: a.Staff}).Want(t, 404, "not_found")
		a.Do(handlerstest.Req{Method: "DELETE", Path: keyPath + "/ban", Key: a.Staff}).Want(t, 204)
		if got := a.RateStatus(t, key)["banned"]; got != false {
			t.Errorf("banned after lifting = %v, want false", got)
		}

		a.Hammer(t, key, 60, 20)
		a.WantBanned(t, key, "900") // the lifted ban does not double this one
		if got := a.Usage(t, k.ID)["bansLast24h"]; got != float64(1) {
			t.Errorf("bansLast24h = %v, want 1 (the lifted ban does not count)", got)
		}

		a.Clock.Set(a.Start.Add(16 * time.Minute)) // that ban is over
		a.Hammer(t, key, 60, 20)
		a.WantBanned(t, key, "1800") // an earlier ban within 24 hours doubles it

		// Lifting clears the strikes of the window: the still exhausted
		// minute answers 429 again, and a new ban needs 20 more strikes.
		a.Do(handlerstest.Req{Method: "DELETE", Path: keyPath + "/ban", Key: a.Staff}).Want(t, 204)
		a.Hammer(t, key, 0, 20)
		a.WantBanned(t, key, "1800")

		a.Clock.Add(25 * time.Hour) // a day later, bans no longer double
		a.Hammer(t, key, 60, 20)
		a.WantBanned(t, key, "900")
		a.Do(handlerstest.Req{Method: "DELETE", Path: keyPath + "/ban", Key: a.Staff}).Want(t, 204)
		a.Do(handlerstest.Req{Method: "DELETE", Path: keyPath + "/ban", Key: a.Staff}).Want(t, 204) // not banned: still 204
		a.Hammer(t, key, 0, 1)
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
			first := handlerstest.NewOn(t, openURL(url))
			key, k := first.IssueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
			first.Hammer(t, key, 60, 20)
			first.WantBanned(t, key, "900")

			second := handlerstest.NewOn(t, openURL(url))
			second.WantBanned(t, key, "900")
			if got := second.RateStatus(t, key)["banned"]; got != true {
				t.Errorf("banned on the second app = %v, want true", got)
			}
			if got, want := second.Usage(t, k.ID)["bannedUntil"], handlerstest.JSONTime(first.Start.Add(15*time.Minute)); got != want {
				t.Errorf("bannedUntil on the second app = %v, want %s", got, want)
			}

			second.Do(handlerstest.Req{Method: "DELETE", Path: "/api/keys/" + handlerstest.Itoa(k.ID) + "/ban", Key: second.Staff}).Want(t, 204)
			second.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 200) // its counters are its own
			first.Clock.Add(time.Second)                                                         // past the first app's ban cache
			first.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 429, "rate_limited")
		})
	}
}

// TestRateLimitKeyUsage covers GET /keys/{id}/usage on both counter stores.
func TestRateLimitKeyUsage(t *testing.T) {
	handlerstest.CounterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := handlerstest.New(t, handlerstest.WithCounters(fresh()))
		key, k := a.IssueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		want := func(now time.Time, minuteUsed, dayUsed, limited int64, counts map[int]int64) map[string]any {
			current := now.Truncate(time.Minute)
			per := make([]any, 60)
			for i := range per {
				per[i] = map[string]any{"minute": current.Add(time.Duration(i-59) * time.Minute).Format(time.RFC3339), "count": float64(counts[i])}
			}
			return map[string]any{
				"keyId": float64(k.ID), "plan": "free",
				"minute":          map[string]any{"limit": float64(60), "used": float64(minuteUsed), "remaining": float64(60 - minuteUsed), "reset": float64(current.Add(time.Minute).Unix())},
				"day":             map[string]any{"limit": float64(1000), "used": float64(dayUsed), "remaining": float64(1000 - dayUsed), "reset": float64(a.DayReset())},
				"limited429Today": float64(limited), "banned": false, "bansLast24h": float64(0), "perMinute": per,
			}
		}
		check := func(name string, w map[string]any) {
			t.Helper()
			if diff := cmp.Diff(w, a.Usage(t, k.ID)); diff != "" {
				t.Errorf("%s: usage (-want +got):\n%s", name, diff)
			}
		}
		check("fresh key", want(a.Clock.Now(), 0, 0, 0, nil))
		a.Hammer(t, key, 5, 0)
		a.RateStatus(t, key) // not counted
		check("after 5", want(a.Clock.Now(), 5, 5, 0, map[int]int64{59: 5}))

		a.Clock.Set(a.At(10*time.Hour + time.Minute + 10*time.Second))
		a.Hammer(t, key, 3, 0)
		check("next minute", want(a.Clock.Now(), 3, 8, 0, map[int]int64{58: 5, 59: 3}))
		a.Hammer(t, key, 57, 2)
		check("limited", want(a.Clock.Now(), 60, 65, 2, map[int]int64{58: 5, 59: 60}))

		a.Clock.Set(a.At(11*time.Hour + 10*time.Second)) // 10:01 is now the oldest minute
		check("an hour on", want(a.Clock.Now(), 0, 65, 2, map[int]int64{0: 60}))

		run(t, a, []apiCase{
			{"unknown key", "GET", "/api/keys/999999/usage", a.Staff, nil, 404, "not_found", ""},
			{"bad id", "GET", "/api/keys/abc/usage", a.Staff, nil, 400, "bad_request", "keyId"},
			{"customer", "GET", "/api/keys/" + handlerstest.Itoa(k.ID) + "/usage", a.Customer, nil, 403, "forbidden", ""},
			{"anonymous", "GET", "/api/keys/" + handlerstest.Itoa(k.ID) + "/usage", "", nil, 401, "unauthorized", ""},
		})
	})
}
