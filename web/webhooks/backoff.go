package webhooks

import (
	"math/rand/v2"
	"net/http"
	"time"

	"petstore/db"
)

// DefaultSchedule is how long after each failed attempt the next one is
// made (SPEC §15): 8 retries over about two days, then the delivery fails.
var DefaultSchedule = []time.Duration{
	5 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// jitter spreads d by up to a tenth either way, so that the deliveries a
// failing endpoint refused together do not come back together.
func jitter(d time.Duration) time.Duration {
	spread := int64(d) / 10
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(2*spread+1)-spread)
}

// decision is what an attempt's answer makes of its delivery.
type decision struct {
	status string        // db.DeliveryPending, DeliverySucceeded or DeliveryFailed
	retry  time.Duration // while pending: how long until the next attempt
	gone   bool          // a 410: disable the endpoint
}

// decide applies SPEC §15 to an answer: a 2xx succeeds; a 410 fails the
// delivery and disables the endpoint; anything else is retried after the
// schedule's wait for this failure (attempts made before it: before),
// spread by spread, until the schedule runs out.
func decide(a answer, before int, schedule []time.Duration, spread func(time.Duration) time.Duration) decision {
	switch {
	case a.ok():
		return decision{status: db.DeliverySucceeded}
	case a.status == http.StatusGone:
		return decision{status: db.DeliveryFailed, gone: true}
	case before < len(schedule):
		return decision{status: db.DeliveryPending, retry: spread(schedule[before])}
	default:
		return decision{status: db.DeliveryFailed}
	}
}
