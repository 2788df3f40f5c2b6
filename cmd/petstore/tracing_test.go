package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
	"petstore/web/email/smtptest"
)

// otlpReceiver is a real OTLP/HTTP traces endpoint: it decodes each export
// (protobuf, gzip or not) and keeps the spans.
type otlpReceiver struct {
	URL   string
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = z
		}
		b, err := io.ReadAll(body)
		var export collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &export)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range export.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// named returns the spans received so far called name.
func (r *otlpReceiver) named(name string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// inTrace returns the spans received so far of trace id.
func (r *otlpReceiver) inTrace(id []byte) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if bytes.Equal(s.TraceId, id) {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if v := a.Value.GetStringValue(); v != "" {
				return v
			}
			if b, err := json.Marshal(a.Value.GetIntValue()); err == nil {
				return string(b)
			}
		}
	}
	return ""
}

// traceIDOf is the trace id a traceparent names ("00-<trace>-<span>-<flags>").
func traceIDOf(traceparent string) string {
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 {
		return ""
	}
	return parts[1]
}

// TestTracingCheckout: with OTEL_EXPORTER_OTLP_ENDPOINT set, a storefront
// checkout is one trace at a real OTLP/HTTP receiver: the route's span,
// named by its route pattern, with the checkout's SQL statements under it;
// the confirmation email's send and the order.created webhook attempt are
// spans of their jobs linked to it, and the webhook receiver and the SMTP
// server got its trace id in traceparent. The request's log line names
// the trace. On both databases.
func TestTracingCheckout(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		otlp := newOTLPReceiver(t)
		mail := smtptest.Start(t, smtptest.Options{})
		var hookMu sync.Mutex
		var hookTraceparents []string
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = io.Copy(io.Discard, req.Body)
			hookMu.Lock()
			hookTraceparents = append(hookTraceparents, req.Header.Get("traceparent"))
			hookMu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(hook.Close)

		n := startNode(t, "A", testConfig(t, map[string]string{
			"DATABASE_URL": dbURL, "SESSION_KEYS": testSessionKey,
			"PETSTORE_SMTP_URL": mail.URL(), "PETSTORE_MAIL_FROM": "shop@example.com",
			"PETSTORE_WEBHOOK_ALLOW_PRIVATE": "true",
			"OTEL_EXPORTER_OTLP_ENDPOINT":    otlp.URL, "OTEL_SERVICE_NAME": "petstore-test",
		}), nil, nil)
		if n.srv.tracer == nil {
			t.Fatal("tracing is off with OTEL_EXPORTER_OTLP_ENDPOINT set")
		}
		c := newClient(t)
		staff, _ := issueKey(t, n.srv.Store, "staff", db.RoleStaff, 1000, 10000)
		call(c, "POST", n.base+"/api/webhooks", staff, map[string]any{"url": hook.URL + "/hook", "events": []string{"order.created"}}).must(t, 201, nil)
		pet := emailShop(t, n.srv.Store, 5)

		shopper := &handlerstest.Browser{Browser: browsertest.New(t, n.srv.App)}
		shopper.Get("/cart").WantStatus(http.StatusOK) // a page with a form: the cookie and the token
		shopper.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(pet.ID), "quantity", "1")).WantRedirect("/cart")
		number := shopper.Checkout(handlerstest.Buyer())
		shopper.Get("/orders/confirmation/" + handlerstest.Itoa(number)).WantStatus(http.StatusOK)

		mail.Wait(t, 1, 30*time.Second)
		var attempt, send *tracepb.Span
		deadline := time.Now().Add(30 * time.Second)
		for attempt == nil || send == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no webhook.attempt (%v) or email.send (%v) span within 30 s", attempt != nil, send != nil)
			}
			time.Sleep(100 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = n.srv.tracer.ForceFlush(ctx)
			cancel()
			if s := otlp.named("webhook.attempt"); len(s) > 0 {
				attempt = s[0]
			}
			if s := otlp.named("email.send"); len(s) > 0 {
				send = s[0]
			}
		}

		routes := otlp.named("POST /checkout")
		if len(routes) != 1 {
			t.Fatalf("%d spans named %q, want 1", len(routes), "POST /checkout")
		}
		route := routes[0]
		if route.Kind != tracepb.Span_SPAN_KIND_SERVER || spanAttr(route, "http.route") != "/checkout" || spanAttr(route, "http.response.status_code") != "303" {
			t.Fatalf("route span: kind %v, http.route %q, status %q", route.Kind, spanAttr(route, "http.route"), spanAttr(route, "http.response.status_code"))
		}
		if len(otlp.named("GET /orders/confirmation/:checkoutId")) != 1 {
			t.Fatal("the confirmation page's span is not named by its route pattern")
		}
		traceID := hex.EncodeToString(route.TraceId)

		// The checkout's statements: spans of the same trace under the
		// route's span, the events' INSERT among them.
		var sqlSpans int
		wroteEvents := false
		for _, s := range otlp.inTrace(route.TraceId) {
			if !strings.HasPrefix(s.Name, "sql.") {
				continue
			}
			if !bytes.Equal(s.ParentSpanId, route.SpanId) {
				t.Errorf("SQL span %s (%q) has parent %x, want the route's %x", s.Name, spanAttr(s, "db.query.text"), s.ParentSpanId, route.SpanId)
			}
			sqlSpans++
			wroteEvents = wroteEvents || strings.Contains(spanAttr(s, "db.query.text"), "INSERT INTO events")
		}
		if sqlSpans == 0 || !wroteEvents {
			t.Fatalf("%d SQL spans in the checkout's trace, events' INSERT among them: %v", sqlSpans, wroteEvents)
		}

		// The email's send and the webhook's attempt: each a span of its
		// job (river.work/…), linked to the checkout's route span.
		for _, s := range []*tracepb.Span{attempt, send} {
			if len(s.Links) != 1 || !bytes.Equal(s.Links[0].TraceId, route.TraceId) || !bytes.Equal(s.Links[0].SpanId, route.SpanId) {
				t.Errorf("%s links %v, want one link to the checkout's span %x/%x", s.Name, s.Links, route.TraceId, route.SpanId)
			}
			var parent *tracepb.Span
			for _, p := range otlp.inTrace(s.TraceId) {
				if bytes.Equal(p.SpanId, s.ParentSpanId) {
					parent = p
				}
			}
			if parent == nil || !strings.HasPrefix(parent.Name, "river.work/") {
				t.Errorf("%s's parent is %v, want its job's river.work span", s.Name, parent)
			}
		}
		if spanAttr(attempt, "petstore.event.type") != "order.created" || spanAttr(attempt, "http.response.status_code") != "204" {
			t.Errorf("attempt: event %q, status %q", spanAttr(attempt, "petstore.event.type"), spanAttr(attempt, "http.response.status_code"))
		}

		// What went out carries the checkout's trace.
		hookMu.Lock()
		got := append([]string(nil), hookTraceparents...)
		hookMu.Unlock()
		if len(got) != 1 || traceIDOf(got[0]) != traceID {
			t.Errorf("webhook receiver saw traceparent %q, want trace %s", got, traceID)
		}
		if tp := mail.Messages()[0].Header().Get("Traceparent"); traceIDOf(tp) != traceID {
			t.Errorf("email's Traceparent = %q, want trace %s", tp, traceID)
		}

		// The request's log line names the trace and its span.
		found := false
		for _, line := range strings.Split(n.logs.String(), "\n") {
			var rec struct {
				Msg, Route, Method string
				TraceID            string `json:"trace_id"`
				SpanID             string `json:"span_id"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "request" && rec.Route == "/checkout" && rec.Method == "POST" {
				found = rec.TraceID == traceID && rec.SpanID == hex.EncodeToString(route.SpanId)
			}
		}
		if !found {
			t.Errorf("the checkout's log line does not carry trace_id %s and its span_id", traceID)
		}
	})
}
