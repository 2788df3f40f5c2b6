package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// The operations listener (PETSTORE_METRICS_ADDR): what an operator needs
// and the public must not see — /metrics (order counts, the database pool,
// process stats) and, when enabled, the Go profiler — on an address of its
// own, to be kept private (loopback, or a network only the scraper
// reaches). The main port then answers 404 for them.

// opsHandler serves metrics at /metrics and, with pprof, the profiler
// under /debug/pprof/; any other path is 404.
func opsHandler(metrics http.Handler, withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	if withPprof {
		mountPprof(mux)
	}
	return mux
}

// mountPprof adds net/http/pprof's handlers to mux.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
}

// ServeOps answers on ln with the operations handler until ctx is done. It
// returns nil at once when the server has none (PETSTORE_METRICS_ADDR
// unset).
func (s *Server) ServeOps(ctx context.Context, ln net.Listener) error {
	if s.Ops == nil {
		ln.Close()
		return nil
	}
	srv := &http.Server{Handler: s.Ops, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// servePprof serves the Go profiler on its own listener, away from the
// app's routes, for profiling under load (PETSTORE_PPROF_ADDR without
// PETSTORE_METRICS_ADDR).
func servePprof(addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mountPprof(mux)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		logger.Info("pprof listening", "addr", addr)
		if err := srv.ListenAndServe(); err != nil {
			logger.Error("pprof stopped", "err", err)
		}
	}()
}
