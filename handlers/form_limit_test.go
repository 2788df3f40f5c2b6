package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/web/ratelimit"
)

// midday is 12:00:42 UTC today: relative to the real present (no date is
// pinned), 18 s before the minute resets and far from the day's end.
func midday() time.Time {
	return time.Now().UTC().Truncate(24 * time.Hour).Add(12*time.Hour + 42*time.Second)
}

// countRows counts a table's rows straight from the database.
func countRows(t *testing.T, a *testApp, table string) int {
	t.Helper()
	var n int
	if err := a.store.DB().GetContext(context.Background(), &n, `SELECT count(*) FROM `+table); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// The storefront's posts and the console's sign-ins share one per-IP
// bucket of 60 a minute: the 61st is a 429 page with Retry-After, refused
// before the database is read, while another address, the anonymous API
// and the next minute are unaffected. In process and in Redis, on both
// databases.
func TestFormLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		counterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
			a := newTestAppOn(t, open, withCounters(fresh()), withProxies(t, "0.0.0.0")) // app.Test's peer
			a.clock.Set(midday())
			rex := a.seedPet("Rex", 5)
			line := "/cart/lines/" + itoa(rex.ID)

			s := newShopClient(t, a)
			s.header = map[string]string{"X-Forwarded-For": "192.0.2.1"}
			s.post("/cart", form("pet_id", itoa(rex.ID), "quantity", "1")).wantRedirect("/cart")
			for range 59 { // by htmx: a plain form's flash messages would pile up in the cookie
				s.post(line, form("quantity", "1"), true).wantStatus(http.StatusOK)
			}
			s.get("/cart").wantStatus(http.StatusOK) // pages are not counted

			r := s.post("/checkout", nil).wantStatus(http.StatusTooManyRequests)
			if got := r.Header.Get("Retry-After"); got != "18" {
				t.Errorf("Retry-After = %q, want 18 (the next minute)", got)
			}
			if !r.isFullPage() || r.testid("error").AttrOr("data-status", "") != "429" || !strings.Contains(r.text("error-message"), "Too many requests") {
				t.Errorf("want the shop's 429 page; got:\n%s", r.Body)
			}
			if n := countRows(t, a, "orders"); n != 0 {
				t.Fatalf("%d orders placed by a refused checkout", n)
			}
			hx := s.post(line, form("quantity", "1"), true).wantStatus(http.StatusTooManyRequests)
			if hx.isFullPage() || hx.Header.Get("HX-Retarget") != "#flash" || hx.Header.Get("Retry-After") != "18" || !strings.Contains(hx.text("flash"), "Too many requests") {
				t.Errorf("htmx: want a message for #flash with Retry-After; got %v\n%s", hx.Header, hx.Body)
			}

			// Sign-in from the same address is in the same bucket: refused
			// in the console's look, before any lookup or bcrypt.
			b := a.browser(t)
			b.header["X-Forwarded-For"] = "192.0.2.1"
			p := b.login(staffName, staffPassword).wantStatus(http.StatusTooManyRequests)
			p.wantText("error", "Too many requests")
			if p.Header.Get("Retry-After") != "18" || p.find(`a[href="/staff"]`).Length() == 0 {
				t.Errorf("want the console's 429 page with Retry-After; got %v\n%s", p.Header, p.Body)
			}
			if n := countRows(t, a, "login_failures"); n != 0 {
				t.Errorf("a refused sign-in recorded %d attempts", n)
			}

			// Another address has a bucket of its own…
			other := newShopClient(t, a)
			other.header = map[string]string{"X-Forwarded-For": "192.0.2.2"}
			other.post("/cart", form("pet_id", itoa(rex.ID), "quantity", "1")).wantRedirect("/cart")
			// …and so has the anonymous API, even from this address.
			api := a.do(req{method: "GET", path: "/api/openapi.json", header: map[string]string{"X-Forwarded-For": "192.0.2.1"}}).want(t, http.StatusOK)
			if got := api.Header.Get("X-RateLimit-Remaining"); got != "59" {
				t.Errorf("anonymous API remaining = %q, want 59: the form posts must not count there", got)
			}

			a.clock.Add(18 * time.Second) // the next minute
			s.post("/checkout", nil).wantRedirect("/orders")
			if n := countRows(t, a, "orders"); n != 1 {
				t.Fatalf("orders = %d after the checkout, want 1", n)
			}
		})
	})
}

