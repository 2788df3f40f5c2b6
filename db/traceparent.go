package db

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceContext is the W3C Trace Context format, the one traceparent a
// change's events carry (SPEC §21).
var traceContext propagation.TraceContext

// Traceparent is the W3C traceparent of the span ctx carries, nil when it
// carries none (tracing is off, or the work runs outside a request or a
// job): the change's events keep it, and the work they cause links to it.
// With tracing off it costs one context lookup, and the column stays NULL.
func Traceparent(ctx context.Context) *string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	tp, ok := carrier["traceparent"]
	if !ok {
		return nil
	}
	return &tp
}

// ParseTraceparent is the span a stored traceparent names, remote; the
// zero SpanContext (not valid) when tp is nil or not a traceparent.
func ParseTraceparent(tp *string) trace.SpanContext {
	if tp == nil {
		return trace.SpanContext{}
	}
	ctx := traceContext.Extract(context.Background(), propagation.MapCarrier{"traceparent": *tp})
	return trace.SpanContextFromContext(ctx)
}
