// Command petstore is the pet store: storefront, staff console and JSON API
// in one binary, plus the commands to run it (SPEC §11).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = `Usage: petstore [command]

Commands:
  serve                       run the server (default)
  migrate                     apply database migrations and exit
  seed                        add the demo categories and pets to an empty catalog
  keys create --name N --role customer|staff --plan free|pro|business|enterprise [--per-minute N --per-day N]
  keys list                   list API keys (never the plain keys)
  keys revoke ID              revoke an API key
  staff create --username U [--password-stdin]

Configuration is by environment: PETSTORE_ADDR, DATABASE_URL, REDIS_URL,
SESSION_KEYS, PETSTORE_SUNSET, PETSTORE_BAN_STRIKES, PETSTORE_BAN_DURATION,
TRUSTED_PROXIES, LOG_LEVEL (see README.md).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, systemClock, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "petstore:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// systemClock is the one clock the app reads domain time from, handed to
// the store, the limiter and the handlers alike. UTC, and truncated to the
// microsecond because PostgreSQL keeps no finer: a finer clock would
// return timestamps (a key's createdAt) that differ from every later read.
func systemClock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// usageError is a mistake on the command line.
type usageError string

func (e usageError) Error() string { return string(e) }

// run is main without the process: tests call it, with a clock of their own.
func run(ctx context.Context, args []string, getenv func(string) string, now func() time.Time, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	switch cmd {
	case "serve":
		return serve(ctx, cfg, logger, now, stdout)
	case "migrate":
		return withStore(ctx, cfg, now, func(*storeCmd) error { fmt.Fprintln(stdout, "migrations applied"); return nil })
	case "seed":
		return withStore(ctx, cfg, now, func(s *storeCmd) error { return s.seed(ctx, stdout) })
	case "keys":
		return withStore(ctx, cfg, now, func(s *storeCmd) error { return s.keys(ctx, args, stdout) })
	case "staff":
		return withStore(ctx, cfg, now, func(s *storeCmd) error { return s.staff(ctx, args, stdin, stdout) })
	}
	return usageError(fmt.Sprintf("unknown command %q\n%s", cmd, usage))
}
