package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
)

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestMetricsListener: with PETSTORE_METRICS_ADDR set, /metrics and pprof
// are served on that listener only and the main port answers 404 for
// them; unset, /metrics stays on the main port (SPEC §11).
func TestMetricsListener(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		t.Run("set", func(t *testing.T) {
			// Both variables name the operations listener; the test serves
			// it on a port of its own choosing, as serve does on this one.
			cfg := testConfig(t, map[string]string{"DATABASE_URL": rawURL, "SESSION_KEYS": testSessionKey,
				"PETSTORE_METRICS_ADDR": "127.0.0.1:9090", "PETSTORE_PPROF_ADDR": "127.0.0.1:9090"})
			n := startNode(t, "A", cfg, nil, nil)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- n.srv.ServeOps(ctx, ln) }()
			t.Cleanup(func() {
				cancel()
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("ServeOps: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Error("the operations listener did not stop")
				}
			})
			ops := "http://" + ln.Addr().String()

			if status, _ := get(t, n.base+"/healthz"); status != http.StatusOK {
				t.Fatalf("main /healthz = %d", status)
			}
			for _, p := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline"} {
				if status, _ := get(t, n.base+p); status != http.StatusNotFound {
					t.Errorf("main port %s = %d, want 404", p, status)
				}
			}
			status, body := get(t, ops+"/metrics")
			if status != http.StatusOK || !strings.Contains(body, `petstore_http_requests_total{method="GET",route="/healthz",status="200"} 1`) ||
				!strings.Contains(body, "go_sql_max_open_connections") {
				t.Errorf("operations /metrics = %d:\n%.400s", status, body)
			}
			if status, body := get(t, ops+"/debug/pprof/"); status != http.StatusOK || !strings.Contains(body, "goroutine") {
				t.Errorf("operations /debug/pprof/ = %d", status)
			}
			if status, _ := get(t, ops+"/"); status != http.StatusNotFound {
				t.Errorf("operations / = %d, want 404: the app is not served there", status)
			}
		})
		t.Run("unset", func(t *testing.T) {
			cfg := testConfig(t, map[string]string{"DATABASE_URL": rawURL, "SESSION_KEYS": testSessionKey})
			n := startNode(t, "A", cfg, nil, nil)
			if n.srv.Ops != nil {
				t.Error("an operations handler without PETSTORE_METRICS_ADDR")
			}
			if status, body := get(t, n.base+"/metrics"); status != http.StatusOK || !strings.Contains(body, "go_sql_max_open_connections") {
				t.Errorf("main /metrics = %d, want 200 with the metrics", status)
			}
			if status, _ := get(t, n.base+"/debug/pprof/"); status != http.StatusNotFound {
				t.Errorf("main /debug/pprof/ = %d, want 404: pprof has its own listener", status)
			}
		})
	})
}

// TestMetricsAddrConfig: PETSTORE_METRICS_ADDR must be host:port, and
// with it pprof can only be on the same listener.
func TestMetricsAddrConfig(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	for _, tc := range []struct {
		env     map[string]string
		wantErr string
	}{
		{map[string]string{"PETSTORE_METRICS_ADDR": "127.0.0.1:9090"}, ""},
		{map[string]string{"PETSTORE_METRICS_ADDR": "127.0.0.1:9090", "PETSTORE_PPROF_ADDR": "127.0.0.1:9090"}, ""},
		{map[string]string{"PETSTORE_PPROF_ADDR": "127.0.0.1:6060"}, ""},
		{map[string]string{"PETSTORE_METRICS_ADDR": "9090"}, "PETSTORE_METRICS_ADDR: "},
		{map[string]string{"PETSTORE_METRICS_ADDR": "127.0.0.1:9090", "PETSTORE_PPROF_ADDR": "0.0.0.0:6060"}, "PETSTORE_PPROF_ADDR: must equal PETSTORE_METRICS_ADDR"},
	} {
		_, err := LoadConfig(func(k string) string { return tc.env[k] })
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want one starting %q", tc.env, err, tc.wantErr)
		}
	}
}
