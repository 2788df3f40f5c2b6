package queue

import (
	"cmp"
	"context"
	"time"

	"github.com/riverqueue/river"

	"petstore/db"
)

// Timing of the relay.
const (
	// RelayBatchSize is how many events one relay transaction takes.
	RelayBatchSize = 500
	// DefaultRelayPoll is how often the relay looks for events nobody woke
	// it for: those of another process (the command line, an instance
	// killed between its commit and its relay), whose wake-up is not ours.
	// When there are none, a look is one small read.
	DefaultRelayPoll = 100 * time.Millisecond
	// relayGap is the least time between two runs of the relay: commits
	// arriving meanwhile are relayed together, so a stream of orders makes
	// batches, not one more write transaction each.
	relayGap = 10 * time.Millisecond
	// heldRecheck is how soon the relay runs again when committed events
	// waited above PostgreSQL's horizon; twice as long each time they
	// still wait, up to the poll interval (a long transaction writing
	// events, an import, holds the horizon until it ends).
	heldRecheck = 10 * time.Millisecond
)

// Wake asks the relay to run: the store calls it after each commit that
// wrote events (Start registers it). It never blocks.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default: // a run is already wanted; it will see this commit too
	}
}

// Relay turns the committed events not yet relayed into the jobs of every
// kind that has FromEvents, batch by batch, each in one transaction with
// the relay's position, until it is caught up. It reports whether events
// were held above the horizon (run again shortly). The queue's own loop
// calls it when woken; a test may call it to relay without starting the
// queue.
func (q *Queue) Relay(ctx context.Context) (held bool, err error) {
	if _, err := q.build(); err != nil {
		return false, err
	}
	for {
		run, err := q.store.RelayEvents(ctx, RelayBatchSize, q.relayBatch)
		if err != nil || run.Events < RelayBatchSize {
			return run.Held, err
		}
	}
}

// relayBatch asks every kind for the jobs of b's events and inserts them
// in b's transaction.
func (q *Queue) relayBatch(ctx context.Context, b *db.RelayBatch) error {
	var jobs []river.JobArgs
	for _, name := range q.order {
		from := q.kinds[name].FromEvents
		if from == nil {
			continue
		}
		more, err := from(ctx, b)
		if err != nil {
			return err
		}
		jobs = append(jobs, more...)
	}
	return q.InsertTx(ctx, b.SQLTx(), jobs...)
}

// relayLoop runs the relay at once, then whenever woken, every RelayPoll,
// and shortly after a run that found events held, until ctx ends.
func (q *Queue) relayLoop(ctx context.Context) {
	every := cmp.Or(q.cfg.RelayPoll, DefaultRelayPoll)
	poll := time.NewTicker(every)
	defer poll.Stop()
	wait := heldRecheck
	for {
		held, err := q.Relay(ctx)
		if err != nil && ctx.Err() == nil {
			q.logger.Warn("queue: relay of committed events failed; it runs again", "err", err)
		}
		var recheck <-chan time.Time
		if held {
			recheck = time.After(wait)
			wait = min(2*wait, every)
		} else {
			wait = heldRecheck
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-poll.C:
		case <-recheck:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(relayGap):
		}
	}
}
