package api_test

import (
	"context"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestRateLimitStatusWithoutKey shows GET /api/rate-limit is uncounted
// only with a valid key (SPEC §6): without one — no key, an unknown key, a
// revoked key — it counts against the client's address, so a flood of it
// reaches 429 and then the ban, while a valid key's lookups stay free.
func TestRateLimitStatusWithoutKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0")) // app.Test's peer
		free, _ := a.IssueKey("free", db.RoleCustomer, db.PlanFree, 0, 0)
		revoked, k := a.IssueKey("revoked", db.RoleCustomer, db.PlanFree, 0, 0)
		if err := a.Store.RevokeAPIKey(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
		flood := map[string]string{"X-Forwarded-For": "198.51.100.9"}
		keys := []string{"", "psk_unknown", revoked}
		for i := range 60 {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: keys[i%3], Header: flood}).Want(t, 401, "unauthorized")
			wantHeaders(t, r, freeMinute(int64(59-i), int64(999-i), 30, a.MinuteReset(), ""))
		}
		for _, key := range keys {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: key, Header: flood}).Want(t, 429, "rate_limited")
			if r.Header.Get("Retry-After") != "30" {
				t.Errorf("Retry-After = %q, want 30", r.Header.Get("Retry-After"))
			}
		}
		// The strikes go on to the ban (20 by default): the address stays
		// banned on GET /api/rate-limit too.
		for range 17 {
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Header: flood}).Want(t, 429, "rate_limited")
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Header: flood}).Want(t, 403, "api_key_banned")
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: "psk_unknown", Header: flood}).Want(t, 403, "api_key_banned")

		// A valid key from the same address is neither counted nor
		// refused, however often it asks.
		for range 70 {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: free, Header: flood}).Want(t, 200)
			wantHeaders(t, r, freeMinute(60, 1000, 30, a.MinuteReset(), ""))
		}
		// Another address has its own allowance.
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Header: map[string]string{"X-Forwarded-For": "198.51.100.10"}}).Want(t, 401, "unauthorized")
	})
}

// TestRateLimitAnonymousIPv6Block shows the anonymous API limit counts an
// IPv6 client by its /64 (SPEC §6): addresses of one /64 share one
// allowance (and its ban), another /64 has its own; IPv4 counts by address.
func TestRateLimitAnonymousIPv6Block(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0")) // app.Test's peer
		from := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": ip} }
		for i := range 60 {
			ip := "2001:db8:5:5:" + handlerstest.Itoa(int64(i+1)) + "::1"
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: from(ip)}).Want(t, 200)
			wantHeaders(t, r, freeMinute(int64(59-i), int64(999-i), 30, a.MinuteReset(), ""))
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: from("2001:db8:5:5:ffff:ffff:ffff:ffff")}).Want(t, 429, "rate_limited")
		for range 19 {
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: from("2001:db8:5:5::2")}).Want(t, 429, "rate_limited")
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: from("2001:db8:5:5::3")}).Want(t, 403, "api_key_banned")

		r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: from("2001:db8:5:6::1")}).Want(t, 200)
		wantHeaders(t, r, freeMinute(59, 999, 30, a.MinuteReset(), ""))
		r = a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: from("192.0.2.1")}).Want(t, 200)
		wantHeaders(t, r, freeMinute(59, 999, 30, a.MinuteReset(), ""))
		r = a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: from("192.0.2.2")}).Want(t, 200)
		wantHeaders(t, r, freeMinute(59, 999, 30, a.MinuteReset(), ""))
	})
}
