package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"

	"petstore/db"
	"petstore/db/dbtest"
)

// These tests take PostgreSQL or Redis away from a running instance through
// a TCP proxy (proxy_test.go) and give it back, as SPEC §2, §11 and §13 ask:
// without the database the API answers 503 unavailable and /readyz fails,
// nothing is half-written, and service resumes by itself; without Redis the
// API keeps serving with in-process counting, says so in /readyz, /metrics
// and the log, and counts in Redis again once it answers.

// maxAnswer is how long any request may take while a dependency is gone.
const maxAnswer = 5 * time.Second

// startBehindRedisProxy starts one instance on a fresh SQLite file that
// reaches the test Redis through a proxy the test can cut or stall, cut
// from the start when cut is set, with counters of its own in Redis. It
// returns the instance, the proxy and a client of Redis itself.
func startBehindRedisProxy(t *testing.T, cut bool) (*node, *tcpProxy, *redis.Client) {
	t.Helper()
	redisURL := requireRedis(t)
	proxied, proxy := viaProxy(t, redisURL)
	if cut {
		proxy.Cut()
	}
	rc := redisClient(t, redisURL)
	cfg := testConfig(t, map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "store.db"),
		"REDIS_URL":    proxied,
		"SESSION_KEYS": testSessionKey,
	})
	cfg.RedisPrefix = redisPrefix(t, rc)
	return startNode(t, "A", cfg, nil, nil), proxy, rc
}

