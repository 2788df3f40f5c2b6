package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db/dbtest"
)

// newStoreFunc returns a fresh, empty Store for one subtest.
type newStoreFunc func(t *testing.T) Store

// testLimiter is the contract suite every Store must pass: the Limiter's
// whole behaviour, driven by a fake clock.
func testLimiter(t *testing.T, newStore newStoreFunc) {
	t.Run("Windows", func(t *testing.T) { testWindows(t, newStore) })
	t.Run("Bans", func(t *testing.T) { testBans(t, newStore) })
	t.Run("Unbanned", func(t *testing.T) { testUnbanned(t, newStore) })
}

func TestLimiterMemory(t *testing.T) {
	testLimiter(t, func(t *testing.T) Store { return NewMemoryStore() })
}

// dayClock is the shared test clock, set by the time of day a test names
// ("12:00:42") on one UTC day: the day after the present, so the date moves
// with the real one (and with PETSTORE_TEST_CLOCK_OFFSET) while windows and
// resets fall where the test says.
type dayClock struct {
	*dbtest.Clock
	day time.Time // its midnight
}

// newClock returns a clock at the time of day hhmmss on a fresh test day.
func newClock(tb testing.TB, hhmmss string) *dayClock {
	tb.Helper()
	c := &dayClock{Clock: dbtest.NewClock(tb)}
	c.day = dbtest.NextDay(c.Now())
	c.SetAt(tb, hhmmss)
	return c
}

// at is the time of day hhmmss ("15:04:05", fractions allowed) on the
// clock's day.
func (c *dayClock) at(tb testing.TB, hhmmss string) time.Time {
	tb.Helper()
	t, err := time.Parse("15:04:05.999999999", hhmmss)
	if err != nil {
		tb.Fatalf("time of day %q: %v", hhmmss, err)
	}
	h, m, sec := t.Clock()
	return c.day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sec)*time.Second + time.Duration(t.Nanosecond()))
}

// SetAt moves the clock to the time of day hhmmss on its day.
func (c *dayClock) SetAt(tb testing.TB, hhmmss string) {
	tb.Helper()
	c.Set(c.at(tb, hhmmss))
}

// unix is t in Unix seconds, as the reset headers carry it.
func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// summary is the part of a Decision most tests compare.
type summary struct {
	Allowed, Banned bool
	Minute, Day     int64 // remaining
	Binding         string
	RetryAfter      time.Duration
}

func summarize(d Decision) summary {
	return summary{d.Allowed, d.Banned, d.Minute.Remaining, d.Day.Remaining, d.Binding, d.RetryAfter}
}

func mustAllow(tb testing.TB, l *Limiter, subject string, lim Limits) Decision {
	tb.Helper()
	d, err := l.Allow(context.Background(), subject, lim)
	if err != nil {
		tb.Fatalf("Allow(%q): %v", subject, err)
	}
	return d
}

func mustStatus(tb testing.TB, l *Limiter, subject string, lim Limits) Decision {
	tb.Helper()
	d, err := l.Status(context.Background(), subject, lim)
	if err != nil {
		tb.Fatalf("Status(%q): %v", subject, err)
	}
	return d
}

// checkAllow makes one request and compares its summary.
func checkAllow(tb testing.TB, l *Limiter, subject string, lim Limits, want summary) Decision {
	tb.Helper()
	d := mustAllow(tb, l, subject, lim)
	if diff := cmp.Diff(want, summarize(d)); diff != "" {
		tb.Fatalf("Allow(%q) at %s (-want +got):\n%s", subject, d.At.Format(time.RFC3339Nano), diff)
	}
	return d
}

