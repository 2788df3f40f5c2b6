package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestHousekeepingRepeatsUntilStopped runs the loop with a short interval:
// a row that expires after the first round is purged by a later one, and
// the loop has stopped when wait returns after the context ends.
func TestHousekeepingRepeatsUntilStopped(t *testing.T) {
	ctx := context.Background()
	// The loop reads the clock from its own goroutine while the test moves it.
	clock := dbtest.NewClock(t)
	store, err := db.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "store.db"), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	loopCtx, stop := context.WithCancel(ctx)
	logs := &syncBuffer{}
	wait := startHousekeeping(loopCtx, store, 20*time.Millisecond, slog.New(slog.NewJSONHandler(logs, nil)))
	if err := store.RecordLoginFailure(ctx, "guesser", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	clock.Add(db.LoginFailureRetention + time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := store.DB().Get(&n, `SELECT count(*) FROM login_failures`); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired login failure is still there after 5 s of rounds every 20 ms:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not stop within 5 s of its context ending")
	}
}
