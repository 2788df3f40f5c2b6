// Package events streams the outbox (db.Event rows) to browsers and
// programs as Server-Sent Events (SPEC §8).
//
// One Hub per process runs ONE poller goroutine. Writers never talk to it
// beyond Wake, which only drops a token into a one-slot channel: the store
// calls it after a commit that wrote events (Store.OnEvent), and
// ListenPostgres calls it when another instance's NOTIFY arrives. When woken,
// or every PollInterval as a safety net, the poller reads the events after
// the newest id it has seen, in pages, and offers each one to every
// subscribed stream over a buffered channel without ever blocking.
//
// Slow clients: when a stream's buffer is full the hub drops that stream's
// live feed (it stops offering it events, at O(1) cost per event) and
// signals it. The stream's own goroutine, once it gets to run again, empties
// its buffer, re-attaches to the live feed and catches up from the database
// after the last id it sent. So a slow or vanished client costs the hub and
// the writers nothing, and a client that is merely slow for a moment still
// gets every event, in order, once. A client that never reads blocks only
// its own stream goroutine, whose writes then fail at the write deadline
// (Heartbeat + WriteTimeout) and end the stream.
//
// No gap, no duplicate: every event the hub offers carries the id of the
// event the hub read just before it. A stream that has sent id n skips
// offers with id <= n, sends an offer whose predecessor is <= n, and reads
// the database after n whenever an offer's predecessor is newer than n (it
// missed something: it resumed from Last-Event-ID, lagged, or joined while
// the hub was ahead of it). This needs "after n" in the database to be
// complete: the Source returns events only up to its horizon, below which
// no event can still commit (PostgreSQL writers commit concurrently, so
// ids do not commit in order; see db.Store.EventsAfter). When committed
// events wait above the horizon (Source.EventsHeld), the hub reads again
// after HeldRecheck instead of waiting for the next wake-up, which may
// never come (the transaction it waits for may abort).
package events

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"petstore/db"
)

// Source is the outbox the hub reads; *db.Store satisfies it.
type Source interface {
	// EventsAfter returns up to limit events with id > after, oldest first.
	EventsAfter(ctx context.Context, after int64, limit int) ([]db.Event, error)
	// LastEventID is the newest event's id, 0 when there is none: the
	// horizon, after which a stream that starts now misses nothing.
	LastEventID(ctx context.Context) (int64, error)
	// EventsHeld reports whether the last read stopped below events
	// already committed, to be read again shortly.
	EventsHeld() bool
}

// Hub fans new outbox events out to the open event streams. Create it with
// NewHub; set the tuning fields, if at all, before the first Serve. It is
// safe for concurrent use.
type Hub struct {
	// Notified, when set, is called whenever ListenPostgres hears that an
	// instance committed events (the queue's relay wakes on it). Set it
	// before ListenPostgres runs.
	Notified func()
	// Heartbeat is how long a stream may stay idle before a comment line
	// (": heartbeat") is sent; SPEC §8 says 15 s.
	Heartbeat time.Duration
	// PollInterval is the safety net: the hub reads the outbox this often
	// even when nobody woke it (a lost NOTIFY, a writer in another process).
	PollInterval time.Duration
	// HeldRecheck is how soon the hub reads again when the outbox held
	// committed events back behind its horizon.
	HeldRecheck time.Duration
	// PageSize is how many events one database read returns at most.
	PageSize int
	// Buffer is how many events may wait for one stream before the hub
	// drops that stream's live feed and lets it catch up from the database.
	Buffer int
	// WriteTimeout is how long one write to a client may take. A stream
	// pushes its connection's write deadline Heartbeat+WriteTimeout ahead
	// after every write, so a long-lived stream outlives the server's own
	// WriteTimeout (which must exceed Heartbeat), while a client that stops
	// reading is cut off.
	WriteTimeout time.Duration
	// AuthInterval is how often an open stream re-checks that its client
	// may still read it (Serve's Authorise). SPEC §3 wants a revoked key's
	// or a signed-out session's stream ended within 15 s: the default, 10 s,
	// leaves room for the check itself.
	AuthInterval time.Duration

	src Source
	log *slog.Logger

	wake chan struct{} // one slot: a pending wake-up
	done chan struct{} // closed by Close
	// closeDeadline is every stream's write deadline once Close ran; set
	// before done closes and never after.
	closeDeadline time.Time
	ctx           context.Context
	cancel        context.CancelFunc

	startOnce sync.Once
	closeOnce sync.Once
	wg        sync.WaitGroup

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	primed bool  // last is meaningful: the hub has subscribers and a base id
	last   int64 // newest id offered to subscribers (guarded by mu)
	closed bool

	lags atomic.Int64 // live feeds dropped because a buffer was full
}

// subscriber is one open stream as the hub sees it.
type subscriber struct {
	items   chan offer
	lagged  chan struct{} // one slot: the hub dropped the live feed
	lagging bool          // guarded by Hub.mu: the hub skips this subscriber
	conn    net.Conn      // for write deadlines; nil under app.Test-like servers
}

// offer is one event as the hub hands it to a stream, with the id of the
// event the hub read before it, so the stream can tell whether it missed one.
type offer struct {
	ev   db.Event
	prev int64
}

var errClosed = errors.New("event hub closed")

