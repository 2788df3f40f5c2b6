package ratelimit

import "testing"

func TestAllowRejectsBadLimits(t *testing.T) {
	l := New(Config{})
	for _, lim := range []Limits{{Plan: "enterprise"}, {Plan: "enterprise", PerMinute: 5}, {Plan: "free", PerDay: 5}} {
		if _, err := l.Allow(t.Context(), "k", lim); err == nil {
			t.Errorf("Allow with limits %+v succeeded", lim)
		}
	}
}
