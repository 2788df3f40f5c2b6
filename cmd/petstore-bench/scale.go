package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"petstore/db"
	"petstore/web"
)

// scaleRead is one read row of the scale mode: a GET whose rate should
// not fall as the catalog grows.
type scaleRead struct {
	Name string
	// Path is the path and query of the i-th request (from 0) against
	// catalog c. Consecutive requests differ for longer than the server
	// remembers answers (the API's per query, the storefront's per page:
	// at most 16,384 and 1,024 of them), so each runs its query.
	Path func(i int, c scaleCatalog) string
	Page bool // a browser page: asked without a key
}

// scaleCatalog is what the requests of a scale row point at.
type scaleCatalog struct {
	cat, last int64 // the category asked for, the last pet's id
}

// scaleReads are the rows of issues 17 and 44, every request a different
// query (issue 44: "nothing remembered"). The seeded names are
// "Bench pet N", so:
//   - pages past a cursor among pets 1–9,000 are full pages at every size
//     of 10,000 pets or more;
//   - "pet NN" (NN from 10 to 99) names the same first page at every size,
//     while the pets it names grow with the catalog;
//   - "pet d" (d a digit) names pets d, d0–d9, d00–d99, dXXX and more as
//     the catalog grows: past a cursor in d000–d979 the page is pets
//     d001–d999's next 20 at every size, while the term matches 11 to 111
//     thousand pets at 200,000;
//   - terms of letters no name holds match nothing, which makes the engine
//     look at every candidate; a two-letter one holds no trigram and walks.
//
// Terms vary their case too: the search ignores it, the remembered answers
// do not.
var scaleReads = []scaleRead{
	{Name: "pets page, cursor varied", Path: func(i int, _ scaleCatalog) string {
		return "/api/pets?limit=20" + cursorUnder(i, 9000)
	}},
	{Name: "search hit q=pet d, cursor varied", Path: func(i int, _ scaleCatalog) string {
		q, after := searchHit(i)
		return "/api/pets?limit=20&q=" + url.QueryEscape(q) + "&cursor=" + web.EncodeCursor(after)
	}},
	{Name: "search hit q=pet NN, first page, term varied", Path: func(i int, _ scaleCatalog) string {
		return "/api/pets?limit=20&q=" + url.QueryEscape(searchFirstPage(i))
	}},
	{Name: "search miss q=xyz, term varied", Path: func(i int, _ scaleCatalog) string {
		return "/api/pets?limit=20&q=" + missTerm(i, 3)
	}},
	{Name: "status filter status=sold", Path: func(i int, _ scaleCatalog) string {
		return "/api/pets?limit=20&status=sold" + cursorUnder(i, 9000)
	}},
	{Name: "statuses status=pending,sold", Path: func(i int, _ scaleCatalog) string {
		return "/api/pets?limit=20&status=pending,sold" + cursorUnder(i, 9000)
	}},
	{Name: "category filter", Path: func(i int, c scaleCatalog) string {
		return "/api/pets?limit=20&categoryId=" + strconv.FormatInt(c.cat, 10) + cursorUnder(i, 9000)
	}},
	{Name: "inventory status=sold", Path: func(i int, _ scaleCatalog) string {
		return "/api/store/inventory?limit=20&status=sold" + cursorUnder(i, 9000)
	}},
	{Name: "storefront search /?q=xyz, term varied", Page: true, Path: func(i int, _ scaleCatalog) string {
		return "/?q=" + missTerm(i, 3)
	}},
	{Name: "deep cursor page", Path: func(i int, c scaleCatalog) string {
		return "/api/pets?limit=20&cursor=" + web.EncodeCursor(c.last-100-int64(i%3000))
	}},
	// Last: at a large size its requests outlive the attack, and the
	// server still walking them would slow the next row. The limit varies
	// too (a miss walks the same pets whatever it is): two letters and
	// their case make only 1,444 queries.
	{Name: "search miss q=xy (2 chars: walk), term varied", Path: func(i int, _ scaleCatalog) string {
		return "/api/pets?limit=" + strconv.Itoa(1+i/1444%50) + "&q=" + missTerm(i%1444, 2)
	}},
}

