package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"petstore/db"
	"petstore/web"
)

// scaleRead is one read row of the scale mode: a GET whose rate should
// not fall as the catalog grows.
type scaleRead struct {
	Name string
	// Path is the request's path and query; deep adds a cursor near the
	// end of the catalog.
	Path string
	Deep bool
	Page bool // a browser page: asked without a key
}

// scaleReads are the rows of issue 17. The search hit "pet 12" names pets
// 12, 120–129 and 1200–1299 at every size, so each size answers the same
// full page; "zzz" and "zz" match nothing, which makes the engine look at
// every candidate.
var scaleReads = []scaleRead{
	{Name: "pets page", Path: "/api/pets?limit=20"},
	{Name: "search hit q=pet 12", Path: "/api/pets?limit=20&q=pet%2012"},
	{Name: "search miss q=zzz", Path: "/api/pets?limit=20&q=zzz"},
	{Name: "status filter status=sold", Path: "/api/pets?limit=20&status=sold"},
	{Name: "statuses status=pending,sold", Path: "/api/pets?limit=20&status=pending,sold"},
	{Name: "category filter", Path: "/api/pets?limit=20&categoryId={category}"},
	{Name: "inventory status=sold", Path: "/api/store/inventory?limit=20&status=sold"},
	{Name: "storefront search /?q=zzz", Path: "/?q=zzz", Page: true},
	{Name: "deep cursor page", Path: "/api/pets?limit=20", Deep: true},
	// Last: at a large size its requests outlive the attack, and the
	// server still walking them would slow the next row.
	{Name: "search miss q=zz (2 chars: walk)", Path: "/api/pets?limit=20&q=zz"},
}

// targetScaleRatio is the share of its 10k rate each read keeps at 1M.
const targetScaleRatio = 0.5

// scaleRow is one read measured at one size on one database.
type scaleRow struct {
	Read     string
	Database string
	Pets     int
	Rate     float64
	P50, P99 time.Duration
	Errors   int
}

// runScale is the scale mode: for each database and each size, a fresh
// database seeded straight with that many pets, then every read measured
// through the real server.
func runScale(ctx context.Context, o options, stdout, stderr io.Writer) error {
	began := time.Now()
	logf := progress(stderr, began)
	bin, tmp, err := buildInTemp(ctx, o, logf)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rep := &scaleReport{Sizes: o.Scale, Settings: fmt.Sprintf(
		"Per read %s warm-up, %s at peak with %d workers; 1 pet in %d sold, pets in %d categories; %d CPUs shared by generator and server. Load average (1 min) %s before",
		o.Warmup, o.Duration, o.Workers, soldEvery, scaleCategories, runtime.NumCPU(), loadAverage())}
	for _, database := range o.Databases {
		for _, n := range o.Scale {
			err := scaleDatabase(ctx, database, n, bin, filepath.Join(tmp, fmt.Sprintf("%s-%d", database, n)), o, rep, logf)
			if errors.Is(err, errUnreachable) {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %v", database, err))
				break
			}
			if err != nil {
				return fmt.Errorf("%s, %d pets: %w", database, n, err)
			}
		}
	}
	rep.Settings += ", " + loadAverage() + " after: other work on the machine lowers every figure."
	logf("done in %s", time.Since(began).Round(time.Second))
	fmt.Fprintln(stdout)
	rep.write(stdout)
	return nil
}

// scaleDatabase seeds n pets into a fresh database and measures every read.
func scaleDatabase(ctx context.Context, database string, n int, bin, dir string, o options, rep *scaleReport, logf func(string, ...any)) error {
	dbURL, err := freshDatabase(ctx, database, dir, o)
	if err != nil {
		return err
	}
	key, err := createKey(ctx, bin, dir, serverEnv(dbURL, ""), "staff") // migrates the new database too
	if err != nil {
		return err
	}
	t0 := time.Now()
	cat, last, err := seedCatalog(ctx, dbURL, n)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	seeded := time.Since(t0)
	rep.Seeds = append(rep.Seeds, scaleSeed{Database: database, Pets: n, Took: seeded})
	logf("%s: seeded %d pets in %s (%s rows/s, triggers on)", database, n, seeded.Round(10*time.Millisecond),
		thousands(float64(n)/seeded.Seconds()))
	srv, err := startServer(ctx, bin, dir, dbURL, o.Profile != "")
	if err != nil {
		return err
	}
	defer srv.stop()
	for _, r := range scaleReads {
		path := r.Path
		if r.Deep {
			path += "&cursor=" + web.EncodeCursor(last-100)
		}
		path = strings.ReplaceAll(path, "{category}", strconv.FormatInt(cat, 10))
		h := keyHeader(key)
		if r.Page {
			h = http.Header{}
		}
		tr := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: srv.base + path, Header: h})
		settings := attackSettings{Workers: o.Workers, Warmup: o.Warmup, Duration: o.Duration}
		if o.Profile != "" { // one profile per read, size and database, as the usual run does per row
			name := profileName(database, fmt.Sprintf("%s %s", petCount(n), r.Name))
			settings.OnPeak = profileTo(ctx, srv.pprof, filepath.Join(o.Profile, name), o.Duration)
		}
		m, err := measure(ctx, tr, settings)
		if err != nil {
			return err
		}
		logf("%s, %d pets: %s: %s req/s, p50 %s", database, n, r.Name, thousands(m.Peak.Rate), ms(m.Peak.P50))
		rep.Rows = append(rep.Rows, scaleRow{Read: r.Name, Database: database, Pets: n, Rate: m.Peak.Rate,
			P50: m.Peak.P50, P99: m.Peak.P99, Errors: m.Peak.Non2xx})
		if m.Peak.FirstErr != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s at %d pets: first failure: %s", r.Name, database, n, m.Peak.FirstErr))
		}
	}
	return nil
}

