package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/valyala/fasthttp"

	"petstore/db"
)

// failing is an app whose GET /fail returns err; logs gets its log lines.
func failing(t *testing.T, err func() error) (*fiber.App, *logBuffer) {
	t.Helper()
	logger, logs := jsonLogger()
	app := newTestApp(t, AppOptions{Logger: logger}, func(r *Routes) {
		r.Add(route("GET", "/fail", func(*fiber.Ctx) error { return err() }))
		r.Add(route("GET", "/ok", func(c *fiber.Ctx) error { return c.SendString("ok") }))
	})
	return app, logs
}

// failures are the log lines of the error handler (server failures).
func failures(t *testing.T, logs *logBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range logs.records(t) {
		if r["msg"] == "request failed" {
			out = append(out, r)
		}
	}
	return out
}

// TestErrorCodes: every error code of SPEC §2 (and of the additions since)
// answers its status, with the Error object {code, message, status} and
// the details and requestId; the message is the one the code was raised
// with. The table is the whole list: a code the error handler knows and
// the table does not fails it.
func TestErrorCodes(t *testing.T) {
	want := map[string]int{
		"bad_request":             400,
		"unauthorized":            401,
		"forbidden":               403,
		"api_key_banned":          403,
		"not_found":               404,
		"method_not_allowed":      405,
		"insufficient_stock":      409,
		"pet_not_available":       409,
		"invalid_transition":      409,
		"order_complete":          409,
		"category_exists":         409,
		"category_in_use":         409,
		"pet_has_open_orders":     409,
		"idempotency_in_progress": 409,
		"too_many_photos":         409,
		"too_many_open_units":     409,
		"import_running":          409,
		"too_many_webhooks":       409,
		"webhook_disabled":        409,
		"last_admin":              409,
		"endpoint_sunset":         410,
		"payload_too_large":       413,
		"unsupported_media_type":  415,
		"validation_failed":       422,
		"idempotency_key_reused":  422,
		"rate_limited":            429,
		"internal":                500,
		"unavailable":             503,
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(statusOf))); diff != "" {
		t.Errorf("codes the error handler knows (-this table +statusOf):\n%s", diff)
	}
	for _, code := range slices.Sorted(maps.Keys(want)) {
		t.Run(code, func(t *testing.T) {
			details := []db.FieldError{{Field: "name", Message: "must not be empty"}}
			app, logs := failing(t, func() error {
				e := db.Errorf(code, "Message of %s.", code)
				e.Details = details
				return fmt.Errorf("wrapped: %w", e)
			})
			a := get(t, app, "/fail")
			wantProblem := Problem{Code: code, Message: "Message of " + code + ".", Status: want[code], Details: details, RequestID: a.Header.Get(fiber.HeaderXRequestID)}
			if diff := cmp.Diff(wantProblem, a.problem(t), cmpopts.IgnoreFields(Problem{}, "Outage")); a.Status != want[code] || diff != "" {
				t.Errorf("status %d, want %d; Error object (-want +got):\n%s", a.Status, want[code], diff)
			}
			if got, wantLogged := len(failures(t, logs)), want[code] >= 500; (got == 1) != wantLogged || got > 1 {
				t.Errorf("logged %d times, want a server failure logged once and nothing else", got)
			}
		})
	}
}

// problemAnswer is what a test of the error path checks of an answer.
type problemAnswer struct {
	Status     int
	Code       string
	Message    string
	RetryAfter string
	Logged     bool // the error handler logged it as a server failure
}

