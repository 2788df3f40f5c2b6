// Package queue owns the process's background work: its one River client,
// built here and started by cmd/petstore, the relay that turns committed
// events into jobs, and the rescue of jobs cut off by a crash. Each kind of
// job lives in a package of its own (web/webhooks, web/imports) and
// registers its worker and queue here (Register); none starts a client.
//
// Jobs enter through one door, this package's client: a change that causes
// work either writes an event, which the relay turns into jobs after the
// commit (Kind.FromEvents: a webhook's deliveries), or inserts its job
// itself in its own transaction (InsertTx: an import, a delivery staff
// retry). No SQL writes River's tables.
//
// One client per process matters beyond thrift: River's rescuer, on
// whichever client is the leader, discards a stuck job whose kind that
// client has no worker for, so every client must know every kind.
package queue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"petstore/db"
	"petstore/db/riverdb"
)

// Timing of the queue.
const (
	// DefaultPollInterval is how often River looks for jobs: it has no
	// LISTEN on either of our drivers.
	DefaultPollInterval = 100 * time.Millisecond
	// RescueGrace is how long past its kind's Timeout a job may still be
	// running before it counts as cut off by a crash (its attempt ended
	// and River is writing the outcome).
	RescueGrace = 3 * time.Second
	// RescueEvery is how often every instance rescues such jobs.
	RescueEvery = 2 * time.Second
)

// Kind is how a kind of job is queued and worked.
type Kind struct {
	// Queue is the River queue the kind's jobs go into and are worked
	// from, one per kind.
	Queue string
	// Workers is how many of its jobs one instance works at once.
	Workers int
	// Timeout bounds one attempt (its context ends then). A job still
	// running Timeout + RescueGrace after its attempt began was cut off
	// by a crash: every instance makes it available again (RescueEvery),
	// so another instance, or this one after its restart, runs it again.
	Timeout time.Duration
	// MaxAttempts is how often River tries a job that fails; 0 is River's
	// default (25).
	MaxAttempts int
	// FromEvents, when set, turns a batch of committed events into the
	// kind's jobs: it may write rows of its own in the batch's transaction
	// (a webhook's deliveries) and returns the jobs to insert beside them.
	// The relay calls it (Relay).
	FromEvents func(ctx context.Context, b *db.RelayBatch) ([]river.JobArgs, error)
	// Cancelled, when set, ends the kind's own record of a job staff
	// cancelled (Cancel), in the cancel's transaction: args are the job's
	// encoded args.
	Cancelled func(ctx context.Context, jt *db.JobTx, args []byte) error
}

// Config is what New builds the queue from.
type Config struct {
	Logger *slog.Logger
	// PollInterval overrides DefaultPollInterval (tests shorten it).
	PollInterval time.Duration
	// RelayPoll overrides DefaultRelayPoll.
	RelayPoll time.Duration
	// Tracer, when set, makes a span of every job worked and every batch
	// of jobs inserted (River's otelriver, SPEC §21): a job's span is the
	// parent of what its work traces (its statements, a webhook attempt, an
	// email send). Nil is tracing off, with no plugin at all.
	Tracer trace.TracerProvider
}

// Queue is the process's River client, with the kinds it works, the relay
// and the rescue. Build it with New, register the kinds, then Start it.
// Inserting before Start is fine (the jobs wait for a started queue of any
// instance); registering after the first insert or Start is not.
type Queue struct {
	store  *db.Store
	cfg    Config
	logger *slog.Logger

	mu      sync.Mutex
	kinds   map[string]Kind // by River kind
	order   []string        // River kinds, in registration order
	workers *river.Workers
	client  *river.Client[*sql.Tx] // built at the first insert or Start
	built   error                  // errNotBuilt until then, then the build's error

	wake    chan struct{} // one slot: the relay is wanted
	cancel  context.CancelFunc
	done    sync.WaitGroup
	started bool
	once    sync.Once
}

var errNotBuilt = errors.New("queue: client not built")

// New makes the queue of store; its kinds register next (Register).
func New(store *db.Store, cfg Config) *Queue {
	return &Queue{
		store: store, cfg: cfg, logger: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		kinds: map[string]Kind{}, workers: river.NewWorkers(), built: errNotBuilt, wake: make(chan struct{}, 1),
	}
}

// Register adds a kind of job: work runs each of its jobs, which are of
// type T (its River kind is T's Kind), in the queue k.Queue.
func Register[T river.JobArgs](q *Queue, k Kind, work func(ctx context.Context, job *river.Job[T]) error) error {
	var args T
	name := args.Kind()
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case !errors.Is(q.built, errNotBuilt):
		return fmt.Errorf("queue: %s registered after the client was built", name)
	case k.Queue == "" || k.Workers < 1 || k.Timeout <= 0:
		return fmt.Errorf("queue: %s needs a queue, workers and a timeout", name)
	}
	if _, ok := q.kinds[name]; ok {
		return fmt.Errorf("queue: %s registered twice", name)
	}
	for _, other := range q.kinds {
		if other.Queue == k.Queue {
			return fmt.Errorf("queue: %s's queue %q is another kind's", name, k.Queue)
		}
	}
	if err := river.AddWorkerSafely(q.workers, &worker[T]{work: work, timeout: k.Timeout}); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	q.kinds[name] = k
	q.order = append(q.order, name)
	return nil
}

// worker runs a kind's jobs with its timeout.
type worker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	work    func(ctx context.Context, job *river.Job[T]) error
	timeout time.Duration
}

func (w *worker[T]) Work(ctx context.Context, job *river.Job[T]) error { return w.work(ctx, job) }

