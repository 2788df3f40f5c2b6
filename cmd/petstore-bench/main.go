// Command petstore-bench is the load generator behind `make bench`. It
// builds the real petstore binary, runs it on a fresh SQLite file and a
// fresh PostgreSQL database, seeds pets through the API and measures the
// main endpoints with vegeta: the peak rate, its latency, and the p99 at
// half that rate. In the same run it measures two ceilings for the pets
// list — a bare Fiber route serving the same bytes, and the raw page query
// — and one for orders, the raw order transaction through sqlx; it checks
// that no unit was oversold, and prints a table with every rate as a share
// of its ceiling, the server's peak RSS, and the project's targets marked
// met or missed.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	attackSettings
	Databases   []string
	PostgresURL string
	Out         string
	Profile     string // directory for the server's CPU profile of each row's peak phase; empty: none
	Pets        int
	Scale       []int   // catalog sizes of the scale mode; none runs the usual bench
	UploadsOnly bool    // measure the photo upload rows alone
	Webhooks    bool    // the webhook rows alone
	Emails      bool    // the email rows alone
	Import      []int   // catalog import sizes of the import mode; none imports defaultImport in the usual run
	ServerRoot  string  // build the server from this checkout instead (a before/after comparison under one load)
	ServerCPUs  string  // run the server on these CPUs only (taskset -c)
	Endpoints   bool    // the endpoint rows and raw ceilings only: no uploads, import or webhook rows
	TraceRatio  float64 // > 0: the server traces to a receiver in the bench, sampling this share (tracing.go)
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == bareServerCmd {
		if err := runBareServer(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "petstore-bench bare-server:", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runMode := run
	if len(o.Scale) > 0 {
		runMode = runScale
	}
	if len(o.Import) > 0 {
		runMode = runImports
	}
	if err := runMode(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "petstore-bench:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var err error
	fs := flag.NewFlagSet("petstore-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long each endpoint is attacked at its peak (and each raw ceiling runs)")
	fs.DurationVar(&o.Half, "half-duration", 4*time.Second, "how long each endpoint is attacked at half its peak rate (0 skips)")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "unmeasured load before each measurement")
	fs.IntVar(&o.Workers, "workers", 32, "concurrent requests at peak (vegeta workers; also the goroutines of the raw query and the raw order transaction)")
	dbs := fs.String("databases", "sqlite,postgres", "comma-separated databases to measure: sqlite, postgres")
	fs.StringVar(&o.PostgresURL, "postgres-url", "postgres://postgres@127.0.0.1:5432/petstore_bench?sslmode=disable",
		"scratch PostgreSQL database (DROPPED and recreated)")
	fs.StringVar(&o.Out, "out", "", "also write the report as Markdown to this file")
	fs.IntVar(&o.Pets, "pets", 10000, "pets to seed through the API")
	fs.StringVar(&o.Profile, "profile", "", "write the server's CPU profile (pprof) of each row's peak phase to this directory")
	fs.BoolVar(&o.UploadsOnly, "uploads-only", false, "measure only the photo upload rows (12-megapixel JPEG, 40-megapixel PNG): no endpoint rows, no ceilings")
	fs.BoolVar(&o.Webhooks, "webhooks", false, "measure the webhook rows alone: POST orders without webhooks, with one and with five, a 10,000-delivery backlog drained, and commit to receipt at half that rate")
	fs.BoolVar(&o.Emails, "emails", false, "measure the email rows alone: storefront checkouts and API orders with emails kept (no SMTP) and sent to an SMTP sink in the bench (target: 85% of kept), and 10,000 queued emails drained to it (target: 300/s)")
	fs.StringVar(&o.ServerRoot, "server-root", "", "build the measured server from the checkout in this directory instead of this one (the same load and report for a before/after comparison)")
	fs.StringVar(&o.ServerCPUs, "server-cpus", "", "run the server on these CPUs only (taskset -c list, e.g. 0); run the bench itself with taskset -c on the others")
	fs.BoolVar(&o.Endpoints, "endpoints-only", false, "measure the endpoint rows and the raw ceilings only: no upload, import or webhook rows (fits a build from before those features, with -server-root)")
	fs.Float64Var(&o.TraceRatio, "trace-ratio", 0, "turn the server's tracing on, exporting to an OTLP/HTTP receiver inside the bench and sampling this share of traces (0.1: 10%); 0 leaves tracing off")
	scale := fs.String("scale", "", "scale mode: comma-separated catalog sizes (e.g. 10000,1000000) seeded straight into the database, the read rows measured at each")
	imp := fs.String("import", "", "import mode: comma-separated catalog sizes (e.g. 100000,1000000) imported as CSV through POST /api/pets/import, each on a fresh database")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.Scale, err = parseSizes(*scale); err != nil {
		fmt.Fprintln(stderr, err)
		return o, err
	}
	if o.Import, err = parseSizes(*imp); err != nil {
		err = errors.New(strings.Replace(err.Error(), "-scale", "-import", 1))
		fmt.Fprintln(stderr, err)
		return o, err
	}
	for _, d := range strings.Split(*dbs, ",") {
		switch d = strings.TrimSpace(d); d {
		case dbSQLite, dbPostgres:
			o.Databases = append(o.Databases, d)
		case "":
		default:
			err := fmt.Errorf("-databases: unknown database %q (want sqlite, postgres)", d)
			fmt.Fprintln(stderr, err)
			return o, err
		}
	}
	if o.TraceRatio < 0 || o.TraceRatio > 1 {
		err := errors.New("-trace-ratio must be from 0 to 1")
		fmt.Fprintln(stderr, err)
		return o, err
	}
	if o.Duration <= 0 || o.Workers < 1 || o.Pets < 20 || o.Warmup < 0 || o.Half < 0 {
		err := errors.New("-duration must be positive, -workers at least 1, -pets at least 20")
		fmt.Fprintln(stderr, err)
		return o, err
	}
	return o, nil
}

// run is the whole bench: build, measure every database, the bare route,
// then print the report.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	began := time.Now()
	logf := progress(stderr, began)
	bin, tmp, err := buildInTemp(ctx, o, logf)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	loadBefore := loadAverage()
	var images []uploadImage
	if !o.Webhooks && !o.Emails {
		logf("making a 12-megapixel JPEG and a 40-megapixel PNG for the upload rows")
		if images, err = uploadImages(); err != nil {
			return err
		}
	}
	cpus := fmt.Sprintf("%d CPUs shared by generator and server", runtime.NumCPU())
	if o.ServerCPUs != "" {
		cpus = fmt.Sprintf("server on CPU %s alone, generator on %d CPUs", o.ServerCPUs, runtime.NumCPU())
	}
	if o.ServerRoot != "" {
		cpus += "; server built from " + o.ServerRoot
	}
	var sink *otlpSink
	if o.TraceRatio > 0 {
		if sink, err = startOTLPSink(); err != nil {
			return err
		}
		defer sink.close()
		traceEnv = sink.env(o.TraceRatio)
		cpus += fmt.Sprintf("; tracing on, %g sampled", o.TraceRatio)
	}
	rep := &report{RSS: map[string]int64{}, Stock: map[string]stockCheck{}, Uploads: map[string][]uploadCost{}, Settings: fmt.Sprintf(
		"%d pets seeded; per endpoint %s warm-up, %s at peak (%d workers), %s at half the peak rate; %s.",
		o.Pets, o.Warmup, o.Duration, o.Workers, o.Half, cpus)}
	var page []byte
	rep.WebhooksOnly, rep.EmailsOnly = o.Webhooks, o.Emails
	if !o.Webhooks && !o.Emails && !o.UploadsOnly {
		rep.ImportSizes = []int{defaultImport}
	}
	for _, database := range o.Databases {
		var p []byte
		var err error
		switch {
		case o.Webhooks:
			err = benchWebhooksOnly(ctx, database, bin, tmp, o, rep, logf)
		case o.Emails:
			err = benchEmailsOnly(ctx, database, bin, tmp, o, rep, logf)
		default:
			p, err = benchDatabase(ctx, database, bin, tmp, images, o, rep, logf)
		}
		if errors.Is(err, errUnreachable) {
			note := fmt.Sprintf("%s skipped: %v", database, err)
			logf("%s", note)
			rep.Notes = append(rep.Notes, note)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", database, err)
		}
		rep.Databases = append(rep.Databases, database)
		if page == nil {
			page = p
		}
	}
	if page != nil {
		logf("ceiling: bare Fiber route serving the same %d bytes", len(page))
		m, err := measureBare(ctx, tmp, page, o.attackSettings)
		if err != nil {
			return fmt.Errorf("bare route: %w", err)
		}
		rep.Rows = append(rep.Rows, row{Endpoint: ceilingBare, Rate: m.Peak.Rate, P50: m.Peak.P50, P99: m.Peak.P99, Errors: m.Peak.Non2xx})
	}
	if sink != nil {
		rep.Notes = append(rep.Notes, sink.note(o.TraceRatio))
	}
	logf("done in %s", time.Since(began).Round(time.Second))
	rep.Settings += fmt.Sprintf(" Load average (1 min) %s before, %s after: other work on the machine lowers every figure.", loadBefore, loadAverage())
	fmt.Fprintln(stdout)
	rep.write(stdout)
	if o.Out != "" {
		if err := os.MkdirAll(filepath.Dir(o.Out), 0o750); err != nil {
			return err
		}
		f, err := os.Create(o.Out)
		if err != nil {
			return err
		}
		rep.write(f)
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// benchDatabase measures every endpoint on one fresh database, then times
// uploads of each of images, then the raw page query, adding rows and
// notes to rep. It returns the 20-pet page the API answered, for the bare
// route. With o.UploadsOnly it seeds the pets and times the uploads only,
// and returns no page.
func benchDatabase(ctx context.Context, database, bin, tmp string, images []uploadImage, o options, rep *report, logf func(string, ...any)) ([]byte, error) {
	dir := filepath.Join(tmp, database)
	url, err := freshDatabase(ctx, database, dir, o)
	if err != nil {
		return nil, err
	}
	keys, err := createKeys(ctx, bin, dir, serverEnv(url, ""))
	if err != nil {
		return nil, err
	}
	srv, err := startServer(ctx, bin, dir, url, o.Profile != "")
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.stop()
		}
	}()
	api := newAPIClient(srv.base, keys.staff, 4)
	t0 := time.Now()
	ids, stocked, err := seedPets(ctx, api, url, o.Pets)
	if err != nil {
		return nil, err
	}
	logf("%s: seeded %d pets, %d of them with stock %d, in %s",
		database, len(ids), len(stocked), benchStock, time.Since(t0).Round(10*time.Millisecond))
	if o.UploadsOnly {
		if err := benchUploads(ctx, database, srv, api, ids, images, rep, logf); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if database == dbPostgres {
		rep.Notes = append(rep.Notes, "postgres: ANALYZE runs after seeding, as autovacuum would in production")
	}
	page, err := petsPage(ctx, api)
	if err != nil {
		return nil, err
	}
	// The photos go to the last pet, which no measured page lists.
	photo, err := seedPhoto(ctx, api, ids[len(ids)-1])
	if err != nil {
		return nil, err
	}
	if err := benchEndpoints(ctx, database, url, srv, keys, seeded{pets: ids, stocked: stocked, photos: []int64{photo}}, o, rep, logf); err != nil {
		return nil, err
	}
	rss, err := srv.peakRSS()
	if err != nil {
		return nil, err
	}
	rep.RSS[database] = rss
	// After the RSS above: decoding a photo takes more memory than any
	// request the rows measure, and is reported on its own. Last on this
	// server: a catalog import, with its own peak RSS.
	if !o.Endpoints {
		if err := benchUploads(ctx, database, srv, api, ids, images, rep, logf); err != nil {
			return nil, err
		}
		if err := importRow(ctx, database, url, srv, api, rep, logf); err != nil {
			return nil, err
		}
	}
	t1 := time.Now()
	srv.stop()
	stopped = true
	logf("%s: server stopped (SIGTERM) in %s", database, time.Since(t1).Round(10*time.Millisecond))

	logf("%s: ceiling: raw FindPets page query, %d goroutines", database, o.Workers)
	// A closed loop with no connections to open warms up within a second.
	q, err := measureRawQuery(ctx, url, o.Workers, min(o.Warmup, time.Second), o.Duration)
	if err != nil {
		return nil, err
	}
	rep.Rows = append(rep.Rows, row{Endpoint: ceilingQuery, Database: database, Rate: q.Rate, P50: q.P50, P99: q.P99})

	logf("%s: ceiling: raw order transaction, %d goroutines", database, o.Workers)
	w, err := measureRawWrite(ctx, url, stocked, o.Workers, min(o.Warmup, time.Second), o.Duration)
	if err != nil {
		return nil, err
	}
	rep.Rows = append(rep.Rows, row{Endpoint: ceilingWrite, Database: database, Rate: w.Rate, P50: w.P50, P99: w.P99})
	summary, err := checkNoOversell(ctx, url, stocked)
	if summary == "" {
		return nil, err
	}
	logf("%s: %s", database, summary)
	rep.Stock[database] = stockCheck{Summary: summary, OK: err == nil}
	if o.Endpoints {
		return page, nil
	}
	if err := benchWebhooks(ctx, database, bin, dir, url, keys, stocked, o, rep, logf); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return page, nil
}

// benchUploads times the uploads of each of images in turn, each to a pet
// of its own among the last of ids (which no measured page lists).
func benchUploads(ctx context.Context, database string, srv *server, api *apiClient, ids []int64, images []uploadImage, rep *report, logf func(string, ...any)) error {
	for i, img := range images {
		logf("%s: %d uploads of %s (%d bytes)", database, img.Count, img.Name, len(img.Data))
		u, err := timeUploads(ctx, srv, api, ids[len(ids)-1-i], img)
		if err != nil {
			return err
		}
		rep.Uploads[database] = append(rep.Uploads[database], u)
	}
	return nil
}

// benchEndpoints measures each endpoint of the server at base in turn and
// adds its row, and notes on anything that skews it, to rep.
func benchEndpoints(ctx context.Context, database, databaseURL string, srv *server, keys apiKeys, s seeded, o options, rep *report, logf func(string, ...any)) error {
	for _, ep := range endpoints {
		if ep.Page {
			if status, err := probe(ctx, srv.base+"/"); err != nil {
				return err
			} else if status == http.StatusNotFound {
				note := fmt.Sprintf("%s on %s answered 404 (no such page in this build): row skipped", ep.Name, database)
				logf("%s", note)
				rep.Notes = append(rep.Notes, note)
				continue
			}
		}
		logf("%s: %s", database, ep.Name)
		settings := o.attackSettings
		if o.Profile != "" {
			settings.OnPeak = profileTo(ctx, srv.pprof, filepath.Join(o.Profile, profileName(database, ep.Name)), o.Duration)
		}
		var cpu cpuUse
		settings.OnPeak = peakCPU(srv.cmd.Process.Pid, backendsOf(database, databaseURL), &cpu, settings.OnPeak)
		m, err := measure(ctx, ep.Targeter(srv.base, keys.key(ep), pick(ep, s)), settings)
		if err != nil {
			return err
		}
		rep.Rows = append(rep.Rows, row{Endpoint: ep.Name, Database: database, Rate: m.Peak.Rate, P50: m.Peak.P50, P99: m.Peak.P99,
			HalfP99: m.Half.P99, Errors: m.Peak.Non2xx + m.Half.Non2xx,
			ServerCPU: perRequest(cpu.Server, m.Peak.Requests), PostgresCPU: perRequest(cpu.Database, m.Peak.Requests)})
		for _, ph := range []phase{m.Peak, m.Half} {
			if ph.FirstErr != "" {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s: first failure: %s", ep.Name, database, ph.FirstErr))
				break
			}
		}
		if ep.Name == placeOrders {
			if note := batchNote(ctx, srv.base, database); note != "" {
				rep.Notes = append(rep.Notes, note)
			}
		}
		if m.HalfStall >= targetHalfP99 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s: during the half-peak phase the generator itself was kept off the CPU for up to %s: "+
				"the machine was busy, and that p99 says as much about it as about the server", ep.Name, database, ms(m.HalfStall)))
		}
		if m.Half.Requests > 0 && m.Half.Rate < 0.9*float64(m.HalfRate) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s: the half-peak phase reached only %s of the %s req/s asked",
				ep.Name, database, thousands(m.Half.Rate), thousands(float64(m.HalfRate))))
		}
	}
	return nil
}

// batchNote reads the server's group commit counters from /metrics after
// the orders row: how many orders each transaction placed on average. A
// build without them (an older tree) gets no note.
func batchNote(ctx context.Context, base, database string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var batches, orders float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		switch name {
		case "petstore_order_batches_total":
			batches, _ = strconv.ParseFloat(value, 64)
		case "petstore_order_batched_total":
			orders, _ = strconv.ParseFloat(value, 64)
		}
	}
	if batches == 0 {
		return ""
	}
	return fmt.Sprintf("%s on %s: %s orders placed in %s transactions (group commit), %.1f per transaction",
		placeOrders, database, thousands(orders), thousands(batches), orders/batches)
}

// probe answers the status of one GET.
func probe(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// loadAverage is the one-minute load average, "?" when unknown.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
