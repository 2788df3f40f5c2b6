package db_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"petstore/db"
	"petstore/db/dbtest"
)

// admin is the origin of changes made by a signed-in admin in these tests.
func asAdmin(ctx context.Context, u *db.StaffUser) context.Context {
	return db.WithOrigin(ctx, db.Origin{Actor: db.StaffActor(u.ID, u.Username), RequestID: "req-1", IP: "192.0.2.1"})
}

// mustAddStaff adds a user with role and the hash of "a long password!".
func mustAddStaff(t *testing.T, ctx context.Context, s *db.Store, name, role string, oneTime bool) *db.StaffUser {
	t.Helper()
	u, err := s.AddStaffUser(ctx, db.NewStaffUser{Username: name, Role: role, PasswordHash: "$2a$04$test.hash.not.checked.here", OneTime: oneTime})
	if err != nil {
		t.Fatalf("add %s: %v", name, err)
	}
	return u
}

// auditRows are the audit log's rows, oldest first.
type auditRow struct {
	Action     string `db:"action"`
	ActorType  string `db:"actor_type"`
	ActorID    string `db:"actor_id"`
	ActorName  string `db:"actor_name"`
	TargetType string `db:"target_type"`
	TargetID   string `db:"target_id"`
	Changes    string `db:"changes"`
	RequestID  string `db:"request_id"`
	IP         string `db:"ip"`
}

