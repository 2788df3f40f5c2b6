package ratelimit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func testUsage(t *testing.T, setup func(t *testing.T, now string) (*Limiter, *fakeClock)) {
	l, clock := setup(t, "2026-03-09T23:59:00Z")
	lim := Limits{PerMinute: 100, PerDay: 1000}
	request := func(at string, n int, lim Limits) {
		t.Helper()
		clock.Set(t, at)
		for range n {
			mustAllow(t, l, "k", lim)
		}
	}
	request("2026-03-09T23:59:00Z", 5, lim) // yesterday: in neither window
	request("2026-03-10T10:59:59Z", 4, lim) // today, before the 60 minutes
	request("2026-03-10T11:01:05Z", 3, lim) // the oldest of the 60 minutes
	request("2026-03-10T11:30:00Z", 2, lim)
	request("2026-03-10T12:00:42Z", 1, lim)
	request("2026-03-10T12:00:42Z", 2, Limits{PerMinute: 1, PerDay: 1000}) // two 429s

	got, err := l.Usage(context.Background(), "k", lim)
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{
		Minute:          UsageWindow{Limit: 100, Used: 1, Remaining: 99, Reset: 1773144060},
		Day:             UsageWindow{Limit: 1000, Used: 10, Remaining: 990, Reset: 1773187200},
		Limited429Today: 2,
		PerMinute:       make([]MinuteCount, 60),
	}
	first := mustTime(t, "2026-03-10T11:01:00Z")
	for i := range want.PerMinute {
		want.PerMinute[i].Minute = first.Add(time.Duration(i) * time.Minute)
	}
	want.PerMinute[0].Count, want.PerMinute[29].Count, want.PerMinute[59].Count = 3, 2, 1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Usage (-want +got):\n%s", diff)
	}

	// A fresh subject has 60 zero buckets, not an empty list.
	fresh, err := l.Usage(context.Background(), "nobody", lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.PerMinute) != 60 || fresh.Day.Used != 0 || fresh.Minute.Remaining != 100 {
		t.Errorf("fresh Usage = %+v, want 60 empty buckets and full windows", fresh)
	}
}

func TestUsageJSON(t *testing.T) {
	u := Usage{
		Minute:    UsageWindow{Limit: 60, Used: 1, Remaining: 59, Reset: 1773144060},
		Day:       UsageWindow{Limit: 1000, Used: 1, Remaining: 999, Reset: 1773187200},
		PerMinute: []MinuteCount{{Minute: mustTime(t, "2026-03-10T12:00:00Z"), Count: 1}},
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"minute":{"limit":60,"used":1,"remaining":59,"reset":1773144060},` +
		`"day":{"limit":1000,"used":1,"remaining":999,"reset":1773187200},` +
		`"limited429Today":0,"banned":false,"bansLast24h":0,` +
		`"perMinute":[{"minute":"2026-03-10T12:00:00Z","count":1}]}`
	if got := string(b); got != want {
		t.Errorf("not banned:\n got %s\nwant %s", got, want)
	}

	u.Banned, u.BannedUntil, u.BansLast24h = true, mustTime(t, "2026-03-10T12:15:42Z"), 1
	b, err = json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `"banned":true,"bannedUntil":"2026-03-10T12:15:42Z","bansLast24h":1`) {
		t.Errorf("banned: got %s", got)
	}
}
