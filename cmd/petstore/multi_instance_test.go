package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// These tests run two instances in one process against one PostgreSQL
// schema and one Redis, talking real HTTP, as SPEC §12 asks: limits exact
// across both, no oversell, a session from one valid on the other, an event
// written on one streamed by the other, a ban set on one enforced by both.
// They skip without PETSTORE_TEST_POSTGRES_URL and PETSTORE_TEST_REDIS_URL,
// and fail instead when CI=true.

// TestMultiInstanceRateLimitExact sends 1,000 concurrent requests, split
// over two instances, for a key allowed 100 a minute: exactly 100 pass,
// because every decision is one atomic script in the shared Redis.
func TestMultiInstanceRateLimitExact(t *testing.T) {
	// Strikes would turn the 900 refusals into a ban (403): this test is
	// about counting alone.
	a, b := startPair(t, map[string]string{"PETSTORE_BAN_STRIKES": "1000000"})
	c := newClient(t)
	// The instances' clock is pinned: the burst counts into one minute
	// window however long it takes.
	key, k := issueKey(t, a.srv.Store, "limited", db.RoleCustomer, 100, 1_000_000)
	minute := a.clock.Now().Truncate(time.Minute)
	// One request through each instance first: both count into the same
	// window, and neither meets the burst with cold caches and
	// connections, which would let the other take every unit.
	for _, n := range []*node{a, b} {
		if ans := call(c, "GET", n.base+"/api/categories?limit=1", key, nil); ans.err != nil || ans.status != 200 {
			t.Fatalf("warm-up on %s: %d %v", n.name, ans.status, ans.err)
		}
	}
	began := time.Now()
	answers := burst(c, 1000, func(i int) string { return []*node{a, b}[i%2].base + "/api/categories?limit=1" }, key)
	t.Logf("1000 requests in %s", time.Since(began).Round(time.Millisecond))

	passed := map[string]int{}
	statuses := map[int]int{}
	for i, ans := range answers {
		if ans.err != nil {
			t.Fatalf("request %d: %v", i, ans.err)
		}
		statuses[ans.status]++
		if ans.status != http.StatusTooManyRequests {
			passed[[]string{"A", "B"}[i%2]]++
		}
		if ans.status != 200 && ans.status != 429 {
			t.Errorf("request %d: status %d: %s", i, ans.status, ans.body)
		}
		if ans.header.Get("X-RateLimit-Limit-Minute") != "100" {
			t.Errorf("request %d: X-RateLimit-Limit-Minute = %q", i, ans.header.Get("X-RateLimit-Limit-Minute"))
		}
	}
	t.Logf("statuses %v; passed per instance %v", statuses, passed)
	for _, n := range []*node{a, b} {
		// A decision counted in process is invisible to the other instance.
		if f := metric(t, c, n, "petstore_ratelimit_redis_fallbacks_total"); f != 0 {
			t.Errorf("%s counted %v decisions in process: Redis was taken for down under load", n.name, f)
			for _, line := range strings.Split(n.logs.String(), "\n") {
				if strings.Contains(line, "rate-limit counters") {
					t.Log(line) // why: an outage, or calls past the longest wait
				}
			}
		}
	}
	// The two warm-up requests used two of the 100 units.
	if got := passed["A"] + passed["B"]; got != 98 {
		t.Fatalf("%d burst requests passed, want exactly 98 (100 less the warm-up)", got)
	}
	// The shared counter agrees, and both instances now refuse.
	rc := redisClient(t, requireRedis(t))
	counter := fmt.Sprintf("%s{%s}:m:%d", a.cfg.RedisPrefix, k.Subject(), minute.Unix()/60)
	if got, err := rc.Get(context.Background(), counter).Result(); err != nil || got != "100" {
		t.Errorf("Redis %s = %q (%v), want 100", counter, got, err)
	}
	for _, n := range []*node{a, b} {
		ans := call(c, "GET", n.base+"/api/categories", key, nil)
		if ans.status != 429 {
			t.Errorf("%s after the burst: %d, want 429", n.name, ans.status)
		}
	}
}

