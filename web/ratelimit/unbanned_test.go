package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// noBans is a BanStore that must never be asked: AllowUnbanned runs before
// any database work, and the BanStore is the database.
type noBans struct{ t *testing.T }

var errAsked = errors.New("the BanStore was asked")

func (b noBans) ActiveBan(context.Context, string, time.Time) (time.Time, bool, error) {
	b.t.Error("AllowUnbanned looked up a ban")
	return time.Time{}, false, errAsked
}

func (b noBans) CreateBan(context.Context, string, time.Time, time.Time) error {
	b.t.Error("AllowUnbanned created a ban")
	return errAsked
}

func (b noBans) CountBans(context.Context, string, time.Time) (int, error) {
	b.t.Error("AllowUnbanned counted bans")
	return 0, errAsked
}

func (b noBans) BanVersion(context.Context) (int64, error) {
	b.t.Error("AllowUnbanned read the ban version")
	return 0, errAsked
}

func (b noBans) LiftBan(context.Context, string, time.Time) error {
	b.t.Error("AllowUnbanned lifted a ban")
	return errAsked
}

// testUnbanned: the bucket without bans keeps both windows like Allow, but
// however many requests follow a 429 it answers 429, never a ban, and it
// never touches the BanStore.
func testUnbanned(t *testing.T, newStore newStoreFunc) {
	// 12:00:42 UTC on a test day: 42 s into a minute and far from the
	// day's end.
	clock := newClock(t, "12:00:42")
	l := New(Config{Store: newStore(t), Bans: noBans{t}, Strikes: 2, Now: clock.Now})
	lim := Limits{Plan: "web", PerMinute: 3, PerDay: 5}
	ctx := context.Background()
	allow := func() Decision {
		t.Helper()
		d, err := l.AllowUnbanned(ctx, "web:192.0.2.1", lim)
		if err != nil {
			t.Fatalf("AllowUnbanned: %v", err)
		}
		return d
	}
	for i := range 3 {
		if d := allow(); !d.Allowed || d.Minute.Remaining != int64(2-i) {
			t.Fatalf("request %d: %+v, want allowed with %d left", i+1, summarize(d), 2-i)
		}
	}
	// Far more than the 2 strikes that ban under Allow: still 429s.
	for i := range 30 {
		d := allow()
		if d.Allowed || d.Banned || d.RetryAfter != 18*time.Second || d.Binding != WindowMinute {
			t.Fatalf("request %d past the limit: %+v, want a 429 with Retry-After 18s", i+4, summarize(d))
		}
	}
	clock.Add(18 * time.Second) // the next minute
	if d := allow(); !d.Allowed || d.Day.Remaining != 1 {
		t.Fatalf("next minute: %+v, want allowed with 1 left today", summarize(d))
	}
	allow()
	if d := allow(); d.Allowed || d.Binding != WindowDay || d.RetryAfter != time.Duration(d.Day.Reset.Sub(clock.Now()).Seconds())*time.Second {
		t.Fatalf("day exhausted: %+v, want a 429 until midnight UTC", summarize(d))
	}
	// The other subject has its own windows.
	if d, err := l.AllowUnbanned(ctx, "web:192.0.2.2", lim); err != nil || !d.Allowed {
		t.Fatalf("another subject: %+v, %v; want allowed", summarize(d), err)
	}
}
