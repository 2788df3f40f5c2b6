package ratelimit

import (
	"context"
	"testing"
)

func TestMemorySweep(t *testing.T) {
	s := NewMemoryStore()
	ctx, lim := context.Background(), Limits{PerMinute: 10, PerDay: 10}
	take := func(subject, at string) {
		t.Helper()
		if _, err := s.Take(ctx, subject, lim, 20, mustTime(t, at)); err != nil {
			t.Fatal(err)
		}
	}
	take("yesterday", "2026-03-09T22:00:00Z")    // nothing current at 00:30: dropped
	take("last-minutes", "2026-03-09T23:59:00Z") // still in the 60-minute history
	take("today", "2026-03-10T00:05:00Z")        // still counts against today
	now := mustTime(t, "2026-03-10T00:30:00Z")
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
