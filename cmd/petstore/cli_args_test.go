package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// runCLIErr is runCLI that also returns what went to stderr.
func runCLIErr(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, env(vars), dbtest.NewClock(t).Now, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestEveryCommandAnswersHelp: --help and -h print the command's usage on
// stdout and start nothing (serve does not listen, no database is made).
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	dbPath := filepath.Join(t.TempDir(), "untouched.db")
	vars := map[string]string{"DATABASE_URL": "sqlite:" + dbPath}
	for _, c := range commands {
		for _, flag := range []string{"--help", "-h"} {
			args := append(strings.Fields(c.name), flag)
			out, err := runCLI(t, vars, "", args...)
			if err != nil {
				t.Errorf("%v: %v", args, err)
				continue
			}
			if !strings.HasPrefix(out, "Usage: petstore "+c.name) || !strings.Contains(out, "DATABASE_URL") {
				t.Errorf("%v printed %q, want the command's usage naming DATABASE_URL", args, out)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"keys", "--help"}, {"staff", "-h"}} {
		out, err := runCLI(t, vars, "", args...)
		if err != nil || !strings.HasPrefix(out, "Usage: petstore") {
			t.Errorf("%v = %q, %v; want the usage", args, out, err)
		}
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("asking for help touched the database: %v", err)
	}
}

// TestCommandLineMistakesAreUsageErrors: unknown flags, stray arguments and
// missing operands stop before anything runs, exit 2 with the usage.
func TestCommandLineMistakesAreUsageErrors(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	dbPath := filepath.Join(t.TempDir(), "untouched.db")
	vars := map[string]string{"DATABASE_URL": "sqlite:" + dbPath}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--port", "9000"}, "serve: flag provided but not defined: -port"},
		{[]string{"serve", "now"}, `serve: unexpected argument "now"`},
		{[]string{"migrate", "-x"}, "migrate: flag provided but not defined: -x"},
		{[]string{"seed", "twice"}, `seed: unexpected argument "twice"`},
		{[]string{"keys", "create", "--name", "n", "--colour", "red"}, "keys create: flag provided but not defined: -colour"},
		{[]string{"keys", "create", "--per-minute", "many"}, `keys create: invalid value "many" for flag -per-minute`},
		{[]string{"keys", "list", "all"}, `keys list: unexpected argument "all"`},
		{[]string{"keys", "revoke"}, "keys revoke: give the ID"},
		{[]string{"keys", "revoke", "1", "2"}, `keys revoke: unexpected argument "2"`},
		{[]string{"keys"}, "keys: give a subcommand"},
		{[]string{"keys", "rotate"}, `unknown command "keys rotate"`},
		{[]string{"staff", "create", "--username", "u", "--admin"}, "staff create: flag provided but not defined: -admin"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		_, err := runCLI(t, vars, "", tc.args...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v = %v, want an error starting %q", tc.args, err, tc.want)
			continue
		}
		var stderr bytes.Buffer
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), "Usage: petstore") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the usage", tc.args, code, stderr.String())
		}
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a command line mistake touched the database: %v", err)
	}
}

// TestCLIErrorsAreWordedForTheTerminal: the store's API-worded errors come
// out as one line naming what is wrong.
func TestCLIErrorsAreWordedForTheTerminal(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "cli.db")}
	if _, err := runCLI(t, vars, "", "staff", "create", "--username", "ann"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"staff", "create", "--username", "ann"}, "invalid values: username: is taken"},
		{[]string{"keys", "revoke", "999"}, "API key 999 not found"},
	} {
		_, err := runCLI(t, vars, "", tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v = %v, want %q", tc.args, err, tc.want)
		}
	}
	var stderr bytes.Buffer
	_, err := runCLI(t, vars, "", "keys", "create", "--plan", "gold")
	if code := exitCode(err, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), "petstore: invalid values: ") ||
		strings.Contains(stderr.String(), "The request") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("bad key: exit %d, stderr %q; want exit 2 and one line of invalid values", code, stderr.String())
	}
}

// TestDefaultDatabaseMustExist: with DATABASE_URL unset, a command run
// outside the pet store's folder refuses instead of making an empty
// var/petstore.db there; migrate (like serve) makes it, with a warning
// naming the absolute path.
func TestDefaultDatabaseMustExist(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	want := filepath.Join(dir, db.DefaultSQLitePath)
	for _, args := range [][]string{{"seed"}, {"keys", "list"}, {"keys", "revoke", "1"}, {"staff", "create", "--username", "u"},
		{"keys", "create", "--name", "n"}} {
		_, err := runCLI(t, nil, "", args...)
		if err == nil || !strings.Contains(err.Error(), "no database at "+want) || !strings.Contains(err.Error(), "DATABASE_URL") {
			t.Errorf("%v = %v, want a refusal naming %s and DATABASE_URL", args, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "var")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused command made var/: %v", err)
	}

	out, stderr, err := runCLIErr(t, nil, "migrate")
	if err != nil || !strings.Contains(out, "migrations applied") {
		t.Fatalf("migrate = %q, %v", out, err)
	}
	if !strings.Contains(stderr, `"level":"WARN"`) || !strings.Contains(stderr, want) {
		t.Errorf("migrate logged %q, want a warning naming %s", stderr, want)
	}
	if _, stderr, err := runCLIErr(t, nil, "keys", "list"); err != nil || stderr != "" {
		t.Errorf("keys list after migrate = %v, stderr %q; want it to run quietly", err, stderr)
	}
}
