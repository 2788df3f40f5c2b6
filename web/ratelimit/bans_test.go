package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// banSetup is a Limiter whose minute holds one request, so that every
// further request in the minute is a 429, with strikes strikes to a ban.
type banSetup struct {
	l     *Limiter
	clock *dayClock
	bans  *MemoryBanStore
	store Store
	lim   Limits
}

func newBanSetup(t *testing.T, newStore newStoreFunc, strikes int, now string) *banSetup {
	clock := newClock(t, now)
	bans := NewMemoryBanStore()
	store := newStore(t)
	return &banSetup{
		l:     New(Config{Store: store, Bans: bans, Strikes: strikes, Now: clock.Now}),
		clock: clock,
		bans:  bans,
		store: store,
		lim:   Limits{PerMinute: 1, PerDay: 1000},
	}
}

// getBanned spends the minute, takes the first 429 and then strikes until
// the ban, checking that exactly the strikes-th strike starts it, and
// returns the banning Decision.
func (s *banSetup) getBanned(t *testing.T, subject string, strikes int) Decision {
	t.Helper()
	if d := mustAllow(t, s.l, subject, s.lim); !d.Allowed {
		t.Fatalf("first request in the minute refused: %+v", summarize(d))
	}
	return s.strikeOut(t, subject, strikes)
}

// strikeOut expects a first 429, strikes-1 striking 429s and then the ban.
func (s *banSetup) strikeOut(t *testing.T, subject string, strikes int) Decision {
	t.Helper()
	for i := range strikes {
		if d := mustAllow(t, s.l, subject, s.lim); d.Allowed || d.Banned {
			t.Fatalf("429 number %d: got %+v, want a plain 429", i+1, summarize(d))
		}
	}
	d := mustAllow(t, s.l, subject, s.lim)
	if !d.Banned || d.Allowed {
		t.Fatalf("strike %d: got %+v, want banned", strikes, summarize(d))
	}
	return d
}