func auditRows(t *testing.T, s *db.Store) []auditRow {
	t.Helper()
	var rows []auditRow
	if err := s.DB().Select(&rows, `SELECT action, actor_type, actor_id, actor_name, target_type, target_id, changes, request_id, ip FROM audit_log ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	return rows
}

// sessions counts user id's sessions.
func sessions(t *testing.T, s *db.Store, id int64) int {
	t.Helper()
	var n int
	if err := s.DB().Get(&n, `SELECT count(*) FROM staff_sessions WHERE staff_user_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStaffTeam(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		bg := context.Background()
		s := open(t)
		boss := mustAddStaff(t, bg, s, "boss", db.RoleAdmin, false)
		ctx := asAdmin(bg, boss)

		t.Run("Add", func(t *testing.T) {
			u := mustAddStaff(t, ctx, s, "clara", db.RoleClerk, true)
			if u.Role != db.RoleClerk || !u.MustChangePassword {
				t.Fatalf("added %+v", u)
			}
			got, err := s.FindStaffUserByID(bg, u.ID)
			if err != nil || got.Role != db.RoleClerk || !got.MustChangePassword || got.Disabled() || got.TwoFactor() {
				t.Fatalf("stored %+v, %v", got, err)
			}
			rows := auditRows(t, s)
			last := rows[len(rows)-1]
			if last.Action != "staff.create" || last.ActorID != itoa(boss.ID) || last.TargetID != itoa(u.ID) || last.RequestID != "req-1" || last.IP != "192.0.2.1" {
				t.Fatalf("audit %+v", last)
			}
			var ch map[string][2]any
			if err := json.Unmarshal([]byte(last.Changes), &ch); err != nil || ch["role"][1] != "clerk" || ch["username"][1] != "clara" {
				t.Fatalf("changes %s, %v", last.Changes, err)
			}
			if strings.Contains(last.Changes, "hash") {
				t.Fatalf("changes hold a hash: %s", last.Changes)
			}
		})
		t.Run("ErrBadInput", func(t *testing.T) {
			for _, in := range []db.NewStaffUser{
				{Username: "", Role: db.RoleClerk},
				{Username: strings.Repeat("x", 101), Role: db.RoleClerk},
				{Username: "ok\x00", Role: db.RoleClerk},
				{Username: "bad-role", Role: "owner"},
				{Username: "clara", Role: db.RoleClerk}, // taken
			} {
				_, err := s.AddStaffUser(ctx, in)
				wantCode(t, err, db.EValidationFailed)
			}
			_, err := s.SetStaffRole(ctx, boss.ID, "root")
			wantCode(t, err, db.EValidationFailed)
			_, err = s.SetStaffRole(ctx, 424242, db.RoleClerk)
			wantCode(t, err, db.ENotFound)
			_, err = s.SetStaffDisabled(ctx, 424242, true)
			wantCode(t, err, db.ENotFound)
		})
		t.Run("LastAdmin", func(t *testing.T) {
			_, err := s.SetStaffRole(ctx, boss.ID, db.RoleClerk)
			wantCode(t, err, db.ELastAdmin)
			_, err = s.SetStaffDisabled(ctx, boss.ID, true)
			wantCode(t, err, db.ELastAdmin)
			// A disabled admin does not count: with only one enabled, it stays.
			other := mustAddStaff(t, ctx, s, "other-admin", db.RoleAdmin, false)
			if _, err := s.SetStaffDisabled(ctx, other.ID, true); err != nil {
				t.Fatal(err)
			}
			_, err = s.SetStaffRole(ctx, boss.ID, db.RoleClerk)
			wantCode(t, err, db.ELastAdmin)
			if _, err := s.SetStaffDisabled(ctx, other.ID, false); err != nil {
				t.Fatal(err)
			}
			// With another enabled admin, demoting is allowed, and ends its sessions.
			if _, err := s.CreateStaffSession(bg, other.ID, time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetStaffRole(ctx, other.ID, db.RoleClerk); err != nil {
				t.Fatal(err)
			}
			if n := sessions(t, s, other.ID); n != 0 {
				t.Fatalf("demoted user has %d sessions", n)
			}
		})
		t.Run("DisableEndsSessions", func(t *testing.T) {
			u := mustAddStaff(t, ctx, s, "dora", db.RoleClerk, false)
			sid, err := s.CreateStaffSession(bg, u.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetStaffDisabled(ctx, u.ID, true); err != nil {
				t.Fatal(err)
			}
			if _, err := s.FindStaffUserBySession(bg, sid); db.ErrorCode(err) != db.ENotFound {
				t.Fatalf("disabled user's session: %v", err)
			}
			// A session made for a disabled user anyway signs no one in.
			sid, err = s.CreateStaffSession(bg, u.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.FindStaffUserBySession(bg, sid); db.ErrorCode(err) != db.ENotFound {
				t.Fatalf("disabled user's new session: %v", err)
			}
			_, err = s.StartStaffSession(bg, db.SignIn{User: u, TTL: time.Hour})
			wantCode(t, err, db.EForbidden)
			rows := auditRows(t, s)
			if last := rows[len(rows)-1]; last.Action != "staff.disable" || last.Changes != `{"disabled":[false,true]}` {
				t.Fatalf("audit %+v", last)
			}
			if _, err := s.SetStaffDisabled(ctx, u.ID, false); err != nil {
				t.Fatal(err)
			}
			if got := auditRows(t, s); got[len(got)-1].Action != "staff.enable" {
				t.Fatalf("audit %+v", got[len(got)-1])
			}
		})
		t.Run("Passwords", func(t *testing.T) {
			u := mustAddStaff(t, ctx, s, "erin", db.RoleClerk, false)
			keep, _ := s.CreateStaffSession(bg, u.ID, time.Hour)
			other, _ := s.CreateStaffSession(bg, u.ID, time.Hour)
			hash, err := db.HashPassword("a brand new password")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ChangeStaffPassword(asAdmin(bg, u), u.ID, hash, keep); err != nil {
				t.Fatal(err)
			}
			if _, err := s.FindStaffUserBySession(bg, keep); err != nil {
				t.Fatalf("the changing session ended: %v", err)
			}
			if _, err := s.FindStaffUserBySession(bg, other); db.ErrorCode(err) != db.ENotFound {
				t.Fatalf("the other session lives on: %v", err)
			}
			got, _ := s.FindStaffUserByID(bg, u.ID)
			if !db.PasswordMatches(got.PasswordHash, "a brand new password") || got.MustChangePassword {
				t.Fatalf("after change: %+v", got)
			}
			if err := s.ResetStaffPassword(ctx, u.ID, hash); err != nil {
				t.Fatal(err)
			}
			got, _ = s.FindStaffUserByID(bg, u.ID)
			if !got.MustChangePassword || sessions(t, s, u.ID) != 0 {
				t.Fatalf("after reset: %+v, %d sessions", got, sessions(t, s, u.ID))
			}
			for _, r := range auditRows(t, s) {
				if strings.Contains(r.Changes, "$2a$") || strings.Contains(r.Changes, "password\"") {
					t.Fatalf("audit holds a password: %+v", r)
				}
			}
		})
	})
}

// Two admins demoting each other at the same moment: one wins, the other
// is refused, and the store keeps an enabled admin. Likewise for disabling.
func TestStaffLastAdminConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		bg := context.Background()
		s := open(t)
		for round := range 5 {
			a := mustAddStaff(t, bg, s, "a"+itoa(int64(round)), db.RoleAdmin, false)
			b := mustAddStaff(t, bg, s, "b"+itoa(int64(round)), db.RoleAdmin, false)
			// Only these two are enabled admins this round.
			var others []*db.StaffUser
			all, err := s.FindStaffUsers(bg)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range all {
				if u.ID != a.ID && u.ID != b.ID && u.IsAdmin() && !u.Disabled() {
					others = append(others, u)
				}
			}
			for _, u := range others {
				if _, err := s.DB().Exec(`UPDATE staff_users SET disabled_at = $1 WHERE id = $2`, s.Now(), u.ID); err != nil {
					t.Fatal(err)
				}
			}
			change := func(u *db.StaffUser) error {
				if round%2 == 0 {
					_, err := s.SetStaffRole(bg, u.ID, db.RoleClerk)
					return err
				}
				_, err := s.SetStaffDisabled(bg, u.ID, true)
				return err
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i, u := range []*db.StaffUser{a, b} {
				wg.Go(func() {
					<-start
					errs[i] = change(u)
				})
			}
			close(start)
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch db.ErrorCode(err) {
				case "":
					ok++
				case db.ELastAdmin:
				default:
					t.Fatalf("round %d: %v", round, err)
				}
			}
			var admins int
			if err := s.DB().Get(&admins, `SELECT count(*) FROM staff_users WHERE role = 'admin' AND disabled_at IS NULL`); err != nil {
				t.Fatal(err)
			}
			if ok != 1 || admins != 1 {
				t.Fatalf("round %d: %d changes went through, %d enabled admins left; want 1 and 1 (%v)", round, ok, admins, errs)
			}
		}
	})
}

