package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

// midday is 12:00:42 UTC today: relative to the real present (no date is
// pinned), 18 s before the minute resets and far from the day's end.
func midday() time.Time {
	return time.Now().UTC().Truncate(24 * time.Hour).Add(12*time.Hour + 42*time.Second)
}

// The storefront's posts and the console's sign-ins share one per-IP
// bucket of 60 a minute: the 61st is a 429 page with Retry-After, refused
// before the database is read, while another address, the anonymous API
// and the next minute are unaffected. In process and in Redis, on both
// databases.
func TestFormLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		handlerstest.CounterStores(t, func(t *testing.T, fresh func() ratelimit.Store) {
			a := handlerstest.NewOn(t, open, handlerstest.WithCounters(fresh()), handlerstest.WithProxies(t, "0.0.0.0")) // app.Test's peer
			a.Clock.Set(midday())
			rex := a.SeedPet("Rex", 5)
			line := "/cart/lines/" + handlerstest.Itoa(rex.ID)

			s := a.Shopper(t)
			s.Header = map[string]string{"X-Forwarded-For": "192.0.2.1"}
			s.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "1")).WantRedirect("/cart")
			for range 59 { // by htmx: a plain form's flash messages would pile up in the cookie
				s.HXPost(line, handlerstest.Form("quantity", "1")).WantStatus(http.StatusOK)
			}
			s.Get("/cart").WantStatus(http.StatusOK) // pages are not counted

			r := s.Post("/checkout", handlerstest.Buyer()).WantStatus(http.StatusTooManyRequests)
			if got := r.Header.Get("Retry-After"); got != "18" {
				t.Errorf("Retry-After = %q, want 18 (the next minute)", got)
			}
			if !r.IsFullPage() || r.ID("error").AttrOr("data-status", "") != "429" || !strings.Contains(r.Text("error-message"), "Too many requests") {
				t.Errorf("want the shop's 429 page; got:\n%s", r.Body)
			}
			if n := handlerstest.CountRows(t, a, "orders"); n != 0 {
				t.Fatalf("%d orders placed by a refused checkout", n)
			}
			// The order lookup is a storefront post too: refused before it
			// reads the database, so it cannot be used to guess pairs.
			if r := s.Post("/orders/lookup", handlerstest.Form("number", "1", "email", "ada@example.com")).WantStatus(http.StatusTooManyRequests); r.Header.Get("Retry-After") != "18" {
				t.Errorf("lookup: Retry-After = %q, want 18", r.Header.Get("Retry-After"))
			}
			hx := s.HXPost(line, handlerstest.Form("quantity", "1")).WantStatus(http.StatusTooManyRequests)
			if hx.IsFullPage() || hx.Header.Get("HX-Retarget") != "#flash" || hx.Header.Get("Retry-After") != "18" || !strings.Contains(hx.Text("flash"), "Too many requests") {
				t.Errorf("htmx: want a message for #flash with Retry-After; got %v\n%s", hx.Header, hx.Body)
			}

			// Sign-in from the same address is in the same bucket: refused
			// in the console's look, before any lookup or bcrypt.
			b := a.Browser(t)
			b.Header["X-Forwarded-For"] = "192.0.2.1"
			p := b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests)
			p.WantText("error", "Too many requests")
			if p.Header.Get("Retry-After") != "18" || p.Find(`a[href="/staff"]`).Length() == 0 {
				t.Errorf("want the console's 429 page with Retry-After; got %v\n%s", p.Header, p.Body)
			}
			if n := handlerstest.CountRows(t, a, "login_failures"); n != 0 {
				t.Errorf("a refused sign-in recorded %d attempts", n)
			}

			// Another address has a bucket of its own…
			other := a.Shopper(t)
			other.Header = map[string]string{"X-Forwarded-For": "192.0.2.2"}
			other.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(rex.ID), "quantity", "1")).WantRedirect("/cart")
			// …and so has the anonymous API, even from this address.
			api := a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json", Header: map[string]string{"X-Forwarded-For": "192.0.2.1"}}).Want(t, http.StatusOK)
			if got := api.Header.Get("X-RateLimit-Remaining"); got != "59" {
				t.Errorf("anonymous API remaining = %q, want 59: the form posts must not count there", got)
			}

			a.Clock.Add(18 * time.Second) // the next minute
			s.Checkout(nil)
			if n := handlerstest.CountRows(t, a, "orders"); n != 1 {
				t.Fatalf("orders = %d after the checkout, want 1", n)
			}
		})
	})
}

