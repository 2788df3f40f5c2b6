package handlers_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web"
)

// TestPrivateAnswers: every GET route the app registers (read from the
// app's own route table, not listed here) that answers behind a key or a
// session carries Cache-Control: private, no-store (SPEC §17), its
// refusals included; the only keyed answers without it are the catalog's
// shared conditional answers, which carry a strong ETag instead. Routes
// outside the three audiences (assets, photos, health, metrics) are public.
func TestPrivateAnswers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 5)
		order := a.PlaceOrder(t, a.Customer, map[string]any{"petId": pet.ID, "quantity": 1})
		ids := map[string]string{
			"petId": handlerstest.Itoa(pet.ID), "id": handlerstest.Itoa(pet.ID), "categoryId": handlerstest.Itoa(pet.CategoryID),
			"orderId": handlerstest.Itoa(order), "keyId": handlerstest.Itoa(a.CustID), "checkoutId": "1", "photoId": "1",
		}
		param := regexp.MustCompile(`:[A-Za-z]+`)
		base := a.Listen()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path, key string) *http.Response {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			if key != "" {
				req.Header.Set("X-API-Key", key)
			}
			res, err := client.Do(req) // returns at the headers: event streams too
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			res.Body.Close()
			return res
		}
		seen := 0
		for _, rt := range a.App.GetRoutes(true) {
			if rt.Name == web.FallbackName {
				continue // a method the path lacks: 405 or 404
			}
			if rt.Method != http.MethodGet {
				continue
			}
			path := param.ReplaceAllStringFunc(rt.Path, func(p string) string { return ids[p[1:]] })
			switch {
			case strings.HasPrefix(rt.Path, "/static"), strings.HasPrefix(rt.Path, "/media/"),
				rt.Path == "/healthz", rt.Path == "/readyz", rt.Path == "/metrics", rt.Path == "/favicon.ico":
				continue // public: the same for everyone
			case strings.HasPrefix(rt.Path, "/api/"):
				anonymous := get(path, "")
				if anonymous.StatusCode != http.StatusUnauthorized {
					continue // anyone may read it (the OpenAPI document, the docs)
				}
				if got := anonymous.Header.Get("Cache-Control"); got != web.PrivateCache {
					t.Errorf("GET %s without a key: Cache-Control %q, want %q", rt.Path, got, web.PrivateCache)
				}
				for _, key := range []string{a.Customer, a.Staff} {
					res := get(path, key)
					got := res.Header.Get("Cache-Control")
					if res.StatusCode == http.StatusOK && res.Header.Get("ETag") != "" {
						if strings.Contains(got, "private") {
							t.Errorf("GET %s: a shared conditional answer is marked %q", rt.Path, got)
						}
						continue
					}
					if got != web.PrivateCache {
						t.Errorf("GET %s (%d): Cache-Control %q, want %q", rt.Path, res.StatusCode, got, web.PrivateCache)
					}
				}
			default: // the console's and the shop's pages: behind a session
				if got := get(path, "").Header.Get("Cache-Control"); got != web.PrivateCache {
					t.Errorf("GET %s: Cache-Control %q, want %q", rt.Path, got, web.PrivateCache)
				}
			}
			seen++
		}
		if seen < 30 {
			t.Errorf("only %d GET routes checked: the route table was not read", seen)
		}
	})
}
