package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"petstore/db"
	"petstore/db/dbtest"
)

// These tests take PostgreSQL or Redis away from a running instance through
// a TCP proxy (proxy_test.go) and give it back, as SPEC §2, §11 and §13 ask:
// without the database the API answers 503 unavailable and /readyz fails,
// nothing is half-written, and service resumes by itself; without Redis the
// API keeps serving with in-process counting, says so in /readyz, /metrics
// and the log, and counts in Redis again once it answers (the Redis tests
// are in outage_redis_test.go).

// maxAnswer is how long any request may take while a dependency is gone.
const maxAnswer = 5 * time.Second

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