// TestMultiInstanceNoOversell places 200 parallel orders of one against a
// stock of 50 through both instances: exactly 50 are accepted and the
// stock ends at 0, because each order locks the pet's row in one
// PostgreSQL transaction.
func TestMultiInstanceNoOversell(t *testing.T) {
	a, b := startPair(t, nil)
	staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	buyer, _ := issueKey(t, a.srv.Store, "buyer", db.RoleCustomer, 1_000_000, 10_000_000)
	c := newClient(t)
	pet := seedPet(t, c, a, staff, 50)

	const n = 200
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		node := []*node{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = call(c, "POST", node.base+"/api/store/orders", buyer, map[string]any{"petId": pet.ID, "quantity": 1})
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d orders in %s", n, time.Since(began).Round(time.Millisecond))

	codes := map[string]int{}
	for i, ans := range answers {
		if ans.err != nil {
			t.Fatalf("order %d: %v", i, ans.err)
		}
		switch ans.status {
		case 201:
			codes["201"]++
		case 409:
			codes[ans.problem(t).Code]++
		default:
			t.Errorf("order %d: status %d: %s", i, ans.status, ans.body)
		}
	}
	t.Logf("answers: %v", codes)
	if codes["201"] != 50 {
		t.Fatalf("%d orders accepted, want exactly 50 (answers %v)", codes["201"], codes)
	}
	if codes["insufficient_stock"]+codes["pet_not_available"] != n-50 {
		t.Errorf("refusals %v, want %d insufficient_stock or pet_not_available", codes, n-50)
	}
	for _, node := range []*node{a, b} {
		var it db.InventoryItem
		call(c, "GET", fmt.Sprintf("%s/api/store/inventory/%d", node.base, pet.ID), staff, nil).must(t, 200, &it)
		if it.Quantity != 0 || it.Status != db.StatusPending {
			t.Errorf("%s: inventory %+v, want quantity 0, pending", node.name, it)
		}
	}
	var orders []db.Order
	call(c, "GET", fmt.Sprintf("%s/api/store/orders?petId=%d&limit=100", b.base, pet.ID), staff, nil).must(t, 200, &orders)
	if len(orders) != 50 {
		t.Errorf("%d orders stored, want 50", len(orders))
	}
}

// TestMultiInstanceEvents opens the event stream on B and creates a pet
// through A: B streams pet.created, woken by PostgreSQL's NOTIFY (B's
// safety-net poll is turned off, so only the notification can deliver it).
func TestMultiInstanceEvents(t *testing.T) {
	redisURL := requireRedis(t)
	cfg := testConfig(t, map[string]string{
		"DATABASE_URL": dbtest.PostgresURL(t), "REDIS_URL": redisURL, "SESSION_KEYS": testSessionKey,
	})
	cfg.RedisPrefix = redisPrefix(t, redisClient(t, redisURL))
	clock := dbtest.NewClock(t)
	a := startNode(t, "A", cfg, clock, nil)
	b := startNode(t, "B", cfg, clock, func(s *Server) { s.Hub.PollInterval = time.Hour })
	staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	c := newClient(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/api/events", nil)
	req.Header.Set("X-API-Key", staff)
	res, err := (&http.Client{Transport: c.Transport}).Do(req) // no timeout: a stream
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /api/events on B: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	type sse struct{ event, data string }
	got := make(chan sse, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event:"):
				ev.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.data = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			case line == "" && ev.event != "":
				got <- ev
				ev = sse{}
			}
		}
		close(got)
	}()

	var cat db.Category
	call(c, "POST", a.base+"/api/categories", staff, map[string]any{"name": "Birds"}).must(t, 201, &cat)
	sent := time.Now()
	var pet db.Pet
	call(c, "POST", a.base+"/api/pets", staff, map[string]any{"name": "Tweety", "categoryId": cat.ID}).must(t, 201, &pet)
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatal("B's stream ended before pet.created arrived")
			}
			if ev.event != "pet.created" {
				continue
			}
			var p db.Pet
			if err := json.Unmarshal([]byte(ev.data), &p); err != nil || p.ID != pet.ID || p.Name != "Tweety" {
				t.Fatalf("pet.created data = %s, want pet %d Tweety", ev.data, pet.ID)
			}
			t.Logf("pet.created written via A reached B's stream in %s", time.Since(sent).Round(time.Millisecond))
			return
		case <-timeout:
			t.Fatal("pet.created written via A did not reach B's stream within 5 s")
		}
	}
}

// TestMultiInstanceBans drives a key into a ban through A; B refuses it
// with 403 api_key_banned too, because bans live in PostgreSQL.
func TestMultiInstanceBans(t *testing.T) {
	a, b := startPair(t, map[string]string{"PETSTORE_BAN_STRIKES": "3"})
	key, _ := issueKey(t, a.srv.Store, "noisy", db.RoleCustomer, 5, 1_000_000)
	c := newClient(t)

	// B has seen the key unbanned, and may trust that for a second of its
	// clock (BanCacheTTL).
	call(c, "GET", b.base+"/api/categories", key, nil).must(t, 200, nil)
	banThrough(t, c, a, key)
	a.clock.Add(time.Second) // the pair's pinned clock: past B's ban cache
	deadline := time.Now().Add(5 * time.Second)
	for {
		ans := call(c, "GET", b.base+"/api/categories", key, nil)
		if ans.status == 403 {
			if p := ans.problem(t); p.Code != "api_key_banned" {
				t.Fatalf("B: 403 %s, want api_key_banned", p.Code)
			}
			if ans.header.Get("Retry-After") == "" {
				t.Error("B's 403 has no Retry-After")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still answers %d 5 s after A banned the key: %s", ans.status, ans.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var st struct {
		Banned bool `json:"banned"`
	}
	call(c, "GET", b.base+"/api/rate-limit", key, nil).must(t, 200, &st)
	if !st.Banned {
		t.Error("B's GET /api/rate-limit says banned: false")
	}
}

// TestMultiInstanceConcurrentStart migrates one empty database from three
// instances at the same moment, as a deploy starting them together does
// (NewServer opens the store, then migrates): every one succeeds.
func TestMultiInstanceConcurrentStart(t *testing.T) {
	ctx := context.Background()
	for round := range 3 {
		dsn := dbtest.PostgresURL(t)
		stores := make([]*db.Store, 3)
		for i := range stores {
			s, err := db.Open(ctx, dsn, dbtest.NewClock(t).Now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s
		}
		errs := make([]error, len(stores))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = s.Migrate(ctx)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: instance %d could not migrate: %v", round, i, err)
			}
		}
	}
}
