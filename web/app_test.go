package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/web/ratelimit"
)

// The tests of this package build the app core as the product does
// (NewApp), with a few routes of their own, and drive it with app.Test or,
// where the rule is about the connection, over a real one.

// newTestApp is NewApp with o (a discarding logger unless o has one) and
// the routes add gives it; the app is shut down after the test.
func newTestApp(t *testing.T, o AppOptions, add func(r *Routes)) *fiber.App {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	app, routes := NewApp(o)
	if add != nil {
		add(routes)
	}
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return app
}

// route is a Route line for method and path served by handlers.
func route(method, path string, handlers ...fiber.Handler) Route {
	return Route{Method: method, Path: path, Handlers: handlers}
}

// answer is a response as a test reads it.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// send makes req to app with app.Test and reads the answer.
func send(t *testing.T, app *fiber.App, req *http.Request) answer {
	t.Helper()
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read the body: %v", req.Method, req.URL, err)
	}
	return answer{Status: res.StatusCode, Header: res.Header, Body: body}
}

// get is send of a GET of path with the headers given as name, value pairs.
func get(t *testing.T, app *fiber.App, path string, header ...string) answer {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return send(t, app, req)
}

// problem decodes the answer as the Error object, failing the test when
// it is not one: JSON, and its status that of the answer.
func (a answer) problem(t *testing.T) Problem {
	t.Helper()
	var p Problem
	dec := json.NewDecoder(bytes.NewReader(a.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("answer %d is not the Error object (%v): %s", a.Status, err, a.Body)
	}
	if p.Status != a.Status {
		t.Errorf("Error object status = %d, want the answer's %d", p.Status, a.Status)
	}
	if ct := a.Header.Get(fiber.HeaderContentType); ct != fiber.MIMEApplicationJSON {
		t.Errorf("Error object Content-Type = %q, want %q", ct, fiber.MIMEApplicationJSON)
	}
	return p
}

// listen serves app on a loopback port until the test ends and returns
// its address (host:port). It serves as the product does, closing
// connections with a lingering close (Lingering).
func listen(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(Lingering(ln)) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return ln.Addr().String()
}

// logBuffer is a log sink the server's goroutines may write while a test
// reads it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records are the JSON log lines written so far.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// jsonLogger logs JSON lines to a logBuffer, debug level and up.
func jsonLogger() (*slog.Logger, *logBuffer) {
	var buf logBuffer
	return slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

var madeRequestID = regexp.MustCompile(`^[0-9a-f]{24}$`)

// TestRequestID: every answer carries X-Request-Id, errors too (and the
// Error object's requestId is the same id); a sane incoming id from a
// trusted proxy is kept so a caller can follow its request through the
// logs, anything else is replaced by a fresh one.
func TestRequestID(t *testing.T) {
	app := newTestApp(t, AppOptions{Proxies: trust(t, "0.0.0.0")}, func(r *Routes) { // app.Test's peer
		r.Add(route("GET", "/ok", func(c *fiber.Ctx) error { return c.SendString(RequestID(c)) }))
	})
	for _, tc := range []struct {
		name, path, sent string
		keep             bool
	}{
		{"none sent", "/ok", "", false},
		{"sane id kept", "/ok", "abc-123_X.y", true},
		{"64 characters kept", "/ok", strings.Repeat("a", 64), true},
		{"65 characters replaced", "/ok", strings.Repeat("a", 65), false},
		{"markup replaced", "/ok", "<script>", false},
		{"spaces replaced", "/ok", "a b", false},
		{"kept on an error", "/missing", "trace-42", true},
		{"replaced on an error", "/missing", "x\"y", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a answer
			if tc.sent == "" {
				a = get(t, app, tc.path)
			} else {
				a = get(t, app, tc.path, fiber.HeaderXRequestID, tc.sent)
			}
			got := a.Header.Get(fiber.HeaderXRequestID)
			if tc.keep && got != tc.sent {
				t.Errorf("X-Request-Id = %q, want the one sent, %q", got, tc.sent)
			}
			if !tc.keep && !madeRequestID.MatchString(got) {
				t.Errorf("X-Request-Id = %q, want a fresh id (24 hex digits)", got)
			}
			if a.Status == http.StatusOK {
				if string(a.Body) != got {
					t.Errorf("RequestID in the handler = %q, want the header's %q", a.Body, got)
				}
				return
			}
			if p := a.problem(t); p.RequestID != got {
				t.Errorf("Error object requestId = %q, want X-Request-Id %q", p.RequestID, got)
			}
		})
	}
	t.Run("fresh ids differ", func(t *testing.T) {
		first, second := get(t, app, "/ok").Header.Get(fiber.HeaderXRequestID), get(t, app, "/ok").Header.Get(fiber.HeaderXRequestID)
		if first == second {
			t.Errorf("two requests got the same id %q", first)
		}
	})
}

// TestRequestIDFromClients: a peer that is not a trusted proxy never
// names its request (the id is in the logs and the audit log): it gets
// the server's own id, on answers and errors alike, and a sane id it sent
// is logged beside it as clientRequestId.
func TestRequestIDFromClients(t *testing.T) {
	logger, logs := jsonLogger()
	app := newTestApp(t, AppOptions{Logger: logger, Proxies: trust(t, "10.0.0.0/8")}, func(r *Routes) {
		r.Add(route("GET", "/ok", func(c *fiber.Ctx) error { return c.SendString(RequestID(c)) }))
	})
	for _, tc := range []struct{ path, sent, logged string }{
		{"/ok", "abc-123_X.y", "abc-123_X.y"},
		{"/missing", "trace-42", "trace-42"},
		{"/ok", "<script>", ""},
		{"/ok", "", ""},
	} {
		a := get(t, app, tc.path, fiber.HeaderXRequestID, tc.sent)
		got := a.Header.Get(fiber.HeaderXRequestID)
		if !madeRequestID.MatchString(got) {
			t.Errorf("%s, %q sent: X-Request-Id = %q, want the server's own (24 hex digits)", tc.path, tc.sent, got)
		}
		if a.Status != http.StatusOK {
			if p := a.problem(t); p.RequestID != got {
				t.Errorf("Error object requestId = %q, want X-Request-Id %q", p.RequestID, got)
			}
		} else if string(a.Body) != got {
			t.Errorf("RequestID in the handler = %q, want the header's %q", a.Body, got)
		}
		var line map[string]any
		for _, r := range logs.records(t) {
			if r["requestId"] == got {
				line = r
			}
		}
		if line == nil {
			t.Fatalf("no log line with requestId %s", got)
		}
		if logged, _ := line["clientRequestId"].(string); logged != tc.logged {
			t.Errorf("%q sent: clientRequestId logged = %q, want %q", tc.sent, logged, tc.logged)
		}
	}
}

// trust is TRUSTED_PROXIES list.
func trust(t *testing.T, list string) ratelimit.TrustedProxies {
	t.Helper()
	p, err := ratelimit.ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSlowClientsCutOff: a client that trickles its request (slowloris),
// its headers or its body, has the server's ReadTimeout (15 s in NewApp;
// a fraction of a second here) for the whole request, however often it
// sends a byte: then it gets 408 as the Error object (code bad_request),
// or the connection closes without an answer, and is never held open.
func TestSlowClientsCutOff(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/ok", func(c *fiber.Ctx) error { return c.SendString("ok") }))
		r.Add(route("POST", "/echo", func(c *fiber.Ctx) error { return c.Send(c.Body()) }))
	})
	app.Server().ReadTimeout = readTimeout // before it listens
	addr := listen(t, app)
	for _, tc := range []struct{ name, head, trickle string }{
		{"slow headers", "", "GET /ok HTTP/1.1\r\nHost: x\r\nX-Padding: " + strings.Repeat("p", 40) + "\r\n\r\n"},
		{"slow body", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n", strings.Repeat(" ", 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			began := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go func() { // a byte every 20 ms: the whole request would take over a second
				_, _ = io.WriteString(conn, tc.head)
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for i := range len(tc.trickle) {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					if _, err := conn.Write([]byte{tc.trickle[i]}); err != nil {
						return // closed by the server: the point
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(readTimeout + 5*time.Second))
			out, err := io.ReadAll(conn)
			took := time.Since(began)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the server held the connection for %s (ReadTimeout %s)", took.Round(time.Millisecond), readTimeout)
			}
			if took > readTimeout+time.Second {
				t.Errorf("closed after %s, want about ReadTimeout %s", took.Round(time.Millisecond), readTimeout)
			}
			if len(out) == 0 {
				return // closed without an answer
			}
			res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
			if err != nil {
				t.Fatalf("answer %q: %v", out, err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			a := answer{Status: res.StatusCode, Header: res.Header, Body: body}
			if a.Status != http.StatusRequestTimeout {
				t.Fatalf("answer %d %s, want 408 or none", a.Status, body)
			}
			if p := a.problem(t); p.Code != "bad_request" {
				t.Errorf("408 with code %q, want bad_request", p.Code)
			}
		})
	}
}
