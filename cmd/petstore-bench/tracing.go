package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
)

// Tracing on (-trace-ratio): the measured server exports its spans over
// OTLP/HTTP to a receiver inside the bench, sampling that share of the
// traces (the standard OTEL_TRACES_SAMPLER=parentbased_traceidratio), so
// the rows give the CPU per request with tracing on beside a run without
// the flag, which leaves the server's tracing off.

// traceEnv is the environment that turns the server's tracing on; nil
// leaves it off. run sets it once, before any server starts.
var traceEnv []string

// otlpSink is the bench's OTLP/HTTP receiver: it reads every export whole,
// as a collector would, counts them, and answers 200 with an empty
// ExportTraceServiceResponse (an empty protobuf message is no bytes).
type otlpSink struct {
	url            string
	exports, bytes atomic.Int64
	srv            *http.Server
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.exports.Add(1)
		s.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// env is the server's environment for tracing to the sink at ratio.
func (s *otlpSink) env(ratio float64) []string {
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + s.url,
		"OTEL_TRACES_SAMPLER=parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG=" + strconv.FormatFloat(ratio, 'f', -1, 64),
	}
}

// note is what the sink received, for the report's notes.
func (s *otlpSink) note(ratio float64) string {
	return fmt.Sprintf("Tracing on: OTLP/HTTP to a receiver in the bench, %g of traces sampled (parentbased_traceidratio); it received %d exports, %d KiB.",
		ratio, s.exports.Load(), s.bytes.Load()>>10)
}

func (s *otlpSink) close() { _ = s.srv.Close() }