// The form limit counts by the client's bucket as TRUSTED_PROXIES has
// web.ClientBucket read it: X-Forwarded-For picks the bucket only when the
// peer is a trusted proxy, and an IPv6 client counts by its /64. (The
// rules of reading X-Forwarded-For, its lines and trusted hops:
// web/forwarded_test.go.)
func TestFormLimitClientAddress(t *testing.T) {
	// Any post counts, refused or not: removing a line that is not in the
	// cart is a cheap 404.
	const path = "/cart/lines/4242/remove"
	flood := func(t *testing.T, s *handlerstest.Browser, xff func(i int) string) {
		t.Helper()
		for i := range 60 {
			s.Header["X-Forwarded-For"] = xff(i)
			s.Post(path, nil).WantStatus(http.StatusNotFound)
		}
	}
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		t.Run("untrusted peer", func(t *testing.T) {
			a := handlerstest.NewOn(t, open) // TRUSTED_PROXIES unset
			a.Clock.Set(midday())
			s := a.Shopper(t)
			s.Header = map[string]string{}
			// A forged address on every request does not make a new client.
			flood(t, s, func(i int) string { return "198.51.100." + handlerstest.Itoa(int64(i+1)) })
			s.Header["X-Forwarded-For"] = "198.51.100.200"
			s.Post(path, nil).WantStatus(http.StatusTooManyRequests)
		})
		t.Run("IPv6 by its /64", func(t *testing.T) {
			a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0"))
			a.Clock.Set(midday())
			s := a.Shopper(t)
			s.Header = map[string]string{}
			flood(t, s, func(i int) string { return "2001:db8:1:2::" + handlerstest.Itoa(int64(i+1)) })
			s.Header["X-Forwarded-For"] = "2001:db8:1:2:ffff:ffff:ffff:ffff"
			s.Post(path, nil).WantStatus(http.StatusTooManyRequests)
			s.Header["X-Forwarded-For"] = "2001:db8:1:3::1"
			s.Post(path, nil).WantStatus(http.StatusNotFound)
		})
	})
}

// A flood of sign-ins, each with another username, stops at the form
// limit: the refused ones are not looked up, checked or recorded.
func TestSignInFlood(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0"))
		a.Clock.Set(midday())
		// The names exist, with hashes of bcrypt's minimum cost: unknown
		// names would be checked against a full-cost hash, which under the
		// race detector takes minutes for 60 guesses.
		for i := 1; i <= 70; i++ {
			a.AddStaff("guess"+handlerstest.Itoa(int64(i)), "the real password")
		}
		b := a.Browser(t)
		b.Header["X-Forwarded-For"] = "192.0.2.66"
		for i := 1; i <= 70; i++ {
			p := b.Login("guess"+handlerstest.Itoa(int64(i)), "hunter2")
			switch {
			case i <= 60:
				p.WantStatus(http.StatusUnauthorized)
			default:
				p.WantStatus(http.StatusTooManyRequests)
				if p.Header.Get("Retry-After") != "18" {
					t.Fatalf("sign-in %d: Retry-After = %q, want 18", i, p.Header.Get("Retry-After"))
				}
			}
		}
		if n := handlerstest.CountRows(t, a, "login_failures"); n != 60 {
			t.Fatalf("failures recorded = %d, want 60: the refused sign-ins must do no database work", n)
		}
	})
}
