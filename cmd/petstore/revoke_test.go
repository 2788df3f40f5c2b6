package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// Revocation, key changes, bans and sign-outs apply on the very next
// request on every instance (SPEC §3, §6, §10), whichever instance or
// process made them: two instances share one database (PostgreSQL, or one
// SQLite file as two processes on one host would) and the test Redis.

// eachPair runs fn, on each database, with two instances A and B that share
// it. The database runs are parallel: the stream tests mostly wait.
func eachPair(t *testing.T, env map[string]string, fn func(t *testing.T, a, b *node)) {
	for _, dialect := range []string{db.DialectSQLite, db.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			redisURL := requireRedis(t)
			dbURL := dbtest.SQLiteURL(t)
			if dialect == db.DialectPostgres {
				dbURL = dbtest.PostgresURL(t)
			}
			vars := map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "SESSION_KEYS": testSessionKey}
			for k, v := range env {
				vars[k] = v
			}
			cfg := testConfig(t, vars)
			cfg.RedisPrefix = redisPrefix(t, redisClient(t, redisURL))
			clock := dbtest.NewClock(t) // one clock for both, as cmd hands one to each part
			a := startNode(t, "A", cfg, clock, nil)
			b := startNode(t, "B", cfg, clock, nil)
			fn(t, a, b)
		})
	}
}

// TestMultiInstanceKeyChanges: B has just served a key (and may cache it);
// a plan change made on A shows in B's very next response, and a revoke
// made on A makes B's very next request with it a 401.
func TestMultiInstanceKeyChanges(t *testing.T) {
	eachPair(t, nil, func(t *testing.T, a, b *node) {
		staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
		key, k := issueKey(t, a.srv.Store, "partner", db.RoleCustomer, 1_000, 100_000)
		c := newClient(t)
		keyURL := fmt.Sprintf("%s/api/keys/%d", a.base, k.ID)

		for range 2 {
			ans := call(c, "GET", b.base+"/api/categories", key, nil).must(t, 200, nil)
			if got := ans.header.Get("X-RateLimit-Limit-Minute"); got != "1000" {
				t.Fatalf("B's minute limit before the change: %q, want 1000", got)
			}
		}
		call(c, "PATCH", keyURL, staff, map[string]any{"plan": "pro"}).must(t, 200, nil)
		ans := call(c, "GET", b.base+"/api/categories", key, nil).must(t, 200, nil)
		if got, day := ans.header.Get("X-RateLimit-Limit-Minute"), ans.header.Get("X-RateLimit-Limit-Day"); got != "300" || day != "10000" {
			t.Fatalf("B's limits right after the plan change on A: %s/min %s/day, want 300 and 10000", got, day)
		}

		call(c, "DELETE", keyURL, staff, nil).must(t, 204, nil)
		ans = call(c, "GET", b.base+"/api/categories", key, nil).must(t, 401, nil)
		if p := ans.problem(t); p.Code != "unauthorized" {
			t.Fatalf("B right after the revoke on A: %s, want unauthorized", p.Code)
		}
		call(c, "GET", a.base+"/api/categories", key, nil).must(t, 401, nil)
	})
}

// TestMultiInstanceBanLift: a ban started through A refuses B's very next
// request, and a lift made on A lets B's very next request through (a 429
// while the minute is still used up, but no longer 403).
func TestMultiInstanceBanLift(t *testing.T) {
	eachPair(t, map[string]string{"PETSTORE_BAN_STRIKES": "3"}, func(t *testing.T, a, b *node) {
		staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
		key, k := issueKey(t, a.srv.Store, "noisy", db.RoleCustomer, 5, 1_000_000)
		c := newClient(t)

		call(c, "GET", b.base+"/api/categories", key, nil).must(t, 200, nil) // B has seen it unbanned
		banThrough(t, c, a, key)
		ans := call(c, "GET", b.base+"/api/categories", key, nil).must(t, 403, nil)
		if p := ans.problem(t); p.Code != "api_key_banned" {
			t.Fatalf("B right after the ban on A: %s, want api_key_banned", p.Code)
		}

		call(c, "DELETE", fmt.Sprintf("%s/api/keys/%d/ban", a.base, k.ID), staff, nil).must(t, 204, nil)
		ans = call(c, "GET", b.base+"/api/categories", key, nil)
		if ans.status == 403 || (ans.status != 200 && ans.status != 429) {
			t.Fatalf("B right after the lift on A: %d %s, want 200 or 429", ans.status, ans.body)
		}
	})
}

