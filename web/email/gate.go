package email

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/time/rate"

	"petstore/web"
)

// Sends give way to the shop's own requests, as webhook deliveries do
// (web/webhooks/gate.go): an attempt costs writes (its job, its outcome)
// that on SQLite queue behind the same single writer as checkouts. While
// the instance is busy (busyInFlight requests being answered or more),
// attempts start at busyRate per second at most and the rest wait; an
// email older than maxYield is sent at once whatever the load, so a shop
// that stays busy still sends, maxYield late at worst. An idle instance
// sends at once.
const (
	busyRate   = 50
	maxYield   = 30 * time.Second
	gateWait   = 2 * time.Second
	busySnooze = time.Second
)

// busyInFlight is the number of requests in flight from which an instance
// counts as busy: two per CPU.
func busyInFlight() int64 { return int64(2 * runtime.GOMAXPROCS(0)) }

// gate admits attempts by the load of the instance.
type gate struct {
	load    *web.Load
	busyAt  int64
	limiter *rate.Limiter
}

func newGate(load *web.Load) *gate {
	if load == nil {
		return nil
	}
	return &gate{load: load, busyAt: busyInFlight(), limiter: rate.NewLimiter(busyRate, 1)}
}

// admit reports whether an attempt at an email age old may start now,
// waiting up to gateWait for its turn while the instance is busy.
func (g *gate) admit(ctx context.Context, age time.Duration) bool {
	if g == nil || age >= maxYield || g.load.InFlight() < g.busyAt {
		return true
	}
	wctx, cancel := context.WithTimeout(ctx, gateWait)
	defer cancel()
	return g.limiter.Wait(wctx) == nil
}
