package ratelimit

import (
	"context"
	"testing"
	"time"
)

func TestMemorySweep(t *testing.T) {
	s := NewMemoryStore()
	ctx, lim := context.Background(), Limits{PerMinute: 10, PerDay: 10}
	clock := newClock(t, "00:30:00")
	take := func(subject string, at time.Time) {
		t.Helper()
		if _, err := s.Take(ctx, subject, lim, 20, at); err != nil {
			t.Fatal(err)
		}
	}
	yesterday := func(hhmmss string) time.Time { return clock.at(t, hhmmss).AddDate(0, 0, -1) }
	take("yesterday", yesterday("22:00:00"))    // nothing current at 00:30: dropped
	take("last-minutes", yesterday("23:59:00")) // still in the 60-minute history
	take("today", clock.at(t, "00:05:00"))      // still counts against today
	now := clock.Now()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sweep(minuteID(now))
		sh.mu.Unlock()
	}
	if got := s.len(); got != 2 {
		t.Errorf("after the sweep %d subjects remain, want 2", got)
	}
	for _, tt := range []struct {
		subject     string
		minute, day int64
	}{
		{"last-minutes", 59 - 31, 0},
		{"today", 59 - 25, 1},
	} {
		h, err := s.History(ctx, tt.subject, now)
		if err != nil {
			t.Fatal(err)
		}
		if h.PerMinute[tt.minute] != 1 || sum(h.PerMinute[:]) != 1 || h.Day != tt.day {
			t.Errorf("%s: history %v, day %d; want one request at index %d, day %d",
				tt.subject, h.PerMinute, h.Day, tt.minute, tt.day)
		}
	}
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}