// TestErrorsNeverLeak: an error with no code of SPEC §2, a panic
// included, is 500 internal "Internal error." and is logged, with the
// request id, for us to read, but none of its words reach the client;
// errors Fiber raises itself keep their status with messages of our own,
// a 4xx without a code of its own being bad_request; a database that
// cannot be reached is 503 unavailable with Retry-After, decided by the
// error, not its words.
func TestErrorsNeverLeak(t *testing.T) {
	const secret = "secret: the database password is hunter2"
	internal := problemAnswer{Status: 500, Code: db.EInternal, Message: "Internal error.", Logged: true}
	for _, tc := range []struct {
		name string
		err  func() error
		want problemAnswer
	}{
		{"an error", func() error { return errors.New(secret) }, internal},
		{"a wrapped error", func() error { return fmt.Errorf("find pets: %w", errors.New(secret)) }, internal},
		{"a panic", func() error { panic(secret) }, internal},
		{"a panic with an error", func() error { panic(errors.New(secret)) }, internal},
		{"a code of no one's", func() error { return db.Errorf("secret_code", secret) }, internal},
		{"Fiber's 500", func() error { return fiber.NewError(500, secret) }, internal},
		{"Fiber's 404", func() error { return fiber.NewError(404, secret) }, problemAnswer{Status: 404, Code: db.ENotFound, Message: "Not found."}},
		{"Fiber's 413", func() error { return fiber.NewError(413, secret) }, problemAnswer{Status: 413, Code: EPayloadTooLarge, Message: "The request body is larger than 64 KiB."}},
		{"Fiber's 415", func() error { return fiber.NewError(415, secret) }, problemAnswer{Status: 415, Code: EUnsupportedMediaType, Message: "The request body must be JSON."}},
		{"Fiber's 422", func() error { return fiber.NewError(422, secret) }, problemAnswer{Status: 400, Code: db.EBadRequest, Message: "The request is malformed."}},
		{"Fiber's 503", func() error { return fiber.NewError(503, secret) },
			problemAnswer{Status: 503, Code: db.EUnavailable, Message: "The service is unavailable; try again shortly.", RetryAfter: "5", Logged: true}},
		{"a query past its deadline", func() error { return fmt.Errorf("find pets (%s): %w", secret, context.DeadlineExceeded) },
			problemAnswer{Status: 503, Code: db.EUnavailable, Message: "The database is unavailable; try again shortly.", RetryAfter: "5", Logged: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, logs := failing(t, tc.err)
			a := get(t, app, "/fail", fiber.HeaderAccept, fiber.MIMEApplicationJSON)
			p := a.problem(t)
			logged := failures(t, logs)
			got := problemAnswer{Status: a.Status, Code: p.Code, Message: p.Message, RetryAfter: a.Header.Get(fiber.HeaderRetryAfter), Logged: len(logged) == 1}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if strings.Contains(string(a.Body), "hunter2") || strings.Contains(fmt.Sprint(a.Header), "hunter2") {
				t.Errorf("internals leaked: %v %s", a.Header, a.Body)
			}
			if len(logged) == 1 && logged[0]["requestId"] != a.Header.Get(fiber.HeaderXRequestID) {
				t.Errorf("logged with request id %v, want X-Request-Id %q", logged[0]["requestId"], a.Header.Get(fiber.HeaderXRequestID))
			}
			if len(logged) > 1 {
				t.Errorf("logged %d times, want once", len(logged))
			}
			if b := get(t, app, "/ok"); b.Status != 200 {
				t.Errorf("after it, GET /ok = %d, want 200", b.Status)
			}
		})
	}
}

// TestFiberRouting: a path no route has is 404 not_found, a method the
// path does not take 405 method_not_allowed, both as the Error object.
func TestFiberRouting(t *testing.T) {
	app, logs := failing(t, func() error { return nil })
	for _, tc := range []struct {
		method, path string
		want         problemAnswer
	}{
		{"GET", "/nowhere", problemAnswer{Status: 404, Code: db.ENotFound, Message: "Not found."}},
		{"DELETE", "/ok", problemAnswer{Status: 405, Code: EMethodNotAllowed, Message: "Method not allowed."}},
	} {
		a := send(t, app, httptest.NewRequest(tc.method, tc.path, nil))
		p := a.problem(t)
		got := problemAnswer{Status: a.Status, Code: p.Code, Message: p.Message}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
		}
	}
	if n := len(failures(t, logs)); n != 0 {
		t.Errorf("logged %d client errors as server failures", n)
	}
}

// TestSurfaceRenders: the route group that matched renders its errors
// (Surface.Errors), with the status and request id set and the Problem
// to show; a request no group marked gets the default surface's, and
// without one the Error object.
func TestSurfaceRenders(t *testing.T) {
	page := &Surface{Errors: func(c *fiber.Ctx, p Problem) error {
		return c.SendString(fmt.Sprintf("page: %d %s %s", c.Response().StatusCode(), p.Code, p.RequestID))
	}}
	fallback := &Surface{Errors: func(c *fiber.Ctx, p Problem) error { return c.SendString("fallback: " + p.Code) }}
	app, routes := NewApp(AppOptions{Logger: slog.New(slog.DiscardHandler),
		Proxies: trust(t, "0.0.0.0")}) // app.Test's peer: its X-Request-Id is the id
	t.Cleanup(func() { _ = app.Shutdown() })
	forbidden := func(*fiber.Ctx) error { return db.Errorf(db.EForbidden, "No.") }
	routes.Add(route("GET", "/page", page.Mark, forbidden))
	routes.Add(route("GET", "/api", forbidden))
	for _, tc := range []struct {
		path string
		want string
	}{
		{"/page", "page: 403 forbidden trace-1"},
		{"/api", `{"code":"forbidden","message":"No.","status":403,"requestId":"trace-1"}`},
	} {
		a := get(t, app, tc.path, fiber.HeaderXRequestID, "trace-1")
		if a.Status != 403 || string(a.Body) != tc.want {
			t.Errorf("GET %s: %d %s, want 403 %s", tc.path, a.Status, a.Body, tc.want)
		}
	}
	app.Use(fallback.Default, func(*fiber.Ctx) error { return db.Errorf(db.ENotFound, "No page.") })
	if a := get(t, app, "/nowhere"); a.Status != 404 || string(a.Body) != "fallback: not_found" {
		t.Errorf("GET /nowhere: %d %s, want the default surface's 404", a.Status, a.Body)
	}
}

