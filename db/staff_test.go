package db_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestCheckUsername(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, code string
	}{
		{"OK", "  alice ", "alice", ""},
		{"OK100", strings.Repeat("é", 100), strings.Repeat("é", 100), ""},
		{"ErrTooLong", strings.Repeat("a", 101), "", db.EValidationFailed},
		{"ErrNUL", "ali\x00ce", "", db.EValidationFailed},
		{"ErrControl", "ali\nce", "", db.EValidationFailed},
		{"ErrInvalidUTF8", "ali\xffce", "", db.EValidationFailed},
		{"ErrEmpty", "   ", "", db.EValidationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.CheckUsername(tc.in)
			wantCode(t, err, tc.code)
			if err == nil && got != tc.want {
				t.Fatalf("username = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRecordLoginAttempt(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		now := dbtest.Present(t).Truncate(time.Second)
		s.Now = func() time.Time { return now }
		attempt := func(user, ip string) int {
			t.Helper()
			n, err := s.RecordLoginAttempt(ctx, user, ip, now.Add(-15*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for want := 1; want <= 3; want++ {
			if got := attempt("alice", "192.0.2.1"); got != want {
				t.Fatalf("attempt %d counted %d", want, got)
			}
		}
		// Another address, another username: their own counts.
		if got := attempt("alice", "192.0.2.2"); got != 1 {
			t.Fatalf("another address counted %d, want 1", got)
		}
		if got := attempt("bob", "192.0.2.1"); got != 1 {
			t.Fatalf("another username counted %d, want 1", got)
		}
		// Attempts older than the window no longer count.
		now = now.Add(15*time.Minute + time.Second)
		if got := attempt("alice", "192.0.2.1"); got != 1 {
			t.Fatalf("after the window: %d, want 1", got)
		}
		// A good sign-in takes its attempt, and the failures, back.
		if err := s.ClearLoginFailures(ctx, "alice", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		if n, err := s.CountLoginFailures(ctx, "alice", "192.0.2.1", now.Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("after clearing: %d, %v; want 0", n, err)
		}
	})
}

// Of N simultaneous attempts at most 5 may see 5 or fewer attempts: the
// lockout lets at most that many reach a password check.
func TestRecordLoginAttemptConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		since := s.Now().Add(-15 * time.Minute)
		var mu sync.Mutex
		var counts []int
		run(20, func(int) {
			n, err := s.RecordLoginAttempt(ctx, "alice", "192.0.2.1", since)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			counts = append(counts, n)
			mu.Unlock()
		})
		checked := 0
		for _, n := range counts {
			if n <= 5 {
				checked++
			}
		}
		if len(counts) != 20 || checked > 5 {
			t.Fatalf("counts = %v: %d of %d attempts saw room, want at most 5", counts, checked, len(counts))
		}
		if n, err := s.CountLoginFailures(ctx, "alice", "192.0.2.1", since); err != nil || n != 20 {
			t.Fatalf("recorded %d, %v; want 20", n, err)
		}
	})
}
