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
	// Spacing, when set, is the least time from one read's start to the
	// next's: under load the reads would otherwise run back to back, each
	// serving the few requests that arrived during the one before, and
	// cost more than the requests they serve. It applies only after a
	// read that served several callers (one caller at a time never waits
	// for it); requests that arrive while the reader waits join the read
	// it then starts, so a request waits at most Spacing plus one read,
	// and still gets a value read after it asked.
	Spacing time.Duration

	mu      sync.Mutex
	running bool           // a reader goroutine is at work, or waiting for work
	next    *sharedRead[T] // the read that arrivals join; it starts when the running one ends
	wake    chan struct{}  // tells a waiting reader that a read was asked for
}

// sharedRead is one shared read and its result.
type sharedRead[T any] struct {
	callers int // how many joined it, under SharedReads.mu
	done    chan struct{}
	v       T
	err     error
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
	mine.callers++
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
	if !r.running {
		r.running = true
		go r.run()
	} else {
		select {
		case r.wake <- struct{}{}:
		default: // a wake is pending already
		}
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

// sharedReadLinger is how long the reader goroutine waits for another
// read before it ends. A reader that ended and started again for each
// read grew a new stack every time (a SQLite read runs deep), which cost
// more CPU than the read itself under load.
const sharedReadLinger = time.Second

// run performs the queued reads one after another, and ends once none was
// asked for within sharedReadLinger.
func (r *SharedReads[T]) run() {
	idle := time.NewTimer(sharedReadLinger)
	defer idle.Stop()
	var spaced <-chan time.Time // fires Spacing after the last read's start
	shared := false             // the last read served more than one caller
	for {
		r.mu.Lock()
		pending := r.next != nil
		r.mu.Unlock()
		if !pending {
			select {
			case <-r.wake:
			case <-idle.C:
				r.mu.Lock()
				if r.next == nil {
					r.running = false
					r.mu.Unlock()
					return
				}
				r.mu.Unlock()
				idle.Reset(sharedReadLinger)
			}
			continue
		}
		if shared && spaced != nil {
			<-spaced
		}
		r.mu.Lock()
		rd := r.next
		r.next = nil
		shared = rd.callers > 1
		r.mu.Unlock()
		if r.Spacing > 0 {
			spaced = time.After(r.Spacing)
		}
		ctx, cancel := context.WithTimeout(context.Background(), sharedReadTimeout)
		rd.v, rd.err = r.Read(ctx)
		cancel()
		close(rd.done)
		idle.Reset(sharedReadLinger)
	}
}