// viaProxy returns rawURL with its host replaced by a proxy to that host.
func viaProxy(t *testing.T, rawURL string) (string, *tcpProxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// orderResult is what one client saw of one order.
type orderResult struct {
	status  int
	code    string
	id      int64
	err     error
	elapsed time.Duration
}

// TestPostgresOutage cuts PostgreSQL away while orders are being placed,
// then brings it back.
func TestPostgresOutage(t *testing.T) {
	direct := dbtest.PostgresURL(t)
	proxied, proxy := viaProxy(t, direct)
	// Connections to the proxy are refused outright while it is cut; the
	// timeout covers a database that accepts and never answers.
	proxied += "&connect_timeout=3"
	cfg := testConfig(t, map[string]string{"DATABASE_URL": proxied, "SESSION_KEYS": testSessionKey})
	n := startNode(t, "A", cfg, nil, nil)
	staff, _ := issueKey(t, n.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	c := newClient(t)
	c.Timeout = 2 * maxAnswer
	const stock = 100_000
	pet := seedPet(t, c, n, staff, stock)

	// Orders flow from four clients for the whole test.
	var (
		mu      sync.Mutex
		results []orderResult
	)
	stopOrders := untilStopped(4, func() bool {
		began := time.Now()
		ans := call(c, "POST", n.base+"/api/store/orders", staff, map[string]any{"petId": pet.ID, "quantity": 1})
		r := orderResult{status: ans.status, err: ans.err, elapsed: time.Since(began)}
		var body struct {
			ID   int64  `json:"id"`
			Code string `json:"code"`
		}
		_ = json.Unmarshal(ans.body, &body)
		r.id, r.code = body.ID, body.Code
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		return true
	})
	time.Sleep(300 * time.Millisecond)

	proxy.Cut()
	cutAt := time.Now()
	t.Log("PostgreSQL cut")
	time.Sleep(300 * time.Millisecond) // let the order clients run into it
	for _, path := range []string{"/api/pets", "/api/categories", fmt.Sprintf("/api/store/inventory/%d", pet.ID)} {
		began := time.Now()
		ans := call(c, "GET", n.base+path, staff, nil)
		if ans.err != nil {
			t.Fatalf("GET %s during the outage: %v", path, ans.err)
		}
		if ans.status != http.StatusServiceUnavailable {
			t.Fatalf("GET %s during the outage: %d, want 503: %s", path, ans.status, ans.body)
		}
		if p := ans.problem(t); p.Code != "unavailable" {
			t.Errorf("GET %s during the outage: code %s, want unavailable", path, p.Code)
		}
		if ra, err := strconv.Atoi(ans.header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("GET %s during the outage: Retry-After = %q", path, ans.header.Get("Retry-After"))
		}
		if d := time.Since(began); d > maxAnswer {
			t.Errorf("GET %s during the outage took %s", path, d)
		}
	}
	if status, r := ready(t, c, n); status != 503 || r.Database != "down" {
		t.Errorf("/readyz during the outage: %d %+v, want 503, database down", status, r)
	}
	call(c, "GET", n.base+"/healthz", "", nil).must(t, 200, nil) // alive, just not ready
	time.Sleep(time.Second)

	proxy.Restore()
	t.Logf("PostgreSQL back after %s", time.Since(cutAt).Round(time.Millisecond))
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _ := ready(t, c, n)
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not return to 200 within 15 s of PostgreSQL coming back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	call(c, "GET", n.base+"/api/pets", staff, nil).must(t, 200, nil)
	time.Sleep(300 * time.Millisecond) // orders flow again
	stopOrders()

	// Every answer was 201 or 503, quick, and orders succeed again.
	counts := map[int]int{}
	var accepted []int64
	var slowest time.Duration
	for _, r := range results {
		if r.err != nil {
			t.Errorf("an order got no answer: %v", r.err)
			continue
		}
		counts[r.status]++
		slowest = max(slowest, r.elapsed)
		switch r.status {
		case 201:
			accepted = append(accepted, r.id)
		case 503:
			if r.code != "unavailable" {
				t.Errorf("503 with code %q", r.code)
			}
		default:
			t.Errorf("an order got %d %s", r.status, r.code)
		}
	}
	t.Logf("order answers %v, slowest %s", counts, slowest.Round(time.Millisecond))
	if slowest > maxAnswer {
		t.Errorf("an order took %s to answer", slowest)
	}
	if counts[503] == 0 || counts[201] == 0 {
		t.Fatalf("answers %v: the outage did not meet the orders", counts)
	}
	if last := results[len(results)-1]; last.status != 201 {
		t.Errorf("the last order after recovery got %d %s", last.status, last.code)
	}

	// Nothing half-written: the stock, the orders and their events agree,
	// and every order a client was told about exists.
	x, err := sqlx.Open("postgres", direct)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var left, ordered, orders, events int64
	q := func(dst *int64, query string, args ...any) {
		if err := x.Get(dst, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	q(&left, `SELECT quantity FROM inventory WHERE pet_id = $1`, pet.ID)
	q(&ordered, `SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE pet_id = $1`, pet.ID)
	q(&orders, `SELECT COUNT(*) FROM orders WHERE pet_id = $1`, pet.ID)
	q(&events, `SELECT COUNT(*) FROM events WHERE type = 'order.created'`)
	if left+ordered != stock {
		t.Errorf("stock %d + ordered %d = %d, want %d", left, ordered, left+ordered, stock)
	}
	if events != orders {
		t.Errorf("%d orders but %d order.created events", orders, events)
	}
	if orders < int64(len(accepted)) {
		t.Errorf("%d orders stored, but %d were confirmed with 201", orders, len(accepted))
	}
	for _, id := range accepted {
		var found int64
		q(&found, `SELECT COUNT(*) FROM orders WHERE id = $1`, id)
		if found != 1 {
			t.Errorf("order %d was confirmed but is not stored", id)
		}
	}
	t.Logf("%d orders stored (%d confirmed, %d in flight at the cut), stock %d", orders, len(accepted), orders-int64(len(accepted)), left)
}

// TestPostgresStall makes PostgreSQL accept connections and never answer
// (a hung server, or a balancer with nothing behind it). DATABASE_URL sets
// no connect_timeout: db.Open's default bounds the wait, so requests get
// 503 unavailable in seconds instead of hanging, and service resumes when
// the database answers again.
func TestPostgresStall(t *testing.T) {
	proxied, proxy := viaProxy(t, dbtest.PostgresURL(t))
	cfg := testConfig(t, map[string]string{"DATABASE_URL": proxied, "SESSION_KEYS": testSessionKey})
	n := startNode(t, "A", cfg, nil, nil)
	staff, _ := issueKey(t, n.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	c := newClient(t)
	c.Timeout = 30 * time.Second
	call(c, "GET", n.base+"/api/pets", staff, nil).must(t, 200, nil)

	proxy.Stall()
	const bound = 9 * time.Second // the 5 s default plus room for a loaded machine
	var wg sync.WaitGroup
	for _, path := range []string{"/api/pets", "/readyz"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			ans := call(c, "GET", n.base+path, staff, nil)
			took := time.Since(began)
			switch {
			case ans.err != nil:
				t.Errorf("GET %s while PostgreSQL hangs: %v after %s", path, ans.err, took.Round(time.Millisecond))
			case ans.status != http.StatusServiceUnavailable:
				t.Errorf("GET %s while PostgreSQL hangs: %d, want 503: %s", path, ans.status, ans.body)
			case took > bound:
				t.Errorf("GET %s while PostgreSQL hangs took %s, want at most %s", path, took, bound)
			default:
				t.Logf("GET %s while PostgreSQL hangs: 503 after %s", path, took.Round(time.Millisecond))
			}
		}()
	}
	wg.Wait()

	proxy.Restore()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if status, _ := ready(t, c, n); status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not return to 200 within 15 s of PostgreSQL answering again")
		}
		time.Sleep(100 * time.Millisecond)
	}
	call(c, "GET", n.base+"/api/pets", staff, nil).must(t, 200, nil)
}

// TestRedisOutage cuts Redis away from a serving instance, then brings it
// back.
func TestRedisOutage(t *testing.T) {
	n, proxy, rc := startBehindRedisProxy(t, false)
	key, k := issueKey(t, n.srv.Store, "reader", db.RoleCustomer, 1000, 100_000)
	small, _ := issueKey(t, n.srv.Store, "small", db.RoleCustomer, 3, 100_000)
	c := newClient(t)
	ctx := context.Background()

	// counted reads this minute's shared counter of the key.
	counted := func() (int64, string) {
		name := fmt.Sprintf("%s{%s}:m:%d", n.cfg.RedisPrefix, k.Subject(), n.clock.Now().Unix()/60)
		v, err := rc.Get(ctx, name).Int64()
		if err != nil {
			return 0, name
		}
		return v, name
	}
	call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
	if v, name := counted(); v < 1 {
		t.Fatalf("before the outage %s = %d: decisions do not land in Redis", name, v)
	}

	proxy.Cut()
	t.Log("Redis cut")
	for i := range 5 {
		began := time.Now()
		ans := call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"} {
			if ans.header.Get(h) == "" {
				t.Errorf("request %d during the outage lacks %s", i, h)
			}
		}
		if d := time.Since(began); d > maxAnswer {
			t.Errorf("request %d during the outage took %s", i, d)
		}
	}
	// In-process counting still limits: the small key gets 3, then 429
	// (in one minute window: the instance's clock is pinned).
	var got []int
	for range 4 {
		got = append(got, call(c, "GET", n.base+"/api/categories", small, nil).status)
	}
	if fmt.Sprint(got) != "[200 200 200 429]" {
		t.Errorf("small key during the outage: %v, want the fourth refused", got)
	}
	status, r := ready(t, c, n)
	if status != 200 || r.Database != "up" || !strings.HasPrefix(r.Redis, "down") {
		t.Errorf("/readyz during the outage: %d %+v, want 200 with redis down", status, r)
	}
	if f := metric(t, c, n, "petstore_ratelimit_redis_fallbacks_total"); f < 1 {
		t.Errorf("petstore_ratelimit_redis_fallbacks_total = %v during the outage", f)
	}
	if up := metric(t, c, n, "petstore_ratelimit_redis_up"); up != 0 {
		t.Errorf("petstore_ratelimit_redis_up = %v during the outage", up)
	}
	if !logHas(n.logs.String(), "WARN", "REDIS_URL") {
		t.Errorf("no warning naming REDIS_URL was logged:\n%s", lastLines(n.logs.String(), 20))
	}

	proxy.Restore()
	t.Log("Redis back")
	before, name := counted()
	deadline := time.Now().Add(10 * time.Second)
	for {
		call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		after, name2 := counted()
		if name2 == name && after > before {
			break // a decision landed in Redis again
		}
		before, name = after, name2
		if time.Now().After(deadline) {
			t.Fatal("decisions did not land in Redis within 10 s of it coming back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, r := ready(t, c, n); status != 200 || r.Redis != "up" {
		t.Errorf("/readyz after Redis came back: %d %+v", status, r)
	}
	if up := metric(t, c, n, "petstore_ratelimit_redis_up"); up != 1 {
		t.Errorf("petstore_ratelimit_redis_up = %v after Redis came back", up)
	}
}

// TestRedisStall makes Redis accept connections and never answer: a
// request is held 4.5s at most (until a PING goes unanswered after 3s of
// silence, not the longer wait granted to calls queueing behind a Redis
// that answers), later ones not at all, and counting resumes in Redis when
// it answers again.
func TestRedisStall(t *testing.T) {
	n, proxy, _ := startBehindRedisProxy(t, false)
	key, _ := issueKey(t, n.srv.Store, "reader", db.RoleCustomer, 1000, 100_000)
	c := newClient(t)
	call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)

	proxy.Stall()
	var slowest, last time.Duration
	for i := 0; i < 10; i++ {
		began := time.Now()
		call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		last = time.Since(began)
		slowest = max(slowest, last)
		time.Sleep(200 * time.Millisecond) // let probes come due
	}
	t.Logf("slowest request while Redis hangs: %s, last %s", slowest.Round(time.Millisecond), last.Round(time.Millisecond))
	if slowest > maxAnswer+time.Second { // 4.5s and room for a loaded machine
		t.Errorf("a request was held %s while Redis hangs", slowest)
	}
	if last > time.Second {
		t.Errorf("a request was held %s after the outage was found", last)
	}
	if status, r := ready(t, c, n); status != 200 || !strings.HasPrefix(r.Redis, "down") {
		t.Errorf("/readyz while Redis hangs: %d %+v", status, r)
	}

	proxy.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for {
		call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		if _, r := ready(t, c, n); r.Redis == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Redis not back in /readyz within 10 s of answering again")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
