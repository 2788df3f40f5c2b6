package outbox

import (
	"context"
	"sync"
	"time"
)

// Notifier sends the PostgreSQL NOTIFY that wakes other instances after
// transactions that wrote events have committed. It is not sent inside
// those transactions: PostgreSQL serialises the commits of every
// transaction that notifies (a database-wide lock held through commit,
// which keeps its queue in commit order), which would queue all writers
// behind one another again. Wake-ups are coalesced: while one NOTIFY is on
// its way, any number of commits ask for one more, and the next is sent
// notifyGap after the last at the soonest. A NOTIFY is a transaction of its
// own, with an id and a commit flushed to disk: sent back to back under a
// steady stream of orders it took about a tenth of the database's
// throughput (pgbench: 7,312 orders/s alone, 6,433 beside a notifying
// loop), for wake-ups nobody needs more often. In-process listeners are
// woken by the store directly. A NOTIFY lost to a crash between the commit
// and here costs other instances only their poll interval.
//
// Its zero value does nothing until Start.
type Notifier struct {
	kick   chan struct{} // one slot: a NOTIFY is wanted
	ctx    context.Context
	cancel context.CancelFunc // ends the goroutine; idempotent
	wg     sync.WaitGroup
}

// notifyTimeout bounds one NOTIFY.
const notifyTimeout = 5 * time.Second

// notifyGap is the least time between two NOTIFYs: other instances learn of
// a commit at most this much later than they could.
const notifyGap = 5 * time.Millisecond

// Start starts the goroutine that calls send (the NOTIFY) when asked.
func (n *Notifier) Start(send func(context.Context) error) {
	n.kick = make(chan struct{}, 1)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			select {
			case <-n.ctx.Done():
				return
			case <-n.kick:
			}
			ctx, cancel := context.WithTimeout(n.ctx, notifyTimeout)
			// An error (database down) is not the writer's: its commit
			// stands, and listeners fall back on their poll interval.
			_ = send(ctx)
			cancel()
			select {
			case <-n.ctx.Done():
				return
			case <-time.After(notifyGap):
			}
		}
	}()
}

// Kick asks for a NOTIFY; it never blocks, and does nothing before Start.
func (n *Notifier) Kick() {
	if n.kick == nil {
		return
	}
	select {
	case n.kick <- struct{}{}:
	default: // one is already wanted; it will cover this commit too
	}
}

// Stop ends the goroutine and waits for it.
func (n *Notifier) Stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	n.wg.Wait()
}
