package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// exportRows is how many orders TestExportStreamsAMillionOrders exports.
const exportRows = 1_000_000

// TestExportStreamsAMillionOrders seeds a million orders straight into
// PostgreSQL (one INSERT … SELECT over generate_series), runs the real
// binary on that database and downloads GET /api/store/orders/export over
// all of them, reading the server's resident memory (VmRSS) every 10 ms
// while it streams: the export holds one batch at a time (SPEC §16), so
// the peak stays within 100 MB of the server's idle size whatever the
// number of orders. The figures are logged.
func TestExportStreamsAMillionOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on a million orders")
	}
	rawURL := dbtest.PostgresURL(t)
	// The binary builds (once for the package) while the orders are seeded.
	binErr := make(chan error, 1)
	go func() {
		_, err := binary()
		binErr <- err
	}()
	store := dbtest.OpenURL(t, rawURL)
	ctx := context.Background()
	cat, err := store.CreateCategory(ctx, db.NewCategory{Name: ptrTo("Exported")})
	if err != nil {
		t.Fatal(err)
	}
	pet, err := store.CreatePet(ctx, db.NewPet{Name: ptrTo(`Rex, the "Great"`), CategoryID: &cat.ID})
	if err != nil {
		t.Fatal(err)
	}
	// Orders a second apart, starting at midnight UTC 20 days ago: about
	// 11.6 days of them, every third by a storefront buyer.
	t0 := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -20)
	seedStart := time.Now()
	sqlDB := store.DB()
	// The export reads orders by orders_created and the primary key alone;
	// the other indexes of orders (by pet, key, shopper, checkout, the
	// open ones) would double the seeding's time in CI and have no part in
	// what is measured. The schema is this test's own.
	for _, ix := range []string{"orders_pet_state", "orders_api_key", "orders_shopper", "orders_checkout", "orders_open", "orders_no_currency"} {
		if _, err := sqlDB.ExecContext(ctx, `DROP INDEX `+ix); err != nil {
			t.Fatal(err)
		}
	}
	var checkout int64
	if err := sqlDB.GetContext(ctx, &checkout, `INSERT INTO checkouts (shopper_id, name, email, email_key, phone, created_at)
		VALUES ('s', 'Ada Lovelace', 'ada@example.com', 'ada@example.com', '+44 20 7946 0000', $1) RETURNING id`, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, `INSERT INTO orders (pet_id, quantity, ship_date, state, created_at, updated_at, unit_price, currency, checkout_id)
		SELECT $1, 1 + g % 3, CASE WHEN g % 2 = 0 THEN $2::timestamptz + g * interval '1 second' + interval '3 days' END,
			(ARRAY['open', 'complete', 'cancelled'])[1 + g % 3], $2::timestamptz + g * interval '1 second', $2::timestamptz + g * interval '1 second',
			12950, 'EUR', CASE WHEN g % 3 = 0 THEN $3::bigint END
		FROM generate_series(1, $4::int) AS g`, pet.ID, t0, checkout, exportRows); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, `ANALYZE orders`); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d orders in %s", exportRows, time.Since(seedStart).Round(time.Millisecond))
	if err := <-binErr; err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)

	addr := freeAddr(t)
	environ := append(os.Environ(), "DATABASE_URL="+rawURL, "PETSTORE_ADDR="+addr, "LOG_LEVEL=warn", "REDIS_URL=",
		"SESSION_KEYS=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "PETSTORE_SECRET_KEYS="+dbtest.SecretKey())
	keyCmd := exec.Command(bin, "keys", "create", "--name", "export", "--role", "staff", "--plan", "pro")
	keyCmd.Env = environ
	out, err := keyCmd.Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	key := lastLine(string(out))
	srv := exec.Command(bin, "serve")
	srv.Env = environ
	var stderr bytes.Buffer
	srv.Stdout, srv.Stderr = io.Discard, &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	base := "http://" + addr
	waitReady(t, base)

	get := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Warm up the paths the export takes (one day's worth), then read the
	// idle size.
	day := func(d time.Time) string { return d.Format(time.DateOnly) }
	warm := get("/api/store/orders/export?from=" + day(t0) + "&to=" + day(t0))
	if _, err := io.Copy(io.Discard, warm.Body); err != nil || warm.StatusCode != http.StatusOK {
		t.Fatalf("warm-up export: %d, %v", warm.StatusCode, err)
	}
	warm.Body.Close()
	time.Sleep(200 * time.Millisecond)
	idle := vmRSS(t, srv.Process.Pid)

	var (
		mu   sync.Mutex
		peak = idle
		done = make(chan struct{})
	)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if rss := vmRSS(t, srv.Process.Pid); rss > 0 {
					mu.Lock()
					peak = max(peak, rss)
					mu.Unlock()
				}
			}
		}
	}()
	start := time.Now()
	res := get("/api/store/orders/export?from=" + day(t0) + "&to=" + day(t0.AddDate(0, 0, 12)))
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("export: %d %s", res.StatusCode, b)
	}
	var bytesRead, lines int64
	var first, last string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		bytesRead += int64(len(line)) + 1
		if lines == 1 {
			first = line
		}
		last = line
		lines++
	}
	res.Body.Close()
	elapsed := time.Since(start)
	close(done)
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the export: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("exported %d rows, %d bytes in %s; server RSS idle %.1f MB, peak %.1f MB (+%.1f MB)",
		lines-1, bytesRead, elapsed.Round(time.Millisecond), mb(idle), mb(peak), mb(peak-idle))
	if lines-1 != exportRows {
		t.Errorf("%d rows exported, want %d", lines-1, exportRows)
	}
	if !strings.HasPrefix(first, "1,") || !strings.HasPrefix(last, strconv.Itoa(exportRows)+",") {
		t.Errorf("first row %q, last %q: want orders 1 to %d in the order placed", first, last, exportRows)
	}
	if peak-idle > 100<<20 {
		t.Errorf("the server grew by %.1f MB while streaming, want at most 100 MB", mb(peak-idle))
	}
}

// vmRSS is the resident set size of process pid in bytes, from
// /proc/<pid>/status (0 when it cannot be read).
func vmRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func ptrTo[T any](v T) *T { return &v }
