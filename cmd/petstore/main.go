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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, systemClock, os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and returns the process's exit status:
// 0 for none, 2 for a mistake on the command line (with the usage that
// applies), 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ae *apiExit
	if errors.As(err, &ae) {
		_, _ = stderr.Write(ae.stderr)
		return ae.code
	}
	fmt.Fprintln(stderr, "petstore:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.usage != "" {
			fmt.Fprint(stderr, "\n", ue.usage)
		}
		return 2
	}
	return 1
}

// systemClock is the one clock the app reads domain time from, handed to
// the store, the limiter and the handlers alike. UTC, and truncated to the
// microsecond because PostgreSQL keeps no finer: a finer clock would
// return timestamps (a key's createdAt) that differ from every later read.
func systemClock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// usageError is a mistake on the command line; usage, when set, is the
// usage of the command it was made on.
type usageError struct {
	msg, usage string
}

func (e *usageError) Error() string { return e.msg }

// runner is what a parsed command runs with.
type runner struct {
	cfg    *Config
	logger *slog.Logger
	now    func() time.Time
	stdin  io.Reader
	stdout io.Writer
	getenv func(string) string
}

// run is main without the process: tests call it, with a clock of their
// own. The command line is parsed before anything else happens, so --help
// and mistakes start nothing.
func run(ctx context.Context, args []string, getenv func(string) string, now func() time.Time, stdin io.Reader, stdout, stderr io.Writer) error {
	c, act, operands, err := parseArgs(args, stdout)
	if err != nil || act == nil {
		return err // act is nil when only the usage was asked for
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return err
	}
	r := &runner{
		cfg:    cfg,
		logger: newLogger(stderr, cfg.LogLevel),
		now:    now,
		stdin:  stdin,
		stdout: stdout,
		getenv: getenv,
	}
	if c.remote {
		return act(ctx, r, operands)
	}
	if err := r.checkDefaultDatabase(c.createsDatabase); err != nil {
		return err
	}
	return describe(act(ctx, r, operands))
}

// newLogger is the JSON logger of every command, on stderr.
func newLogger(stderr io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
}
