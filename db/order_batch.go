package db

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Group commit. An order is one transaction, so orders are placed at most
// as fast as the database commits. Every PlaceOrder is a lone order, put
// in a queue; the next batch takes every order queued (up to maxBatch)
// and places them in ONE transaction, one commit for all. Nothing waits
// on a timer: an order that finds no batch running starts one at once,
// with itself alone, so a quiet shop's order is as fast as before; under
// load the queue fills while the batch before commits.
//
// Each order in a batch is placed by the one rule (takeOrder) on its pet as
// locked in the batch's transaction, after the orders before it in the
// batch: two orders for one pet's last unit in one batch are one placed and
// one refused, exactly as in two transactions. An order the rule refuses
// (stock, status, no such pet) writes nothing and refuses only itself: in
// Go (SQLite) each order runs in a savepoint of its own, rolled back when
// refused; PostgreSQL's statement writes only the orders the rule lets
// through (order_place_postgres.go). Each placed order gets its events
// (placed) and, when its own context carries an origin (a staff key), its
// audit entry (auditPlaced) in the batch's transaction.
// An order that fails otherwise (a database error) ends the transaction:
// nothing of the batch is written, and each of its orders is placed again
// in a transaction of its own, so one bad order fails only itself. A
// failed commit is not retried (it may have committed): every order of
// the batch gets the error, as a lone order's failed commit would. No
// order is answered before its batch commits.

// maxBatch bounds the orders of one batch: the locks a batch holds, and
// the latency of the first order in it, grow with it.
const maxBatch = 64

// queuedOrder is one lone order waiting for its batch.
type queuedOrder struct {
	ctx   context.Context
	order *Order
	owner Owner
	err   error         // the order's own outcome, set before done closes
	done  chan struct{} // closed once the order is placed or refused
}

// orderBatcher gathers lone orders into batches.
type orderBatcher struct {
	// place places a batch in one transaction, setting the err of each
	// order the rule refused; it returns an error when the transaction
	// failed (nothing written), and whether that failure was the commit's.
	place func(ctx context.Context, batch []*queuedOrder) (atCommit bool, err error)
	// leaders is how many batches may be placed at once: 1 on SQLite,
	// which has one writer; more on PostgreSQL, whose commits of other
	// batches overlap.
	leaders int

	mu      sync.Mutex
	queue   []*queuedOrder
	running int // batches being placed, at most leaders

	// batches and batched count the batches placed and their orders.
	batches, batched atomic.Int64
}

// submit places o for owner in the next batch and returns its outcome
// once that batch has committed or failed.
func (b *orderBatcher) submit(ctx context.Context, o *Order, owner Owner) error {
	q := &queuedOrder{ctx: ctx, order: o, owner: owner, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, q)
	lead := b.running < b.leaders
	if lead {
		b.running++
	}
	b.mu.Unlock()
	if lead {
		b.lead()
	}
	<-q.done
	return q.err
}

// lead places one batch of what is queued (in the caller's goroutine: at
// low load the caller's own order alone), then hands leadership to a new
// goroutine when more orders are queued, so the caller can answer.
func (b *orderBatcher) lead() {
	// Let the goroutines that are ready to run go first: under load some
	// are requests about to queue an order, which then join this batch.
	// Alone, nothing else is ready and this returns at once; nothing
	// waits on a timer.
	runtime.Gosched()
	b.mu.Lock()
	n := min(len(b.queue), maxBatch)
	batch := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	b.mu.Unlock()

	b.run(batch)

	b.mu.Lock()
	more := len(b.queue) > 0
	if !more {
		b.running--
	}
	b.mu.Unlock()
	if more {
		go b.lead()
	}
}

// run places batch and closes every order's done. Orders whose request
// has already ended are not placed. The transaction runs on the first
// order's context without its cancellation: one client hanging up must
// not fail the others' orders. Its values (an origin) are the first
// order's alone: each order's audit entry takes its own context's.
func (b *orderBatcher) run(batch []*queuedOrder) {
	live := batch[:0:0]
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			q.err = err
			close(q.done)
			continue
		}
		live = append(live, q)
	}
	if len(live) == 0 {
		return
	}
	b.batches.Add(1)
	b.batched.Add(int64(len(live)))
	ctx := context.WithoutCancel(live[0].ctx)
	inRounds(live)
	atCommit, err := b.place(ctx, live)
	switch {
	case err == nil:
	case len(live) == 1 || atCommit:
		for _, q := range live {
			q.err = err
		}
	default:
		// Nothing of the batch was written: each order alone, so the
		// order that failed it fails only itself.
		for _, q := range live {
			q.err = nil
			if _, err := b.place(ctx, []*queuedOrder{q}); err != nil {
				q.err = err
			}
		}
	}
	for _, q := range live {
		close(q.done)
	}
}

