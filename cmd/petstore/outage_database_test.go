package main

import "testing"

// These tests take the database away from a running instance in the three
// ways SPEC §2 names — dropped, its connections terminated, the network cut
// — and check what every surface answers meanwhile: 503 unavailable with
// Retry-After and every rate-limit header for the API, a 503 page (or an
// htmx fragment) for the shop and the console, 503 from /readyz; and that
// the instance serves again by itself once the database is back.

// TestDatabaseDropped drops the instance's database under it.
func TestDatabaseDropped(t *testing.T) {
	s := newOutageSite(t)
	if _, err := s.admin.Exec(`DROP DATABASE ` + s.name + ` WITH (FORCE)`); err != nil {
		t.Fatal(err)
	}
	s.wantAllUnavailable(t)
}

// TestDatabaseConnectionsTerminated ends the instance's connections the way
// an administrator, a restart or a failover does, while the database
// refuses new ones (too many connections), then lets them in again.
func TestDatabaseConnectionsTerminated(t *testing.T) {
	s := newOutageSite(t)
	if _, err := s.admin.Exec(`ALTER DATABASE ` + s.name + ` CONNECTION LIMIT 0`); err != nil {
		t.Fatal(err)
	}
	terminate(t, s.admin, s.name)
	s.wantAllUnavailable(t)
	if _, err := s.admin.Exec(`ALTER DATABASE ` + s.name + ` CONNECTION LIMIT -1`); err != nil {
		t.Fatal(err)
	}
	s.waitRecovered(t)

	// Terminated alone, the connections come back at once: a request that
	// meets a dead connection answers 503, never 500, and the next ones
	// are served.
	for _, path := range []string{"/api/pets", "/api/categories", "/api/store/orders"} {
		terminate(t, s.admin, s.name)
		a := call(s.api, "GET", s.n.base+path, s.key, nil)
		switch a.status {
		case 200:
		case 503:
			wantAPIUnavailable(t, "GET "+path+" after its connection was terminated", a)
		default:
			t.Errorf("GET %s after its connection was terminated: %d %s", path, a.status, a.body)
		}
		t.Logf("GET %s right after the terminate: %d", path, a.status)
	}
	s.allUp(t)
}

// TestDatabaseCut cuts the network between the instance and its database.
func TestDatabaseCut(t *testing.T) {
	s := newOutageSite(t)
	s.proxy.Cut()
	s.wantAllUnavailable(t)
	s.proxy.Restore()
	s.waitRecovered(t)
}
