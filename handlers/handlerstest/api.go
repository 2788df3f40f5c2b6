package handlerstest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"petstore/db"
	"petstore/handlers"
	"petstore/web/ratelimit"
)

// Create POSTs body as staff, wants 201 with Location naming the new
// resource, and returns its id.
func (a *App) Create(t *testing.T, path string, body any) int64 {
	t.Helper()
	r := a.Do(Req{Method: "POST", Path: path, Key: a.Staff, Body: body}).Want(t, 201)
	var out struct {
		ID int64 `json:"id"`
	}
	r.Decode(t, &out)
	if got, want := r.Header.Get("Location"), path+"/"+Itoa(out.ID); out.ID < 1 || got != want {
		t.Fatalf("Location = %q (id %d), want %q", got, out.ID, want)
	}
	return out.ID
}

// GetJSON GETs path with key, wants 200 and decodes the body into v.
func (a *App) GetJSON(t *testing.T, key, path string, v any) *Response {
	t.Helper()
	r := a.Do(Req{Method: "GET", Path: path, Key: key}).Want(t, 200)
	r.Decode(t, v)
	return r
}

// Stock reads a pet's inventory entry through the API.
func (a *App) stock(t *testing.T, petID int64) db.InventoryItem {
	t.Helper()
	var it db.InventoryItem
	a.GetJSON(t, a.Staff, "/api/store/inventory/"+Itoa(petID), &it)
	return it
}

// WantStock fails unless the pet's inventory entry is quantity and status.
func (a *App) WantStock(t *testing.T, petID, quantity int64, status string) {
	t.Helper()
	want := db.InventoryItem{PetID: petID, Quantity: quantity, Status: status}
	if diff := cmp.Diff(want, a.stock(t, petID)); diff != "" {
		t.Errorf("inventory of pet %d (-want +got):\n%s", petID, diff)
	}
}

// PetNames lists the names of the pets at path, in order.
func (a *App) PetNames(t *testing.T, path string) []string {
	t.Helper()
	var pets []db.Pet
	a.GetJSON(t, a.Customer, path, &pets)
	names := []string{}
	for _, p := range pets {
		names = append(names, p.Name)
	}
	return names
}

var nextRel = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// NextLink is the target of the response's Link rel="next", "" without one.
func NextLink(r *Response) string {
	for _, v := range r.Header.Values("Link") {
		if m := nextRel.FindStringSubmatch(v); m != nil {
			return m[1]
		}
	}
	return ""
}

// Pages follows Link rel="next" from path to the end and returns each
// page's values of the id field (id, or petId for inventory).
func (a *App) Pages(t *testing.T, path, idField string) [][]int64 {
	t.Helper()
	var out [][]int64
	for path != "" {
		if len(out) > 50 {
			t.Fatalf("more than 50 pages; last link %s", path)
		}
		var rows []map[string]any
		r := a.GetJSON(t, a.Staff, path, &rows)
		page := []int64{}
		for _, row := range rows {
			page = append(page, int64(row[idField].(float64)))
		}
		out = append(out, page)
		path = NextLink(r)
		if path != "" && !strings.HasPrefix(path, "/api/") {
			t.Fatalf("next link %q is not an API path", path)
		}
	}
	return out
}

// Itoa is n in decimal, for paths and names.
func Itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Post sends a POST with an Idempotency-Key.
func (a *App) Post(path, key, idemKey, body string) *Response {
	a.T.Helper()
	return a.Do(Req{Method: "POST", Path: path, Key: key, Body: body, Header: map[string]string{"Idempotency-Key": idemKey}})
}

// apiKeyFields are the fields SPEC §13 gives an ApiKey.
var apiKeyFields = []string{"createdAt", "bannedUntil", "id", "name", "perDay", "perMinute", "plan", "prefix", "revokedAt", "role"}