func testWindows(t *testing.T, newStore newStoreFunc) {
	setup := func(t *testing.T, now string) (*Limiter, *dayClock) {
		clock := newClock(t, now)
		return New(Config{Store: newStore(t), Now: clock.Now}), clock
	}

	t.Run("BothWindowsCount", func(t *testing.T) {
		l, clock := setup(t, "12:00:42")
		lim := Limits{PerMinute: 3, PerDay: 5}
		checkAllow(t, l, "k", lim, summary{true, false, 2, 4, WindowMinute, 0})
		checkAllow(t, l, "k", lim, summary{true, false, 1, 3, WindowMinute, 0})
		checkAllow(t, l, "k", lim, summary{true, false, 0, 2, WindowMinute, 0})
		// Rejected: uses nothing, the minute binds, wait for 12:01:00.
		checkAllow(t, l, "k", lim, summary{false, false, 0, 2, WindowMinute, 18 * time.Second})
		clock.SetAt(t, "12:01:00")
		checkAllow(t, l, "k", lim, summary{true, false, 2, 1, WindowDay, 0})
		checkAllow(t, l, "k", lim, summary{true, false, 1, 0, WindowDay, 0})
		// The day is spent: wait until 00:00 UTC.
		checkAllow(t, l, "k", lim, summary{false, false, 1, 0, WindowDay, (11*60 + 59) * time.Minute})
		// Another subject is untouched.
		checkAllow(t, l, "other", lim, summary{true, false, 2, 4, WindowMinute, 0})
	})

	t.Run("MinuteEdge", func(t *testing.T) {
		l, clock := setup(t, "12:00:00")
		lim := Limits{PerMinute: 2, PerDay: 100}
		mustAllow(t, l, "k", lim)
		mustAllow(t, l, "k", lim)
		clock.SetAt(t, "12:00:59.999")
		d := checkAllow(t, l, "k", lim, summary{false, false, 0, 98, WindowMinute, time.Second})
		if want := clock.at(t, "12:01:00"); !d.Minute.Reset.Equal(want) {
			t.Errorf("Minute.Reset = %s, want %s", d.Minute.Reset, want)
		}
		clock.SetAt(t, "12:01:00")
		d = checkAllow(t, l, "k", lim, summary{true, false, 1, 97, WindowMinute, 0})
		if want := clock.at(t, "12:02:00"); !d.Minute.Reset.Equal(want) {
			t.Errorf("Minute.Reset = %s, want %s", d.Minute.Reset, want)
		}
	})

	t.Run("DayBoundary", func(t *testing.T) {
		l, clock := setup(t, "23:59:30")
		lim := Limits{PerMinute: 100, PerDay: 2}
		mustAllow(t, l, "k", lim)
		mustAllow(t, l, "k", lim)
		clock.SetAt(t, "23:59:59.5")
		d := checkAllow(t, l, "k", lim, summary{false, false, 98, 0, WindowDay, time.Second})
		if want := clock.at(t, "00:00:00").AddDate(0, 0, 1); !d.Day.Reset.Equal(want) {
			t.Errorf("Day.Reset = %s, want %s", d.Day.Reset, want)
		}
		clock.Set(clock.at(t, "00:00:00").AddDate(0, 0, 1))
		checkAllow(t, l, "k", lim, summary{true, false, 99, 1, WindowDay, 0})
	})

	t.Run("Binding", func(t *testing.T) {
		for _, tt := range []struct {
			name     string
			lim      Limits
			requests int
			want     summary
		}{
			{"TieIsMinute", Limits{PerMinute: 5, PerDay: 5}, 1, summary{true, false, 4, 4, WindowMinute, 0}},
			{"FewerDay", Limits{PerMinute: 10, PerDay: 3}, 1, summary{true, false, 9, 2, WindowDay, 0}},
			{"FewerMinute", Limits{PerMinute: 3, PerDay: 10}, 1, summary{true, false, 2, 9, WindowMinute, 0}},
			{"TieAtZeroIsMinute", Limits{PerMinute: 1, PerDay: 1}, 1, summary{true, false, 0, 0, WindowMinute, 0}},
			{"429Minute", Limits{PerMinute: 1, PerDay: 10}, 2, summary{false, false, 0, 9, WindowMinute, 18 * time.Second}},
			{"429Day", Limits{PerMinute: 10, PerDay: 1}, 2, summary{false, false, 9, 0, WindowDay, 43158 * time.Second}},
			{"429BothIsDay", Limits{PerMinute: 1, PerDay: 1}, 2, summary{false, false, 0, 0, WindowDay, 43158 * time.Second}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				l, _ := setup(t, "12:00:42")
				var d Decision
				for range tt.requests {
					d = mustAllow(t, l, "k", tt.lim)
				}
				if diff := cmp.Diff(tt.want, summarize(d)); diff != "" {
					t.Errorf("after %d requests (-want +got):\n%s", tt.requests, diff)
				}
			})
		}
	})

	t.Run("Headers", func(t *testing.T) {
		l, clock := setup(t, "12:00:42.3")
		free := Limits{Plan: "free", PerMinute: 60, PerDay: 1000}
		minuteReset, dayReset := unix(clock.at(t, "12:01:00")), unix(clock.at(t, "00:00:00").AddDate(0, 0, 1))
		headers := func(d Decision) map[string]string {
			h := map[string]string{}
			d.Headers(func(k, v string) { h[k] = v })
			return h
		}

		// Allowed at 12:00:42.3: 17.7 s to the reset, rounded up.
		want := map[string]string{
			"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-RateLimit-Reset": minuteReset,
			"X-RateLimit-Limit-Minute": "60", "X-RateLimit-Remaining-Minute": "59",
			"X-RateLimit-Limit-Day": "1000", "X-RateLimit-Remaining-Day": "999",
			"RateLimit-Policy": `"minute";q=60;w=60, "day";q=1000;w=86400`,
			"RateLimit":        `"minute";r=59;t=18`,
		}
		if diff := cmp.Diff(want, headers(mustAllow(t, l, "k", free))); diff != "" {
			t.Errorf("allowed (-want +got):\n%s", diff)
		}

		// A 429 on the minute: Retry-After until 12:01:00, rounded up.
		one := Limits{PerMinute: 1, PerDay: 1000}
		mustAllow(t, l, "m", one)
		got := headers(mustAllow(t, l, "m", one))
		want = map[string]string{
			"X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": minuteReset,
			"X-RateLimit-Limit-Minute": "1", "X-RateLimit-Remaining-Minute": "0",
			"X-RateLimit-Limit-Day": "1000", "X-RateLimit-Remaining-Day": "999",
			"RateLimit-Policy": `"minute";q=1;w=60, "day";q=1000;w=86400`,
			"RateLimit":        `"minute";r=0;t=18`,
			"Retry-After":      "18",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("429 (-want +got):\n%s", diff)
		}

		// The day binds when it has fewer left.
		clock.SetAt(t, "12:00:42")
		got = headers(mustAllow(t, l, "d", Limits{PerMinute: 100, PerDay: 2}))
		want = map[string]string{
			"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": dayReset,
			"X-RateLimit-Limit-Minute": "100", "X-RateLimit-Remaining-Minute": "99",
			"X-RateLimit-Limit-Day": "2", "X-RateLimit-Remaining-Day": "1",
			"RateLimit-Policy": `"minute";q=100;w=60, "day";q=2;w=86400`,
			"RateLimit":        `"day";r=1;t=43158`,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("day binding (-want +got):\n%s", diff)
		}
	})

	t.Run("StatusDoesNotCount", func(t *testing.T) {
		l, _ := setup(t, "12:00:42")
		lim := Limits{PerMinute: 2, PerDay: 10}
		for range 5 {
			if diff := cmp.Diff(summary{true, false, 2, 10, WindowMinute, 0}, summarize(mustStatus(t, l, "k", lim))); diff != "" {
				t.Fatalf("Status before use (-want +got):\n%s", diff)
			}
		}
		checkAllow(t, l, "k", lim, summary{true, false, 1, 9, WindowMinute, 0})
		if diff := cmp.Diff(summary{true, false, 1, 9, WindowMinute, 0}, summarize(mustStatus(t, l, "k", lim))); diff != "" {
			t.Fatalf("Status after one (-want +got):\n%s", diff)
		}
		checkAllow(t, l, "k", lim, summary{true, false, 0, 8, WindowMinute, 0})
		// Exhausted: Status says a request now would be refused, and why.
		if diff := cmp.Diff(summary{false, false, 0, 8, WindowMinute, 18 * time.Second}, summarize(mustStatus(t, l, "k", lim))); diff != "" {
			t.Fatalf("Status when exhausted (-want +got):\n%s", diff)
		}
		checkAllow(t, l, "k", lim, summary{false, false, 0, 8, WindowMinute, 18 * time.Second})
	})

	t.Run("Usage", func(t *testing.T) { testUsage(t, setup) })
}
