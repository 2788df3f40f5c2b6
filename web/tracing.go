package web

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"petstore/db"
	"petstore/web/ratelimit"
)

// TracerName names the spans the app core makes (the requests').
const TracerName = "petstore/web"

// Trace makes a span of every request (SPEC §21), named by its method and
// the route line's template ("GET /api/pets/:petId", as the request's log
// line and metrics name it: routeTemplate), never by its path, and hands
// it to the chain in c.UserContext(): the store's statements, the events a
// change writes and the request's log line see it. It is installed only
// when tracing is on (AppOptions.Tracer).
//
// A traceparent sent with the request is followed only from a trusted
// proxy (TRUSTED_PROXIES, as X-Request-Id): from anyone else it would let
// a client choose what is sampled and stitch its requests into other
// traces.
//
// gofiber/contrib/otelfiber/v2 does the same job but does not fit the
// route line's design: it answers a failed request itself (it calls the
// error handler and returns nil, where every middleware here returns the
// error to the one ErrorHandler), restores the request's context before
// the request's log line is written (the line would lose its trace id),
// copies every request header per request and trusts every caller's
// traceparent.
func Trace(tp trace.TracerProvider, proxies ratelimit.TrustedProxies) fiber.Handler {
	tracer := tp.Tracer(TracerName)
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		if peer, ok := netip.AddrFromSlice(c.Context().RemoteIP()); ok && proxies.Trusted(peer) {
			ctx = propagation.TraceContext{}.Extract(ctx, headerCarrier{c})
		}
		method := strings.Clone(c.Method())
		ctx, span := tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)
		err := c.Next()
		if !span.IsRecording() {
			return err // not sampled: nothing to name
		}
		status := c.Response().StatusCode()
		if err != nil {
			status = ProblemFor(c, err).Status
		}
		route := routeTemplate(c)
		span.SetName(method + " " + route)
		span.SetAttributes(
			attribute.String("http.request.method", method),
			attribute.String("http.route", route),
			attribute.Int("http.response.status_code", status),
			attribute.String("petstore.request_id", RequestID(c)),
		)
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
		return err
	}
}

// headerCarrier reads a request's headers for a propagator (extract only).
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(key string) string { return strings.Clone(h.c.Get(key)) }
func (h headerCarrier) Set(string, string)    {}
func (h headerCarrier) Keys() []string        { return nil }

// TraceIDs wraps a log handler so that every record logged with a context
// that carries a span (a request's, a job's) names it: trace_id and
// span_id beside the record's own attributes (SPEC §21). Without a span
// the record passes unchanged.
func TraceIDs(h slog.Handler) slog.Handler { return traceIDs{h} }

type traceIDs struct{ slog.Handler }

func (t traceIDs) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return t.Handler.Handle(ctx, r)
}

func (t traceIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceIDs{t.Handler.WithAttrs(attrs)}
}

func (t traceIDs) WithGroup(name string) slog.Handler { return traceIDs{t.Handler.WithGroup(name)} }

// StartCaused starts the span of work a change caused (a webhook attempt,
// an email send: SPEC §21) under ctx (its job's span), linked to the
// change's span, whose traceparent tp is (nil: none, tracing was off). It
// returns the traceparent the work sends on (CausedBy).
func StartCaused(ctx context.Context, tracer trace.Tracer, name string, tp *string, attrs ...attribute.KeyValue) (context.Context, trace.Span, string) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
	cause, sent := CausedBy(tp)
	if cause.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: cause}))
	}
	ctx, span := tracer.Start(ctx, name, opts...)
	return ctx, span, sent
}

// CausedBy is the span of a change whose stored traceparent tp is, and the
// traceparent to send on for it: rebuilt from the parsed span, never the
// stored text as is; "" and an invalid span when tp is nil or malformed.
func CausedBy(tp *string) (trace.SpanContext, string) {
	cause := db.ParseTraceparent(tp)
	if !cause.IsValid() {
		return cause, ""
	}
	return cause, *db.Traceparent(trace.ContextWithRemoteSpanContext(context.Background(), cause))
}
