package photo

import (
	"context"
	"fmt"
)

// MaxWaiting is how many uploads may wait for a Worker while it processes
// another (SPEC §17): each waiting upload holds its body, up to
// Limits.MaxBytes, so the line is what bounds the memory a flood of
// uploads takes. One more is ErrBusy at once.
const MaxWaiting = 4

// Worker processes uploads one at a time, with at most MaxWaiting waiting
// for their turn. A server makes one and every surface that takes uploads
// shares it: a 40-megapixel upload needs its decoded pixels in memory
// while it is resized (see the package comment), and the work is
// CPU-bound, so running uploads one after another costs little latency and
// keeps the worst case at one image's worth of memory and one core,
// however many arrive at once.
type Worker struct {
	// turn holds a token while an upload is processed. A decode whose
	// caller gave up keeps the turn until it actually finishes.
	turn chan struct{}
	// line holds a token for each upload waiting for the turn.
	line chan struct{}
}

// NewWorker returns an idle Worker.
func NewWorker() *Worker {
	return &Worker{turn: make(chan struct{}, 1), line: make(chan struct{}, MaxWaiting)}
}

// Enter takes the worker's turn, waiting in line for it when another
// upload has it, and returns the function that gives the turn back, which
// the caller must call once. A full line is ErrBusy, without waiting; ctx
// ending while in line is ctx's error (Reencode's timeout among them).
// Reencode enters for each upload; a test enters to keep the worker busy.
func (w *Worker) Enter(ctx context.Context) (leave func(), err error) {
	leave = func() { <-w.turn }
	select {
	case w.turn <- struct{}{}:
		return leave, nil
	default:
	}
	select {
	case w.line <- struct{}{}:
	default:
		return nil, fmt.Errorf("%w: %d photos are waiting already", ErrBusy, MaxWaiting)
	}
	defer func() { <-w.line }()
	select {
	case w.turn <- struct{}{}:
		return leave, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Waiting is how many uploads are waiting in line now, for metrics and
// tests.
func (w *Worker) Waiting() int { return len(w.line) }
