package db

import (
	"context"
	"database/sql/driver"

	"github.com/XSAM/otelsql"
	"github.com/jmoiron/sqlx"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// OpenOption is an option of Open.
type OpenOption func(*openOptions)

type openOptions struct {
	tracer trace.TracerProvider
}

// WithTracing makes a span of every SQL statement run within a recorded
// span (a request's, a job's), on either database, through tp (SPEC §21):
// the statement's text with its $N placeholders, never its arguments.
// Work outside any span (River's polling, the relay's idle look) makes
// none: it would be a trace of its own per poll; nor does work within a
// span the sampler left out (its statements would be left out too). Without
// this option the driver is not wrapped at all, so tracing off costs the
// store nothing.
func WithTracing(tp trace.TracerProvider) OpenOption {
	return func(o *openOptions) { o.tracer = tp }
}

// openSQL opens the driver's pool, wrapped by otelsql when tracing.
func openSQL(dialect, dsn string, o openOptions) (*sqlx.DB, error) {
	if o.tracer == nil {
		return sqlx.Open(dialect, dsn)
	}
	system := "sqlite"
	if dialect == DialectPostgres {
		system = "postgresql"
	}
	conn, err := otelsql.Open(dialect, dsn,
		otelsql.WithTracerProvider(o.tracer),
		// otelsql's metrics are not exported: the app's are Prometheus.
		otelsql.WithMeterProvider(noop.NewMeterProvider()),
		otelsql.WithAttributes(attribute.String("db.system.name", system)),
		otelsql.WithSpanOptions(otelsql.SpanOptions{
			DisableErrSkip:       true,
			OmitConnResetSession: true,
			OmitConnectorConnect: true,
			OmitRows:             true,
			SpanFilter:           underSpan,
		}))
	if err != nil {
		return nil, err
	}
	// The bind type follows the driver's name, as sqlx.Open does.
	return sqlx.NewDb(conn, dialect), nil
}

// underSpan keeps the statements run within a recorded (sampled) span.
func underSpan(ctx context.Context, _ otelsql.Method, _ string, _ []driver.NamedValue) bool {
	return trace.SpanFromContext(ctx).IsRecording()
}
