package counters

import (
	"context"
	"sync"
	"time"
)

// SharedReads shares fresh reads of a value among the requests that need
// one at the same moment (the counters on PostgreSQL, where each read is a
// round trip). A read serves only the requests that were already waiting
// when it started, so every request still gets a value read after it
// asked; requests that arrive while a read is under way wait for the next
// one, which starts as soon as that read ends. Under load a round trip so
// serves every request that arrived during the one before, instead of one
// each.
type SharedReads[T any] struct {
	// Read reads the value; set it before the first Join.
	Read func(context.Context) (T, error)

	mu      sync.Mutex
	running bool           // a reader goroutine is at work
	next    *sharedRead[T] // the read that arrivals join; it starts when the running one ends
}

// sharedRead is one shared read and its result.
type sharedRead[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// sharedReadTimeout bounds one shared read. It runs on no request's
// context, since several requests wait for it; each still stops waiting
// when its own context ends.
const sharedReadTimeout = 10 * time.Second

// Join waits for a read that starts after this call.
func (r *SharedReads[T]) Join(ctx context.Context) (T, error) {
	r.mu.Lock()
	if r.next == nil {
		r.next = &sharedRead[T]{done: make(chan struct{})}
	}
	mine := r.next
	if !r.running {
		r.running = true
		go r.run()
	}
	r.mu.Unlock()
	select {
	case <-mine.done:
		return mine.v, mine.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// run performs the queued reads one after another until none is waiting.
func (r *SharedReads[T]) run() {
	for {
		r.mu.Lock()
		rd := r.next
		r.next = nil
		if rd == nil {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), sharedReadTimeout)
		rd.v, rd.err = r.Read(ctx)
		cancel()
		close(rd.done)
	}
}
