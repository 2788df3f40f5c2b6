package db_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"petstore/db"
	"petstore/db/dbtest"
)

// wantUnavailable checks IsUnavailable on err as the driver returned it and
// wrapped as the store wraps errors.
func wantUnavailable(t *testing.T, what string, err error, want bool) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for _, e := range []error{err, fmt.Errorf("find pets: %w", fmt.Errorf("begin: %w", err))} {
		if got := db.IsUnavailable(e); got != want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", what, e, got, want)
		}
	}
}

// TestIsUnavailableQueries classifies what queries on a working database
// fail with: past their deadline is an outage (SPEC §2), a bad query, a
// constraint, no rows or a caller that went away is not.
func TestIsUnavailableQueries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		slow := map[string]string{
			db.DialectSQLite:   `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n`,
			db.DialectPostgres: `SELECT pg_sleep(10)`,
		}[s.Dialect()]

		t.Run("PastDeadline", func(t *testing.T) {
			dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			var n sql.NullInt64
			began := time.Now()
			err := s.DB().QueryRowContext(dctx, slow).Scan(&n)
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("the query ran %s past a 50 ms deadline", d)
			}
			wantUnavailable(t, "a query past its deadline", err, true)
		})
		t.Run("StoreCallPastDeadline", func(t *testing.T) {
			dctx, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
			defer cancel()
			_, _, err := s.FindPets(dctx, db.PetFilter{})
			wantUnavailable(t, "FindPets past its deadline", err, true)
		})
		t.Run("NotCanceled", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := s.DB().ExecContext(cctx, `SELECT 1`)
			wantUnavailable(t, "a canceled query", err, false)
		})
		t.Run("NotSyntax", func(t *testing.T) {
			_, err := s.DB().ExecContext(ctx, `SELEC 1`)
			wantUnavailable(t, "a syntax error", err, false)
		})
		t.Run("NotConstraint", func(t *testing.T) {
			c, err := s.DB().Connx(ctx) // a temporary table lives on one connection
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.ExecContext(ctx, `CREATE TEMPORARY TABLE u (k INTEGER PRIMARY KEY)`); err != nil {
				t.Fatal(err)
			}
			_, err = c.ExecContext(ctx, `INSERT INTO u (k) VALUES (1), (1)`)
			wantUnavailable(t, "a unique violation", err, false)
		})
		t.Run("NotNoRows", func(t *testing.T) {
			var n int64
			err := s.DB().GetContext(ctx, &n, `SELECT 1 WHERE 1 = 0`)
			wantUnavailable(t, "no rows", err, false)
			_, err = s.FindPetByID(ctx, 1_000_000)
			wantUnavailable(t, "a missing pet", err, false)
		})
	})
}

// TestIsUnavailableSQLite classifies SQLite's failures to use the file.
func TestIsUnavailableSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	openFile := func(t *testing.T, path, params string) *sqlx.DB {
		t.Helper()
		x, err := sqlx.Open("sqlite", "file:"+path+"?"+params)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		return x
	}
	wantCode := func(t *testing.T, err error, code int) {
		t.Helper()
		var e *sqlite.Error
		if !errors.As(err, &e) || e.Code()&0xff != code {
			t.Errorf("error %v is not SQLite result code %d", err, code)
		}
	}
	path := filepath.Join(dir, "store.db")
	rw := openFile(t, path, "_pragma=journal_mode(WAL)&_txlock=immediate")
	if _, err := rw.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}

	t.Run("CannotOpen", func(t *testing.T) {
		err := openFile(t, filepath.Join(dir, "no such dir", "store.db"), "mode=rw").PingContext(ctx)
		wantCode(t, err, sqlite3.SQLITE_CANTOPEN)
		wantUnavailable(t, "a file that cannot be opened", err, true)
	})
	t.Run("ReadOnly", func(t *testing.T) {
		_, err := openFile(t, path, "mode=ro").ExecContext(ctx, `INSERT INTO t (k) VALUES (1)`)
		wantCode(t, err, sqlite3.SQLITE_READONLY)
		wantUnavailable(t, "a file that cannot be written", err, true)
	})
	t.Run("BusyPastTimeout", func(t *testing.T) {
		tx, err := rw.BeginTx(ctx, nil) // immediate: holds the write lock
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		other := openFile(t, path, "_pragma=busy_timeout(50)&_txlock=immediate")
		_, err = other.BeginTx(ctx, nil)
		wantCode(t, err, sqlite3.SQLITE_BUSY)
		wantUnavailable(t, "a write lock held past busy_timeout", err, true)
	})
}

