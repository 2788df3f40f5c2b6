package ratelimit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func testUsage(t *testing.T, setup func(t *testing.T, now string) (*Limiter, *dayClock)) {
	l, clock := setup(t, "00:00:00")
	lim := Limits{PerMinute: 100, PerDay: 1000}
	request := func(at time.Time, n int, lim Limits) {
		t.Helper()
		clock.Set(at)
		for range n {
			mustAllow(t, l, "k", lim)
		}
	}
	request(clock.at(t, "23:59:00").AddDate(0, 0, -1), 5, lim) // yesterday: in neither window
	request(clock.at(t, "10:59:59"), 4, lim)                   // today, before the 60 minutes
	request(clock.at(t, "11:01:05"), 3, lim)                   // the oldest of the 60 minutes
	request(clock.at(t, "11:30:00"), 2, lim)
	request(clock.at(t, "12:00:42"), 1, lim)
	request(clock.at(t, "12:00:42"), 2, Limits{PerMinute: 1, PerDay: 1000}) // two 429s

	got, err := l.Usage(context.Background(), "k", lim)
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{
		Minute:          UsageWindow{Limit: 100, Used: 1, Remaining: 99, Reset: clock.at(t, "12:01:00").Unix()},
		Day:             UsageWindow{Limit: 1000, Used: 10, Remaining: 990, Reset: clock.at(t, "00:00:00").AddDate(0, 0, 1).Unix()},
		Limited429Today: 2,
		PerMinute:       make([]MinuteCount, 60),
	}
	first := clock.at(t, "11:01:00")
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
	clock := newClock(t, "12:00:42")
	minute, minuteReset := clock.at(t, "12:00:00"), clock.at(t, "12:01:00").Unix()
	dayReset := clock.at(t, "00:00:00").AddDate(0, 0, 1).Unix()
	u := Usage{
		Minute:    UsageWindow{Limit: 60, Used: 1, Remaining: 59, Reset: minuteReset},
		Day:       UsageWindow{Limit: 1000, Used: 1, Remaining: 999, Reset: dayReset},
		PerMinute: []MinuteCount{{Minute: minute, Count: 1}},
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"minute":{"limit":60,"used":1,"remaining":59,"reset":%d},`+
		`"day":{"limit":1000,"used":1,"remaining":999,"reset":%d},`+
		`"limited429Today":0,"banned":false,"bansLast24h":0,`+
		`"perMinute":[{"minute":%q,"count":1}]}`, minuteReset, dayReset, minute.Format(time.RFC3339))
	if got := string(b); got != want {
		t.Errorf("not banned:\n got %s\nwant %s", got, want)
	}

	until := clock.at(t, "12:15:42")
	u.Banned, u.BannedUntil, u.BansLast24h = true, until, 1
	b, err = json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), fmt.Sprintf(`"banned":true,"bannedUntil":%q,"bansLast24h":1`, until.Format(time.RFC3339)); !strings.Contains(got, want) {
		t.Errorf("banned: got %s, want it to contain %s", got, want)
	}
}
