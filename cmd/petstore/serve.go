package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"petstore/db"
)

// serve runs the server until ctx is done: migrate, seed an empty
// database and print the first-start banner, listen, shut down gracefully.
func serve(ctx context.Context, cfg *Config, logger *slog.Logger, now func() time.Time, stdout io.Writer) error {
	if err := cfg.EnsureSessionKeys(); err != nil {
		return fmt.Errorf("SESSION_KEYS: %w", err)
	}
	s, err := NewServer(ctx, cfg, logger, now)
	if err != nil {
		return err
	}
	defer s.Close()
	if cfg.PprofAddr != "" {
		servePprof(cfg.PprofAddr, logger)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("PETSTORE_ADDR: %w", err)
	}
	base := baseURL(ln.Addr())
	empty, err := s.Store.IsEmpty(ctx)
	if err != nil {
		return err
	}
	if empty {
		if err := firstStart(ctx, s.Store, base, stdout); err != nil {
			return err
		}
	}
	logger.Info("listening", "addr", ln.Addr().String(), "database", s.Store.Dialect(), "storefront", base+"/")
	return s.Serve(ctx, ln)
}

// firstStart seeds the demo data, creates the first staff user and a demo
// key, and prints how to use them: the only time these secrets are shown.
func firstStart(ctx context.Context, store *db.Store, base string, stdout io.Writer) error {
	if err := store.SeedDemo(ctx); err != nil {
		return err
	}
	password, err := generatePassword()
	if err != nil {
		return err
	}
	if n, err := store.CountStaffUsers(ctx); err != nil {
		return err
	} else if n == 0 {
		if _, err := createStaff(ctx, store, "admin", password); err != nil {
			return err
		}
	} else {
		password = "(staff users exist already; unchanged)"
	}
	name, role, plan := "demo", db.RoleStaff, db.PlanPro
	_, key, err := store.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: &role, Plan: &plan})
	if err != nil {
		return err
	}
	line := strings.Repeat("─", 64)
	fmt.Fprintf(stdout, `%s
 Pet store: first start. The demo catalog is in place.

 Storefront      %s/
 Staff console   %s/staff     user: admin   password: %s
 API             %s/api       docs: %s/api/docs
 Demo API key    %s
                 (staff role, pro plan; shown only now)

 Try it:  curl -H 'X-API-Key: %s' %s/api/pets
%s
`, line, base, base, password, base, base, key, key, base, line)
	return nil
}

func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// servePprof serves the Go profiler on its own listener, away from the
// app's routes, for profiling under load (PETSTORE_PPROF_ADDR).
func servePprof(addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		logger.Info("pprof listening", "addr", addr)
		if err := srv.ListenAndServe(); err != nil {
			logger.Error("pprof stopped", "err", err)
		}
	}()
}