func (w *worker[T]) Timeout(*river.Job[T]) time.Duration { return w.timeout }

// build makes the River client over the kinds registered, once.
func (q *Queue) build() (*river.Client[*sql.Tx], error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !errors.Is(q.built, errNotBuilt) {
		return q.client, q.built
	}
	queues := map[string]river.QueueConfig{}
	shortest := time.Duration(0)
	for _, name := range q.order {
		k := q.kinds[name]
		queues[k.Queue] = river.QueueConfig{MaxWorkers: k.Workers}
		if shortest == 0 || k.Timeout < shortest {
			shortest = k.Timeout
		}
	}
	cfg := &river.Config{Logger: slog.New(warnings{q.logger.Handler()}).With("component", "river")}
	if q.cfg.Tracer != nil {
		cfg.Plugins = []rivertype.Plugin{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
			TracerProvider: q.cfg.Tracer, EnableWorkSpanJobKindSuffix: true,
			// otelriver's metrics are not exported: the app's are Prometheus.
			MeterProvider: noop.NewMeterProvider(),
		})}
	}
	if len(queues) > 0 {
		poll := cmp.Or(q.cfg.PollInterval, DefaultPollInterval)
		cfg.Queues, cfg.Workers = queues, q.workers
		cfg.FetchCooldown, cfg.FetchPollInterval = min(poll, 25*time.Millisecond), poll
		// Every worker has its kind's timeout; River's own rescuer (on the
		// leader, every 30 s) leaves a job alone until then, and the rescue
		// loop is quicker.
		cfg.JobTimeout, cfg.RescueStuckJobsAfter = shortest, shortest+RescueGrace
	}
	q.client, q.built = river.NewClient(riverdb.Driver(q.store.Dialect(), q.store.DB().DB), cfg)
	if q.built != nil {
		q.built = fmt.Errorf("queue: %w", q.built)
	}
	return q.client, q.built
}

// InsertTx inserts jobs in tx, the transaction of the change that causes
// them: they are worked once it commits, and never if it rolls back. Each
// job goes into its kind's queue, which must be registered.
func (q *Queue) InsertTx(ctx context.Context, tx *sql.Tx, jobs ...river.JobArgs) error {
	if len(jobs) == 0 {
		return nil
	}
	client, err := q.build()
	if err != nil {
		return err
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, args := range jobs {
		k, ok := q.kinds[args.Kind()] // read-only once built
		if !ok {
			return fmt.Errorf("queue: insert of %s, a kind never registered", args.Kind())
		}
		params[i] = river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{Queue: k.Queue, MaxAttempts: k.MaxAttempts}}
	}
	if _, err := client.InsertManyFastTx(ctx, tx, params); err != nil {
		return fmt.Errorf("queue: insert %d jobs: %w", len(jobs), err)
	}
	return nil
}

// Start works the registered kinds' jobs, relays committed events to them
// and rescues jobs cut off by a crash, until Stop. River runs on the
// database's clock, not the store's: its rescuer compares with the wall
// clock whatever it is given (riverqueue/river internal/maintenance
// job_rescuer.go), so a shifted clock would break rescue; the waits it is
// given are relative (JobSnooze).
func (q *Queue) Start(ctx context.Context) error {
	client, err := q.build()
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("queue: started twice")
	}
	if len(q.order) > 0 {
		if err := client.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("queue: start: %w", err)
		}
	}
	q.started = true
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel = cancel
	q.store.OnEvent(q.Wake)
	q.done.Add(2)
	go func() { defer q.done.Done(); q.relayLoop(lctx) }()
	go func() { defer q.done.Done(); q.rescueLoop(lctx) }()
	return nil
}

// rescueLoop rescues at once and then every RescueEvery, until ctx ends.
func (q *Queue) rescueLoop(ctx context.Context) {
	t := time.NewTicker(RescueEvery)
	defer t.Stop()
	for {
		q.rescue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rescue makes every kind's jobs cut off by a crash available again: those
// still running RescueGrace after their kind's Timeout.
func (q *Queue) rescue(ctx context.Context) {
	for _, name := range q.order {
		n, err := riverdb.Rescue(ctx, q.store.Dialect(), q.store.DB().DB, name, q.kinds[name].Timeout+RescueGrace)
		switch {
		case err != nil && ctx.Err() == nil:
			q.logger.Warn("queue: rescue of stuck jobs failed", "kind", name, "err", err)
		case n > 0:
			q.logger.Info("queue: jobs cut off by a crash queued again", "kind", name, "jobs", n)
		}
	}
}

// Stop stops relaying and taking new jobs, and waits for the running ones
// until ctx ends, then cancels what still runs (those jobs run again
// later, here or on another instance). Stopping twice, or a queue never
// started, is fine.
func (q *Queue) Stop(ctx context.Context) error {
	var err error
	q.once.Do(func() {
		q.mu.Lock()
		started := q.started
		q.mu.Unlock()
		if !started {
			return
		}
		q.cancel()
		q.done.Wait()
		if len(q.order) == 0 {
			return
		}
		if err = q.client.Stop(ctx); err != nil && errors.Is(err, ctx.Err()) {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err = errors.Join(err, q.client.StopAndCancel(cctx))
		}
	})
	return err
}

// warnings passes on only River's warnings and errors: its info lines
// (a job snoozed, a queue started) would be one per attempt.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnings{w.Handler.WithAttrs(attrs)}
}

func (w warnings) WithGroup(name string) slog.Handler { return warnings{w.Handler.WithGroup(name)} }