// inRounds orders batch as it is placed: in rounds, the first order of
// each pet, by pet id, then the second order of each pet that has one, and
// so on, each pet's orders in their arrival order. Pets are locked in id
// order in every transaction that locks several (lockPets too), and a
// later round locks no pet the first did not, so two batches at once
// cannot deadlock on them; PostgreSQL places each round by one statement.
func inRounds(batch []*queuedOrder) {
	slices.SortStableFunc(batch, func(a, c *queuedOrder) int { return cmp.Compare(a.order.PetID, c.order.PetID) })
	round := make(map[*queuedOrder]int, len(batch))
	for i, q := range batch {
		if i > 0 && q.order.PetID == batch[i-1].order.PetID {
			round[q] = round[batch[i-1]] + 1
		}
	}
	slices.SortStableFunc(batch, func(a, c *queuedOrder) int { return cmp.Compare(round[a], round[c]) })
}

// OrderBatches is how many batches of lone orders the store has placed,
// and how many orders were submitted to them (for the metrics).
func (s *Store) OrderBatches() (batches, orders int64) {
	return s.orders.batches.Load(), s.orders.batched.Load()
}

// placeBatch is the batcher's place: every order of batch, in its order,
// in one transaction, by s.placeIn (the fastest way the database has),
// each placed order with its audit entry. A transient conflict (retry.go)
// runs the whole batch again, each order's refusal made anew.
func (s *Store) placeBatch(ctx context.Context, batch []*queuedOrder) (atCommit bool, err error) {
	err = s.retry(ctx, func() (err error) {
		for _, q := range batch {
			q.err = nil
		}
		atCommit, err = s.placeBatchOnce(ctx, batch)
		return err
	})
	return atCommit, err
}

// placeBatchOnce is one attempt of placeBatch.
func (s *Store) placeBatchOnce(ctx context.Context, batch []*queuedOrder) (atCommit bool, err error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := s.placeIn(ctx, tx, batch); err != nil {
		return false, err
	}
	for _, q := range batch {
		if q.err != nil {
			continue
		}
		if err := tx.auditPlaced(q.ctx, q.order); err != nil {
			return false, err
		}
		if s.orderFault != nil {
			if err := s.orderFault(q.order); err != nil {
				return false, err
			}
		}
	}
	return true, tx.Commit()
}

// placeInGo places every order of batch in tx, in its order, as a
// checkout places its lines (placeLoneInGo), each in a savepoint of its
// own that a refusal rolls back. A refused order gets its err; any other
// failure is returned.
func placeInGo(ctx context.Context, tx *Tx, batch []*queuedOrder) error {
	for _, q := range batch {
		q.order.CreatedAt = tx.now
		if _, err := tx.exec(ctx, `SAVEPOINT lone_order`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		kept := len(tx.events)
		err := placeLoneInGo(ctx, tx, q.order, q.owner)
		var coded *Error
		switch {
		case errors.As(err, &coded):
			q.err = err
			tx.events = tx.events[:kept]
			if _, err := tx.exec(ctx, `ROLLBACK TO SAVEPOINT lone_order`); err != nil {
				return fmt.Errorf("rollback to savepoint: %w", err)
			}
		case err != nil:
			return err
		default:
			tx.eventsOf(q.ctx, kept)
		}
		if _, err := tx.exec(ctx, `RELEASE SAVEPOINT lone_order`); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	return nil
}

// placeLoneInGo places the lone order o (its ID 0) in tx as a checkout
// places a line: its pet locked, then placeOrder.
func placeLoneInGo(ctx context.Context, tx *Tx, o *Order, owner Owner) error {
	p, err := tx.lockPet(ctx, o.PetID)
	if err != nil && ErrorCode(err) != ENotFound {
		return err
	}
	return tx.placeOrder(ctx, owner, p, o)
}

// postgresOrderBatches is how many batches PostgreSQL places at once: one
// commits while the next is being placed.
const postgresOrderBatches = 2