func TestStaffTwoFactor(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		bg := context.Background()
		s := open(t)
		clk := dbtest.NewClock(t)
		s.Now = clk.Now
		u := mustAddStaff(t, bg, s, "fay", db.RoleClerk, false)
		ctx := asAdmin(bg, u)
		key, err := db.NewTOTPKey(u.Username)
		if err != nil {
			t.Fatal(err)
		}
		code := func(at time.Time) string {
			t.Helper()
			c, err := totp.GenerateCode(key.Secret(), at)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		use := func(c string) bool {
			t.Helper()
			ok, err := s.UseStaffCode(bg, u.ID, c)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}

		// Off: no code is accepted.
		if use(code(clk.Now())) {
			t.Fatal("a code was accepted with 2FA off")
		}
		// Turning it on needs a current code.
		_, err = s.EnableStaffTwoFactor(ctx, u.ID, key.Secret(), code(clk.Now().Add(-5*time.Minute)), "")
		wantCode(t, err, db.EValidationFailed)
		_, err = s.EnableStaffTwoFactor(ctx, u.ID, key.Secret(), "12345x", "")
		wantCode(t, err, db.EValidationFailed)
		first := code(clk.Now())
		recovery, err := s.EnableStaffTwoFactor(ctx, u.ID, key.Secret(), first, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(recovery) != db.RecoveryCodeCount {
			t.Fatalf("%d recovery codes", len(recovery))
		}
		got, _ := s.FindStaffUserByID(bg, u.ID)
		if !got.TwoFactor() {
			t.Fatal("2FA is not on")
		}
		// The code that turned it on is used up.
		if use(first) {
			t.Fatal("the enrolment's code was accepted again")
		}
		// The next step's code is accepted once, and not again (a replay).
		clk.Add(db.TOTPPeriod * time.Second)
		next := code(clk.Now())
		if !use(next) {
			t.Fatal("a current code was refused")
		}
		if use(next) {
			t.Fatal("a replayed code was accepted")
		}
		// A code of the step before (within the skew) is refused once a
		// later one was used; a wrong or far code always.
		if use(code(clk.Now().Add(-db.TOTPPeriod * time.Second))) {
			t.Fatal("an older step's code was accepted after a newer one")
		}
		clk.Add(db.TOTPPeriod * time.Second)
		if use(code(clk.Now().Add(10 * time.Minute))) {
			t.Fatal("a code 10 minutes ahead was accepted")
		}
		// The step after (clock skew) is accepted.
		if !use(code(clk.Now().Add(db.TOTPPeriod * time.Second))) {
			t.Fatal("the next step's code was refused")
		}
		// Two sign-ins with the same fresh code at once: one gets it.
		clk.Add(3 * db.TOTPPeriod * time.Second)
		fresh := code(clk.Now())
		var wg sync.WaitGroup
		var mu sync.Mutex
		accepted := 0
		for range 8 {
			wg.Go(func() {
				ok, err := s.UseStaffCode(bg, u.ID, fresh)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if accepted != 1 {
			t.Fatalf("a code used 8 times at once was accepted %d times", accepted)
		}
		// A recovery code works once, typed in any case, with or without
		// its hyphen and spaces.
		rc := recovery[3]
		if !use(" " + strings.ToUpper(rc) + " ") {
			t.Fatal("a recovery code was refused")
		}
		if use(rc) || use(strings.ReplaceAll(rc, "-", "")) {
			t.Fatal("a used recovery code was accepted again")
		}
		if n, _ := s.RecoveryCodesLeft(bg, u.ID); n != db.RecoveryCodeCount-1 {
			t.Fatalf("%d recovery codes left", n)
		}
		for _, bad := range []string{"", "zzzzz-zzzzz", strings.Repeat("9", 6), "' OR 1=1 --"} {
			if use(bad) {
				t.Fatalf("%q was accepted", bad)
			}
		}
		// Turning it off (an admin: all sessions end) forgets the secret
		// and the codes.
		if _, err := s.CreateStaffSession(bg, u.ID, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := s.DisableStaffTwoFactor(ctx, u.ID, ""); err != nil {
			t.Fatal(err)
		}
		if n := sessions(t, s, u.ID); n != 0 {
			t.Fatalf("%d sessions after 2FA off", n)
		}
		if use(recovery[4]) || use(code(clk.Now())) {
			t.Fatal("a code was accepted after 2FA was turned off")
		}
		var actions []string
		for _, r := range auditRows(t, s) {
			actions = append(actions, r.Action)
			if strings.Contains(r.Changes, key.Secret()) || strings.Contains(r.Changes, recovery[0]) {
				t.Fatalf("audit holds a secret: %+v", r)
			}
		}
		if got := strings.Join(actions, " "); got != "staff.2fa_on staff.2fa_off" {
			t.Fatalf("audit actions %q", got)
		}
	})
}

func TestStaffSignIn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		bg := context.Background()
		s := open(t)
		u := mustAddStaff(t, bg, s, "gus", db.RoleClerk, false)
		if _, err := s.RecordLoginAttempt(bg, "gus", "192.0.2.9", s.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		old, _ := s.CreateStaffSession(bg, u.ID, time.Hour)
		o := db.Origin{RequestID: "req-9", IP: "192.0.2.9"}
		sid, err := s.StartStaffSession(bg, db.SignIn{User: u, TTL: time.Hour, Bucket: "192.0.2.9", Replace: old, Origin: o})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.FindStaffUserBySession(bg, sid); err != nil || got.LastSignInAt == nil {
			t.Fatalf("signed in: %+v, %v", got, err)
		}
		if _, err := s.FindStaffUserBySession(bg, old); db.ErrorCode(err) != db.ENotFound {
			t.Fatalf("the replaced session: %v", err)
		}
		if n, _ := s.CountLoginFailures(bg, "gus", "192.0.2.9", s.Now().Add(-time.Hour)); n != 0 {
			t.Fatalf("%d failures left", n)
		}
		if err := s.AuditSignInFailure(bg, o, "gus", u, "code"); err != nil {
			t.Fatal(err)
		}
		if err := s.AuditSignInFailure(bg, o, "nobody", nil, "password"); err != nil {
			t.Fatal(err)
		}
		rows := auditRows(t, s)
		want := []auditRow{
			{Action: "signin.success", ActorType: "staff", ActorID: itoa(u.ID), ActorName: "gus", TargetType: "staff", TargetID: itoa(u.ID), Changes: "{}", RequestID: "req-9", IP: "192.0.2.9"},
			// A failure's actor is anonymous, never the user whose name was
			// typed: the name is its data, the user (if any) its target.
			{Action: "signin.failure", ActorType: "anonymous", ActorName: "anonymous", TargetType: "staff", TargetID: itoa(u.ID), Changes: `{"reason":[null,"code"],"username":[null,"gus"]}`, RequestID: "req-9", IP: "192.0.2.9"},
			{Action: "signin.failure", ActorType: "anonymous", ActorName: "anonymous", TargetType: "staff", Changes: `{"reason":[null,"password"],"username":[null,"nobody"]}`, RequestID: "req-9", IP: "192.0.2.9"},
		}
		if len(rows) != len(want) {
			t.Fatalf("audit rows %+v", rows)
		}
		for i := range want {
			if rows[i] != want[i] {
				t.Fatalf("audit row %d = %+v, want %+v", i, rows[i], want[i])
			}
		}
	})
}

func TestPasswords(t *testing.T) {
	for _, tc := range []struct {
		name, user, password, code string
	}{
		{"OK", "alice", "twelve chars", ""},
		{"OK200", "alice", strings.Repeat("é", 200), ""},
		{"ErrShort", "alice", "eleven char", db.EValidationFailed},
		{"ErrLong", "alice", strings.Repeat("a", 201), db.EValidationFailed},
		{"ErrUsername", "alice the admin", "Alice The Admin", db.EValidationFailed},
		{"ErrUTF8", "alice", "twelve chars\xff", db.EValidationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, db.CheckNewPassword(tc.user, tc.password), tc.code) })
	}
	// Long passwords are whole: two differing only past byte 72 differ.
	long := strings.Repeat("x", 100)
	h, err := db.HashPassword(long + "1")
	if err != nil {
		t.Fatal(err)
	}
	if !db.PasswordMatches(h, long+"1") || db.PasswordMatches(h, long+"2") || db.PasswordMatches(h, "") {
		t.Fatal("a long password's hash does not tell it apart")
	}
	p, err := db.GeneratePassword()
	if err != nil || db.CheckNewPassword("alice", p) != nil {
		t.Fatalf("generated %q, %v", p, err)
	}
}