// TestUnreadableRequests: a request fasthttp cannot read is answered
// before any route or group saw it, so always with the Error object, in
// words of our own: headers past the read buffer 431, a read timeout 408,
// a body past the limit 413, anything else 400. A connection the client
// broke (Fiber's 502) is the client's doing: 400, not logged as ours, so
// no client can fill the error log.
func TestUnreadableRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want problemAnswer
	}{
		{"headers too large", &fasthttp.ErrSmallBuffer{}, problemAnswer{Status: 431, Code: db.EBadRequest, Message: "The request headers are too large."}},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, problemAnswer{Status: 408, Code: db.EBadRequest, Message: "The request took too long to arrive."}},
		{"body too large", fasthttp.ErrBodyTooLarge, problemAnswer{Status: 413, Code: EPayloadTooLarge, Message: "The request body is larger than 64 KiB."}},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, problemAnswer{Status: 400, Code: db.EBadRequest, Message: "The request could not be read."}},
		{"malformed", errors.New(`cannot parse Content-Length "secret"`), problemAnswer{Status: 400, Code: db.EBadRequest, Message: "The request is malformed."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := jsonLogger()
			app, _ := NewApp(AppOptions{Logger: logger})
			t.Cleanup(func() { _ = app.Shutdown() })
			// Even on a page's surface: the request is gone, nothing tells
			// a page from an API call, and programs read the Error object.
			var ctx fasthttp.RequestCtx
			ctx.SetUserValue(surfaceLocal{}, &Surface{Errors: func(c *fiber.Ctx, p Problem) error { return c.SendString("a page") }})
			app.Server().ErrorHandler(&ctx, tc.err)
			a := answer{Status: ctx.Response.StatusCode(), Header: http.Header{}, Body: ctx.Response.Body()}
			ctx.Response.Header.VisitAll(func(k, v []byte) { a.Header.Add(string(k), string(v)) })
			p := a.problem(t)
			got := problemAnswer{Status: a.Status, Code: p.Code, Message: p.Message, Logged: len(failures(t, logs)) > 0}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestClientResetIsNotOurError breaks a connection in the middle of a
// request body: the request is answered (to nobody) as the client's
// failure, 400, nothing is logged as a server failure, and the server
// goes on serving.
func TestClientResetIsNotOurError(t *testing.T) {
	logger, logs := jsonLogger()
	app, routes := NewApp(AppOptions{Logger: logger})
	routes.Add(route("POST", "/echo", func(c *fiber.Ctx) error { return c.Send(c.Body()) }))
	routes.Add(route("GET", "/ok", func(c *fiber.Ctx) error { return c.SendString("ok") }))
	// The server's hooks say when the headers are in and when the error
	// answer is made: no waiting on the clock.
	srv := app.Server()
	headersIn, answered := make(chan struct{}, 1), make(chan int, 1)
	received, handleError := srv.HeaderReceived, srv.ErrorHandler
	srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		cfg := received(h)
		select {
		case headersIn <- struct{}{}:
		default:
		}
		return cfg
	}
	srv.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
		handleError(ctx, err)
		select {
		case answered <- ctx.Response.StatusCode():
		default:
		}
	}
	addr := listen(t, app)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":")
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10 s", what)
		}
	}
	wait("headers", headersIn)
	_ = conn.(*net.TCPConn).SetLinger(0) // close with a reset
	conn.Close()
	select {
	case status := <-answered:
		if status != http.StatusBadRequest {
			t.Errorf("the broken request was answered %d, want 400", status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the broken request was not answered within 10 s")
	}
	if logged := failures(t, logs); len(logged) != 0 {
		t.Errorf("a client's reset was logged as the server's failure: %v", logged)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("after the reset, GET /ok = %d", res.StatusCode)
	}
}
