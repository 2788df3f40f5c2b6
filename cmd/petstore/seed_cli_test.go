package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestSeedCommandOnlyFillsAnEmptyCatalog runs `petstore seed` twice, on
// both databases: the first run adds the demo catalog, the second says it
// did nothing, and one catalog is left.
func TestSeedCommandOnlyFillsAnEmptyCatalog(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	for _, engine := range []struct {
		name string
		url  func(tb testing.TB) string
	}{
		{"sqlite", func(tb testing.TB) string { return "sqlite:" + filepath.Join(tb.TempDir(), "cli.db") }},
		{"postgres", dbtest.PostgresURL},
	} {
		t.Run(engine.name, func(t *testing.T) {
			vars := map[string]string{"DATABASE_URL": engine.url(t)}
			out, err := runCLI(t, vars, "", "seed")
			if err != nil || !strings.Contains(out, "demo catalog seeded") {
				t.Fatalf("first seed = %q, %v", out, err)
			}
			out, err = runCLI(t, vars, "", "seed")
			if err != nil || !strings.Contains(out, "nothing seeded") {
				t.Fatalf("second seed = %q, %v; want it to say it did nothing", out, err)
			}
			store, err := db.Open(context.Background(), vars["DATABASE_URL"], dbtest.NewClock(t).Now)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for table, want := range map[string]int{"categories": 5, "pets": 21} {
				var n int
				if err := store.DB().Get(&n, `SELECT count(*) FROM `+table); err != nil {
					t.Fatal(err)
				}
				if n != want {
					t.Errorf("%s: %d rows after two seeds, want %d", table, n, want)
				}
			}
		})
	}
}