// NewHub makes a hub over src. logger may be nil (slog.Default).
func NewHub(src Source, logger *slog.Logger) *Hub {
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{
		Heartbeat:    15 * time.Second,
		PollInterval: 2 * time.Second,
		HeldRecheck:  10 * time.Millisecond,
		PageSize:     500,
		Buffer:       1024,
		WriteTimeout: 10 * time.Second,
		AuthInterval: 10 * time.Second,
		src:          src,
		log:          logger,
		wake:         make(chan struct{}, 1),
		done:         make(chan struct{}),
		ctx:          ctx,
		cancel:       cancel,
		subs:         make(map[*subscriber]struct{}),
	}
}

// Wake tells the hub that new events may have been committed. It never
// blocks and is safe from any goroutine: register it with Store.OnEvent.
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default: // a wake-up is already pending; it will see these events too
	}
}

// closeGrace is how long a stream has, after Close, to send its last frame
// and end: ample for a client that reads, while a client that does not read
// is cut off then instead of holding the server's shutdown until its
// deadline.
const closeGrace = time.Second

// Close ends every open stream promptly, each after a whole event with a
// last frame telling the client to reconnect (see shutdownFrame), then the
// poller and ListenPostgres. Later requests to Serve get 503. Call it
// before the server's ShutdownWithTimeout. It is idempotent.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.closeDeadline = time.Now().Add(closeGrace) // before done closes: streams read it after
		close(h.done)
		h.cancel()
		// A stream blocked writing to a client that does not read would hold
		// its connection (and the server's shutdown) until its deadline:
		// bring the deadlines forward so those writes fail within closeGrace.
		for s := range h.subs {
			if s.conn != nil {
				_ = s.conn.SetWriteDeadline(h.closeDeadline)
			}
		}
		h.mu.Unlock()
	})
	h.wg.Wait()
}

// heartbeat, pollInterval and pageSize read the tuning fields, falling
// back to the defaults when a field was set to something unusable.
func (h *Hub) heartbeat() time.Duration    { return positive(h.Heartbeat, 15*time.Second) }
func (h *Hub) pollInterval() time.Duration { return positive(h.PollInterval, 2*time.Second) }
func (h *Hub) heldRecheck() time.Duration  { return positive(h.HeldRecheck, 10*time.Millisecond) }
func (h *Hub) authInterval() time.Duration { return positive(h.AuthInterval, 10*time.Second) }
func (h *Hub) pageSize() int               { return positive(h.PageSize, 500) }

func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (h *Hub) isClosed() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// subscribe registers a stream that starts after id start (LastEventID as
// read by the caller just before). It reports behind=true when the hub has
// already offered events newer than start, which the stream must then read
// from the database.
func (h *Hub) subscribe(conn net.Conn, start int64) (s *subscriber, behind bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false, errClosed
	}
	s = &subscriber{
		items:  make(chan offer, max(h.Buffer, 1)),
		lagged: make(chan struct{}, 1),
		conn:   conn,
	}
	h.subs[s] = struct{}{}
	if !h.primed {
		h.primed, h.last = true, start
	} else if start < h.last {
		behind = true
	}
	h.startOnce.Do(func() {
		h.wg.Add(1)
		go h.run()
	})
	return s, behind, nil
}

// unsubscribe forgets a stream. With no stream left the hub stops reading
// the outbox until the next subscriber sets a new base.
func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	if len(h.subs) == 0 {
		h.primed = false
	}
}

// reattach puts a lagging stream back on the live feed: its stale buffer is
// emptied (the database catch-up that follows covers those events).
func (h *Hub) reattach(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
drain:
	for {
		select {
		case <-s.items:
		default:
			break drain
		}
	}
	s.lagging = false
}

// run is the single poller.
func (h *Hub) run() {
	defer h.wg.Done()
	tick := time.NewTicker(h.pollInterval())
	defer tick.Stop()
	held := time.NewTimer(h.heldRecheck())
	held.Stop()
	defer held.Stop()
	for {
		if h.poll() {
			held.Reset(h.heldRecheck())
		}
		select {
		case <-h.done:
			return
		case <-h.wake:
		case <-tick.C:
		case <-held.C:
		}
		held.Stop()
	}
}

// poll reads and offers every event after the hub's newest, page by page.
// It reports whether the outbox held committed events back, to be read
// again soon.
func (h *Hub) poll() (held bool) {
	for {
		h.mu.Lock()
		primed, base := h.primed, h.last
		h.mu.Unlock()
		if !primed {
			return false
		}
		evs, err := h.src.EventsAfter(h.ctx, base, h.pageSize())
		if err != nil {
			if h.ctx.Err() == nil {
				h.log.Warn("events: read outbox", "after", base, "err", err)
			}
			return false
		}
		if len(evs) == 0 || !h.fanOut(base, evs) || len(evs) < h.pageSize() {
			return h.src.EventsHeld()
		}
	}
}

// fanOut offers evs (read after base) to every attached stream without
// blocking. It reports false when the hub's base moved meanwhile (every
// stream left and a new one set another base), so the page is stale.
func (h *Hub) fanOut(base int64, evs []db.Event) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.primed || h.last != base {
		return false
	}
	for s := range h.subs {
		if !s.lagging && !s.offerAll(base, evs) {
			// Full: drop the live feed; the stream catches up from the database.
			s.lagging = true
			h.lags.Add(1)
			select {
			case s.lagged <- struct{}{}:
			default:
			}
		}
	}
	h.last = evs[len(evs)-1].ID
	return true
}

// offerAll queues evs without blocking and reports false when the buffer
// filled up before the last one.
func (s *subscriber) offerAll(prev int64, evs []db.Event) bool {
	for _, ev := range evs {
		select {
		case s.items <- offer{ev: ev, prev: prev}:
			prev = ev.ID
		default:
			return false
		}
	}
	return true
}
