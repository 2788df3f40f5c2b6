package webhooks

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/time/rate"

	"petstore/web"
)

// Deliveries give way to the shop's own requests. A delivery costs about
// what the order it announces cost (a read, a signed POST, a write), so on
// a busy instance every attempt made at once is an order not taken. While
// the instance is busy (BusyInFlight requests being answered or more),
// attempts start at BusyRate per second at most and the rest wait, in the
// queue, for the rush to pass; an event older than MaxYield is delivered
// at once whatever the load, so a shop that stays busy still has its
// webhooks, MaxYield late at worst. An idle instance delivers at once.
const (
	BusyRate = 50
	MaxYield = 30 * time.Second
	// gateWait is the longest an attempt waits for its turn while busy
	// before its job is put back in the queue for busySnooze (JobTimeout
	// counts it).
	gateWait   = 2 * time.Second
	busySnooze = time.Second
)

// BusyInFlight is the number of requests in flight from which an instance
// counts as busy: two per CPU.
func BusyInFlight() int64 { return int64(2 * runtime.GOMAXPROCS(0)) }

// gate admits attempts by the load of the instance (web.Load).
type gate struct {
	load    *web.Load
	busyAt  int64
	limiter *rate.Limiter
}

// newGate is the gate over load; nil load admits everything.
func newGate(load *web.Load) *gate {
	if load == nil {
		return nil
	}
	return &gate{load: load, busyAt: BusyInFlight(), limiter: rate.NewLimiter(BusyRate, 1)}
}

// admit reports whether an attempt of an event age old may start now,
// waiting up to gateWait for its turn while the instance is busy.
func (g *gate) admit(ctx context.Context, age time.Duration) bool {
	if g == nil || age >= MaxYield || g.load.InFlight() < g.busyAt {
		return true
	}
	wctx, cancel := context.WithTimeout(ctx, gateWait)
	defer cancel()
	return g.limiter.Wait(wctx) == nil
}
