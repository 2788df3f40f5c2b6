package ratelimit

import "time"

// Window names, as they appear in the RateLimit and RateLimit-Policy headers.
const (
	WindowMinute = "minute"
	WindowDay    = "day"
)

// Window is one window's state as a Decision reports it.
type Window struct {
	// Name is WindowMinute or WindowDay.
	Name string
	// Limit is the window's size in requests.
	Limit int64
	// Remaining is what is left after this request, never negative.
	Remaining int64
	// Reset is when the window starts afresh: the next whole minute, or
	// 00:00 UTC.
	Reset time.Time
}

// Decision is the answer for one request (Limiter.Allow) or for a look at
// the current state (Limiter.Status).
type Decision struct {
	// Allowed reports that the request may proceed. When false, the answer
	// is a 403 api_key_banned if Banned is set, else a 429 rate_limited.
	Allowed bool
	// Banned reports a ban in force; BannedUntil is its end.
	Banned      bool
	BannedUntil time.Time
	// BanStarted is set on the one request whose strike started the ban,
	// so the app can count and log bans.
	BanStarted bool
	// Minute and Day are the two windows after this request.
	Minute Window
	Day    Window
	// Binding names the window the X-RateLimit-* and RateLimit headers
	// describe: the one with fewer remaining (minute on a tie), or, when a
	// window is exhausted, that one (the day if both are).
	Binding string
	// RetryAfter is how long to wait when not allowed: until the ban ends,
	// else until the exhausted window resets. It is a whole number of
	// seconds, at least one; zero when allowed.
	RetryAfter time.Duration
	// At is when the decision was made; headers count seconds from it.
	At time.Time
	// BanErr is the BanStore's failure when it could not be asked or told
	// (the database is down). The decision is still whole: it went by the
	// counts and the bans this process last knew of, and a ban started
	// meanwhile holds in this process only.
	BanErr error
}

// BindingWindow returns the window named by Binding.
func (d Decision) BindingWindow() Window {
	if d.Binding == WindowDay {
		return d.Day
	}
	return d.Minute
}

// decide builds the Decision for counts c at now. limited reports that the
// request was (or, for a peek, would be) rejected for lack of room.
func decide(now time.Time, lim Limits, c Counts, limited bool) Decision {
	mid, did := minuteID(now), dayID(now)
	d := Decision{
		Allowed: !limited,
		Minute: Window{
			Name:      WindowMinute,
			Limit:     lim.PerMinute,
			Remaining: max(0, lim.PerMinute-c.Minute),
			Reset:     minuteStart(mid + 1),
		},
		Day: Window{
			Name:      WindowDay,
			Limit:     lim.PerDay,
			Remaining: max(0, lim.PerDay-c.Day),
			Reset:     dayStart(did + 1),
		},
		At: now,
	}
	switch {
	case limited && c.Day >= lim.PerDay:
		d.Binding = WindowDay
	case limited:
		d.Binding = WindowMinute
	case d.Day.Remaining < d.Minute.Remaining:
		d.Binding = WindowDay
	default:
		d.Binding = WindowMinute
	}
	if limited {
		d.RetryAfter = ceilSeconds(d.BindingWindow().Reset.Sub(now))
	}
	return d
}

// withBan marks d as banned until until.
func (d Decision) withBan(now, until time.Time) Decision {
	d.Allowed = false
	d.Banned = true
	d.BannedUntil = until.UTC()
	d.RetryAfter = ceilSeconds(until.Sub(now))
	return d
}

// ceilSeconds rounds d up to whole seconds, at least one: a client told to
// wait 0 seconds, or a fraction less than it must, would retry too early.
func ceilSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}
