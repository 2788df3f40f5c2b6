package db_test

import (
	"context"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestCounterSlotNeverWaitedFor (PostgreSQL, migration 00013): the
// counters' triggers run at the end of each statement and keep their slot
// to the commit, so a transaction can hold a slot while it waits for a pet
// row. A writer whose home slot (pg_backend_pid() % 64) another transaction
// holds takes a free slot instead of waiting: the deadlock of a fixed slot
// (A holds slot S and waits for pet P; B holds P and waits for slot S)
// cannot form, and both commit with the counts exact.
func TestCounterSlotNeverWaitedFor(t *testing.T) {
	ctx := context.Background()
	s := dbtest.OpenURL(t, dbtest.PostgresURL(t))
	dogs := MustCreateCategory(t, ctx, s, "Dogs")
	p1 := MustCreatePet(t, ctx, s, dogs.ID, "One", 1)
	p2 := MustCreatePet(t, ctx, s, dogs.ID, "Two", 1)
	before := catalogVersion(t, ctx, s)

	connA, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer connA.Close()
	connB, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer connB.Close()
	var pidB int
	if err := connB.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pidB); err != nil {
		t.Fatal(err)
	}
	a, err := connA.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Rollback()
	b, err := connB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Rollback()

	// A takes B's home slot first (as a writer of that slot would), then
	// changes pet 1: A holds B's home slot and pet 1 to its commit.
	if _, err := a.ExecContext(ctx, `SELECT 1 FROM catalog_changes WHERE slot = $1 FOR NO KEY UPDATE`, pidB%64); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, `UPDATE pets SET status = 'sold' WHERE id = $1`, p1.ID); err != nil {
		t.Fatal(err)
	}
	// B changes pet 2: its statement ends without waiting for A's slot.
	quick, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.ExecContext(quick, `UPDATE pets SET status = 'pending' WHERE id = $1`, p2.ID); err != nil {
		t.Fatalf("B's write waited for the slot A holds: %v", err)
	}
	// A now waits for pet 2, which B holds; B is waiting for nothing, so
	// it commits and A goes on.
	done := make(chan error, 1)
	go func() {
		_, err := a.ExecContext(ctx, `UPDATE pets SET name = 'Two!' WHERE id = $1`, p2.ID)
		done <- err
	}()
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("A after B's commit: %v", err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := catalogVersion(t, ctx, s); got != before+2 {
		t.Fatalf("catalog version = %d, want %d (one bump per transaction)", got, before+2)
	}
	wantCountsMatchScan(t, ctx, s)
	for _, want := range []struct {
		id     int64
		status string
	}{{p1.ID, db.StatusSold}, {p2.ID, db.StatusPending}} {
		var got string
		if err := s.DB().GetContext(ctx, &got, `SELECT status FROM pets WHERE id = $1`, want.id); err != nil {
			t.Fatal(err)
		}
		if got != want.status {
			t.Errorf("pet %d: status %q, want %q", want.id, got, want.status)
		}
	}
}
