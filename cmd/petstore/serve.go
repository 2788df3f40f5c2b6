package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"petstore/db"
)

// serve runs the server until ctx is done: migrate, seed an empty
// database and print the first-start banner, listen with housekeeping in
// the background, shut down gracefully.
func serve(ctx context.Context, cfg *Config, logger *slog.Logger, now func() time.Time, stdout io.Writer) error {
	if err := cfg.EnsureSessionKeys(); err != nil {
		return fmt.Errorf("SESSION_KEYS: %w", err)
	}
	if err := cfg.EnsureSecretKeys(); err != nil {
		return fmt.Errorf("PETSTORE_SECRET_KEYS: %w", err)
	}
	s, err := NewServer(ctx, cfg, logger, now)
	if err != nil {
		return err
	}
	defer s.Close()
	if cfg.PprofAddr != "" && cfg.MetricsAddr == "" {
		servePprof(cfg.PprofAddr, logger)
	}
	if cfg.MetricsAddr != "" {
		opsLn, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("PETSTORE_METRICS_ADDR: %w", err)
		}
		logger.Info("operations listening", "addr", opsLn.Addr().String(), "metrics", true, "pprof", cfg.PprofAddr != "")
		go func() {
			if err := s.ServeOps(ctx, opsLn); err != nil {
				logger.Error("operations listener stopped", "err", err)
			}
		}()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("PETSTORE_ADDR: %w", err)
	}
	base := baseURL(ln.Addr())
	if err := firstStart(ctx, s.Store, base, logger, stdout); err != nil {
		ln.Close()
		return err
	}
	// Deferred after s.Close, so it runs first: the loop has stopped
	// before the database closes.
	defer startHousekeeping(ctx, s.Store, housekeepingInterval, logger)()
	logger.Info("listening", "addr", ln.Addr().String(), "database", s.Store.Dialect(), "storefront", base+"/")
	return s.Serve(ctx, ln)
}

// firstStart seeds an empty database, in one transaction, with the demo
// catalog, the first staff user and a demo key, and prints how to use
// them: the only time these secrets are shown. Of several instances
// starting together on an empty database exactly one seeds and prints the
// banner; the others start as on any later start.
func firstStart(ctx context.Context, store *db.Store, base string, logger *slog.Logger, stdout io.Writer) error {
	// A cheap look first, so that later starts skip hashing a password.
	if empty, err := store.IsEmpty(ctx); err != nil || !empty {
		return err
	}
	password, err := generatePassword()
	if err != nil {
		return err
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	name, role, plan := "demo", db.RoleStaff, db.PlanPro
	fs, err := store.SeedFirstStart(ctx, db.FirstStartSeed{
		Username: "admin", PasswordHash: hash,
		DemoKey: db.NewAPIKey{Name: &name, Role: &role, Plan: &plan},
	})
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	if fs == nil {
		logger.Info("first start: another instance seeded the database")
		return nil
	}
	logger.Info("first start: demo data seeded", "pets", fs.Pets, "staffUser", fs.Staff != nil, "demoKey", fs.Key.Prefix)
	login := "sign in as one of the existing staff users"
	if fs.Staff != nil {
		login = fmt.Sprintf("user: %s   password: %s", fs.Staff.Username, password)
	}
	line := strings.Repeat("─", 64)
	fmt.Fprintf(stdout, `%s
 Pet store: first start. The demo catalog is in place.

 Storefront      %s/
 Staff console   %s/staff     %s
 API             %s/api       docs: %s/api/docs
 Demo API key    %s
                 (staff role, pro plan; shown only now)

 Try it:  curl -H 'X-API-Key: %s' %s/api/pets
%s
`, line, base, base, login, base, base, fs.PlainKey, fs.PlainKey, base, line)
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
