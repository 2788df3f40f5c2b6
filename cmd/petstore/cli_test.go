package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// env is a fake environment for run.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func runCLI(t *testing.T, vars map[string]string, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, env(vars), dbtest.NewClock(t).Now, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestBadConfigNamesTheVariable(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	for name, value := range map[string]string{
		"DATABASE_URL":          "mysql://x",
		"REDIS_URL":             "http://nope",
		"SESSION_KEYS":          "abc",
		"PETSTORE_SECRET_KEYS":  "abc",
		"PETSTORE_SUNSET":       "next year",
		"PETSTORE_BAN_STRIKES":  "-3",
		"PETSTORE_BAN_DURATION": "forever",
		"TRUSTED_PROXIES":       "300.1.1.1",
		"LOG_LEVEL":             "loud",
		"PETSTORE_ADDR":         "8080",

		"PETSTORE_SHOP_MAX_OPEN_UNITS": "0",
		"PETSTORE_STAFF_2FA":           "yes",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runCLI(t, map[string]string{name: value}, "", "migrate")
			if err == nil {
				t.Fatalf("%s=%q was accepted", name, value)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, name+": ") || strings.Contains(msg, "\n") {
				t.Fatalf("error = %q, want one line starting with %s", msg, name)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "cli.db")}
	if out, err := runCLI(t, vars, "", "migrate"); err != nil || !strings.Contains(out, "migrations applied") {
		t.Fatalf("migrate = %q, %v", out, err)
	}
	if _, err := runCLI(t, vars, "", "seed"); err != nil {
		t.Fatalf("seed: %v", err)
	}

	out, err := runCLI(t, vars, "", "keys", "create", "--name", "ci", "--role", "staff", "--plan", "pro")
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	plain := lastLine(out)
	if !strings.HasPrefix(plain, "psk_") || len(plain) < 40 {
		t.Fatalf("last line = %q, want the plain key", plain)
	}
	out, err = runCLI(t, vars, "", "keys", "create", "--name", "big", "--role", "customer", "--plan", "enterprise", "--per-minute", "5000", "--per-day", "900000")
	if err != nil || !strings.Contains(out, "5000/min") {
		t.Fatalf("enterprise key = %q, %v", out, err)
	}
	if _, err := runCLI(t, vars, "", "keys", "create", "--name", "bad", "--role", "customer", "--plan", "enterprise"); err == nil {
		t.Fatal("enterprise key without limits was accepted")
	}

	out, err = runCLI(t, vars, "", "keys", "list")
	if err != nil || !strings.Contains(out, plain[:12]) || strings.Contains(out, plain) {
		t.Fatalf("keys list = %q, %v; want the prefix and never the plain key", out, err)
	}
	if out, err := runCLI(t, vars, "", "keys", "revoke", "1"); err != nil || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke = %q, %v", out, err)
	}
	if _, err := runCLI(t, vars, "", "keys", "revoke", "999"); err == nil {
		t.Fatal("revoking an unknown key succeeded")
	}
	out, _ = runCLI(t, vars, "", "keys", "list")
	if !strings.Contains(out, "revoked") {
		t.Fatalf("keys list after revoke = %q", out)
	}

	out, err = runCLI(t, vars, "", "staff", "create", "--username", "alice")
	if err != nil {
		t.Fatalf("staff create: %v", err)
	}
	if pw := lastLine(out); len(pw) < 16 || strings.Contains(pw, " ") {
		t.Fatalf("last line = %q, want the generated password", pw)
	}
	if _, err := runCLI(t, vars, "", "staff", "create", "--username", "alice"); err == nil {
		t.Fatal("a second alice was accepted")
	}
	if out, err := runCLI(t, vars, "correct horse battery\n", "staff", "create", "--username", "bob", "--password-stdin"); err != nil || strings.Contains(out, "password") {
		t.Fatalf("staff create --password-stdin = %q, %v", out, err)
	}
	if _, err := runCLI(t, vars, "short\n", "staff", "create", "--username", "carol", "--password-stdin"); err == nil {
		t.Fatal("a 5-byte password was accepted")
	}
	// Roles (SPEC §16): admin by default, clerk when asked; each user made
	// is in the audit log with the command line as its actor.
	if _, err := runCLI(t, vars, "", "staff", "create", "--username", "cleo", "--role", "clerk"); err != nil {
		t.Fatalf("staff create --role clerk: %v", err)
	}
	if _, err := runCLI(t, vars, "", "staff", "create", "--username", "root", "--role", "owner"); err == nil {
		t.Fatal("--role owner was accepted")
	}
	s := dbtest.OpenURL(t, vars["DATABASE_URL"])
	for name, role := range map[string]string{"alice": db.RoleAdmin, "bob": db.RoleAdmin, "cleo": db.RoleClerk} {
		u, err := s.FindStaffUserByUsername(context.Background(), name)
		if err != nil || u.Role != role || u.MustChangePassword {
			t.Fatalf("%s = %+v, %v; want a %s whose password is not one-time", name, u, err, role)
		}
	}
	var audit []struct {
		ActorType string `db:"actor_type"`
		Changes   string `db:"changes"`
	}
	if err := s.DB().Select(&audit, `SELECT actor_type, changes FROM audit_log WHERE action = 'staff.create' ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if len(audit) != 3 || audit[2].ActorType != db.ActorCLI || !strings.Contains(audit[2].Changes, `"role":[null,"clerk"]`) {
		t.Fatalf("audit of staff create = %+v", audit)
	}
	if _, err := runCLI(t, vars, "", "frobnicate"); err == nil {
		t.Fatal("an unknown command was accepted")
	}
}

// TestStaffCreatePasswordRule: a password given to staff create is held to
// the console's rule (db.CheckNewPassword): 12 to 200 characters, whatever
// their bytes, and not the username.
func TestStaffCreatePasswordRule(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "cli.db")}
	for i, tc := range []struct {
		password string
		ok       bool
	}{
		{strings.Repeat("a", 11), false},
		{"short8ch", false}, // 8 bytes: the old rule took it
		{strings.Repeat("a", 12), true},
		{strings.Repeat("é", 200), true}, // 400 bytes: the old rule refused it
		{strings.Repeat("b", 201), false},
		{"  Margaret-Hamilton ", false}, // the username
	} {
		name := "user-" + strings.Repeat("x", i+1)
		if strings.Contains(tc.password, "Hamilton") {
			name = "margaret-hamilton"
		}
		out, err := runCLI(t, vars, tc.password+"\n", "staff", "create", "--username", name, "--password-stdin")
		if tc.ok != (err == nil) {
			t.Errorf("a password of %d characters (%q…): %q, %v; want accepted = %v", len([]rune(tc.password)), tc.password[:min(8, len(tc.password))], out, err, tc.ok)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "staff create: the password must") || strings.Contains(err.Error(), tc.password)) {
			t.Errorf("error %q, want the rule named (and never the password)", err)
		}
	}
}
