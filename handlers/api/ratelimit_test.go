package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

var rateHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day",
	"X-RateLimit-Remaining-Day", "RateLimit-Policy", "RateLimit", "Retry-After"}

// limitHeaders picks the rate-limit headers of an answer.
func limitHeaders(r *handlerstest.Response) map[string]string {
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
		"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": handlerstest.Itoa(remaining), "X-RateLimit-Reset": handlerstest.Itoa(reset),
		"X-RateLimit-Limit-Minute": "60", "X-RateLimit-Remaining-Minute": handlerstest.Itoa(remaining),
		"X-RateLimit-Limit-Day": "1000", "X-RateLimit-Remaining-Day": handlerstest.Itoa(day),
		"RateLimit-Policy": `"minute";q=60;w=60, "day";q=1000;w=86400`,
		"RateLimit":        fmt.Sprintf(`"minute";r=%d;t=%d`, remaining, t),
	}
	if retry != "" {
		m["Retry-After"] = retry
	}
	return m
}

// wantHeaders fails unless the answer's rate-limit headers are exactly want.
func wantHeaders(t *testing.T, r *handlerstest.Response, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, limitHeaders(r)); diff != "" {
		t.Fatalf("rate-limit headers (-want +got):\n%s", diff)
	}
}

func window(limit, remaining, reset int64) map[string]any {
	return map[string]any{"limit": float64(limit), "remaining": float64(remaining), "reset": float64(reset)}
}

// TestRateLimitWindows covers SPEC §6's windows and headers through the
// whole stack, on both counter stores.
func TestRateLimitWindows(t *testing.T) {
	handlerstest.CounterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := handlerstest.New(t, handlerstest.WithCounters(fresh()))
		key, k := a.IssueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		paths := []string{"/api/pets", "/api/pets/999999", "/api/nope", "/api/store/orders/999999"} // 4xx count too
		for i := int64(1); i <= 60; i++ {
			r := a.Do(handlerstest.Req{Method: "GET", Path: paths[i%4], Key: key})
			if r.Status >= 429 || r.Status == 403 {
				t.Fatalf("request %d: status %d, want it let through", i, r.Status)
			}
			wantHeaders(t, r, freeMinute(60-i, 1000-i, 30, a.MinuteReset(), ""))
			if i == 30 {
				for range 3 { // not counted
					got := a.RateStatus(t, key)
					want := map[string]any{"plan": "free", "minute": window(60, 30, a.MinuteReset()), "day": window(1000, 970, a.DayReset()), "banned": false}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("GET /rate-limit (-want +got):\n%s", diff)
					}
				}
			}
		}
		r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 429, "rate_limited")
		wantHeaders(t, r, freeMinute(0, 940, 30, a.MinuteReset(), "30"))
		r = a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: key, Body: map[string]any{"petId": 1, "quantity": 1}}).Want(t, 429, "rate_limited")
		wantHeaders(t, r, freeMinute(0, 940, 30, a.MinuteReset(), "30"))

		status := a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: key}).Want(t, 200)
		var got map[string]any
		status.Decode(t, &got)
		if diff := cmp.Diff(map[string]any{"plan": "free", "minute": window(60, 0, a.MinuteReset()), "day": window(1000, 940, a.DayReset()), "banned": false}, got); diff != "" {
			t.Errorf("GET /rate-limit while limited (-want +got):\n%s", diff)
		}

		a.Clock.Set(a.At(10*time.Hour + 59*time.Second + 500*time.Millisecond))
		r = a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 429, "rate_limited")
		wantHeaders(t, r, freeMinute(0, 940, 1, a.MinuteReset(), "1")) // 0.5 s rounds up

		a.Clock.Set(a.At(10*time.Hour + time.Minute)) // the next whole minute
		r = a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 200)
		wantHeaders(t, r, freeMinute(59, 939, 60, a.MinuteReset()+60, ""))

		var u map[string]any
		a.GetJSON(t, a.Staff, "/api/keys/"+handlerstest.Itoa(k.ID)+"/usage", &u)
		if got, want := u["limited429Today"], float64(3); got != want {
			t.Errorf("limited429Today = %v, want %v", got, want)
		}
	})
}

