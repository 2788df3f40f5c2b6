package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"petstore/db"
	"petstore/db/dbtest"
)

// The harness of the multi-instance and outage tests: real instances built
// by NewServer on loopback ports, a fresh PostgreSQL schema and Redis key
// prefix per test, and an HTTP client to talk to them.

// testSessionKey is the SESSION_KEYS both instances share.
const testSessionKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// requireRedis returns PETSTORE_TEST_REDIS_URL, skipping the test when it
// is unset (failing it in CI, where Redis is required).
func requireRedis(t *testing.T) string {
	t.Helper()
	u := os.Getenv("PETSTORE_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PETSTORE_TEST_REDIS_URL is not set; CI requires the multi-instance tests")
		}
		t.Skip("PETSTORE_TEST_REDIS_URL not set (e.g. redis://127.0.0.1:6379/0): skipping")
	}
	return u
}

var redisPrefixes atomic.Int64

// redisPrefix returns a counter key prefix no other test or run uses: key
// ids restart in every fresh schema, so "key:1" must not meet the counts of
// an earlier test's "key:1". Its keys are deleted when the test ends.
func redisPrefix(t *testing.T, c *redis.Client) string {
	prefix := fmt.Sprintf("petstore-test:%d:%d:%d:", os.Getpid(), time.Now().UnixNano(), redisPrefixes.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		keys, err := c.Keys(ctx, prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			err = c.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Logf("clean up %s*: %v", prefix, err)
		}
	})
	return prefix
}

// redisClient connects to url for checks the test makes itself.
func redisClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("redis URL %q: %v", url, err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis %s: %v", url, err)
	}
	return c
}

