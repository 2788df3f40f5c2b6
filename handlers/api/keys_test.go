package api_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web"
)

// TestKeysAPI covers /keys on both databases: issuing (the plain key once),
// listing (never the plain key), plan changes, revoking and bans.
func TestKeysAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		issuedAt := a.Clock.Now()
		r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/keys", Key: a.Staff, Body: map[string]any{"name": " Partner ", "role": "customer", "plan": "pro"}}).Want(t, 201)
		var issued map[string]any
		r.Decode(t, &issued)
		handlerstest.WantKeyFields(t, issued, "key")
		plain, _ := issued["key"].(string)
		id, _ := issued["id"].(float64)
		keyPath := "/api/keys/" + handlerstest.Itoa(int64(id))
		t.Run("issued", func(t *testing.T) {
			want := map[string]any{"id": id, "name": "Partner", "prefix": issued["prefix"], "role": "customer", "plan": "pro",
				"perMinute": float64(300), "perDay": float64(10000), "createdAt": handlerstest.JSONTime(issuedAt), "key": plain}
			if diff := cmp.Diff(want, issued); diff != "" {
				t.Errorf("201 body (-want +got):\n%s", diff)
			}
			if p, _ := issued["prefix"].(string); !strings.HasPrefix(plain, "psk_") || len(plain) < 40 || len(p) < 6 || !strings.HasPrefix(plain, p) || p == plain {
				t.Errorf("key %q with prefix %q: want psk_ and 32 random bytes, prefix a short start of it", plain, p)
			}
			if got := r.Header.Get("Location"); got != keyPath {
				t.Errorf("Location = %q, want %q", got, keyPath)
			}
			if got := r.Header.Get("Cache-Control"); got != web.PrivateCache {
				t.Errorf("Cache-Control = %q, want %q", got, web.PrivateCache)
			}
		})
		t.Run("its Location answers with the key, never the plain key", func(t *testing.T) {
			got := getKey(t, a, r.Header.Get("Location"))
			want := maps.Clone(issued)
			delete(want, "key")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GET Location (-issued +got):\n%s", diff)
			}
		})
		t.Run("the plain key works, with its plan's limits", func(t *testing.T) {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(t, 200)
			if got := r.Header.Get("X-RateLimit-Limit-Minute"); got != "300" {
				t.Errorf("X-RateLimit-Limit-Minute = %q, want 300", got)
			}
		})
		t.Run("the list never shows the plain key", func(t *testing.T) {
			listed := a.ListedKey(t, id)
			delete(issued, "key")
			if diff := cmp.Diff(issued, listed); diff != "" {
				t.Errorf("listed key (-issued +listed):\n%s", diff)
			}
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/keys", Key: a.Staff}).Want(t, 200)
			for _, secret := range []string{plain, a.Staff, a.Customer, plain[len(plain)-20:]} {
				if bytes.Contains(r.Body, []byte(secret)) {
					t.Errorf("GET /keys shows a plain key: %s", r.Body)
				}
			}
		})

		patch := func(body map[string]any) map[string]any {
			t.Helper()
			r := a.Do(handlerstest.Req{Method: "PATCH", Path: keyPath, Key: a.Staff, Body: body}).Want(t, 200)
			var k map[string]any
			r.Decode(t, &k)
			handlerstest.WantKeyFields(t, k)
			return k
		}
		limits := func(k map[string]any) []any {
			return []any{k["name"], k["role"], k["plan"], k["perMinute"], k["perDay"]}
		}
		patches := []struct {
			name string
			body map[string]any
			want []any
		}{
			{"to business", map[string]any{"plan": "business"}, []any{"Partner", "customer", "business", float64(1000), float64(100000)}},
			{"rename", map[string]any{"name": "Partner shop"}, []any{"Partner shop", "customer", "business", float64(1000), float64(100000)}},
			{"to enterprise", map[string]any{"plan": "enterprise", "perMinute": 5, "perDay": 50}, []any{"Partner shop", "customer", "enterprise", float64(5), float64(50)}},
			{"one enterprise limit", map[string]any{"perDay": 70}, []any{"Partner shop", "customer", "enterprise", float64(5), float64(70)}},
			{"nothing", map[string]any{}, []any{"Partner shop", "customer", "enterprise", float64(5), float64(70)}},
			{"to staff", map[string]any{"role": "staff"}, []any{"Partner shop", "staff", "enterprise", float64(5), float64(70)}},
			{"back to free", map[string]any{"plan": "free", "role": "customer"}, []any{"Partner shop", "customer", "free", float64(60), float64(1000)}},
		}
		for _, p := range patches {
			t.Run("PATCH "+p.name, func(t *testing.T) {
				got := patch(p.body)
				if diff := cmp.Diff(p.want, limits(got)); diff != "" {
					t.Errorf("name, role, plan, perMinute, perDay (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(got, a.ListedKey(t, id)); diff != "" {
					t.Errorf("listed after PATCH (-answer +listed):\n%s", diff)
				}
				if diff := cmp.Diff(got, getKey(t, a, keyPath)); diff != "" {
					t.Errorf("GET after PATCH (-answer +got):\n%s", diff)
				}
			})
		}
		t.Run("the new plan is in force", func(t *testing.T) {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(t, 200)
			if got := r.Header.Get("RateLimit-Policy"); got != `"minute";q=60;w=60, "day";q=1000;w=86400` {
				t.Errorf("RateLimit-Policy = %q, want the free plan's", got)
			}
		})

		ent := func(extra map[string]any) map[string]any {
			m := map[string]any{"name": "E", "role": "customer", "plan": "enterprise"}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		run(t, a, []apiCase{
			{"enterprise without limits", "POST", "/api/keys", a.Staff, ent(nil), 422, "validation_failed", "perMinute"},
			{"enterprise without perDay", "POST", "/api/keys", a.Staff, ent(map[string]any{"perMinute": 10}), 422, "validation_failed", "perDay"},
			{"enterprise zero limit", "POST", "/api/keys", a.Staff, ent(map[string]any{"perMinute": 0, "perDay": 10}), 422, "validation_failed", "perMinute"},
			{"enterprise", "POST", "/api/keys", a.Staff, ent(map[string]any{"perMinute": 10, "perDay": 100}), 201, "", ""},
			{"limits on a fixed plan", "POST", "/api/keys", a.Staff, map[string]any{"name": "F", "role": "customer", "plan": "free", "perMinute": 10}, 422, "validation_failed", "perMinute"},
			{"unknown plan", "POST", "/api/keys", a.Staff, map[string]any{"name": "G", "role": "customer", "plan": "gold"}, 422, "validation_failed", "plan"},
			{"unknown role", "POST", "/api/keys", a.Staff, map[string]any{"name": "G", "role": "admin", "plan": "free"}, 422, "validation_failed", "role"},
			{"no name", "POST", "/api/keys", a.Staff, map[string]any{"role": "customer", "plan": "free"}, 422, "validation_failed", "name"},
			{"no plan", "POST", "/api/keys", a.Staff, map[string]any{"name": "G", "role": "customer"}, 422, "validation_failed", "plan"},
			{"limit as string", "POST", "/api/keys", a.Staff, ent(map[string]any{"perMinute": "10", "perDay": 100}), 400, "bad_request", "perMinute"},
			{"PATCH to enterprise without limits", "PATCH", keyPath, a.Staff, map[string]any{"plan": "enterprise"}, 422, "validation_failed", "perMinute"},
			{"PATCH limits on a fixed plan", "PATCH", keyPath, a.Staff, map[string]any{"perDay": 5}, 422, "validation_failed", "perDay"},
			{"PATCH negative limit", "PATCH", keyPath, a.Staff, map[string]any{"plan": "enterprise", "perMinute": -1, "perDay": 5}, 422, "validation_failed", "perMinute"},
			{"PATCH blank name", "PATCH", keyPath, a.Staff, map[string]any{"name": " "}, 422, "validation_failed", "name"},
			{"PATCH unknown field", "PATCH", keyPath, a.Staff, map[string]any{"key": "psk_x"}, 400, "bad_request", "key"},
			{"PATCH unknown key", "PATCH", "/api/keys/999999", a.Staff, map[string]any{"plan": "pro"}, 404, "not_found", ""},
			{"DELETE unknown key", "DELETE", "/api/keys/999999", a.Staff, nil, 404, "not_found", ""},
			{"GET unknown key", "GET", "/api/keys/999999", a.Staff, nil, 404, "not_found", ""},
			{"GET bad id", "GET", "/api/keys/0", a.Staff, nil, 400, "bad_request", "keyId"},
			{"GET id past int64", "GET", "/api/keys/9223372036854775808", a.Staff, nil, 400, "bad_request", "keyId"},
			{"customer reads a key", "GET", keyPath, a.Customer, nil, 403, "forbidden", ""},
			{"anonymous reads a key", "GET", keyPath, "", nil, 401, "unauthorized", ""},
			{"POST to a key", "POST", keyPath, a.Staff, map[string]any{"name": "X"}, 405, "method_not_allowed", ""},
			{"DELETE bad id", "DELETE", "/api/keys/0", a.Staff, nil, 400, "bad_request", "keyId"},
			{"lift ban of unknown key", "DELETE", "/api/keys/999999/ban", a.Staff, nil, 404, "not_found", ""},
			{"lift ban, none in force", "DELETE", keyPath + "/ban", a.Staff, nil, 204, "", ""},
			{"customer lists", "GET", "/api/keys", a.Customer, nil, 403, "forbidden", ""},
			{"customer issues", "POST", "/api/keys", a.Customer, map[string]any{"name": "X", "role": "staff", "plan": "free"}, 403, "forbidden", ""},
			{"customer patches", "PATCH", keyPath, a.Customer, map[string]any{"plan": "business"}, 403, "forbidden", ""},
			{"customer revokes", "DELETE", keyPath, a.Customer, nil, 403, "forbidden", ""},
			{"customer lifts a ban", "DELETE", keyPath + "/ban", a.Customer, nil, 403, "forbidden", ""},
			{"anonymous lists", "GET", "/api/keys", "", nil, 401, "unauthorized", ""},
			{"anonymous issues", "POST", "/api/keys", "", map[string]any{"name": "X", "role": "staff", "plan": "free"}, 401, "unauthorized", ""},
			{"revoke", "DELETE", keyPath, a.Staff, nil, 204, "", ""},
			{"revoked key is refused", "GET", "/api/pets", plain, nil, 401, "unauthorized", ""},
			{"revoked key on an open operation", "GET", "/api/openapi.json", plain, nil, 401, "unauthorized", ""},
			{"revoke again", "DELETE", keyPath, a.Staff, nil, 204, "", ""},
			{"PATCH a revoked key", "PATCH", keyPath, a.Staff, map[string]any{"name": "Renamed"}, 404, "not_found", ""},
			{"PATCH a revoked key with a bad plan", "PATCH", keyPath, a.Staff, map[string]any{"plan": "gold"}, 404, "not_found", ""},
		})
		t.Run("revoked key stays listed", func(t *testing.T) {
			listed := a.ListedKey(t, id)
			handlerstest.WantKeyFields(t, listed, "revokedAt")
			if got := listed["name"]; got == "Renamed" {
				t.Errorf("name = %v: the PATCH of the revoked key changed it", got)
			}
			if got, want := listed["revokedAt"], handlerstest.JSONTime(a.Clock.Now()); got != want {
				t.Errorf("revokedAt = %v, want %s", got, want)
			}
			if diff := cmp.Diff(listed, getKey(t, a, keyPath)); diff != "" {
				t.Errorf("GET of the revoked key (-listed +got):\n%s", diff)
			}
		})
		t.Run("banned key shows bannedUntil", func(t *testing.T) {
			_, k := a.IssueKey("banned", "customer", "free", 0, 0)
			now := a.Clock.Now()
			if err := a.Store.CreateBan(context.Background(), k.Subject(), now, now.Add(15*time.Minute)); err != nil {
				t.Fatal(err)
			}
			listed := a.ListedKey(t, float64(k.ID))
			handlerstest.WantKeyFields(t, listed, "bannedUntil")
			until := handlerstest.JSONTime(now.Add(15 * time.Minute))
			if got := listed["bannedUntil"]; got != until {
				t.Errorf("bannedUntil = %v, want %s", got, until)
			}
			if got := getKey(t, a, "/api/keys/"+handlerstest.Itoa(k.ID))["bannedUntil"]; got != until {
				t.Errorf("GET bannedUntil = %v, want %s", got, until)
			}
			r := a.Do(handlerstest.Req{Method: "PATCH", Path: "/api/keys/" + handlerstest.Itoa(k.ID), Key: a.Staff, Body: map[string]any{"name": "still banned"}}).Want(t, 200)
			var patched map[string]any
			r.Decode(t, &patched)
			if got := patched["bannedUntil"]; got != until {
				t.Errorf("PATCH answer bannedUntil = %v, want %s", got, until)
			}
			a.Do(handlerstest.Req{Method: "DELETE", Path: "/api/keys/" + handlerstest.Itoa(k.ID) + "/ban", Key: a.Staff}).Want(t, 204)
			if listed := a.ListedKey(t, float64(k.ID)); listed["bannedUntil"] != nil {
				t.Errorf("listed after lifting = %v, want no bannedUntil", listed)
			}
		})
		t.Run("keys are paged", func(t *testing.T) {
			pages := a.Pages(t, "/api/keys?limit=3", "id")
			var n int
			for i, p := range pages {
				n += len(p)
				if i < len(pages)-1 && len(p) != 3 {
					t.Errorf("page %d has %d keys, want 3", i, len(p))
				}
			}
			if n != 6 { // staff, customer, other, Partner, E, banned
				t.Errorf("%d keys over %d pages, want 6", n, len(pages))
			}
		})
	})
}

