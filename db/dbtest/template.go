package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"petstore/db"
)

// Migrating a store takes 70–300 ms on SQLite and 300 ms–1 s on
// PostgreSQL, and the suite opens well over a thousand stores. So each test
// process migrates one template per database, once, and every store is a
// copy of it: a file copy on SQLite, CREATE DATABASE … TEMPLATE on
// PostgreSQL (100–200 ms, and the database is dropped in the background).
// Main, called from a package's TestMain, removes the templates and waits
// for the drops when the package's tests end.

// mainActive is set by Main: a template outlives its first test, so only a
// package whose TestMain cleans up after it may make one.
var mainActive bool

// Main runs a package's tests and exits. A package whose tests open stores
// with SQLite, Postgres or Each calls it from TestMain:
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs a package's tests, removes the templates and returns the exit
// code, for a TestMain that has more to clean up than Main does.
func Run(m *testing.M) int {
	mainActive = true
	code := m.Run()
	if err := removeTemplates(); err != nil {
		fmt.Fprintln(os.Stderr, "dbtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// sqliteTemplate is the migrated SQLite file every SQLite store copies.
var sqliteTemplate struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// sqliteTemplatePath migrates the template file on its first call.
func sqliteTemplatePath() (string, error) {
	t := &sqliteTemplate
	t.once.Do(func() {
		t.dir, t.err = os.MkdirTemp("", "petstore-dbtest-")
		if t.err != nil {
			return
		}
		t.path = filepath.Join(t.dir, "template.db")
		t.err = migrateTemplate("sqlite:"+t.path, func(s *db.Store) error {
			// Everything into the main file: a copy of it is the database.
			_, err := s.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
			return err
		})
	})
	return t.path, t.err
}

// migrateTemplate opens rawURL, migrates it, runs finish and closes it.
func migrateTemplate(rawURL string, finish func(*db.Store) error) error {
	present, err := present()
	if err != nil {
		return err
	}
	ctx := context.Background()
	s, err := db.Open(ctx, rawURL, func() time.Time { return present })
	if err != nil {
		return fmt.Errorf("open template: %w", err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	if finish != nil {
		if err := finish(s); err != nil {
			return fmt.Errorf("finish template: %w", err)
		}
	}
	return s.Close()
}

// copySQLiteTemplate writes a copy of the migrated template to a new file
// in the test's temp dir and returns its DATABASE_URL.
func copySQLiteTemplate(tb testing.TB) string {
	tb.Helper()
	requireMain(tb)
	src, err := sqliteTemplatePath()
	if err != nil {
		tb.Fatalf("SQLite template: %v", err)
	}
	dst := filepath.Join(tb.TempDir(), "test.db")
	if err := copyFile(dst, src); err != nil {
		tb.Fatalf("copy the SQLite template: %v", err)
	}
	return "sqlite:" + dst
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// postgresTemplate is the migrated database every PostgreSQL store is
// created from, and the connection that creates and drops databases.
var postgresTemplate struct {
	once  sync.Once
	admin *sql.DB
	base  *url.URL
	name  string
	err   error
	drops sync.WaitGroup
}

// testDatabaseName matches the databases this package makes on the test
// server: <base>_dbt<pid>_<suffix>, so a sweep can tell a dead process's.
var testDatabaseName = regexp.MustCompile(`_dbt([0-9]+)_[a-z0-9]+$`)

// postgresTemplateName migrates the template database on its first call,
// after dropping what killed test processes left behind.
func postgresTemplateName(base string) (string, error) {
	t := &postgresTemplate
	t.once.Do(func() {
		t.base, t.err = url.Parse(base)
		if t.err != nil {
			return
		}
		t.admin, t.err = sql.Open("postgres", base)
		if t.err != nil {
			return
		}
		t.admin.SetMaxOpenConns(4)
		sweepDeadProcesses(t.admin, baseName(t.base))
		t.name = fmt.Sprintf("%s_dbt%d_tmpl", baseName(t.base), os.Getpid())
		if _, t.err = t.admin.Exec(`CREATE DATABASE ` + pq.QuoteIdentifier(t.name)); t.err != nil {
			return
		}
		t.err = migrateTemplate(databaseURL(t.base, t.name), nil)
	})
	return t.name, t.err
}

// baseName is the database the test server's URL names.
func baseName(u *url.URL) string {
	if name := strings.TrimPrefix(u.Path, "/"); name != "" {
		return name
	}
	return "postgres"
}

// databaseURL is base with its database replaced by name.
func databaseURL(base *url.URL, name string) string {
	u := *base
	u.Path = "/" + name
	return u.String()
}

// sweepDeadProcesses drops the databases of test processes that are no
// longer running (killed before Main could drop them).
func sweepDeadProcesses(admin *sql.DB, base string) {
	rows, err := admin.Query(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, base+"_dbt")
	if err != nil {
		return
	}
	var dead []string
	for rows.Next() {
		var name string
		if rows.Scan(&name) != nil {
			continue
		}
		m := testDatabaseName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		if pid, err := strconv.Atoi(m[1]); err == nil && !processRunning(pid) {
			dead = append(dead, name)
		}
	}
	rows.Close()
	for _, name := range dead {
		_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + pq.QuoteIdentifier(name) + ` WITH (FORCE)`)
	}
}

func processRunning(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// createFromTemplate creates a new database from the migrated template and
// returns its URL; the database is dropped in the background when the test
// ends (Main waits for the drops).
func createFromTemplate(tb testing.TB) string {
	tb.Helper()
	requireMain(tb)
	base := RequirePostgres(tb)
	tmpl, err := postgresTemplateName(base)
	if err != nil {
		tb.Fatalf("PostgreSQL template: %v", err)
	}
	t := &postgresTemplate
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := fmt.Sprintf("%s_dbt%d_%s", baseName(t.base), os.Getpid(), hex.EncodeToString(b))
	// A template must have no sessions while it is copied: the template's
	// own store may still be ending its connections when the first copy
	// starts. Concurrent copies of one template are fine.
	create := `CREATE DATABASE ` + pq.QuoteIdentifier(name) + ` TEMPLATE ` + pq.QuoteIdentifier(tmpl)
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, err = t.admin.Exec(create)
		var pqErr *pq.Error
		if err == nil || !errors.As(err, &pqErr) || pqErr.Code != "55006" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tb.Fatalf("create a database from the template: %v", err)
	}
	// A test's database lives for one test and is thrown away: its commits
	// need not wait for the WAL to reach the disk. Visibility, locks and
	// isolation are unchanged; only a crash of the server could lose the
	// last commits. (The setting is the database's, not the server's, so
	// make bench and other databases keep synchronous commits.)
	if _, err := t.admin.Exec(`ALTER DATABASE ` + pq.QuoteIdentifier(name) + ` SET synchronous_commit = off`); err != nil {
		tb.Fatalf("test database settings: %v", err)
	}
	t.drops.Add(1)
	tb.Cleanup(func() {
		go func() {
			defer t.drops.Done()
			if _, err := t.admin.Exec(`DROP DATABASE IF EXISTS ` + pq.QuoteIdentifier(name) + ` WITH (FORCE)`); err != nil {
				fmt.Fprintf(os.Stderr, "dbtest: drop %s: %v\n", name, err)
			}
		}()
	})
	return databaseURL(t.base, name)
}

// requireMain fails a test whose package has no TestMain calling Main.
func requireMain(tb testing.TB) {
	tb.Helper()
	if !mainActive {
		tb.Fatal("this package's tests open template copies: add func TestMain(m *testing.M) { dbtest.Main(m) }")
	}
}

// removeTemplates waits for the background drops, then drops the
// PostgreSQL template and removes the SQLite one.
func removeTemplates() error {
	var errs []error
	if t := &postgresTemplate; t.admin != nil {
		t.drops.Wait()
		if t.name != "" {
			if _, err := t.admin.Exec(`DROP DATABASE IF EXISTS ` + pq.QuoteIdentifier(t.name) + ` WITH (FORCE)`); err != nil {
				errs = append(errs, fmt.Errorf("drop the template: %w", err))
			}
		}
		t.admin.Close()
	}
	if t := &sqliteTemplate; t.dir != "" {
		if err := os.RemoveAll(t.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openCopy opens the store on a copy of a template, closed when the test
// ends, on a clock standing at Present. It is not migrated again: the
// template is the schema.
func openCopy(tb testing.TB, rawURL string) *db.Store {
	tb.Helper()
	s, err := db.Open(context.Background(), rawURL, NewClock(tb).Now)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	s.Secrets = Keyring()
	tb.Cleanup(func() { s.Close() })
	return s
}
