package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// served is one `petstore serve` running in the test process.
type served struct {
	name   string
	base   string
	stdout *syncBuffer // the banner goes here
	logs   *syncBuffer
	done   chan struct{} // closed when serve has returned, with err
	err    error
	stop   func() // cancels it and waits for it to return
}

// startServe runs serve, as `petstore serve` does, on cfg in the
// background once begin closes. The test stops it when it ends, if it has
// not already.
func startServe(t *testing.T, name string, cfg *Config, begin <-chan struct{}) *served {
	t.Helper()
	s := &served{name: name, stdout: &syncBuffer{}, logs: &syncBuffer{}, done: make(chan struct{})}
	logger := slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("instance", name)
	ctx, cancel := context.WithCancel(context.Background())
	clock := dbtest.NewClock(t)
	go func() {
		defer close(s.done)
		<-begin
		s.err = serve(ctx, cfg, logger, clock.Now, s.stdout)
	}()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-s.done:
				if s.err != nil {
					t.Errorf("%s: serve: %v", name, s.err)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("%s: serve did not return within 15 s of the shutdown", name)
			}
			if t.Failed() {
				t.Logf("%s log:\n%s", name, lastLines(s.logs.String(), 40))
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// waitListening waits until s logs that it listens and records its URL.
func (s *served) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(s.logs.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
				s.base = "http://" + rec.Addr
				return
			}
		}
		select {
		case <-s.done:
			t.Fatalf("%s: serve returned before listening: %v", s.name, s.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s: not listening after 60 s", s.name)
}

var (
	bannerPassword = regexp.MustCompile(`user: admin\s+password: (\S+)`)
	bannerKey      = regexp.MustCompile(`Demo API key\s+(psk_\S+)`)
)

// TestFirstStartTwoInstancesSeedOnce starts two instances together on an
// empty PostgreSQL database: exactly one seeds and prints the banner (the
// other starts as on any later start, silently), the database holds one
// demo catalog, one admin and one demo key, and the password and key of
// the banner work, on both instances.
func TestFirstStartTwoInstancesSeedOnce(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	url := dbtest.PostgresURL(t)
	cfg := testConfig(t, map[string]string{
		"DATABASE_URL": url, "SESSION_KEYS": testSessionKey, "PETSTORE_ADDR": "127.0.0.1:0",
	})
	begin := make(chan struct{})
	a := startServe(t, "A", cfg, begin)
	b := startServe(t, "B", cfg, begin)
	close(begin)
	a.waitListening(t)
	b.waitListening(t)

	var banners []string
	for _, s := range []*served{a, b} {
		out := s.stdout.String()
		switch {
		case strings.Contains(out, "first start"):
			banners = append(banners, out)
			if !logHas(s.logs.String(), "INFO", "first start: demo data seeded") {
				t.Errorf("%s printed the banner but did not log the seeding", s.name)
			}
		case out != "":
			t.Errorf("%s printed %q, want nothing or the banner", s.name, out)
		case logHas(s.logs.String(), "INFO", "demo data seeded"):
			t.Errorf("%s logged seeding but printed no banner", s.name)
		}
	}
	if len(banners) != 1 {
		t.Fatalf("%d banners, want exactly 1", len(banners))
	}
	pw := bannerPassword.FindStringSubmatch(banners[0])
	key := bannerKey.FindStringSubmatch(banners[0])
	if pw == nil || key == nil {
		t.Fatalf("the banner has no password or no key:\n%s", banners[0])
	}

	c := newClient(t)
	for _, s := range []*served{a, b} {
		var pets []db.Pet
		call(c, "GET", s.base+"/api/pets?limit=100", key[1], nil).must(t, 200, &pets)
		if len(pets) != 21 {
			t.Errorf("%s lists %d pets with the demo key, want 21", s.name, len(pets))
		}
	}
	// Checked once both have stopped: the shared test server has room
	// for only so many connections.
	a.stop()
	b.stop()
	store, err := db.Open(context.Background(), url, dbtest.NewClock(t).Now)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for table, want := range map[string]int{"categories": 5, "pets": 21, "staff_users": 1, "api_keys": 1} {
		var n int
		if err := store.DB().Get(&n, `SELECT count(*) FROM `+table); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%s: %d rows, want %d", table, n, want)
		}
	}
	admin, err := store.FindStaffUserByUsername(context.Background(), "admin")
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	if !db.PasswordMatches(admin.PasswordHash, pw[1]) || !admin.IsAdmin() || admin.MustChangePassword {
		t.Errorf("the banner's password is not admin's, or admin = %+v", admin)
	}
}

// TestServePurgesAtStart checks the housekeeping loop is wired into serve:
// at start it purges what has expired, keeps what has not, and stops with
// the server.
func TestServePurgesAtStart(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	url := "sqlite:" + filepath.Join(t.TempDir(), "store.db")
	ctx := context.Background()
	store, err := db.Open(ctx, url, dbtest.NewClock(t).Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := dbtest.Present(t) // serve runs on a test clock standing there
	for user, at := range map[string]time.Time{"stale": now.Add(-db.LoginFailureRetention - time.Hour), "recent": now.Add(-time.Hour)} {
		if _, err := store.DB().Exec(`INSERT INTO login_failures (username, client_ip, at) VALUES ($1, '192.0.2.1', $2)`, user, at); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	cfg := testConfig(t, map[string]string{"DATABASE_URL": url, "SESSION_KEYS": testSessionKey, "PETSTORE_ADDR": "127.0.0.1:0"})
	begin := make(chan struct{})
	s := startServe(t, "A", cfg, begin)
	close(begin)
	s.waitListening(t)
	deadline := time.Now().Add(10 * time.Second)
	for !logHas(s.logs.String(), "INFO", `"what":"login failures","rows":1`) {
		if time.Now().After(deadline) {
			t.Fatalf("no purge of the stale login failure logged within 10 s:\n%s", s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()

	store, err = db.Open(ctx, url, dbtest.NewClock(t).Now)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var left []string
	if err := store.DB().Select(&left, `SELECT username FROM login_failures`); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(left) != "[recent]" {
		t.Fatalf("login failures left: %q, want only the recent one", left)
	}
}