// X-Forwarded-For picks the bucket only when the peer is a trusted proxy;
// then it is read from the right, past trusted hops, and an IPv6 client
// counts by its /64.
func TestFormLimitClientAddress(t *testing.T) {
	// Any post counts, refused or not: removing a line that is not in the
	// cart is a cheap 404.
	const path = "/cart/lines/4242/remove"
	flood := func(t *testing.T, s *shopClient, xff func(i int) string) {
		t.Helper()
		for i := range 60 {
			s.header["X-Forwarded-For"] = xff(i)
			s.post(path, nil).wantStatus(http.StatusNotFound)
		}
	}
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		t.Run("untrusted peer", func(t *testing.T) {
			a := newTestAppOn(t, open) // TRUSTED_PROXIES unset
			a.clock.Set(midday())
			s := newShopClient(t, a)
			s.header = map[string]string{}
			// A forged address on every request does not make a new client.
			flood(t, s, func(i int) string { return "198.51.100." + itoa(int64(i+1)) })
			s.header["X-Forwarded-For"] = "198.51.100.200"
			s.post(path, nil).wantStatus(http.StatusTooManyRequests)
		})
		t.Run("trusted proxies", func(t *testing.T) {
			a := newTestAppOn(t, open, withProxies(t, "0.0.0.0, 10.0.0.0/8"))
			a.clock.Set(midday())
			s := newShopClient(t, a)
			s.header = map[string]string{}
			// The client is the right-most untrusted hop, whatever it wrote
			// to the left of it.
			flood(t, s, func(i int) string {
				if i%2 == 0 {
					return "192.0.2.7, 10.1.1.1"
				}
				return "203.0.113." + itoa(int64(i)) + ", 192.0.2.7, 10.2.2.2"
			})
			s.header["X-Forwarded-For"] = "192.0.2.7"
			s.post(path, nil).wantStatus(http.StatusTooManyRequests)
			s.header["X-Forwarded-For"] = "192.0.2.8, 10.1.1.1"
			s.post(path, nil).wantStatus(http.StatusNotFound)
		})
		t.Run("IPv6 by its /64", func(t *testing.T) {
			a := newTestAppOn(t, open, withProxies(t, "0.0.0.0"))
			a.clock.Set(midday())
			s := newShopClient(t, a)
			s.header = map[string]string{}
			flood(t, s, func(i int) string { return "2001:db8:1:2::" + itoa(int64(i+1)) })
			s.header["X-Forwarded-For"] = "2001:db8:1:2:ffff:ffff:ffff:ffff"
			s.post(path, nil).wantStatus(http.StatusTooManyRequests)
			s.header["X-Forwarded-For"] = "2001:db8:1:3::1"
			s.post(path, nil).wantStatus(http.StatusNotFound)
		})
	})
}

// A flood of sign-ins, each with another username, stops at the form
// limit: the refused ones are not looked up, checked or recorded.
func TestSignInFlood(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open, withProxies(t, "0.0.0.0"))
		a.clock.Set(midday())
		// The names exist, with hashes of bcrypt's minimum cost: unknown
		// names would be checked against a full-cost hash, which under the
		// race detector takes minutes for 60 guesses.
		for i := 1; i <= 70; i++ {
			a.addStaff("guess"+itoa(int64(i)), "the real password")
		}
		b := a.browser(t)
		b.header["X-Forwarded-For"] = "192.0.2.66"
		for i := 1; i <= 70; i++ {
			p := b.login("guess"+itoa(int64(i)), "hunter2")
			switch {
			case i <= 60:
				p.wantStatus(http.StatusUnauthorized)
			default:
				p.wantStatus(http.StatusTooManyRequests)
				if p.Header.Get("Retry-After") != "18" {
					t.Fatalf("sign-in %d: Retry-After = %q, want 18", i, p.Header.Get("Retry-After"))
				}
			}
		}
		if n := countRows(t, a, "login_failures"); n != 60 {
			t.Fatalf("failures recorded = %d, want 60: the refused sign-ins must do no database work", n)
		}
	})
}
