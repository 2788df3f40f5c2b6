package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/imports"
	"petstore/web/queue"
)

// TestImportSurvivesKill: SIGKILL of the real binary while its queue
// writes a catalog import; after a restart the import resumes after the
// rows it wrote within a minute (its job's attempt is rescued after
// imports.JobTimeout) and succeeds with every row once, and at no moment
// is part of it visible. It takes about 40 s a database, most of it the
// rescue waiting out the killed attempt (JobTimeout + queue.RescueGrace):
// the databases wait side by side.
func TestImportSurvivesKill(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		if strings.HasPrefix(dbURL, "sqlite:") {
			dbURL = "sqlite:" + filepath.Join(t.TempDir(), "store.db")
		}
		ctx := context.Background()
		store, err := db.Open(ctx, dbURL, systemClock)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		store.Secrets = dbtest.Keyring()
		if err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		addr := freeAddr(t)
		p := startServeProcess(t, bin, dbURL, addr)

		// The import is queued from this process, as from another instance:
		// the server's queue works it.
		const n = 30_000
		var b strings.Builder
		b.WriteString("name,category,price,quantity\n")
		for i := range n {
			fmt.Fprintf(&b, "Kill %d,Kill cat %d,%d.00,%d\n", i, i%5, i%100, i%3+1)
		}
		im, err := must(imports.New(store, queue.New(store, queue.Config{}), nil)).Create(
			db.WithOrigin(ctx, db.Origin{Actor: db.Actor{Type: "cli", Name: "test"}}), strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		state := func() (processed, live, hidden int64) {
			t.Helper()
			got, err := store.FindImportByID(ctx, im.ID)
			if err != nil {
				t.Fatal(err)
			}
			_ = store.DB().GetContext(ctx, &live, `SELECT count(*) FROM pets WHERE import_id = $1 AND deleted_at IS NULL`, im.ID)
			_ = store.DB().GetContext(ctx, &hidden, `SELECT count(*) FROM pets WHERE import_id = $1 AND deleted_at IS NOT NULL`, im.ID)
			if live != 0 && live != n {
				t.Fatalf("%d of the import's %d pets visible: part of it shows", live, n)
			}
			return got.Processed, live, hidden
		}
		// Killed as soon as 3,000 rows are written: the server (not built
		// with -race) writes the rest in seconds, and this loop, under
		// -race, asks only the import's row for its count.
		deadline := time.Now().Add(60 * time.Second)
		for {
			got, err := store.FindImportByID(ctx, im.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Processed >= 3000 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the import wrote nothing within 60 s\n%s", p.logs())
			}
			time.Sleep(20 * time.Millisecond)
		}
		p.kill()
		at, live, hidden := state()
		if live != 0 || at >= n {
			t.Fatalf("killed after %d rows with %d live: the import should still be running", at, live)
		}
		t.Logf("killed after %d rows written (%d hidden)", at, hidden)

		restarted := time.Now()
		p = startServeProcess(t, bin, dbURL, addr)
		defer p.stop(t)
		var resumed time.Duration
		for {
			processed, live, _ := state()
			if resumed == 0 && processed > at {
				resumed = time.Since(restarted)
				t.Logf("resumed %v after the restart", resumed.Round(100*time.Millisecond))
				if resumed > time.Minute {
					t.Errorf("resumed %v after the restart, want within a minute", resumed)
				}
			}
			if live == n {
				break
			}
			if time.Since(restarted) > 3*time.Minute {
				t.Fatalf("not finished 3 minutes after the restart (%d rows written)\n%s", processed, p.logs())
			}
			time.Sleep(20 * time.Millisecond)
		}
		got, err := store.FindImportByID(ctx, im.ID)
		if err != nil || got.Status != db.ImportSucceeded || got.Processed != n || got.Rows != n {
			t.Fatalf("import %+v (%v), want succeeded with %d rows", got, err, n)
		}
		var pets, distinct, events int64
		_ = store.DB().GetContext(ctx, &pets, `SELECT count(*) FROM pets WHERE import_id = $1`, im.ID)
		_ = store.DB().GetContext(ctx, &distinct, `SELECT count(DISTINCT name) FROM pets WHERE import_id = $1`, im.ID)
		_ = store.DB().GetContext(ctx, &events, `SELECT count(*) FROM events WHERE type = $1`, db.EventCatalogImported)
		if pets != n || distinct != n || events != 1 {
			t.Errorf("%d pets (%d names) and %d catalog.imported events, want %d, %d and 1", pets, distinct, events, n, n)
		}
		t.Logf("succeeded %v after the restart", time.Since(restarted).Round(100*time.Millisecond))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