// TestIsUnavailablePostgres classifies what lib/pq returns when the server
// or the database goes away.
func TestIsUnavailablePostgres(t *testing.T) {
	base := dbtest.RequirePostgres(t)
	ctx := context.Background()
	withDatabase := func(name string) string {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		return u.String()
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "petstore_out_" + hex.EncodeToString(b)

	t.Run("ConnectionRefused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = db.Open(ctx, "postgres://postgres@"+addr+"/petstore?sslmode=disable", dbtest.NewClock(t).Now)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("open on a closed port: %v, want connection refused", err)
		}
		wantUnavailable(t, "a closed port", err, true)
	})
	t.Run("NoSuchDatabase", func(t *testing.T) {
		_, err := db.Open(ctx, withDatabase(name+"_missing"), dbtest.NewClock(t).Now)
		if pq.As(err, pqerror.InvalidCatalogName) == nil {
			t.Errorf("open of a missing database: %v, want 3D000", err)
		}
		wantUnavailable(t, "a missing database", err, true)
	})

	admin, err := sqlx.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`) })
	x, err := sqlx.Open("postgres", withDatabase(name))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	// pinned returns a connection of its own to the database and its
	// backend's pid.
	pinned := func(t *testing.T) (*sqlx.Conn, int) {
		t.Helper()
		c, err := x.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var pid int
		if err := c.GetContext(ctx, &pid, `SELECT pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		return c, pid
	}

	t.Run("StatementTimeout", func(t *testing.T) {
		c, _ := pinned(t)
		if _, err := c.ExecContext(ctx, `SET statement_timeout = 20`); err != nil {
			t.Fatal(err)
		}
		_, err := c.ExecContext(ctx, `SELECT pg_sleep(5)`)
		if pq.As(err, pqerror.QueryCanceled) == nil {
			t.Errorf("past statement_timeout: %v, want 57014", err)
		}
		wantUnavailable(t, "a statement past statement_timeout", err, true)
	})
	t.Run("Terminated", func(t *testing.T) {
		c, pid := pinned(t)
		// The timeout makes it wait for the backend to end.
		if _, err := admin.Exec(`SELECT pg_terminate_backend($1, 5000)`, pid); err != nil {
			t.Fatal(err)
		}
		_, err := c.ExecContext(ctx, `SELECT 1`)
		wantUnavailable(t, "a terminated connection", err, true)
	})
	t.Run("Dropped", func(t *testing.T) {
		c, _ := pinned(t)
		if _, err := admin.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`); err != nil {
			t.Fatal(err)
		}
		_, err := c.ExecContext(ctx, `SELECT 1`)
		wantUnavailable(t, "a connection to a dropped database", err, true)
		err = x.PingContext(ctx)
		wantUnavailable(t, "a new connection to a dropped database", err, true)
	})

	// Conditions a test cannot bring about on a shared server: the
	// SQLSTATEs lib/pq reports for them.
	for _, code := range []pqerror.Code{
		pqerror.TooManyConnections, pqerror.CannotConnectNow, pqerror.AdminShutdown, pqerror.CrashShutdown,
		pqerror.ConnectionFailure, pqerror.DiskFull, pqerror.OutOfMemory, pqerror.ReadOnlySQLTransaction,
	} {
		wantUnavailable(t, "SQLSTATE "+string(code), &pq.Error{Code: code, Message: "x"}, true)
	}
	for _, code := range []pqerror.Code{
		pqerror.UniqueViolation, pqerror.SyntaxError, pqerror.UndefinedTable, pqerror.InvalidPassword,
	} {
		wantUnavailable(t, "SQLSTATE "+string(code), &pq.Error{Code: code, Message: "the database system is shutting down"}, false)
	}
}
