package main

import (
	"strings"
	"testing"
)

// TestTracingConfig: tracing is off unless an OTLP endpoint is set (or when
// OTEL_SDK_DISABLED=true); the traces endpoint is used as is, the base one
// gets /v1/traces; the service is petstore unless named; a bad value stops
// the start with one line naming the variable.
func TestTracingConfig(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	for _, tc := range []struct {
		vars             map[string]string
		wantURL, wantSvc string
		wantSampler      string
	}{
		{vars: nil},
		{vars: map[string]string{"OTEL_SERVICE_NAME": "shop"}},
		{vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}, wantURL: "http://collector:4318/v1/traces", wantSvc: "petstore", wantSampler: "ParentBased{root:AlwaysOnSampler"},
		{vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/otlp/traces", "OTEL_SERVICE_NAME": "shop"},
			wantURL: "https://b/otlp/traces", wantSvc: "shop", wantSampler: "ParentBased{root:AlwaysOnSampler"},
		{vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"},
			wantURL: "http://a:4318/v1/traces", wantSvc: "petstore", wantSampler: "ParentBased{root:TraceIDRatioBased{0.1}"},
		{vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_SDK_DISABLED": "true"}},
	} {
		cfg, err := LoadConfig(env(tc.vars))
		if err != nil {
			t.Fatalf("%v: %v", tc.vars, err)
		}
		if tc.wantURL == "" {
			if cfg.Tracing != nil {
				t.Errorf("%v: tracing on (%+v), want off", tc.vars, cfg.Tracing)
			}
			continue
		}
		if cfg.Tracing == nil || cfg.Tracing.URL != tc.wantURL || cfg.Tracing.Service != tc.wantSvc || !strings.HasPrefix(cfg.Tracing.Sampler.Description(), tc.wantSampler) {
			t.Errorf("%v: %+v, want %s as %s sampling %s", tc.vars, cfg.Tracing, tc.wantURL, tc.wantSvc, tc.wantSampler)
		}
	}
	for name, vars := range map[string]map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        {"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://x/v1/traces"},
		"OTEL_TRACES_SAMPLER":                {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_TRACES_SAMPLER": "sometimes"},
		"OTEL_TRACES_SAMPLER_ARG":            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "10%"},
		"OTEL_SDK_DISABLED":                  {"OTEL_SDK_DISABLED": "nope"},
	} {
		_, err := LoadConfig(env(vars))
		if err == nil || !strings.HasPrefix(err.Error(), name+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error = %v, want one line naming %s", vars, err, name)
		}
	}
}
