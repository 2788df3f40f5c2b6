package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

func mustBan(t *testing.T, ctx context.Context, s *db.Store, subject string, start, until time.Time) {
	t.Helper()
	if err := s.CreateBan(ctx, subject, start, until); err != nil {
		t.Fatalf("ban %s: %v", subject, err)
	}
}

// wantBan checks the subject's active ban at now: its end, or none when
// until is zero.
func wantBan(t *testing.T, ctx context.Context, s *db.Store, subject string, now, until time.Time) {
	t.Helper()
	got, ok, err := s.ActiveBan(ctx, subject, now)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case until.IsZero() && ok:
		t.Fatalf("%s at %s: banned until %s, want not banned", subject, now.Format(time.TimeOnly), got.Format(time.TimeOnly))
	case !until.IsZero() && (!ok || !got.Equal(until)):
		t.Fatalf("%s at %s: banned=%v until %s, want until %s", subject, now.Format(time.TimeOnly), ok, got, until)
	}
}

func wantBanCount(t *testing.T, ctx context.Context, s *db.Store, subject string, since time.Time, want int) {
	t.Helper()
	got, err := s.CountBans(ctx, subject, since)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("bans of %s since %s: got %d, want %d", subject, since, got, want)
	}
}

// bannedStore opens a fresh store with every subject banned for 15
// minutes from t0, and returns when the bans end.
func bannedStore(t *testing.T, open dbtest.Open, t0 time.Time, subjects ...string) (*db.Store, time.Time) {
	t.Helper()
	s := open(t)
	until := t0.Add(15 * time.Minute)
	for _, subject := range subjects {
		mustBan(t, context.Background(), s, subject, t0, until)
	}
	return s, until
}

func TestActiveBan(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t0 := dbtest.Present(t)
		t.Run("OK", func(t *testing.T) {
			s, until := bannedStore(t, open, t0, "key:1")
			wantBan(t, ctx, s, "key:1", t0, until)
			wantBan(t, ctx, s, "key:1", until.Add(-time.Second), until)
			// The ban ends at until: not active then or later.
			wantBan(t, ctx, s, "key:1", until, time.Time{})
			wantBan(t, ctx, s, "key:1", until.Add(time.Hour), time.Time{})
			// Other subjects are not affected.
			wantBan(t, ctx, s, "key:2", t0, time.Time{})
			wantBan(t, ctx, s, "ip:10.0.0.1", t0, time.Time{})
		})
		t.Run("OKLongestWins", func(t *testing.T) {
			s := open(t)
			mustBan(t, ctx, s, "key:1", t0, t0.Add(30*time.Minute))
			mustBan(t, ctx, s, "key:1", t0.Add(time.Minute), t0.Add(15*time.Minute))
			wantBan(t, ctx, s, "key:1", t0.Add(2*time.Minute), t0.Add(30*time.Minute))
		})
		t.Run("OKExpiredIsNotActive", func(t *testing.T) {
			s := open(t)
			mustBan(t, ctx, s, "key:1", t0.Add(-time.Hour), t0.Add(-45*time.Minute))
			wantBan(t, ctx, s, "key:1", t0, time.Time{})
		})
		t.Run("OKActiveBans", func(t *testing.T) {
			s := open(t)
			pinClock(t, s, t0)
			mustBan(t, ctx, s, "key:1", t0, t0.Add(15*time.Minute))
			mustBan(t, ctx, s, "key:1", t0, t0.Add(time.Hour))
			mustBan(t, ctx, s, "ip:10.0.0.1", t0, t0.Add(30*time.Minute))
			mustBan(t, ctx, s, "key:2", t0.Add(-time.Hour), t0.Add(-time.Minute))
			mustBan(t, ctx, s, "key:3", t0, t0.Add(time.Hour))
			if err := s.LiftBan(ctx, "key:3", t0); err != nil {
				t.Fatal(err)
			}
			got, err := s.ActiveBans(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]time.Time{"key:1": t0.Add(time.Hour), "ip:10.0.0.1": t0.Add(30 * time.Minute)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("active bans (-want +got):\n%s", diff)
			}
		})
	})
}

func TestLiftBan(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t0 := dbtest.Present(t)
		t.Run("OK", func(t *testing.T) {
			s, until := bannedStore(t, open, t0, "key:1", "key:2")
			if err := s.LiftBan(ctx, "key:1", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			wantBan(t, ctx, s, "key:1", t0.Add(2*time.Minute), time.Time{})
			wantBan(t, ctx, s, "key:2", t0.Add(2*time.Minute), until)
			// A lifted ban does not count toward later doubling.
			wantBanCount(t, ctx, s, "key:1", t0.Add(-24*time.Hour), 0)
			wantBanCount(t, ctx, s, "key:2", t0.Add(-24*time.Hour), 1)
		})
		t.Run("OKExpiredBansStayCounted", func(t *testing.T) {
			s := open(t)
			mustBan(t, ctx, s, "key:1", t0.Add(-2*time.Hour), t0.Add(-105*time.Minute))
			mustBan(t, ctx, s, "key:1", t0, t0.Add(30*time.Minute))
			if err := s.LiftBan(ctx, "key:1", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			// Only the ban in force was lifted; the earlier one served its time.
			wantBanCount(t, ctx, s, "key:1", t0.Add(-24*time.Hour), 1)
			wantBan(t, ctx, s, "key:1", t0.Add(2*time.Minute), time.Time{})
		})
		t.Run("OKNothingToLift", func(t *testing.T) {
			s := open(t)
			if err := s.LiftBan(ctx, "key:9", t0); err != nil {
				t.Fatalf("lift without a ban: %v", err)
			}
			// A ban started after the lift is in force.
			mustBan(t, ctx, s, "key:9", t0.Add(time.Minute), t0.Add(16*time.Minute))
			wantBan(t, ctx, s, "key:9", t0.Add(2*time.Minute), t0.Add(16*time.Minute))
		})
	})
}

func TestCountBans(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t0 := dbtest.Present(t)
		s := open(t)
		for _, ago := range []time.Duration{25 * time.Hour, 23 * time.Hour, 5 * time.Hour, time.Hour} {
			start := t0.Add(-ago)
			mustBan(t, ctx, s, "key:1", start, start.Add(15*time.Minute))
		}
		mustBan(t, ctx, s, "key:2", t0.Add(-time.Hour), t0.Add(-45*time.Minute))
		for name, tc := range map[string]struct {
			since time.Time
			want  int
		}{
			"last24h": {t0.Add(-24 * time.Hour), 3},
			"last6h":  {t0.Add(-6 * time.Hour), 2},
			"last2h":  {t0.Add(-2 * time.Hour), 1},
			"now":     {t0, 0},
			"all":     {t0.Add(-48 * time.Hour), 4},
		} {
			t.Run("OK/"+name, func(t *testing.T) {
				wantBanCount(t, ctx, s, "key:1", tc.since, tc.want)
			})
		}
		wantBanCount(t, ctx, s, "key:2", t0.Add(-24*time.Hour), 1)
		wantBanCount(t, ctx, s, "key:3", t0.Add(-24*time.Hour), 0)
	})
}