// getKey is GET path (/api/keys/{keyId}) with the staff key: 200 and an
// ApiKey.
func getKey(t *testing.T, a *handlerstest.App, path string) map[string]any {
	t.Helper()
	var k map[string]any
	a.Do(handlerstest.Req{Method: "GET", Path: path, Key: a.Staff}).Want(t, 200).Decode(t, &k)
	handlerstest.WantKeyFields(t, k)
	return k
}

// TestKeysIssuedKeyNeverStored shows an Idempotency-Key on POST /keys does
// not keep the plain key (SPEC §3: only its hash and prefix are stored, and
// it is shown once): the answer is not stored for replay, so a retry never
// shows the same plain key again.
func TestKeysIssuedKeyNeverStored(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		body := `{"name":"Partner","role":"customer","plan":"free"}`
		var first, second map[string]any
		r := a.Post("/api/keys", a.Staff, "issue-1", body).Want(t, 201)
		r.Decode(t, &first)
		plain, _ := first["key"].(string)
		var bodies [][]byte
		if err := a.Store.DB().Select(&bodies, `SELECT body FROM idempotency_keys WHERE body IS NOT NULL`); err != nil {
			t.Fatal(err)
		}
		for _, b := range bodies {
			if bytes.Contains(b, []byte(plain)) {
				t.Errorf("the plain key is stored in idempotency_keys: %s", b)
			}
		}
		r = a.Post("/api/keys", a.Staff, "issue-1", body).Want(t, 201)
		r.Decode(t, &second)
		if second["key"] == plain || bytes.Contains(r.Body, []byte(plain)) {
			t.Errorf("the plain key %q was shown twice: %s", plain, r.Body)
		}
		wantFresh(t, r)
		// Error answers hold no secret: they are kept and replayed.
		bad := `{"name":"Partner","role":"customer","plan":"gold"}`
		refused := a.Post("/api/keys", a.Staff, "issue-2", bad).Want(t, 422, "validation_failed")
		wantReplay(t, refused, a.Post("/api/keys", a.Staff, "issue-2", bad))
	})
}