// Shape of the seeded catalog.
const (
	soldEvery       = 20      // pet i is sold when i is a multiple of this
	scaleCategories = 10      // pet i is in category i mod this
	seedBatch       = 100_000 // pets per INSERT ... SELECT
)

// seedCatalog writes n pets straight into the database, as CreatePet
// would, in batches of seedBatch: one INSERT ... SELECT from a recursive
// CTE each, with their inventory. The indexes and the schema's triggers
// (catalog_changes, pet_counts) follow as they do for any write: since
// migration 00013 their cost on PostgreSQL grows linearly with the rows
// (issue 27), so the seed's time is a write figure of its own. It returns
// the category the category filter asks for and the last pet's id.
func seedCatalog(ctx context.Context, databaseURL string, n int) (cat, last int64, err error) {
	dialect, dsn, err := db.ParseURL(databaseURL)
	if err != nil {
		return 0, 0, err
	}
	conn, err := sql.Open(dialect, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	now := wallClock()
	cats := make([]any, scaleCategories)
	for i := range cats {
		var id int64
		if err := conn.QueryRowContext(ctx, `INSERT INTO categories (name, name_key, created_at) VALUES ($1, $2, $3) RETURNING id`,
			fmt.Sprintf("Scale %d", i), fmt.Sprintf("scale %d", i), now).Scan(&id); err != nil {
			return 0, 0, fmt.Errorf("insert category: %w", err)
		}
		cats[i] = id
	}
	for from := 1; from <= n; from += seedBatch {
		to := min(from+seedBatch-1, n)
		if err := seedBatchOf(ctx, conn, from, to, cats, now); err != nil {
			return 0, 0, err
		}
	}
	if err := conn.QueryRowContext(ctx, `SELECT max(id) FROM pets`).Scan(&last); err != nil {
		return 0, 0, err
	}
	if dialect == db.DialectPostgres {
		// As autovacuum would, in production (see insertPets).
		if _, err := conn.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
			return 0, 0, fmt.Errorf("vacuum analyze: %w", err)
		}
	}
	return cats[scaleCategories/2].(int64), last, nil
}

// seedBatchOf inserts pets from..to and their inventory in one transaction.
func seedBatchOf(ctx context.Context, conn *sql.DB, from, to int, cats []any, now time.Time) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var before int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM pets`).Scan(&before); err != nil {
		return err
	}
	catCase := "CASE i % " + fmt.Sprint(scaleCategories)
	args := []any{from, to, now}
	for i, id := range cats {
		args = append(args, id)
		catCase += fmt.Sprintf(" WHEN %d THEN CAST($%d AS BIGINT)", i, len(args))
	}
	catCase += " END"
	if _, err := tx.ExecContext(ctx, `INSERT INTO pets (name, name_key, category_id, status, created_at, updated_at)
		WITH RECURSIVE n(i) AS (SELECT CAST($1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < CAST($2 AS BIGINT))
		SELECT 'Bench pet ' || i, 'bench pet ' || i, `+catCase+`,
			CASE WHEN i % `+fmt.Sprint(soldEvery)+` = 0 THEN 'sold' ELSE 'available' END, $3, $3 FROM n`, args...); err != nil {
		return fmt.Errorf("insert pets: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at)
		SELECT id, CASE WHEN status = 'sold' THEN 0 ELSE 1 END, $2 FROM pets WHERE id > $1`, before, now); err != nil {
		return fmt.Errorf("insert inventory: %w", err)
	}
	return tx.Commit()
}

// progress is the bench's log to stderr, stamped with the seconds since began.
func progress(stderr io.Writer, began time.Time) func(string, ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(stderr, "[%5.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
}

// buildInTemp builds the real binary into a new temporary directory, which
// the caller removes: from o.ServerRoot when given (another checkout measured
// by this same load), else from the module the bench runs in. With
// o.ServerCPUs the returned path is a wrapper that execs the binary under
// taskset, so the server (the same process: exec keeps its pid) runs on those
// CPUs only.
func buildInTemp(ctx context.Context, o options, logf func(string, ...any)) (bin, tmp string, err error) {
	root := o.ServerRoot
	if root == "" {
		if root, err = moduleRoot(ctx); err != nil {
			return "", "", err
		}
	}
	if tmp, err = os.MkdirTemp("", "petstore-bench-"); err != nil {
		return "", "", err
	}
	logf("building ./cmd/petstore in %s", root)
	if bin, err = buildServer(ctx, root, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", "", err
	}
	if o.ServerCPUs != "" {
		if bin, err = pinnedServer(bin, o.ServerCPUs); err != nil {
			os.RemoveAll(tmp)
			return "", "", err
		}
	}
	return bin, tmp, nil
}

// pinnedServer writes, beside bin, a script that runs bin on cpus.
func pinnedServer(bin, cpus string) (string, error) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return "", fmt.Errorf("-server-cpus needs taskset: %w", err)
	}
	wrapper := bin + "-pinned"
	script := fmt.Sprintf("#!/bin/sh\nexec %s -c %s %s \"$@\"\n", taskset, cpus, bin)
	return wrapper, os.WriteFile(wrapper, []byte(script), 0o755)
}
