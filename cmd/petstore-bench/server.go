package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lib/pq"
)

// buildServer compiles the real binary from the module at root into dir,
// so the bench measures exactly what `make build` ships.
func buildServer(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "petstore")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/petstore")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/petstore: %w\n%s", err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of the go.mod the bench was started in.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the bench inside the petstore module (make bench)")
	}
	return filepath.Dir(gomod), nil
}

// freshDatabase makes dir and a fresh database of the kind named for a
// bench run there: a new SQLite file under dir, or the PostgreSQL
// database of o.PostgresURL dropped and made again. It returns its URL.
func freshDatabase(ctx context.Context, database, dir string, o options) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if database != dbPostgres {
		return freshSQLite(dir), nil
	}
	return o.PostgresURL, freshPostgres(ctx, o.PostgresURL)
}

// freshSQLite names a new database file under dir.
func freshSQLite(dir string) string {
	return "sqlite:" + filepath.Join(dir, "bench.db")
}

// freshPostgres drops and recreates the database named in rawURL, through
// the server's maintenance database. An unreachable server is reported as
// errUnreachable so the caller can skip PostgreSQL with a note.
func freshPostgres(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("-postgres-url: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || name == "postgres" {
		return errors.New("-postgres-url must name a scratch database (it is dropped), e.g. /petstore_bench")
	}
	admin := *u
	admin.Path = "/postgres"
	conn, err := sql.Open("postgres", admin.String())
	if err != nil {
		return err
	}
	defer conn.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := conn.PingContext(pingCtx); err != nil {
		return fmt.Errorf("%w: %v", errUnreachable, err)
	}
	if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+pq.QuoteIdentifier(name)+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name)); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// errUnreachable marks a database server that did not answer.
var errUnreachable = errors.New("database unreachable")

// serverEnv is the environment of every petstore command the bench runs:
// request logs off, a fixed session secret so nothing is written under
// var/, webhooks allowed to loopback, and the bench's own GOGC and
// GOMEMLIMIT when set.
func serverEnv(databaseURL, addr string) []string {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"DATABASE_URL=" + databaseURL,
		"SESSION_KEYS=" + hex.EncodeToString(secret),
		"LOG_LEVEL=warn",
		// The webhook rows deliver to a receiver on loopback.
		"PETSTORE_WEBHOOK_ALLOW_PRIVATE=true",
	}
	if addr != "" {
		env = append(env, "PETSTORE_ADDR="+addr)
	}
	// The Go runtime's memory settings reach the server, to measure what
	// they trade (RSS against CPU per request).
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return append(env, traceEnv...)
}

// apiKeys are the bench's two keys: the staff key seeds and reads, the
// customer key places the orders, as a shop's programs do (a staff key's
// orders are also written to the audit log, SPEC §16).
type apiKeys struct{ staff, customer string }

// createKeys issues both keys.
func createKeys(ctx context.Context, bin, dir string, env []string) (apiKeys, error) {
	staff, err := createKey(ctx, bin, dir, env, "staff")
	if err != nil {
		return apiKeys{}, err
	}
	customer, err := createKey(ctx, bin, dir, env, "customer")
	return apiKeys{staff: staff, customer: customer}, err
}

// createKey issues one API key of role through the CLI, on the enterprise
// plan with limits too high to reach, so the limiter still runs on every
// request but never refuses one. The plain key is the last line of stdout.
func createKey(ctx context.Context, bin, dir string, env []string, role string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "keys", "create", "--name", "bench-"+role, "--role", role,
		"--plan", "enterprise", "--per-minute", "100000000", "--per-day", "1000000000")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("petstore keys create: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(key, "psk_") {
		return "", fmt.Errorf("petstore keys create: last line %q is not a key", key)
	}
	return key, nil
}

// server is one running `petstore serve` child process.
type server struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	pprof  string // http://127.0.0.1:PORT of its profiler, when started with one
	stderr *tailBuffer
	done   chan error
}

// startServer runs `bin serve` in dir with env on a free local port and
// waits until /healthz answers; with profiled, net/http/pprof listens on
// another free port (PETSTORE_PPROF_ADDR).
func startServer(ctx context.Context, bin, dir, databaseURL string, profiled bool) (*server, error) {
	return startServerWith(ctx, bin, dir, databaseURL, profiled, nil)
}

// startServerWith is startServer with more variables in the server's
// environment (extra: NAME=value).
func startServerWith(ctx context.Context, bin, dir, databaseURL string, profiled bool, extra []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env = dir, append(serverEnv(databaseURL, addr), extra...)
	s := &server{cmd: cmd, base: "http://" + addr, stderr: &tailBuffer{max: 8 << 10}, done: make(chan error, 1)}
	if profiled {
		pport, err := freePort()
		if err != nil {
			return nil, err
		}
		s.pprof = "http://127.0.0.1:" + strconv.Itoa(pport)
		cmd.Env = append(cmd.Env, "PETSTORE_PPROF_ADDR=127.0.0.1:"+strconv.Itoa(pport))
	}
	cmd.Stdout = nil // the first-start banner: nothing the bench needs
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start petstore serve: %w", err)
	}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitHealthy(ctx, 60*time.Second); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitHealthy polls /healthz until it answers 200, the process exits or
// the timeout passes.
func (s *server) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("petstore serve exited during start: %v\n%s", err, s.stderr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("petstore serve did not become healthy within %s\n%s", timeout, s.stderr)
}

// peakRSS is the server's peak resident set (VmHWM) in bytes.
func (s *server) peakRSS() (int64, error) {
	return procStatusBytes(s.cmd.Process.Pid, "VmHWM:")
}

// rss is the server's resident set now (VmRSS) in bytes.
func (s *server) rss() (int64, error) {
	return procStatusBytes(s.cmd.Process.Pid, "VmRSS:")
}

// settledRSS is the server's resident set once it stops shrinking (two
// readings 200 ms apart within 1 MB, or after 5 s): memory an upload
// just finished with is handed back after its answer is sent.
func (s *server) settledRSS(ctx context.Context) (int64, error) {
	last, err := s.rss()
	for i := 0; err == nil && i < 25; i++ {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		var now int64
		if now, err = s.rss(); err == nil && last-now < 1<<20 {
			return now, nil
		}
		last = now
	}
	return last, err
}

// resetPeakRSS sets the server's VmHWM back to its current resident set
// (Linux's clear_refs, value 5), so that the next peakRSS is the peak of
// what happens after it.
func (s *server) resetPeakRSS() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0)
}

// procStatusBytes reads one "kB" field of /proc/<pid>/status.
func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s %q: %w", field, rest, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// stop sends SIGTERM (graceful shutdown) and kills the process if it has
// not exited within 15 seconds.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// freePort asks the kernel for a free local TCP port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written: a child's stderr, for the
// error message when it fails.
type tailBuffer struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
