package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestGracefulShutdown sends SIGTERM to the real binary during a burst of
// orders: every order a client got 201 for is in the database afterwards,
// no client got a 5xx, an open event stream ends with a whole last frame,
// the shutdown is logged, and the process exits cleanly. The binary runs as
// a subprocess on the real clock (main's systemClock; no test clock and no
// PETSTORE_TEST_CLOCK_OFFSET reaches it), so the store opened here to check
// its work uses that clock too.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "store.db")
	addr := freeAddr(t)
	environ := append(os.Environ(), "DATABASE_URL="+dbURL, "PETSTORE_ADDR="+addr,
		"SESSION_KEYS=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "REDIS_URL=", "PETSTORE_SECRET_KEYS="+dbtest.SecretKey())

	cli := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = environ
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("petstore %v: %v", args, err)
		}
		return lastLine(string(out))
	}
	key := cli("keys", "create", "--name", "load", "--role", "staff", "--plan", "enterprise", "--per-minute", "10000000", "--per-day", "100000000")

	srv := exec.Command(bin, "serve")
	srv.Env = environ
	stdout, _ := srv.StdoutPipe()
	var stderr bytes.Buffer
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill() })
	go io.Copy(io.Discard, stdout)
	base := "http://" + addr
	waitReady(t, base)

	client := &http.Client{Timeout: 15 * time.Second}
	call := func(method, path string, body any) (int, []byte, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		return res.StatusCode, out, err
	}
	status, body, err := call("POST", "/api/categories", map[string]any{"name": "Load"})
	if err != nil || status != 201 {
		t.Fatalf("create category: %d %s %v", status, body, err)
	}
	var cat db.Category
	_ = json.Unmarshal(body, &cat)
	status, body, err = call("POST", "/api/pets", map[string]any{"name": "Stocky", "categoryId": cat.ID})
	if err != nil || status != 201 {
		t.Fatalf("create pet: %d %s %v", status, body, err)
	}
	var pet db.Pet
	_ = json.Unmarshal(body, &pet)
	if status, body, err = call("PUT", fmt.Sprintf("/api/store/inventory/%d", pet.ID), map[string]any{"quantity": 1000000}); status != 200 {
		t.Fatalf("stock: %d %s %v", status, body, err)
	}

	var (
		mu       sync.Mutex
		accepted []int64
		fiveXX   []string
	)
	stopOrders := untilStopped(8, func() bool {
		status, body, err := call("POST", "/api/store/orders", map[string]any{"petId": pet.ID, "quantity": 1})
		if err != nil {
			// Refused or reset connections are the server going away,
			// not answers: the client knows the order was not confirmed.
			return !strings.Contains(err.Error(), "refused")
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case status == 201:
			var o db.Order
			_ = json.Unmarshal(body, &o)
			accepted = append(accepted, o.ID)
		case status >= 500:
			fiveXX = append(fiveXX, fmt.Sprintf("%d %s", status, body))
		}
		return true
	})
	stream := openEventStream(t, base, key)
	time.Sleep(700 * time.Millisecond)
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("server exited with %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop within 20 s of SIGTERM")
	}
	stopOrders()
	stream.wantShutdownEnd(t)
	wantShutdownLogs(t, stderr.String())

	if len(fiveXX) > 0 {
		t.Errorf("%d answers were 5xx, e.g. %s", len(fiveXX), fiveXX[0])
	}
	if len(accepted) < 10 {
		t.Fatalf("only %d orders were accepted before shutdown; the burst did not run", len(accepted))
	}
	ctx := context.Background()
	store, err := db.Open(ctx, dbURL, systemClock)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range accepted {
		if _, err := store.FindOrderByID(ctx, id, nil); err != nil {
			t.Fatalf("order %d got 201 but is not in the database: %v", id, err)
		}
	}
	t.Logf("%d orders accepted before SIGTERM; all present after shutdown", len(accepted))
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server at %s not ready", base)
}

// eventStream is an open GET /api/events read to its end in the background.
type eventStream struct {
	body []byte
	err  error
	done chan struct{}
}

func openEventStream(t *testing.T, base, key string) *eventStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/events", nil)
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/events: %v %v", res, err)
	}
	s := &eventStream{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer res.Body.Close()
		s.body, s.err = io.ReadAll(res.Body)
	}()
	return s
}

// wantShutdownEnd checks that the server ended the stream cleanly (the
// chunked body ended, not the connection cut) after whole frames, the last
// one telling the client to reconnect.
func (s *eventStream) wantShutdownEnd(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream was still open after the server exited")
	}
	body := string(s.body)
	frames := strings.Split(body, "\n\n")
	if s.err != nil || len(frames) < 3 || frames[len(frames)-1] != "" {
		t.Fatalf("event stream ended with %v after %q; want a clean end after whole frames", s.err, body)
	}
	if last := frames[len(frames)-2]; !strings.HasPrefix(last, ": shutting down") || !strings.HasSuffix(last, "\nretry: 1000") {
		t.Errorf("last frame %q, want the shutdown frame", last)
	}
}

// wantShutdownLogs checks that every log line is JSON and that the
// shutdown is logged: its start with the signal, its end with its length.
func wantShutdownLogs(t *testing.T, stderr string) {
	t.Helper()
	msgs := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line %q is not JSON", line)
			continue
		}
		msgs[rec["msg"].(string)] = rec
	}
	if cause, _ := msgs["shutting down"]["cause"].(string); !strings.Contains(cause, "terminated") {
		t.Errorf("shutting down logged as %v, want the signal (terminated) as its cause", msgs["shutting down"])
	}
	if _, ok := msgs["stopped"]["durationMs"].(float64); !ok {
		t.Errorf("stopped logged as %v, want it with durationMs", msgs["stopped"])
	}
}

// untilStopped runs work over and over on n goroutines until the returned
// stop is called, a goroutine ending early when work returns false. stop
// waits for all of them.
func untilStopped(n int, work func() bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if !work() {
					return
				}
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
