package web

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/gofiber/fiber/v2"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tracedApp is a test app whose spans go to the recorder it returns.
func tracedApp(t *testing.T, proxies string) (*fiber.App, *tracetest.SpanRecorder, *logBuffer) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	logger, logs := jsonLogger()
	logger = slog.New(TraceIDs(logger.Handler()))
	o := AppOptions{Logger: logger, Tracer: tp}
	if proxies != "" {
		o.Proxies = trust(t, proxies)
	}
	api := &Surface{Prefix: "/api"}
	app := newTestApp(t, o, func(r *Routes) {
		r.Add(route("GET", "/api/pets/:petId", api.Mark, func(c *fiber.Ctx) error { return c.SendString("Rex") }))
		r.Add(route("GET", "/boom", func(*fiber.Ctx) error { return errors.New("boom") }))
		r.Fallback("/api", []fiber.Handler{api.Mark, r.MethodFallback("No such API route.")})
	})
	return app, rec, logs
}

const sentTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// TestTrace: each request is one server span named by its method and route
// pattern (never its path; "unmatched" when no route took it), with its
// status, an error status for a 5xx; its log line names the span
// (trace_id, span_id). A traceparent from a client that is not a trusted
// proxy starts no part of its trace.
func TestTrace(t *testing.T) {
	app, rec, logs := tracedApp(t, "")
	get(t, app, "/api/pets/7", "traceparent", sentTraceparent)
	get(t, app, "/api/nope")
	get(t, app, "/boom")

	spans := rec.Ended()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	want := []string{"GET /api/pets/:petId", "GET unmatched", "GET /boom"}
	if len(names) != len(want) {
		t.Fatalf("spans %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("spans %v, want %v", names, want)
		}
	}
	if s := spans[0]; s.SpanKind() != trace.SpanKindServer || s.Parent().IsValid() || s.SpanContext().TraceID().String() == "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("first span: kind %v, parent %v: a client's traceparent was followed", s.SpanKind(), s.Parent())
	}
	if spans[2].Status().Code.String() != "Error" {
		t.Errorf("the 500's span status = %v, want Error", spans[2].Status())
	}
	lines := 0
	for _, r := range logs.records(t) {
		if r["msg"] != "request" {
			continue
		}
		s := spans[lines]
		if r["trace_id"] != s.SpanContext().TraceID().String() || r["span_id"] != s.SpanContext().SpanID().String() {
			t.Errorf("log line %v does not name span %v", r, s.SpanContext())
		}
		lines++
	}
	if lines != 3 {
		t.Fatalf("%d request lines, want 3", lines)
	}
}

// TestTraceFromTrustedProxy: a trusted proxy's traceparent makes the
// request's span a child of the span it names.
func TestTraceFromTrustedProxy(t *testing.T) {
	app, rec, _ := tracedApp(t, "0.0.0.0") // app.Test's peer
	get(t, app, "/api/pets/7", "traceparent", sentTraceparent)
	s := rec.Ended()[0]
	if s.SpanContext().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || s.Parent().SpanID().String() != "b7ad6b7169203331" {
		t.Fatalf("span %v with parent %v, want a child of the proxy's", s.SpanContext(), s.Parent())
	}
}

// TestCausedBy: a stored traceparent is sent on only as the span it parses
// to; anything else (a line break, a wrong length) sends nothing.
func TestCausedBy(t *testing.T) {
	for _, tc := range []struct{ stored, want string }{
		{sentTraceparent, sentTraceparent},
		{sentTraceparent + "\r\nBcc: x@example.com", ""},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", ""},
		{"00-00000000000000000000000000000000-b7ad6b7169203331-01", ""},
	} {
		stored := tc.stored
		cause, sent := CausedBy(&stored)
		if sent != tc.want || cause.IsValid() != (tc.want != "") {
			t.Errorf("CausedBy(%q) = %v, %q; want %q", tc.stored, cause, sent, tc.want)
		}
	}
	if cause, sent := CausedBy(nil); cause.IsValid() || sent != "" {
		t.Errorf("CausedBy(nil) = %v, %q", cause, sent)
	}
}
