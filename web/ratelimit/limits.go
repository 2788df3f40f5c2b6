package ratelimit

import "fmt"

// Limits are the two window sizes a subject is held to. The caller fills
// them: the plan table and the keys live in the db package (an API key's
// limits are stored with it), the browser forms' limits in web. Plan is a
// label the limiter only names in errors; callers show it (GET /rate-limit).
type Limits struct {
	Plan      string
	PerMinute int64
	PerDay    int64
}

// Validate reports limits no window can work with; a zero Limits (a key
// whose enterprise numbers were never set) is the usual cause.
func (l Limits) Validate() error {
	if l.PerMinute <= 0 || l.PerDay <= 0 {
		return fmt.Errorf("ratelimit: plan %q: limits must be positive, got %d/min %d/day", l.Plan, l.PerMinute, l.PerDay)
	}
	return nil
}
