package ratelimit

import (
	"context"
	"time"
)

// Store keeps the counters of every subject: units used in the current minute
// and day, per-minute history for the usage page, 429s today and strikes.
// Every method takes now from the caller, so that windows follow the
// Limiter's clock (and tests can pin it); windows are identified by their
// number since the Unix epoch, so a store never needs a timer to reset one.
//
// Implementations must be safe for concurrent use and must make Take atomic:
// two concurrent Takes never both get the last unit of a window.
type Store interface {
	// Take uses one unit of both windows when both have room. Otherwise it
	// uses none and records a 429: it counts it in 429s today and in the
	// strikes of the exhausted window (the day if both are), and reports
	// StartBan on the request that makes strikes strikes, resetting the
	// strike count so that a later ban needs as many again. strikes <= 0
	// never starts a ban.
	Take(ctx context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error)
	// Peek returns the units used in the current windows without changing
	// anything.
	Peek(ctx context.Context, subject string, now time.Time) (Counts, error)
	// History returns what the usage page shows: the last 60 minutes, the
	// day so far and the 429s of the day.
	History(ctx context.Context, subject string, now time.Time) (History, error)
	// ClearStrikes forgets the strikes (and the first 429) of the current
	// minute and day, so that a lifted ban does not come straight back.
	ClearStrikes(ctx context.Context, subject string, now time.Time) error
}

// Counts are the units a subject has used in the current windows.
type Counts struct {
	Minute int64
	Day    int64
}

// TakeResult is the outcome of Store.Take.
type TakeResult struct {
	// Allowed reports that one unit of each window was used.
	Allowed bool
	// Counts are the units used after this request.
	Counts Counts
	// Strikes counts the 429s after the first one in the exhausted window,
	// this one included; zero when allowed.
	Strikes int64
	// StartBan is set on exactly one request: the one that made the
	// configured number of strikes.
	StartBan bool
}

// History is one subject's recent use, as Store.History returns it.
type History struct {
	// PerMinute holds the units used in each of the last 60 minutes, oldest
	// first, the current minute last.
	PerMinute [60]int64
	// Day is the units used today (UTC).
	Day int64
	// Limited429 is the number of 429s today (UTC).
	Limited429 int64
}

// historyMinutes is how far back the usage page looks.
const historyMinutes = 60

// Window lengths in seconds; windows are aligned to the Unix epoch, which is
// aligned to UTC midnight, so a day window resets at 00:00 UTC.
const (
	minuteSeconds = 60
	daySeconds    = 86400
)

// minuteID numbers the minute window holding now.
func minuteID(now time.Time) int64 { return floorDiv(now.Unix(), minuteSeconds) }

// dayID numbers the UTC day window holding now.
func dayID(now time.Time) int64 { return floorDiv(now.Unix(), daySeconds) }

// floorDiv divides rounding toward minus infinity, so instants before 1970
// still fall into the right window.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// minuteStart and dayStart turn a window number back into its first instant.
func minuteStart(id int64) time.Time { return time.Unix(id*minuteSeconds, 0).UTC() }
func dayStart(id int64) time.Time    { return time.Unix(id*daySeconds, 0).UTC() }
