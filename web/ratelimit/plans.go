package ratelimit

import "fmt"

// Plan names, as stored on API keys and shown in the API.
const (
	PlanFree       = "free"
	PlanPro        = "pro"
	PlanBusiness   = "business"
	PlanEnterprise = "enterprise"
)

// Limits are the two window sizes a subject is held to. For the fixed plans
// they come from PlanLimits; an enterprise key carries its own numbers.
type Limits struct {
	Plan      string
	PerMinute int64
	PerDay    int64
}

// planLimits is SPEC §6's table. Enterprise is absent on purpose: its limits
// belong to each key.
var planLimits = map[string]Limits{
	PlanFree:     {Plan: PlanFree, PerMinute: 60, PerDay: 1000},
	PlanPro:      {Plan: PlanPro, PerMinute: 300, PerDay: 10000},
	PlanBusiness: {Plan: PlanBusiness, PerMinute: 1000, PerDay: 100000},
}

// PlanLimits returns the fixed limits of plan. It reports false for
// enterprise (whose limits are the key's own) and for unknown names.
func PlanLimits(plan string) (Limits, bool) {
	l, ok := planLimits[plan]
	return l, ok
}

// ValidPlan reports whether plan is one of the four plan names, enterprise
// included.
func ValidPlan(plan string) bool {
	_, ok := planLimits[plan]
	return ok || plan == PlanEnterprise
}

// Validate reports limits no window can work with; a zero Limits (a key
// whose enterprise numbers were never set) is the usual cause.
func (l Limits) Validate() error {
	if l.PerMinute <= 0 || l.PerDay <= 0 {
		return fmt.Errorf("ratelimit: plan %q: limits must be positive, got %d/min %d/day", l.Plan, l.PerMinute, l.PerDay)
	}
	return nil
}
