package dbtest

import (
	"testing"
	"time"
)

func TestPresentFollowsTheOffset(t *testing.T) {
	t.Setenv(ClockOffsetEnv, "8760h")
	got := Present(t)
	want := time.Now().Add(8760 * time.Hour)
	if d := got.Sub(want); d < -time.Minute || d > time.Minute {
		t.Fatalf("Present with a year's offset = %v, want about %v", got, want)
	}
	if got.Location() != time.UTC || got.Nanosecond()%1000 != 0 {
		t.Fatalf("Present = %v, want UTC to the microsecond", got)
	}

	t.Setenv(ClockOffsetEnv, "")
	if d := time.Since(Present(t)); d < -time.Minute || d > time.Minute {
		t.Fatalf("Present without an offset is %v away from now", d)
	}
}

func TestClockMoves(t *testing.T) {
	c := NewClock(t)
	start := c.Now()
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("the clock moved by itself: %v, then %v", start, got)
	}
	if got := c.Add(90 * time.Second); !got.Equal(start.Add(90*time.Second)) || !c.Now().Equal(got) {
		t.Fatalf("Add(90s) = %v, Now = %v; want %v", got, c.Now(), start.Add(90*time.Second))
	}

	before := c.Now()
	at := c.IntoNextMinute(42 * time.Second)
	if at.Second() != 42 || at.Nanosecond() != 0 || !at.After(before) || at.Sub(before) > 102*time.Second {
		t.Fatalf("IntoNextMinute(42s) from %v = %v", before, at)
	}

	before = c.Now()
	at = c.IntoNextDay(10*time.Hour + 30*time.Second)
	if h, m, s := at.Clock(); h != 10 || m != 0 || s != 30 || !at.After(before) || at.Sub(before) > 34*time.Hour+time.Second {
		t.Fatalf("IntoNextDay(10h0m30s) from %v = %v", before, at)
	}

	before = c.Now() // 10:00:30: the day's end is far
	at = c.BeforeNextMidnight(30 * time.Second)
	if end := NextDay(before); !at.Equal(end.Add(-30 * time.Second)) {
		t.Fatalf("BeforeNextMidnight(30s) from %v = %v, want %v", before, at, end.Add(-30*time.Second))
	}
	// Already past that moment of today: the next day's, never back.
	before = c.Add(15 * time.Second)
	at = c.BeforeNextMidnight(30 * time.Second)
	if want := NextDay(before).Add(24*time.Hour - 30*time.Second); !at.Equal(want) {
		t.Fatalf("BeforeNextMidnight(30s) from %v = %v, want %v", before, at, want)
	}
}
