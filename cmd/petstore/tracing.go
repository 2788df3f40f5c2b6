package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracingConfig is where traces go (SPEC §21), read from the standard
// OpenTelemetry variables; nil in Config is tracing off.
type TracingConfig struct {
	// URL is the OTLP/HTTP traces endpoint, whole
	// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT
	// with /v1/traces added).
	URL string
	// Service is OTEL_SERVICE_NAME, "petstore" when unset.
	Service string
	// Sampler is OTEL_TRACES_SAMPLER with OTEL_TRACES_SAMPLER_ARG
	// (parentbased_always_on by default, as the SDK's).
	Sampler sdktrace.Sampler
}

// loadTracing reads the OTel variables: nil when neither endpoint is set
// (or OTEL_SDK_DISABLED=true). A bad value is an error naming the variable.
// The exporter's other standard variables (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, _CERTIFICATE…) are left to the SDK, which reads
// them from the process's environment when the exporter is made.
func loadTracing(getenv func(string) string) (*TracingConfig, error) {
	bad := func(name string, err error) error { return &configError{name, err} }
	if v := getenv("OTEL_SDK_DISABLED"); v != "" {
		off, err := strconv.ParseBool(v)
		if err != nil {
			return nil, bad("OTEL_SDK_DISABLED", errors.New("must be true or false"))
		}
		if off {
			return nil, nil
		}
	}
	t := &TracingConfig{Service: "petstore"}
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		if err := checkEndpoint(v); err != nil {
			return nil, bad("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", err)
		}
		t.URL = v
	} else if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		if err := checkEndpoint(v); err != nil {
			return nil, bad("OTEL_EXPORTER_OTLP_ENDPOINT", err)
		}
		t.URL = strings.TrimRight(v, "/") + "/v1/traces"
	} else {
		return nil, nil
	}
	if v := getenv("OTEL_SERVICE_NAME"); v != "" {
		t.Service = v
	}
	s, err := parseSampler(getenv("OTEL_TRACES_SAMPLER"), getenv("OTEL_TRACES_SAMPLER_ARG"))
	if err != nil {
		return nil, err
	}
	t.Sampler = s
	return t, nil
}

func checkEndpoint(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http or https URL, e.g. http://localhost:4318")
	}
	return nil
}

// parseSampler is the sampler the standard variables name; the ratio's
// argument defaults to 1, as the SDK's.
func parseSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, &configError{"OTEL_TRACES_SAMPLER_ARG", errors.New("must be a number from 0 to 1")}
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, &configError{"OTEL_TRACES_SAMPLER", errors.New("must be always_on, always_off, traceidratio or one of them parentbased_")}
}

// startTracing makes the tracer provider that exports to t.URL in batches.
// Shut it down (tracingShutdownGrace) to send what is still buffered. The
// SDK's own errors (a collector that cannot be reached) become warnings in
// the JSON log rather than lines of Go's log package.
func startTracing(t *TracingConfig, logger *slog.Logger) (*sdktrace.TracerProvider, error) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing: spans not exported", "err", err)
	}))
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(t.URL))
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", t.Service))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(t.Sampler),
	), nil
}

// tracingShutdownGrace bounds sending the spans still buffered at shutdown.
const tracingShutdownGrace = 5 * time.Second
