package browser

import "testing"

// TestWaitWords: the form limit's wait, as a person reads it.
func TestWaitWords(t *testing.T) {
	for s, want := range map[int64]string{
		1: "1 second", 2: "2 seconds", 119: "119 seconds", 120: "about 2 minutes", 121: "about 3 minutes",
		7199: "about 120 minutes", 7200: "about 2 hours", 7201: "about 3 hours", 86400: "about 24 hours",
	} {
		if got := waitWords(s); got != want {
			t.Errorf("waitWords(%d) = %q, want %q", s, got, want)
		}
	}
}
