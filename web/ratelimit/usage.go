package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Usage is one subject's use for the console's usage page: SPEC §13's
// KeyUsage without keyId and plan, which the caller adds.
type Usage struct {
	Minute          UsageWindow `json:"minute"`
	Day             UsageWindow `json:"day"`
	Limited429Today int64       `json:"limited429Today"`
	Banned          bool        `json:"banned"`
	BannedUntil     time.Time   `json:"bannedUntil,omitzero"`
	BansLast24h     int         `json:"bansLast24h"`
	// PerMinute holds exactly 60 items, oldest first, ending with the
	// current minute.
	PerMinute []MinuteCount `json:"perMinute"`
}

// UsageWindow is one window in a Usage. Reset is in Unix seconds, like the
// reset of GET /rate-limit.
type UsageWindow struct {
	Limit     int64 `json:"limit"`
	Used      int64 `json:"used"`
	Remaining int64 `json:"remaining"`
	Reset     int64 `json:"reset"`
}

// MinuteCount is the number of requests that used quota in one minute
// (rejected requests use none and are counted in Limited429Today).
type MinuteCount struct {
	Minute time.Time `json:"minute"`
	Count  int64     `json:"count"`
}

// Usage reports subject's use under lim. It reads the BanStore directly,
// since the usage page must show a ban set a moment ago on any instance.
func (l *Limiter) Usage(ctx context.Context, subject string, lim Limits) (Usage, error) {
	now := l.now().UTC()
	h, err := l.store.History(ctx, subject, now)
	if err != nil {
		return Usage{}, fmt.Errorf("ratelimit: %w", err)
	}
	until, banned, err := l.bans.ActiveBan(ctx, subject, now)
	if err != nil {
		return Usage{}, fmt.Errorf("ratelimit: active ban: %w", err)
	}
	n, err := l.bans.CountBans(ctx, subject, now.Add(-banLookback))
	if err != nil {
		return Usage{}, fmt.Errorf("ratelimit: count bans: %w", err)
	}
	mid, did := minuteID(now), dayID(now)
	u := Usage{
		Minute:          usageWindow(lim.PerMinute, h.PerMinute[historyMinutes-1], minuteStart(mid+1)),
		Day:             usageWindow(lim.PerDay, h.Day, dayStart(did+1)),
		Limited429Today: h.Limited429,
		Banned:          banned,
		BansLast24h:     n,
		PerMinute:       make([]MinuteCount, historyMinutes),
	}
	if banned {
		u.BannedUntil = until.UTC()
	}
	for i, c := range h.PerMinute {
		u.PerMinute[i] = MinuteCount{Minute: minuteStart(mid - historyMinutes + 1 + int64(i)), Count: c}
	}
	return u, nil
}

func usageWindow(limit, used int64, reset time.Time) UsageWindow {
	return UsageWindow{Limit: limit, Used: used, Remaining: max(0, limit-used), Reset: reset.Unix()}
}
