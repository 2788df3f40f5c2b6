package main

// The shared harness of the browser tests (storefront and console): a real
// server on a temporary SQLite file with the demo catalog, a headless
// Debian chromium driven by chromedp, and full-page screenshots.
//
//	ts := startServer(t)              // NewServer on 127.0.0.1:0, demo data
//	ctx := newBrowser(t, true)        // false: JavaScript off
//	browse(t, ctx, chromedp.Navigate(ts.URL+"/"))
//	screenshot(t, ctx, "catalog")     // testdata/screenshots/<Test>-catalog.png
//
// The browser tests run when PETSTORE_TEST_CHROMIUM names the browser
// (/usr/bin/chromium) or in CI (CI=true), as the PostgreSQL and Redis tests
// run when their variables are set: they take about two of make test's
// minutes, so a plain make test skips them with a message. In CI a missing
// browser fails them. make test runs them without -race, by name (the
// Makefile's BROWSERS): a test that starts a browser is named *Browser*,
// and every such test lives in this package (TestBrowserTestsLiveHere).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web"
)

// TestBrowserTestsLiveHere fails if a package other than this one has a
// test named *Browser*: make test's pass under -race skips such tests in
// every package, and its pass without -race runs them in this one only, so
// one elsewhere would run in neither.
func TestBrowserTestsLiveHere(t *testing.T) {
	t.Parallel()
	named := regexp.MustCompile(`(?m)^func (Test\w*Browser\w*)\(`)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(filepath.Join(here, "..", ".."), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "var"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range named.FindAllSubmatch(src, -1) {
			if filepath.Dir(path) == here {
				seen++
			} else {
				t.Errorf("%s in %s: make test runs the *Browser* tests of cmd/petstore only", m[1], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 30 {
		t.Errorf("found %d *Browser* tests in cmd/petstore; want the thirty-odd there are", seen)
	}
}

// ChromiumEnv names the variable that points the tests at another browser.
const ChromiumEnv = "PETSTORE_TEST_CHROMIUM"

// screenshotDir is where screenshot saves, relative to this package
// (cmd/petstore/testdata/screenshots, ignored by git).
const screenshotDir = "testdata/screenshots"

// testServer is one running instance for browser tests.
type testServer struct {
	// URL is the base address, e.g. http://127.0.0.1:41234 (no slash).
	URL string
	// Server is the instance NewServer built; Store is its database.
	Server *Server
	Store  *db.Store
	// Config is what it runs with; Config.SessionKeys can mint session
	// cookies (browser.NewSessions) to log a browser in without the form.
	Config *Config
	// Clock is the server's clock, pinned: the test moves it.
	Clock *dbtest.Clock
	logs  *syncBuffer
}

// startServer runs the real app (NewServer, as `petstore serve` does) on
// a fresh SQLite file in t.TempDir(), seeded with the demo catalog
// (Store.SeedDemo), with generated SESSION_KEYS and a pinned clock,
// listening on 127.0.0.1:0. It shuts down when the test ends (ShutdownWithTimeout);
// the server's log is printed when the test failed.
func startServer(t *testing.T) *testServer {
	t.Helper()
	return startServerWith(t, nil)
}

// startServerWith is startServer with the variables env added to its
// configuration (PETSTORE_WEBHOOK_ALLOW_PRIVATE for a receiver on this
// machine).
func startServerWith(t *testing.T, extra map[string]string) *testServer {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "petstore.db"),
		"SESSION_KEYS": hex.EncodeToString(key),
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg, err := LoadConfig(func(k string) string { return withTestSecretKeys(env)[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx := context.Background()
	clock := dbtest.NewClock(t)
	srv, err := NewServer(ctx, cfg, logger, clock.Now)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	if seeded, err := srv.Store.SeedDemo(ctx); err != nil || !seeded {
		srv.Close()
		t.Fatalf("seed = %v, %v; want the demo catalog in the new database", seeded, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.App.Listener(web.Lingering(ln)) }()
	ts := &testServer{URL: "http://" + ln.Addr().String(), Server: srv, Store: srv.Store, Config: cfg, Clock: clock, logs: logs}
	// Serving before the test goes on: a shutdown that came before the
	// listener's first accept (a test that skips at once) would leave
	// the server running and the cleanup waiting for it.
	waitServing(t, ts.URL)
	t.Cleanup(func() {
		srv.Hub.Close() // ends event streams, which would hold the shutdown up
		if err := srv.App.ShutdownWithTimeout(5 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		srv.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

// waitServing waits until the server at url answers /healthz.
func waitServing(t *testing.T, url string) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	for range 1000 { // 10 s in 10 ms steps
		time.Sleep(10 * time.Millisecond)
		resp, err := client.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
	}
	t.Fatalf("the test server at %s did not answer within 10 s", url)
}

// chromiumPath finds the browser, or skips the test (fails it in CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/chromium", "chromium", "chromium-browser"}
	if p := os.Getenv(ChromiumEnv); p != "" {
		candidates = []string{p}
	} else if os.Getenv("CI") != "true" {
		t.Skipf("%s not set (e.g. /usr/bin/chromium): skipping the browser test", ChromiumEnv)
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "no chromium at " + strings.Join(candidates, ", ") + " (apt-get install -y chromium, or set " + ChromiumEnv + ")"
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: the browser tests are required in CI", msg)
	}
	t.Skipf("%s: skipping the browser test", msg)
	return ""
}

// newBrowser starts a headless chromium with a fresh profile and returns
// the context of its first tab, 1280×900. jsEnabled false turns page
// scripts off (--blink-settings=scriptEnabled=false), to check the
// no-JavaScript fallbacks; chromedp itself still works. The browser
// closes when the test ends; each step has at most two minutes in all.
func newBrowser(t *testing.T, jsEnabled bool) context.Context {
	t.Helper()
	if !strings.Contains(t.Name(), "Browser") {
		// make test runs the browser tests by this name, without -race.
		t.Fatalf("%s starts a browser: its name must contain Browser (the Makefile's BROWSERS)", t.Name())
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // chromium as root (containers, CI) needs it
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	if !jsEnabled {
		opts = append(opts, chromedp.Flag("blink-settings", "scriptEnabled=false"))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// Four minutes: some thirty browser tests run side by side on CI's two
	// cores, each its own chromium, and the longest walks (the console's,
	// the axe walks) take two minutes of that.
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// browse runs steps in the tab and fails the test at the first error,
// saving a screenshot of the page as it was ("<Test>-failure.png").
func browse(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		screenshot(t, ctx, "failure")
		t.Fatalf("browser at %s: %v", loc, err)
	}
}

// read runs one action that returns a value, failing the test on error.
func read[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("browser at %s: %v", loc, err)
	}
	return v
}

// screenshot saves a full-page PNG of the tab as
// testdata/screenshots/<TestName>-<name>.png and logs its path, so
// `make test` (go test -v) reports where to look.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	// From the top, so sticky headers sit where they belong; this works
	// with page scripts off too (DevTools evaluates it).
	_ = chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	return savePNG(t, name, png)
}

// viewScreenshot saves what the screen shows, not the whole page, as
// screenshot does.
func viewScreenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	return savePNG(t, name, png)
}

// savePNG writes a screenshot as testdata/screenshots/<TestName>-<name>.png
// and logs its path.
func savePNG(t *testing.T, name string, png []byte) string {
	t.Helper()
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + name + ".png"
	path, err := filepath.Abs(filepath.Join(screenshotDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}
