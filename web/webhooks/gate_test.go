package webhooks

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"petstore/web"
)

// TestGateYieldsWhileBusy: an idle instance admits every attempt at once;
// a busy one admits them at BusyRate, so with no time left to wait a young
// event's attempt is held back once the first has taken the turn, while an
// event older than MaxYield goes whatever the load; no Load, no gate.
func TestGateYieldsWhileBusy(t *testing.T) {
	load := &web.Load{}
	g := newGate(load)
	ctx := context.Background()
	for i := 0; i < 3*BusyRate; i++ {
		if !g.admit(ctx, 0) {
			t.Fatalf("idle instance: attempt %d held back", i)
		}
	}
	for i := int64(0); i < BusyInFlight(); i++ {
		defer load.Enter()()
	}
	// One turn an hour: the first young attempt takes it, the next would
	// wait past gateWait and is held back at once.
	g.limiter = rate.NewLimiter(rate.Every(time.Hour), 1)
	if !g.admit(ctx, 0) {
		t.Error("busy instance: the first attempt was held back")
	}
	if g.admit(ctx, 0) {
		t.Error("busy instance: a young event's attempt was admitted past the rate")
	}
	if !g.admit(ctx, MaxYield) {
		t.Error("busy instance: an event MaxYield old was held back")
	}
	var none *gate
	if none != newGate(nil) || !none.admit(ctx, 0) {
		t.Error("no Load: attempts held back")
	}
}
