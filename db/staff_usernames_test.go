package db_test

import (
	"context"
	"sync"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestStaffUsernames: a new user's name holds no invisible or
// direction-changing character, and is refused when another user has it
// letter case aside ("Admin" beside "admin"), in any script.
func TestStaffUsernames(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		for _, name := range []string{"admin", "Émile", "kate", "Σίσυφος", "Zoë Smith"} {
			if _, err := s.CreateStaffUser(ctx, name, "x"); err != nil {
				t.Fatalf("%q: %v", name, err)
			}
		}
		for _, name := range []string{"Admin", "ADMIN", " aDmIn ", "émile", "ÉMILE", "\u212Aate" /* Kelvin sign */, "ΣΊΣΥΦΟΣ", "σίσυφοσ", "zoë smith"} {
			_, err := s.CreateStaffUser(ctx, name, "x")
			wantField(t, err, "username")
			if got := err.(*db.Error).Details[0].Message; got != "is taken" {
				t.Errorf("%q: %q, want is taken", name, got)
			}
		}
		for _, name := range []string{
			"nimda\u202E",       // right-to-left override
			"\u2067admin\u2069", // right-to-left isolate
			"ad\u200Bmin",       // zero-width space
			"ad\u200Dmin",       // zero-width joiner
			"\uFEFFbob",         // byte order mark
			"bob\u00ADby",       // soft hyphen
			"bo\u2028b",         // line separator
			"bob\uE000",         // private use
			"bob\u0378",         // unassigned
			"bob\x07",           // control
		} {
			_, err := s.CreateStaffUser(ctx, name, "x")
			wantField(t, err, "username")
		}
		if _, err := db.CheckNewUsername("nimda\u202E"); db.ErrorCode(err) != db.EValidationFailed {
			t.Errorf("CheckNewUsername took a right-to-left override: %v", err)
		}
		if _, err := db.CheckUsername("nimda\u202E"); err != nil {
			t.Errorf("CheckUsername (a sign-in's) refused a name users may hold from before: %v", err)
		}
	})
}

// TestStaffUsernamesAtOnce: users created at the same moment under names
// alike letter case aside: exactly one is made, on both databases (the
// unique index on the key settles what the check in each transaction
// cannot see), and the others are told the name is taken, never a 500.
func TestStaffUsernamesAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		names := []string{"racer", "Racer", "RACER", "rAcer", "raCer", "racEr", "raceR", "RaCeR"}
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() { _, errs[i] = s.CreateStaffUser(ctx, name, "x") })
		}
		wg.Wait()
		made := 0
		for i, err := range errs {
			switch {
			case err == nil:
				made++
			case db.ErrorCode(err) != db.EValidationFailed:
				t.Errorf("%q: %v, want validation_failed (taken)", names[i], err)
			}
		}
		if made != 1 {
			t.Errorf("%d users made, want 1", made)
		}
	})
}

// TestUsernameKeyMigration: migration 00018 keys the users there are;
// users already named alike letter case aside all keep their names and
// sign-ins (nobody is renamed or locked out), and no further name like
// theirs is taken.
func TestUsernameKeyMigration(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		s, err := db.Open(ctx, rawURL, dbtest.NewClock(t).Now)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.MigrateUpTo(ctx, 17); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"admin", "Admin", "bob"} {
			if _, err := s.DB().ExecContext(ctx, `INSERT INTO staff_users (username, password_hash, created_at) VALUES ($1, 'x', $2)`, name, s.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		var keys []struct {
			Username string  `db:"username"`
			Key      *string `db:"username_key"`
		}
		if err := s.DB().SelectContext(ctx, &keys, `SELECT username, username_key FROM staff_users ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if len(keys) != 3 || keys[0].Key == nil || *keys[0].Key != "admin" || keys[1].Key != nil || keys[2].Key == nil || *keys[2].Key != "bob" {
			t.Fatalf("keys after the migration: %+v", keys)
		}
		for _, name := range []string{"admin", "Admin", "bob"} {
			if u, err := s.FindStaffUserByUsername(ctx, name); err != nil || u.Username != name {
				t.Errorf("%s after the migration: %+v, %v", name, u, err)
			}
		}
		for _, name := range []string{"ADMIN", "Bob"} {
			_, err := s.CreateStaffUser(ctx, name, "x")
			wantField(t, err, "username")
		}
		if _, err := s.CreateStaffUser(ctx, "carol", "x"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAuditAnonymousMigration: migration 00017 (SQLite copies the table to
// change its CHECK) keeps every entry, and ids go on after the highest
// ever given, even one housekeeping deleted.
func TestAuditAnonymousMigration(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		s, err := db.Open(ctx, rawURL, dbtest.NewClock(t).Now)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.MigrateUpTo(ctx, 16); err != nil {
			t.Fatal(err)
		}
		for _, actor := range []string{"staff", "key", "cli"} {
			if _, err := s.DB().ExecContext(ctx, `INSERT INTO audit_log (at, actor_type, actor_name, action) VALUES ($1, $2, 'x', 'pet.update')`, s.Now(), actor); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.DB().ExecContext(ctx, `DELETE FROM audit_log WHERE actor_type = 'cli'`); err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.AuditSignInFailure(ctx, db.Origin{RequestID: "r"}, "nobody", nil, "password"); err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			ID    int64  `db:"id"`
			Actor string `db:"actor_type"`
		}
		if err := s.DB().SelectContext(ctx, &rows, `SELECT id, actor_type FROM audit_log ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 || rows[0].Actor != "staff" || rows[1].Actor != "key" || rows[2].Actor != "anonymous" || rows[2].ID != 4 {
			t.Errorf("audit_log after the migration: %+v, want staff 1, key 2, anonymous 4", rows)
		}
	})
}
