// Package dbtest opens fresh, migrated stores for tests: SQLite always,
// PostgreSQL when PETSTORE_TEST_POSTGRES_URL is set (required when CI=true).
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"petstore/db"
	"petstore/db/secrets"
)

// PostgresEnv names the variable holding the test server's URL.
const PostgresEnv = "PETSTORE_TEST_POSTGRES_URL"

// Open is how a test gets a fresh store.
type Open func(tb testing.TB) *db.Store

// SQLite opens a migrated store on a new file in the test's temp dir, a
// copy of the package's template (":memory:" would give every pooled
// connection its own database).
func SQLite(tb testing.TB) *db.Store {
	tb.Helper()
	return openCopy(tb, copySQLiteTemplate(tb))
}

// SQLiteURL returns the DATABASE_URL of a new, empty file in the test's
// temp dir, for a test that migrates it itself (a server's start).
func SQLiteURL(tb testing.TB) string {
	return "sqlite:" + filepath.Join(tb.TempDir(), "test.db")
}

// OpenURL opens and migrates a store on rawURL, closed when the test ends:
// a test opens a second store on the same database to play a second
// instance or process.
func OpenURL(tb testing.TB, rawURL string) *db.Store {
	tb.Helper()
	return mustOpen(tb, rawURL)
}

// EachURL runs fn once per database with its DATABASE_URL: a new SQLite
// file always, a fresh PostgreSQL schema when configured.
func EachURL(t *testing.T, fn func(t *testing.T, rawURL string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLiteURL(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresURL(t)) })
}

// PostgresURL returns a URL for a fresh, empty schema on the test server,
// dropped when the test ends, or skips (fails in CI) when no server is configured.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	base := RequirePostgres(tb)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sqlx.Open("postgres", base)
	if err != nil {
		tb.Fatalf("open %s: %v", PostgresEnv, err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		admin, err := sqlx.Open("postgres", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema) // lib/pq sends unknown parameters as run-time settings
	u.RawQuery = q.Encode()
	return u.String()
}

// RequirePostgres returns the test server's URL, or skips the test when
// none is configured; in CI (CI=true) a missing server fails it instead.
func RequirePostgres(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: the PostgreSQL tests are required in CI", PostgresEnv)
		}
		tb.Skipf("%s not set: skipping the PostgreSQL run", PostgresEnv)
	}
	return base
}

// Postgres opens a migrated store on a new database of the test server,
// created from the package's template.
func Postgres(tb testing.TB) *db.Store {
	tb.Helper()
	return openCopy(tb, createFromTemplate(tb))
}

// Keyring is the process's test keyring (one random key): every store
// dbtest opens seals its secrets under it, as a server does under
// PETSTORE_SECRET_KEYS.
var Keyring = sync.OnceValue(func() *secrets.Keyring {
	k, err := secrets.Parse(SecretKey())
	if err != nil {
		panic(err)
	}
	return k
})

// SecretKey is the key of Keyring in hex, as PETSTORE_SECRET_KEYS takes
// it: a server a test starts reads what the test's stores sealed.
var SecretKey = sync.OnceValue(func() string {
	key, err := secrets.GenerateKey()
	if err != nil {
		panic(err)
	}
	return key
})

// mustOpen opens the store on a clock standing at Present; a test that
// moves time sets Store.Now to a Clock of its own before using the store.
func mustOpen(tb testing.TB, rawURL string) *db.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := db.Open(ctx, rawURL, NewClock(tb).Now)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	s.Secrets = Keyring()
	tb.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrate: %v", err)
	}
	return s
}

// Each runs fn once per database, "sqlite" always and "postgres" when
// configured, the two side by side, and returns when both have ended.
// The stores are separate, so the runs share nothing but what the test
// itself shares between them (the race detector finds that); and they
// overlap well: SQLite's run is mostly CPU, PostgreSQL's mostly waiting
// on the server. A test that measures the process (its heap, say) uses
// EachInTurn.
func Each(t *testing.T, fn func(t *testing.T, open Open)) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() { t.Run("sqlite", func(t *testing.T) { fn(t, SQLite) }) })
	t.Run("postgres", func(t *testing.T) {
		RequirePostgres(t)
		fn(t, Postgres)
	})
	wg.Wait()
}

// EachInTurn runs fn once per database like Each, one after the other.
func EachInTurn(t *testing.T, fn func(t *testing.T, open Open)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite) })
	t.Run("postgres", func(t *testing.T) {
		RequirePostgres(t)
		fn(t, Postgres)
	})
}