// TestRateLimitDayWindow shows the day binding the headers and the 429
// when it has fewer units left than the minute.
func TestRateLimitDayWindow(t *testing.T) {
	handlerstest.CounterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		a := handlerstest.New(t, handlerstest.WithCounters(fresh()))
		key, _ := a.IssueKey("tiny day", db.RoleCustomer, db.PlanEnterprise, 100, 3)
		untilMidnight := a.DayReset() - a.Start.Unix()
		for i := int64(1); i <= 4; i++ {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key})
			want := map[string]string{
				"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": handlerstest.Itoa(max(0, 3-i)), "X-RateLimit-Reset": handlerstest.Itoa(a.DayReset()),
				"X-RateLimit-Limit-Minute": "100", "X-RateLimit-Remaining-Minute": handlerstest.Itoa(100 - min(i, 3)),
				"X-RateLimit-Limit-Day": "3", "X-RateLimit-Remaining-Day": handlerstest.Itoa(max(0, 3-i)),
				"RateLimit-Policy": `"minute";q=100;w=60, "day";q=3;w=86400`,
				"RateLimit":        fmt.Sprintf(`"day";r=%d;t=%d`, max(0, 3-i), untilMidnight),
			}
			if i == 4 {
				r.Want(t, 429, "rate_limited")
				want["Retry-After"] = handlerstest.Itoa(untilMidnight)
			} else {
				r.Want(t, 200)
			}
			wantHeaders(t, r, want)
		}
		a.Clock.Add(time.Hour) // a new minute does not help
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 429, "rate_limited")
		a.Clock.Set(time.Unix(a.DayReset(), 0)) // midnight UTC does
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 200)
	})
}

// TestRateLimitAnonymous shows callers without a valid key are limited per
// client IP, believing X-Forwarded-For only from trusted proxies.
func TestRateLimitAnonymous(t *testing.T) {
	handlerstest.CounterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
		t.Run("untrusted peer", func(t *testing.T) {
			a := handlerstest.New(t, handlerstest.WithCounters(fresh()))
			for i := range 60 {
				hdr := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i)}
				r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: hdr}).Want(t, 401, "unauthorized")
				wantHeaders(t, r, freeMinute(int64(59-i), int64(999-i), 30, a.MinuteReset(), ""))
			}
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: map[string]string{"X-Forwarded-For": "192.0.2.1"}}).Want(t, 429, "rate_limited")
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: "psk_guess"}).Want(t, 429, "rate_limited")
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: a.Customer}).Want(t, 200) // keys count apart
		})
		t.Run("trusted proxy", func(t *testing.T) {
			// app.Test's peer is 0.0.0.0.
			a := handlerstest.New(t, handlerstest.WithCounters(fresh()), handlerstest.WithProxies(t, "0.0.0.0"))
			client := map[string]string{"X-Forwarded-For": "203.0.113.7"}
			for range 60 {
				a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: client}).Want(t, 401, "unauthorized")
			}
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: client}).Want(t, 429, "rate_limited")
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: map[string]string{"X-Forwarded-For": "203.0.113.7, 0.0.0.0"}}).Want(t, 429, "rate_limited")
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: map[string]string{"X-Forwarded-For": "203.0.113.8"}}).Want(t, 401, "unauthorized")
			wantHeaders(t, r, freeMinute(59, 999, 30, a.MinuteReset(), ""))
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json"}).Want(t, 200) // the proxy itself
		})
	})
}

// TestRateLimitStatusHeaders shows GET /rate-limit answers carry the
// rate-limit headers, its refusals included: with a valid key without
// counting, without one (none, unknown) counted against the client's
// address like any anonymous request.
func TestRateLimitStatusHeaders(t *testing.T) {
	a := handlerstest.New(t)
	for i, tc := range []struct{ name, key string }{{"no key", ""}, {"unknown key", "psk_nope"}} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: tc.key}).Want(t, 401, "unauthorized")
			wantHeaders(t, r, freeMinute(int64(59-i), int64(999-i), 30, a.MinuteReset(), ""))
		})
	}
	key, _ := a.IssueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
	r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: key}).Want(t, 200)
	wantHeaders(t, r, freeMinute(60, 1000, 30, a.MinuteReset(), ""))
}
