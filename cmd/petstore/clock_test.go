package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestNewServerReadsOneClock shows the clock NewServer is given is the one
// every part reads: with it at 12:00:42 UTC on the day after the present,
// a key issued through the API was created then (the store), its windows
// reset at 12:01:00 and at midnight (the limiter), and the deprecated
// operation is gone once the clock passes the sunset (the handlers).
func TestNewServerReadsOneClock(t *testing.T) {
	t.Parallel() // its own server, SQLite file and pinned clock: nothing shared, no timing
	cfg := testConfig(t, map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "store.db"),
		"SESSION_KEYS": testSessionKey,
	})
	clock := dbtest.NewClock(t)
	at := clock.IntoNextDay(12*time.Hour + 42*time.Second)
	cfg.Sunset = at.Add(time.Hour)
	n := startNode(t, "A", cfg, clock, nil)
	staff, _ := issueKey(t, n.srv.Store, "staff", db.RoleStaff, 1000, 100_000)
	c := newClient(t)

	var issued struct {
		Key       string    `json:"key"`
		CreatedAt time.Time `json:"createdAt"`
	}
	call(c, "POST", n.base+"/api/keys", staff, map[string]any{"name": "partner", "role": "customer", "plan": "free"}).must(t, 201, &issued)
	if !issued.CreatedAt.Equal(at) {
		t.Errorf("createdAt = %v, want the server's clock %v", issued.CreatedAt, at)
	}

	var status struct {
		Minute struct{ Reset int64 } `json:"minute"`
		Day    struct{ Reset int64 } `json:"day"`
	}
	call(c, "GET", n.base+"/api/rate-limit", issued.Key, nil).must(t, 200, &status)
	if want := dbtest.NextMinute(at).Unix(); status.Minute.Reset != want {
		t.Errorf("minute reset = %d, want %d (12:01:00 by the server's clock)", status.Minute.Reset, want)
	}
	if want := dbtest.NextDay(at).Unix(); status.Day.Reset != want {
		t.Errorf("day reset = %d, want %d (midnight after the server's clock)", status.Day.Reset, want)
	}

	pet := fmt.Sprintf("%s/api/pets/999999", n.base)
	call(c, "GET", pet, issued.Key, nil).must(t, 404, nil)
	clock.Set(cfg.Sunset)
	if p := call(c, "GET", pet, issued.Key, nil).must(t, 410, nil).problem(t); p.Code != "endpoint_sunset" {
		t.Errorf("after the sunset: %s, want endpoint_sunset", p.Code)
	}
}