// searchHit is the term and cursor of the search hit row's i-th request:
// "pet d" past pet d000–d979, every digit in turn.
func searchHit(i int) (q string, after int64) {
	d := 1 + i%9
	i /= 9
	after = int64(d*1000 + i%980)
	return caseVariant("pet "+strconv.Itoa(d), i/980), after
}

// searchFirstPage is the term of the first-page search row's i-th
// request: "bench pet NN" or one of its tails down to "pet NN" (NN from 10
// to 99), whose first page is pets NN, NN0–NN9 and NN00–NN08 at every size
// while the pets it matches grow from 111 at 10,000 to 11,111 at 200,000.
func searchFirstPage(i int) string {
	nn := 10 + i%90
	i /= 90
	from := i % 7
	return caseVariant("bench pet "[from:]+strconv.Itoa(nn), i/7)
}

// cursorUnder is the cursor of the i-th request of a list row: after pet
// 1 + i mod n, so that the page is full at every size above n + 20 pets
// of what the row lists.
func cursorUnder(i, n int) string {
	return "&cursor=" + web.EncodeCursor(int64(1+i%n))
}

// missLetters are the letters no seeded name ("Bench pet N") holds.
const missLetters = "adfgijklmoqrsuvwxyz"

// missTerm is the i-th term of n letters that no name holds, its case
// varied after every term was asked once.
func missTerm(i, n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = missLetters[i%len(missLetters)]
		i /= len(missLetters)
	}
	return caseVariant(string(b), i)
}

// caseVariant upper-cases the letters of s whose bit is set in v (the
// first letter bit 0), cycling when v has more bits than s letters.
func caseVariant(s string, v int) string {
	b := []byte(s)
	letters := 0
	for _, c := range b {
		if c >= 'a' && c <= 'z' {
			letters++
		}
	}
	if letters == 0 {
		return s
	}
	v %= 1 << letters
	k := 0
	for j, c := range b {
		if c >= 'a' && c <= 'z' {
			if v>>k&1 == 1 {
				b[j] = c - 'a' + 'A'
			}
			k++
		}
	}
	return string(b)
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
	// CPU is what the server and its PostgreSQL backends spent per
	// request at the peak: it moves less than the rate with other work.
	CPU time.Duration
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
		"Per read %s warm-up, %s at peak with %d workers, every request a different query; CPU/req is the server's and its PostgreSQL backends'; 1 pet in %d sold, pets in %d categories; %d CPUs shared by generator and server. Load average (1 min) %s before",
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

// scaleTargeter asks r's requests in turn, each worker taking the next.
func scaleTargeter(base string, h http.Header, r scaleRead, c scaleCatalog) vegeta.Targeter {
	var next atomic.Int64
	return func(t *vegeta.Target) error {
		i := int(next.Add(1) - 1)
		*t = vegeta.Target{Method: http.MethodGet, URL: base + r.Path(i, c), Header: h}
		return nil
	}
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
		h := keyHeader(key)
		if r.Page {
			h = http.Header{}
		}
		tr := scaleTargeter(srv.base, h, r, scaleCatalog{cat: cat, last: last})
		settings := attackSettings{Workers: o.Workers, Warmup: o.Warmup, Duration: o.Duration}
		if o.Profile != "" { // one profile per read, size and database, as the usual run does per row
			name := profileName(database, fmt.Sprintf("%s %s", petCount(n), r.Name))
			settings.OnPeak = profileTo(ctx, srv.pprof, filepath.Join(o.Profile, name), o.Duration)
		}
		var cpu cpuUse
		settings.OnPeak = peakCPU(srv.cmd.Process.Pid, backendsOf(database, dbURL), &cpu, settings.OnPeak)
		m, err := measure(ctx, tr, settings)
		if err != nil {
			return err
		}
		logf("%s, %d pets: %s: %s req/s, p50 %s", database, n, r.Name, thousands(m.Peak.Rate), ms(m.Peak.P50))
		rep.Rows = append(rep.Rows, scaleRow{Read: r.Name, Database: database, Pets: n, Rate: m.Peak.Rate,
			P50: m.Peak.P50, P99: m.Peak.P99, Errors: m.Peak.Non2xx,
			CPU: perRequest(cpu.Server+cpu.Database, m.Peak.Requests)})
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