func testBans(t *testing.T, newStore newStoreFunc) {
	t.Run("BanAtNthStrike", func(t *testing.T) {
		s := newBanSetup(t, newStore, 0, "12:00:10") // default: 20 strikes
		d := s.getBanned(t, "k", DefaultStrikes)
		want := summary{Allowed: false, Banned: true, Minute: 0, Day: 999, Binding: WindowMinute, RetryAfter: 15 * time.Minute}
		if diff := cmp.Diff(want, summarize(d)); diff != "" {
			t.Errorf("banning decision (-want +got):\n%s", diff)
		}
		if want := s.clock.at(t, "12:15:10"); !d.BannedUntil.Equal(want) {
			t.Errorf("BannedUntil = %s, want %s", d.BannedUntil, want)
		}
		if !d.BanStarted {
			t.Error("BanStarted = false on the banning request")
		}
		// Still banned on the next request, in any window, and in Status.
		s.clock.SetAt(t, "12:05:00")
		if d := checkAllow(t, s.l, "k", s.lim, summary{false, true, 1, 999, WindowMinute, 10*time.Minute + 10*time.Second}); d.BanStarted {
			t.Error("BanStarted = true on a request during the ban")
		}
		if st := mustStatus(t, s.l, "k", s.lim); !st.Banned || !st.BannedUntil.Equal(d.BannedUntil) {
			t.Errorf("Status while banned = %+v", st)
		}
		u, err := s.l.Usage(context.Background(), "k", s.lim)
		if err != nil {
			t.Fatal(err)
		}
		// 429s: the first and 19 strikes; the 20th strike was a 403.
		if !u.Banned || !u.BannedUntil.Equal(d.BannedUntil) || u.BansLast24h != 1 || u.Limited429Today != 20 {
			t.Errorf("Usage while banned: banned %v until %s, bans %d, 429s %d; want true, %s, 1, 20",
				u.Banned, u.BannedUntil, u.BansLast24h, u.Limited429Today, d.BannedUntil)
		}
	})

	t.Run("Escalation", func(t *testing.T) {
		s := newBanSetup(t, newStore, 2, "00:00:00")
		for i, want := range []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
			d := s.getBanned(t, "k", 2)
			if d.RetryAfter != want {
				t.Fatalf("ban %d lasts %s, want %s", i+1, d.RetryAfter, want)
			}
			// One second before the end: still banned.
			s.clock.Set(d.BannedUntil.Add(-time.Second))
			checkAllow(t, s.l, "k", s.lim, summary{false, true, 1, 1000 - 1 - int64(i), WindowMinute, time.Second})
			// At the end the ban is over; start in a fresh minute.
			s.clock.Set(d.BannedUntil)
			if d := mustStatus(t, s.l, "k", s.lim); d.Banned {
				t.Fatalf("ban %d still in force at its end", i+1)
			}
			s.clock.Set(d.BannedUntil.Truncate(time.Minute).Add(time.Minute))
		}
	})

	t.Run("Cap", func(t *testing.T) {
		s := newBanSetup(t, newStore, 2, "12:00:00")
		now := s.clock.Now()
		// Earlier short bans within the last 24 hours, all over by now.
		for i := range 7 {
			start := now.Add(-20*time.Hour + time.Duration(i)*time.Hour)
			for _, subject := range []string{"six", "seven"} {
				if subject == "six" && i == 6 {
					continue
				}
				if err := s.bans.CreateBan(context.Background(), subject, start, start.Add(time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if d := s.getBanned(t, "six", 2); d.RetryAfter != 16*time.Hour {
			t.Errorf("after 6 bans: %s, want 16h", d.RetryAfter)
		}
		if d := s.getBanned(t, "seven", 2); d.RetryAfter != 24*time.Hour {
			t.Errorf("after 7 bans: %s, want 24h (capped)", d.RetryAfter)
		}
	})

	t.Run("LiftedBanDoesNotCount", func(t *testing.T) {
		s := newBanSetup(t, newStore, 2, "12:00:10")
		s.getBanned(t, "k", 2)
		if err := s.l.LiftBan(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
		// Same minute, still exhausted: strikes were cleared, so it takes
		// a first 429 and two strikes again, and the ban is not doubled.
		d := s.strikeOut(t, "k", 2)
		if d.RetryAfter != 15*time.Minute {
			t.Errorf("ban after a lifted one lasts %s, want 15m", d.RetryAfter)
		}
		u, err := s.l.Usage(context.Background(), "k", s.lim)
		if err != nil {
			t.Fatal(err)
		}
		if u.BansLast24h != 1 {
			t.Errorf("BansLast24h = %d, want 1 (the lifted ban does not count)", u.BansLast24h)
		}
	})

	t.Run("StrikesAfterBanRestart", func(t *testing.T) {
		// The day is exhausted, so the window outlives a 15-minute ban:
		// after it, a full set of strikes is needed again.
		s := newBanSetup(t, newStore, 3, "12:00:10")
		s.lim = Limits{PerMinute: 100, PerDay: 1}
		d := s.getBanned(t, "k", 3)
		s.clock.Set(d.BannedUntil)
		for i := range 2 {
			if d := mustAllow(t, s.l, "k", s.lim); d.Banned || d.Allowed || d.Binding != WindowDay {
				t.Fatalf("strike %d after the ban: %+v, want a 429 on the day", i+1, summarize(d))
			}
		}
		if d := mustAllow(t, s.l, "k", s.lim); !d.Banned || d.RetryAfter != 30*time.Minute {
			t.Fatalf("third strike after the ban: %+v, want a 30m ban", summarize(d))
		}
	})

	t.Run("StatusAddsNoStrikes", func(t *testing.T) {
		s := newBanSetup(t, newStore, 2, "12:00:10")
		mustAllow(t, s.l, "k", s.lim)
		mustAllow(t, s.l, "k", s.lim) // first 429
		for range 10 {
			mustStatus(t, s.l, "k", s.lim)
		}
		s.strikeOut(t, "k", 1)
	})

	t.Run("OtherInstance", func(t *testing.T) {
		// Two limiters share the counters and bans, as two instances would
		// share Redis and the database; each has its own ban cache, which
		// must never answer from before a change made by the other.
		s := newBanSetup(t, newStore, 2, "12:00:10")
		other := New(Config{Store: s.store, Bans: s.bans, Strikes: 2, Now: s.clock.Now})
		mustStatus(t, other, "k", s.lim) // caches "not banned"
		d := s.getBanned(t, "k", 2)
		if got := mustAllow(t, other, "k", s.lim); !got.Banned || !got.BannedUntil.Equal(d.BannedUntil) {
			t.Fatalf("other instance right after the ban: %+v, want banned until %s", summarize(got), d.BannedUntil)
		}
		// Lifted here: both instances know on their next request.
		if err := s.l.LiftBan(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
		if got := mustStatus(t, s.l, "k", s.lim); got.Banned {
			t.Fatalf("lifting instance still sees the ban")
		}
		if got := mustStatus(t, other, "k", s.lim); got.Banned {
			t.Fatalf("other instance still sees the lifted ban")
		}
	})
}

func TestBanDuration(t *testing.T) {
	for _, tt := range []struct {
		base    time.Duration
		earlier int
		want    time.Duration
	}{
		{15 * time.Minute, 0, 15 * time.Minute},
		{15 * time.Minute, 1, 30 * time.Minute},
		{15 * time.Minute, 2, time.Hour},
		{15 * time.Minute, 6, 16 * time.Hour},
		{15 * time.Minute, 7, 24 * time.Hour},
		{15 * time.Minute, 1000, 24 * time.Hour},
		{48 * time.Hour, 0, 24 * time.Hour},
	} {
		if got := banDuration(tt.base, tt.earlier); got != tt.want {
			t.Errorf("banDuration(%s, %d) = %s, want %s", tt.base, tt.earlier, got, tt.want)
		}
	}
}