// testConfig builds the configuration the way main does, from variables.
func testConfig(t *testing.T, env map[string]string) *Config {
	t.Helper()
	cfg, err := LoadConfig(func(k string) string { return withTestSecretKeys(env)[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// syncBuffer collects a server's log lines for the test to read.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// node is one running instance.
type node struct {
	name  string
	cfg   *Config
	srv   *Server
	base  string
	logs  *syncBuffer
	clock *dbtest.Clock // the instance's clock, pinned (shared by a pair)
}

// startNode builds an instance with NewServer on clock (a new pinned one
// when nil), lets tune adjust it before it serves, and serves it on its
// own loopback port until the test ends.
func startNode(t *testing.T, name string, cfg *Config, clock *dbtest.Clock, tune func(*Server)) *node {
	t.Helper()
	if clock == nil {
		clock = dbtest.NewClock(t)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("instance", name)
	srv, err := NewServer(context.Background(), cfg, logger, clock.Now)
	if err != nil {
		t.Fatalf("%s: NewServer: %v", name, err)
	}
	if tune != nil {
		tune(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	n := &node{name: name, cfg: cfg, srv: srv, base: "http://" + ln.Addr().String(), logs: logs, clock: clock}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: serve: %v", name, err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s: did not shut down within 15 s", name)
		}
		srv.Close()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, lastLines(logs.String(), 40))
		}
	})
	return n
}

// startPair runs two instances with the same configuration: a fresh
// PostgreSQL schema, the test Redis under a fresh key prefix, the same
// session keys and one pinned clock (as the instances of a deployment
// share the time of day), plus env.
func startPair(t *testing.T, env map[string]string) (a, b *node) {
	t.Helper()
	redisURL := requireRedis(t)
	vars := map[string]string{
		"DATABASE_URL": dbtest.PostgresURL(t),
		"REDIS_URL":    redisURL,
		"SESSION_KEYS": testSessionKey,
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg := testConfig(t, vars)
	cfg.RedisPrefix = redisPrefix(t, redisClient(t, redisURL))
	clock := dbtest.NewClock(t)
	a = startNode(t, "A", cfg, clock, nil)
	b = startNode(t, "B", cfg, clock, nil)
	return a, b
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// issueKey makes an API key straight in the database and returns it.
func issueKey(t *testing.T, store *db.Store, name, role string, perMinute, perDay int64) (string, *db.APIKey) {
	t.Helper()
	plan := db.PlanEnterprise
	k, plain, err := store.CreateAPIKey(context.Background(), db.NewAPIKey{
		Name: &name, Role: &role, Plan: &plan, PerMinute: &perMinute, PerDay: &perDay,
	})
	if err != nil {
		t.Fatalf("issue key: %v", err)
	}
	return plain, k
}

// answer is one HTTP exchange, or the error that stopped it.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// problem is the Error object of SPEC §2.
type problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

// newClient is an HTTP client that keeps plenty of connections per
// instance and closes them when the test ends, before the servers stop.
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 512}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// call sends one API request; it is safe from any goroutine.
func call(c *http.Client, method, url, key string, body any) answer {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{err: err}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	res, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: out, err: err}
}

// must fails the test unless the exchange worked and had the status; it
// decodes the body into v when v is not nil.
func (a answer) must(t *testing.T, status int, v any) answer {
	t.Helper()
	if a.err != nil {
		t.Fatalf("request failed: %v", a.err)
	}
	if a.status != status {
		t.Fatalf("status = %d, want %d; body: %s", a.status, status, a.body)
	}
	if v != nil {
		if err := json.Unmarshal(a.body, v); err != nil {
			t.Fatalf("decode %s: %v", a.body, err)
		}
	}
	return a
}

// problem decodes the Error object and checks its status field.
func (a answer) problem(t *testing.T) problem {
	t.Helper()
	var p problem
	if err := json.Unmarshal(a.body, &p); err != nil {
		t.Fatalf("not an Error object (%d): %s", a.status, a.body)
	}
	if p.Status != a.status || p.Code == "" || p.Message == "" {
		t.Fatalf("Error object %+v does not match status %d", p, a.status)
	}
	return p
}

// seedPet creates a category and a pet with stock through the API of n.
func seedPet(t *testing.T, c *http.Client, n *node, staff string, stock int64) db.Pet {
	t.Helper()
	var cat db.Category
	call(c, "POST", n.base+"/api/categories", staff, map[string]any{"name": "Cats"}).must(t, 201, &cat)
	var pet db.Pet
	call(c, "POST", n.base+"/api/pets", staff, map[string]any{"name": "Tom", "categoryId": cat.ID}).must(t, 201, &pet)
	call(c, "PUT", fmt.Sprintf("%s/api/store/inventory/%d", n.base, pet.ID), staff, map[string]any{"quantity": stock}).must(t, 200, nil)
	return pet
}

// burst sends n GET requests at once, the i-th to url(i), and returns the
// answers in order.
func burst(c *http.Client, n int, url func(i int) string, key string) []answer {
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = call(c, "GET", url(i), key, nil)
		}()
	}
	close(start)
	wg.Wait()
	return answers
}

// metric reads one sample of n's /metrics (0 when absent).
func metric(t *testing.T, c *http.Client, n *node, sample string) float64 {
	t.Helper()
	ans := call(c, "GET", n.base+"/metrics", "", nil).must(t, 200, nil)
	for _, line := range strings.Split(string(ans.body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric %s: %q", sample, line)
			}
			return f
		}
	}
	return 0
}

// readiness is the body of /readyz.
type readiness struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	Redis    string `json:"redis"`
}

// ready asks n's /readyz for its status and body.
func ready(t *testing.T, c *http.Client, n *node) (int, readiness) {
	t.Helper()
	ans := call(c, "GET", n.base+"/readyz", "", nil)
	if ans.err != nil {
		t.Fatalf("/readyz: %v", ans.err)
	}
	var r readiness
	if err := json.Unmarshal(ans.body, &r); err != nil {
		t.Fatalf("/readyz body %s: %v", ans.body, err)
	}
	return ans.status, r
}

// logHas reports whether a JSON log line of that level mentions s.
func logHas(logs, level, s string) bool {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"`+level+`"`) && strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// withTestSecretKeys is env with PETSTORE_SECRET_KEYS set to the test
// process's key (dbtest.SecretKey) unless it sets one, as serve would have
// one from var/: a test server seals and opens secrets like the stores
// dbtest opens.
func withTestSecretKeys(env map[string]string) map[string]string {
	if _, ok := env["PETSTORE_SECRET_KEYS"]; ok {
		return env
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out["PETSTORE_SECRET_KEYS"] = dbtest.SecretKey()
	return out
}
