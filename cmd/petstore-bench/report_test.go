package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// These tests cover the arithmetic and formatting only; the bench itself
// runs from `make bench`, never from `go test`.

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		ds := make([]time.Duration, len(n))
		for i, v := range n {
			ds[i] = time.Duration(v) * time.Millisecond
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"Empty", nil, 0.99, 0},
		{"One", ms(7), 0.5, 7 * time.Millisecond},
		{"MedianOdd", ms(1, 2, 3, 4, 5), 0.5, 3 * time.Millisecond},
		{"MedianEven", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"P99Of100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"P100", ms(1, 2, 3), 1, 3 * time.Millisecond},
		{"TinyQ", ms(1, 2, 3), 0.0001, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("percentile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestCollectorPhase(t *testing.T) {
	var c collector
	for i := 1; i <= 98; i++ {
		c.add(200, time.Duration(i)*time.Millisecond, "")
	}
	c.add(201, 99*time.Millisecond, "")
	c.add(0, 100*time.Millisecond, "connection refused") // no answer at all
	c.add(503, 500*time.Millisecond, "503 Service Unavailable")
	p := c.phase(2 * time.Second)
	if got, want := p.Requests, 101; got != want {
		t.Errorf("Requests = %d, want %d", got, want)
	}
	if got, want := p.Rate, 50.5; got != want {
		t.Errorf("Rate = %v, want %v", got, want)
	}
	if got, want := p.Non2xx, 2; got != want {
		t.Errorf("Non2xx = %d, want %d (201 is a success)", got, want)
	}
	if got, want := p.FirstErr, "0 connection refused"; got != want {
		t.Errorf("FirstErr = %q, want %q", got, want)
	}
	if got, want := p.P50, 51*time.Millisecond; got != want {
		t.Errorf("P50 = %v, want %v", got, want)
	}
	if got, want := p.P99, 100*time.Millisecond; got != want {
		t.Errorf("P99 = %v, want %v", got, want)
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{thousands(0), "0"},
		{thousands(999.4), "999"},
		{thousands(999.5), "1,000"},
		{thousands(1234567), "1,234,567"},
		{ms(1500 * time.Microsecond), "1.50 ms"},
		{ms(25 * time.Millisecond), "25.00 ms"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// sample is a run on both databases where SQLite meets every target and
// PostgreSQL misses some.
func sample() *report {
	return &report{
		Databases: []string{dbSQLite, dbPostgres},
		RSS:       map[string]int64{dbSQLite: 60 << 20, dbPostgres: 200 << 20},
		Stock: map[string]stockCheck{dbSQLite: {Summary: "sqlite sums", OK: true},
			dbPostgres: {Summary: "postgres sums", OK: false}},
		Rows: []row{
			{Endpoint: petsList, Database: dbSQLite, Rate: 6000, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond, HalfP99: 4 * time.Millisecond},
			{Endpoint: placeOrders, Database: dbSQLite, Rate: 7600, P50: 3 * time.Millisecond, P99: 12 * time.Millisecond, HalfP99: 6 * time.Millisecond},
			{Endpoint: ceilingQuery, Database: dbSQLite, Rate: 20000},
			{Endpoint: petsList, Database: dbPostgres, Rate: 1000, P50: 9 * time.Millisecond, P99: 40 * time.Millisecond, HalfP99: 30 * time.Millisecond, Errors: 3,
				ServerCPU: 95 * time.Microsecond, PostgresCPU: 41 * time.Microsecond},
			{Endpoint: placeOrders, Database: dbPostgres, Rate: 150, HalfP99: 10 * time.Millisecond},
			{Endpoint: ceilingQuery, Database: dbPostgres, Rate: 2500},
			{Endpoint: ceilingBare, Rate: 10000, P50: time.Millisecond, P99: 5 * time.Millisecond},
			{Endpoint: ceilingWrite, Database: dbSQLite, Rate: 5000},
			{Endpoint: ceilingWrite, Database: dbPostgres, Rate: 1000},
		},
		Uploads: map[string][]uploadCost{
			dbSQLite: {{Image: "jpeg", Decoded: 18 << 20, BaseRSS: 30 << 20, PeakRSS: 100 << 20, Times: []time.Duration{time.Second}}},
			dbPostgres: {
				{Image: "jpeg", Decoded: 18 << 20, BaseRSS: 30 << 20, PeakRSS: 100 << 20, Times: []time.Duration{time.Second}},
				{Image: "png", Decoded: 160 << 20, BaseRSS: 30 << 20, PeakRSS: 500 << 20, Times: []time.Duration{time.Second}},
			},
		},
	}
}

func TestCeilingAndRatio(t *testing.T) {
	r := sample()
	if got, want := r.ceiling(dbSQLite), 10000.0; got != want {
		t.Errorf("ceiling(sqlite) = %v, want %v (the bare route is lower)", got, want)
	}
	if got, want := r.ceiling(dbPostgres), 2500.0; got != want {
		t.Errorf("ceiling(postgres) = %v, want %v (the raw query is lower)", got, want)
	}
	if got, want := r.ratio(r.Rows[0]), "0.60"; got != want {
		t.Errorf("ratio(pets on sqlite) = %q, want %q", got, want)
	}
	if got, want := r.ratio(r.Rows[3]), "0.40"; got != want {
		t.Errorf("ratio(pets on postgres) = %q, want %q", got, want)
	}
	if got, want := r.ratio(r.Rows[6]), "4.00"; got != want {
		t.Errorf("ratio(bare) = %q, want %q (against the lowest ceiling)", got, want)
	}
	if got, want := r.ratio(r.Rows[1]), "1.52"; got != want {
		t.Errorf("ratio(orders on sqlite) = %q, want %q (against the raw order transaction)", got, want)
	}
	if got, want := r.ratio(r.Rows[4]), "0.15"; got != want {
		t.Errorf("ratio(orders on postgres) = %q, want %q (against the raw order transaction)", got, want)
	}
	if got, want := r.ratio(r.Rows[8]), "1.00"; got != want {
		t.Errorf("ratio(write ceiling) = %q, want %q", got, want)
	}
	none := &report{Rows: []row{{Endpoint: petsList, Database: dbSQLite, Rate: 5}}}
	if got, want := none.ratio(none.Rows[0]), "–"; got != want {
		t.Errorf("ratio without ceilings = %q, want %q", got, want)
	}
}

func TestTable(t *testing.T) {
	var b strings.Builder
	sample().writeTable(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if got, want := len(lines), 2+9; got != want {
		t.Fatalf("%d lines, want %d:\n%s", got, want, b.String())
	}
	width := len([]rune(lines[0]))
	for i, l := range lines {
		if n := len([]rune(l)); n != width {
			t.Errorf("line %d is %d wide, want %d (aligned):\n%s", i, n, width, b.String())
		}
	}
	for _, want := range []string{
		"| endpoint ", " req/s (peak) |", " ratio to ceiling |", "-----: |",
		"| GET /api/pets?limit=20 ", "|        6,000 |", " 4.00 ms |",
		"| ceiling: bare Fiber route, same JSON | –  ", // no database
		" server CPU/req |", " 95 µs |", " 41 µs |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if raw := lines[2+2]; !strings.Contains(raw, ceilingQuery) || strings.Count(raw, "–") != 3 || !strings.Contains(raw, " 2.00 |") {
		t.Errorf("raw query row: want three dashes (no half-peak p99, no server CPU, no PostgreSQL CPU) and ratio 2.00:\n%s", raw)
	}
}

func TestTargets(t *testing.T) {
	got := map[string]target{}
	for _, tg := range sample().targets() {
		got[tg.Goal] = tg
	}
	want := map[string]bool{
		"pets list ≥ 50% of ceiling on sqlite":                           true,
		"pets list ≥ 50% of ceiling on postgres":                         false,
		"POST orders ≥ 5,500/s on sqlite":                                true,
		"POST orders ≥ 5,500/s on postgres":                              false,
		"POST orders ≥ 150% of the raw order transaction on sqlite":      true,
		"POST orders ≥ 150% of the raw order transaction on postgres":    false,
		"zero oversell on sqlite":                                        true,
		"zero oversell on postgres":                                      false,
		"p99 < 25.00 ms at half the peak rate (every row)":               false,
		"server RSS < 150 MB on sqlite":                                  true,
		"server RSS < 150 MB on postgres":                                false,
		"photo upload peak within the decoded image + 64 MB on sqlite":   true,
		"photo upload peak within the decoded image + 64 MB on postgres": false,
		// The sample has no webhook rows.
		"orders with 1 webhook ≥ 85% of orders without on sqlite":           false,
		"orders with 1 webhook ≥ 85% of orders without on postgres":         false,
		"webhook backlog drains at ≥ 300/s on sqlite":                       false,
		"webhook backlog drains at ≥ 500/s on postgres":                     false,
		"orders with 5 webhooks ≥ 75% of orders without on sqlite":          false,
		"orders with 5 webhooks ≥ 75% of orders without on postgres":        false,
		"commit to receipt p99 ≤ 250 ms at half the drain rate on sqlite":   false,
		"commit to receipt p99 ≤ 250 ms at half the drain rate on postgres": false,
		// Nor storefront rows (TestHomeTargets).
		"GET / ≥ 50% of the API list on sqlite":                   false,
		"GET / ≥ 50% of the API list on postgres":                 false,
		"GET / after the orders ≥ 80% of before them on sqlite":   false,
		"GET / after the orders ≥ 80% of before them on postgres": false,
		"a pet's page ≥ 50% of the API list on sqlite":            false,
		"a pet's page ≥ 50% of the API list on postgres":          false,
	}
	if len(got) != len(want) {
		t.Errorf("%d targets, want %d: %v", len(got), len(want), got)
	}
	for goal, met := range want {
		tg, ok := got[goal]
		if !ok {
			t.Errorf("no target %q", goal)
			continue
		}
		if tg.Met != met {
			t.Errorf("%q met = %v, want %v (%s)", goal, tg.Met, met, tg.Detail)
		}
	}
	if d := got["p99 < 25.00 ms at half the peak rate (every row)"].Detail; !strings.Contains(d, "GET /api/pets?limit=20 on postgres: 30.00 ms") {
		t.Errorf("half-peak detail %q does not name the slow row", d)
	}

	// A database that was not measured is never a success.
	partial := &report{Databases: []string{dbSQLite}, RSS: map[string]int64{}}
	for _, tg := range partial.targets() {
		if tg.Met || tg.Detail != "not measured" {
			t.Errorf("empty run: %q met=%v detail=%q, want missed, not measured", tg.Goal, tg.Met, tg.Detail)
		}
	}
	sample().write(io.Discard) // the whole report renders
}

func TestWebhookTargets(t *testing.T) {
	r := &report{WebhooksOnly: true, Databases: []string{dbSQLite, dbPostgres}, Rows: []row{
		{Endpoint: placeOrders, Database: dbSQLite, Rate: 3000},
		{Endpoint: webhookOrders, Database: dbSQLite, Rate: 2700},
		{Endpoint: webhookOrders5, Database: dbSQLite, Rate: 2400},
		{Endpoint: webhookDrain, Database: dbSQLite, Rate: 400, P99: 300 * time.Millisecond},
		{Endpoint: placeOrders, Database: dbPostgres, Rate: 2000},
		{Endpoint: webhookOrders, Database: dbPostgres, Rate: 1500},
		{Endpoint: webhookOrders5, Database: dbPostgres, Rate: 1400},
		{Endpoint: webhookDrain, Database: dbPostgres, Rate: 600, Errors: 1, P99: 200 * time.Millisecond},
	}}
	want := map[string]bool{
		"orders with 1 webhook ≥ 85% of orders without on sqlite":           true,  // 90%
		"orders with 5 webhooks ≥ 75% of orders without on sqlite":          true,  // 80%
		"orders with 1 webhook ≥ 85% of orders without on postgres":         false, // 75%
		"orders with 5 webhooks ≥ 75% of orders without on postgres":        false, // 70%
		"webhook backlog drains at ≥ 300/s on sqlite":                       true,
		"webhook backlog drains at ≥ 500/s on postgres":                     false, // one lost
		"commit to receipt p99 ≤ 250 ms at half the drain rate on sqlite":   false, // 300 ms
		"commit to receipt p99 ≤ 250 ms at half the drain rate on postgres": true,
	}
	got := r.targets()
	if len(got) != len(want) {
		t.Fatalf("-webhooks mode: %d targets, want its %d alone: %v", len(got), len(want), got)
	}
	for _, tg := range got {
		if met, ok := want[tg.Goal]; !ok || met != tg.Met {
			t.Errorf("%q met = %v (%s), want %v", tg.Goal, tg.Met, tg.Detail, met)
		}
	}
	if c := r.ratio(r.Rows[3]); c != "–" {
		t.Errorf("the drain row has a ratio %s; deliveries have no ceiling", c)
	}
	r.write(io.Discard)
}

// TestEmailTargets: the -emails mode judges its own goals alone: each row
// with the sink against the same row with emails kept (85%, no error),
// the drain at 300 emails/s with none lost or repeated, a database not
// measured missed.
func TestEmailTargets(t *testing.T) {
	r := &report{EmailsOnly: true, Databases: []string{dbSQLite}, Rows: []row{
		{Endpoint: emailCheckoutsKept, Database: dbSQLite, Rate: 1000},
		{Endpoint: emailOrdersKept, Database: dbSQLite, Rate: 3000},
		{Endpoint: emailCheckoutsSent, Database: dbSQLite, Rate: 860},
		{Endpoint: emailOrdersSent, Database: dbSQLite, Rate: 2900, Errors: 1},
		{Endpoint: emailDrain, Database: dbSQLite, Rate: 299},
	}}
	want := map[string]bool{
		emailCheckoutsSent + " ≥ 85% of kept on sqlite":   true,
		emailOrdersSent + " ≥ 85% of kept on sqlite":      false, // an error
		emailCheckoutsSent + " ≥ 85% of kept on postgres": false, // not measured
		emailOrdersSent + " ≥ 85% of kept on postgres":    false,
		"email backlog drains at ≥ 300/s on sqlite":       false, // 299/s
		"email backlog drains at ≥ 300/s on postgres":     false,
	}
	got := r.targets()
	if len(got) != len(want) {
		t.Fatalf("-emails mode: %d targets, want its %d alone: %v", len(got), len(want), got)
	}
	for _, tg := range got {
		if met, ok := want[tg.Goal]; !ok || met != tg.Met {
			t.Errorf("%q met = %v (%s), want %v", tg.Goal, tg.Met, tg.Detail, met)
		}
	}
	var b strings.Builder
	r.write(&b)
	drain := ""
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| "+emailDrain) {
			drain = line
		}
	}
	if drain == "" || strings.Contains(drain, " ms") {
		t.Errorf("the drain row missing, or with latencies it has not:\n%s", b.String())
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-duration", "3s", "-databases", "postgres", "-workers", "8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Duration != 3*time.Second || o.Workers != 8 || len(o.Databases) != 1 || o.Databases[0] != dbPostgres {
		t.Errorf("parsed %+v", o)
	}
	if o.Warmup != 2*time.Second || o.Half != 4*time.Second || o.Pets != 10000 {
		t.Errorf("defaults: %+v", o)
	}
	if o, err := parseFlags([]string{"-uploads-only", "-databases", "sqlite"}, io.Discard); err != nil || !o.UploadsOnly {
		t.Errorf("-uploads-only: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-databases", "mysql"}, {"-duration", "0s"}, {"-workers", "0"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

func TestUploadSummary(t *testing.T) {
	u := uploadCost{Image: "a 12-megapixel JPEG (4000×3000)", Bytes: 3 << 20, BaseRSS: 40 << 20, PeakRSS: 200 << 20, Times: []time.Duration{
		900 * time.Millisecond, 1100 * time.Millisecond, 1000 * time.Millisecond, 1200 * time.Millisecond, 800 * time.Millisecond}}
	got := u.summary(dbSQLite)
	for _, want := range []string{"photo upload on sqlite", "12-megapixel JPEG (4000×3000)", "3.0 MB", "5 one after another", "1.00 s mean", "1.00 s median",
		"1.20 s slowest", "1.0 uploads/s", "40.0 MB before them", "peak 200.0 MB"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q: %s", want, got)
		}
	}
	if got := (uploadCost{}).summary(dbPostgres); !strings.Contains(got, "not measured") {
		t.Errorf("no uploads: %s", got)
	}
	r := sample()
	png := u
	png.Image = "a 40-megapixel PNG (6320×6320)"
	r.Uploads = map[string][]uploadCost{dbSQLite: {u, png}}
	var b strings.Builder
	r.writeRSS(&b)
	if !strings.Contains(b.String(), "- photo upload on sqlite: a 12-megapixel JPEG") || !strings.Contains(b.String(), "- photo upload on sqlite: a 40-megapixel PNG") {
		t.Errorf("the report does not show the uploads of both images:\n%s", b.String())
	}
}

// TestHomeTargets: the storefront's home is judged against the API list,
// and after the orders row against itself before it.
func TestHomeTargets(t *testing.T) {
	r := &report{Databases: []string{dbSQLite, dbPostgres}, RSS: map[string]int64{}, Rows: []row{
		{Endpoint: petsList, Database: dbSQLite, Rate: 6000},
		{Endpoint: homeBefore, Database: dbSQLite, Rate: 3500},
		{Endpoint: homeAfter, Database: dbSQLite, Rate: 3000},
		{Endpoint: petsList, Database: dbPostgres, Rate: 1000},
		{Endpoint: homeBefore, Database: dbPostgres, Rate: 400},
		{Endpoint: homeAfter, Database: dbPostgres, Rate: 100},
	}}
	want := map[string]string{
		"GET / ≥ 50% of the API list on sqlite":                   "58% (3,500 of 6,000 req/s)",
		"GET / ≥ 50% of the API list on postgres":                 "40% (400 of 1,000 req/s)",
		"GET / after the orders ≥ 80% of before them on sqlite":   "86% (3,000 of 3,500 req/s)",
		"GET / after the orders ≥ 80% of before them on postgres": "25% (100 of 400 req/s)",
	}
	met := map[string]bool{
		"GET / ≥ 50% of the API list on sqlite":                 true,
		"GET / after the orders ≥ 80% of before them on sqlite": true,
	}
	n := 0
	for _, tg := range r.targets() {
		d, ok := want[tg.Goal]
		if !ok {
			continue
		}
		n++
		if tg.Detail != d || tg.Met != met[tg.Goal] {
			t.Errorf("%q: met=%v %q, want met=%v %q", tg.Goal, tg.Met, tg.Detail, met[tg.Goal], d)
		}
	}
	if n != len(want) {
		t.Errorf("%d home targets, want %d", n, len(want))
	}
}

func TestImportTargets(t *testing.T) {
	r := &report{ImportsOnly: true, ImportSizes: []int{100_000, 1_000_000}, Imports: []importCost{
		{Database: dbSQLite, Pets: 100_000, Took: 12 * time.Second, PeakRSS: 80 << 20},
		{Database: dbSQLite, Pets: 1_000_000, Took: 119 * time.Second, PeakRSS: 150 << 20},
		{Database: dbPostgres, Pets: 100_000, Took: 21 * time.Second, PeakRSS: 90 << 20},
		{Database: dbPostgres, Pets: 1_000_000, Took: 230 * time.Second, PeakRSS: 210 << 20},
	}}
	want := map[string]bool{
		"import of 100k pets ≤ 20.00 s on sqlite":                             true,
		"import of 1M pets ≤ 10× the 100k import's time on sqlite (linear)":   true,
		"server peak RSS during the 1M import < 200 MB on sqlite":             true,
		"import of 100k pets ≤ 20.00 s on postgres":                           false,
		"import of 1M pets ≤ 10× the 100k import's time on postgres (linear)": false,
		"server peak RSS during the 1M import < 200 MB on postgres":           false,
	}
	got := r.targets()
	if len(got) != len(want) {
		t.Fatalf("-import mode: %d targets, want its %d alone: %v", len(got), len(want), got)
	}
	for _, tg := range got {
		if met, ok := want[tg.Goal]; !ok || met != tg.Met {
			t.Errorf("%q met=%v (%s), want known goal met=%v", tg.Goal, tg.Met, tg.Detail, met)
		}
	}
	// The usual run imports 100k only: no linear goal, and PostgreSQL
	// unmeasured misses its goals.
	r = &report{ImportSizes: []int{100_000}, Imports: r.Imports[:1]}
	got = r.importTargets()
	if len(got) != 4 || !got[0].Met || !got[1].Met || got[2].Met || got[2].Detail != "not measured" {
		t.Errorf("usual run's import targets: %+v", got)
	}
}
