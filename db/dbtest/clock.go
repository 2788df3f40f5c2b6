package dbtest

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// ClockOffsetEnv names the variable that moves every test clock away from
// the real present: a Go duration ("8760h" runs the suite one year ahead,
// as `make test-future` does). Unset means no offset.
const ClockOffsetEnv = "PETSTORE_TEST_CLOCK_OFFSET"

// Present is the moment test clocks start from: the real present plus
// PETSTORE_TEST_CLOCK_OFFSET, in UTC and truncated to the microsecond like
// the production clock (PostgreSQL keeps no finer). A malformed offset
// fails the test rather than silently running on today's date.
func Present(tb testing.TB) time.Time {
	tb.Helper()
	t, err := present()
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func present() (time.Time, error) {
	var offset time.Duration
	if v := os.Getenv(ClockOffsetEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s=%q: %v", ClockOffsetEnv, v, err)
		}
		offset = d
	}
	return time.Now().Add(offset).UTC().Truncate(time.Microsecond), nil
}

// Clock is the one time source a test hands to everything that reads the
// time (db.Store.Now, ratelimit.Config.Now, handlers.Handler.Now). It
// stands still until the test moves it, so a test decides exactly where
// windows, bans and sunsets fall. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at Present.
func NewClock(tb testing.TB) *Clock {
	tb.Helper()
	return &Clock{now: Present(tb)}
}

// Now is the clock's time; pass the method value as a Now field.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, forward or back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t.UTC()
}

// Add moves the clock by d and returns the new time.
func (c *Clock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// IntoNextMinute moves the clock forward to d past the start of the next
// UTC minute ("42 s into a minute") and returns that time. It never moves
// the clock back, so what the test did before stays in the past.
func (c *Clock) IntoNextMinute(d time.Duration) time.Time {
	return c.forward(func(now time.Time) time.Time { return NextMinute(now).Add(d) })
}

// IntoNextDay moves the clock forward to d past the next UTC midnight
// ("10:00:30 on a fresh day") and returns that time.
func (c *Clock) IntoNextDay(d time.Duration) time.Time {
	return c.forward(func(now time.Time) time.Time { return NextDay(now).Add(d) })
}

// BeforeNextMidnight moves the clock forward to d before a UTC midnight
// ("30 s before the day ends"), the first such moment not before the
// clock's time, and returns it.
func (c *Clock) BeforeNextMidnight(d time.Duration) time.Time {
	return c.forward(func(now time.Time) time.Time {
		t := NextDay(now).Add(-d)
		for t.Before(now) {
			t = t.Add(24 * time.Hour)
		}
		return t
	})
}

func (c *Clock) forward(to func(now time.Time) time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = to(c.now)
	return c.now
}

// NextMinute is the start of the first UTC minute after t.
func NextMinute(t time.Time) time.Time {
	return t.UTC().Truncate(time.Minute).Add(time.Minute)
}

// NextDay is the first UTC midnight after t.
func NextDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}