// TestCLIRevokeReachesRunningInstance: `petstore keys revoke` run as its
// own process refuses the key on the running instance's very next request.
func TestCLIRevokeReachesRunningInstance(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		cfg := testConfig(t, map[string]string{"DATABASE_URL": dbURL, "SESSION_KEYS": testSessionKey})
		n := startNode(t, "A", cfg, nil, nil)
		key, k := issueKey(t, n.srv.Store, "partner", db.RoleCustomer, 1_000, 100_000)
		c := newClient(t)
		for range 2 { // the second may come from a cache
			call(c, "GET", n.base+"/api/categories", key, nil).must(t, 200, nil)
		}
		cmd := exec.Command(bin, "keys", "revoke", fmt.Sprint(k.ID))
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "REDIS_URL=", "SESSION_KEYS="+testSessionKey, "PETSTORE_SECRET_KEYS="+dbtest.SecretKey())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("petstore keys revoke: %v\n%s", err, out)
		}
		ans := call(c, "GET", n.base+"/api/categories", key, nil).must(t, 401, nil)
		if p := ans.problem(t); p.Code != "unauthorized" {
			t.Fatalf("right after the CLI revoked the key: %s, want unauthorized", p.Code)
		}
	})
}

// stream is an open Server-Sent Events response read to its end.
type stream struct {
	res     *http.Response
	ended   chan struct{} // closed when the body ends
	endedAt time.Time     // when it ended: set before ended is closed
}

// openStream opens GET url with the header set and reads it in the
// background; the stream is closed when the test ends.
func openStream(t *testing.T, url, header, value string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set(header, value)
	res, err := (&http.Client{}).Do(req) // no timeout: a stream
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &stream{res: res, ended: make(chan struct{})}
	go func() {
		_, _ = io.Copy(io.Discard, res.Body)
		s.endedAt = time.Now()
		close(s.ended)
	}()
	return s
}

// wantEndWithin fails the test unless the stream ends within d of since.
// It judges by when the stream ended, not by when it is asked: a caller
// may ask after since+d has passed (other changes made first), and the
// stream may have ended in time meanwhile.
func (s *stream) wantEndWithin(t *testing.T, since time.Time, d time.Duration, what string) {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(time.Until(since.Add(d))):
	}
	select {
	case <-s.ended:
		took := s.endedAt.Sub(since)
		if took > d {
			t.Fatalf("the stream ended %s after %s, over %s", took.Round(time.Millisecond), what, d)
		}
		t.Logf("the stream ended %s after %s", took.Round(time.Millisecond), what)
	default:
		t.Fatalf("the stream is still open %s after %s", d, what)
	}
}

// TestEventStreamEndsOnRevoke: an /api/events stream open on B ends within
// 15 s of its key's revoke on A (SPEC §3), with the default re-check.
func TestEventStreamEndsOnRevoke(t *testing.T) {
	eachPair(t, nil, func(t *testing.T, a, b *node) {
		staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
		watcher, k := issueKey(t, a.srv.Store, "watcher", db.RoleStaff, 1_000_000, 10_000_000)
		s := openStream(t, b.base+"/api/events", "X-API-Key", watcher)
		c := newClient(t)
		revoked := time.Now()
		call(c, "DELETE", fmt.Sprintf("%s/api/keys/%d", a.base, k.ID), staff, nil).must(t, 204, nil)
		s.wantEndWithin(t, revoked, 15*time.Second, "the revoke on A")
		call(c, "GET", b.base+"/api/events", watcher, nil).must(t, 401, nil)
	})
}

// banThrough sends requests with key to n until n bans it (403
// api_key_banned), failing the test if 40 requests do not.
func banThrough(t *testing.T, c *http.Client, n *node, key string) {
	t.Helper()
	for range 40 {
		ans := call(c, "GET", n.base+"/api/categories", key, nil)
		switch ans.status {
		case 200, 429:
		case 403:
			if p := ans.problem(t); p.Code != "api_key_banned" {
				t.Fatalf("%s: 403 %s, want api_key_banned", n.name, p.Code)
			}
			return
		default:
			t.Fatalf("%s: status %d: %s", n.name, ans.status, ans.body)
		}
	}
	t.Fatalf("%s never banned the key", n.name)
}