// WantKeyFields fails unless m has exactly the ApiKey fields that apply,
// plus extra.
func WantKeyFields(t *testing.T, m map[string]any, extra ...string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, f := range append(apiKeyFields, extra...) {
		allowed[f] = true
	}
	var got []string
	for f := range m {
		got = append(got, f)
		if !allowed[f] {
			t.Errorf("key %v has field %q, which SPEC §13 does not give it", m["id"], f)
		}
	}
	for _, f := range append([]string{"id", "name", "prefix", "role", "plan", "perMinute", "perDay", "createdAt"}, extra...) {
		if _, ok := m[f]; !ok {
			sort.Strings(got)
			t.Errorf("key %v lacks %q; has %v", m["id"], f, got)
		}
	}
}

// ListedKey finds key id in GET /keys, failing when absent.
func (a *App) ListedKey(t *testing.T, id float64) map[string]any {
	t.Helper()
	r := a.Do(Req{Method: "GET", Path: "/api/keys?limit=100", Key: a.Staff}).Want(t, 200)
	var keys []map[string]any
	r.Decode(t, &keys)
	for _, k := range keys {
		WantKeyFields(t, k)
		if k["id"] == id {
			return k
		}
	}
	t.Fatalf("key %v not listed in %s", id, r.Body)
	return nil
}

// Hammer sends allowed requests that must pass, then limited ones that
// must be 429.
func (a *App) Hammer(t *testing.T, key string, allowed, limited int) {
	t.Helper()
	for range allowed {
		a.Do(Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 200)
	}
	for range limited {
		a.Do(Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 429, "rate_limited")
	}
}

// WantBanned fails unless the key's next request is 403 api_key_banned
// with Retry-After retry.
func (a *App) WantBanned(t *testing.T, key, retry string) {
	t.Helper()
	r := a.Do(Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 403, "api_key_banned")
	if got := r.Header.Get("Retry-After"); got != retry {
		t.Fatalf("Retry-After = %q, want %q", got, retry)
	}
}

// Usage is GET /keys/{id}/usage as staff.
func (a *App) Usage(t *testing.T, id int64) map[string]any {
	t.Helper()
	var u map[string]any
	a.GetJSON(t, a.Staff, "/api/keys/"+Itoa(id)+"/usage", &u)
	return u
}

// WithCounters makes the app count in s instead of a fresh in-process store.
func WithCounters(s ratelimit.Store) Option {
	return func(_ *handlers.Handler, c *ratelimit.Config) { c.Store = s }
}

// WithProxies sets the trusted proxies (TRUSTED_PROXIES).
func WithProxies(t *testing.T, list string) Option {
	t.Helper()
	p, err := ratelimit.ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return func(h *handlers.Handler, _ *ratelimit.Config) { h.Proxies = p }
}

var redisPrefixes atomic.Int64

// CounterStores runs fn once per rate-limit counter store: in process, and
// Redis when PETSTORE_TEST_REDIS_URL is set (required in CI). fresh returns
// an empty store each time it is called.
func CounterStores(t *testing.T, fn func(t *testing.T, fresh func() ratelimit.Store)) {
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
			prefix := fmt.Sprintf("petstore-handlers-test:%d:%s:%d:", os.Getpid(), rand.Text(), redisPrefixes.Add(1))
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

// RateStatus is GET /rate-limit's body.
func (a *App) RateStatus(t *testing.T, key string) map[string]any {
	t.Helper()
	var m map[string]any
	a.GetJSON(t, key, "/api/rate-limit", &m)
	return m
}

// PlaceOrder POSTs an order with key, wants 201 with Location and returns
// the order's id.
func (a *App) PlaceOrder(t *testing.T, key string, body map[string]any) int64 {
	t.Helper()
	r := a.Do(Req{Method: "POST", Path: "/api/store/orders", Key: key, Body: body}).Want(t, 201)
	var o db.Order
	r.Decode(t, &o)
	if got, want := r.Header.Get("Location"), "/api/store/orders/"+Itoa(o.ID); o.ID < 1 || got != want {
		t.Fatalf("Location = %q (id %d), want %q", got, o.ID, want)
	}
	return o.ID
}

// OrderIDs lists the ids of the orders at path as key sees them.
func (a *App) OrderIDs(t *testing.T, key, path string) []int64 {
	t.Helper()
	var os []db.Order
	a.GetJSON(t, key, path, &os)
	ids := []int64{}
	for _, o := range os {
		ids = append(ids, o.ID)
	}
	return ids
}
