package db_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jmoiron/sqlx"

	"petstore/db/dbtest"
)

// TestPingAfterConnectionsTerminated (PostgreSQL): when the server has
// ended every pooled connection (a restart, a failover, an administrator)
// and takes new ones, the readiness ping answers: dead connections are not
// an outage. Before, /readyz answered 503 for each dead connection it met.
func TestPingAfterConnectionsTerminated(t *testing.T) {
	base := dbtest.RequirePostgres(t)
	s := dbtest.Postgres(t)
	ctx := context.Background()

	// Fill the pool with idle connections whose backends are known.
	const held = 6
	conns := make([]*sql.Conn, held)
	pids := make([]int, held)
	for i := range conns {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pids[i]); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Close() // back to the pool, idle
	}
	if idle := s.DB().Stats().Idle; idle < held {
		t.Fatalf("%d idle connections in the pool, want %d", idle, held)
	}

	// End exactly those backends (other tests share the server), waiting
	// for each to be gone.
	admin, err := sqlx.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, pid := range pids {
		var ended bool
		if err := admin.QueryRowContext(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ended); err != nil || !ended {
			t.Fatalf("terminate backend %d: %v %v", pid, ended, err)
		}
	}

	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping with every pooled connection ended: %v, want nil (a new connection answers)", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("second ping: %v", err)
	}
}
