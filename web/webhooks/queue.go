package webhooks

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

	"petstore/db"
	"petstore/web"
	"petstore/web/queue"
)

// Timing of the queue. An attempt takes at most AttemptTimeout, and its
// job at most JobTimeout with its wait at the gate and the writing of its
// outcome; a job still
// running RescueAfter after it started was cut off by a crash and is made
// available again (db.Store.RescueWebhookJobs, every RescueEvery on every
// instance), so a killed instance's delivery is attempted again within
// about RescueAfter + RescueEvery + PollInterval of the attempt it cut off.
const (
	JobTimeout          = gateWait + AttemptTimeout + recordTimeout
	RescueAfter         = 20 * time.Second
	RescueEvery         = 2 * time.Second
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultWorkers is how many attempts one instance makes at once.
	DefaultWorkers = 100
)

// Config is what Start builds the queue from.
type Config struct {
	Store *db.Store
	// Now is the one clock (attempt times, webhook-timestamp). River keeps
	// its own schedule on the database's clock: see Start.
	Now    func() time.Time
	Logger *slog.Logger
	// AllowPrivate lets deliveries reach loopback and private addresses
	// (PETSTORE_WEBHOOK_ALLOW_PRIVATE: development and tests).
	AllowPrivate bool
	// Metrics, when set, counts attempts.
	Metrics *Metrics
	// Schedule overrides DefaultSchedule (tests shorten it).
	Schedule []time.Duration
	// Workers overrides DefaultWorkers; PollInterval DefaultPollInterval.
	Workers      int
	PollInterval time.Duration
	// Load, when set, is the instance's requests in flight: attempts give
	// way to them while the instance is busy (gate).
	Load *web.Load
	// Also are the other kinds of job the process works: the queue's one
	// River client works them beside the deliveries (see package queue).
	Also []queue.Jobs
}

// Queue works the delivery jobs of one instance: a River client and the
// rescue of jobs cut off by a crash.
type Queue struct {
	client *river.Client[*sql.Tx]
	store  *db.Store
	logger *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// deliveryArgs are the args the database's triggers give a delivery job.
type deliveryArgs struct {
	DeliveryID int64 `json:"deliveryId"`
	Generation int64 `json:"generation"`
}

// Kind is the River kind of the delivery jobs.
func (deliveryArgs) Kind() string { return db.WebhookJobKind }

// deliveryWorker works a delivery job: one attempt, then snoozed until the
// next one is due while the delivery is pending. River's own retries
// (and attempt count) are left to failures to record an attempt, such as
// the database going away.
type deliveryWorker struct {
	river.WorkerDefaults[deliveryArgs]
	deliverer *Deliverer
}

func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	pending, wait, err := w.deliverer.Attempt(ctx, job.Args.DeliveryID, job.Args.Generation)
	if err != nil {
		return err
	}
	if pending {
		return river.JobSnooze(max(wait, 0))
	}
	return nil
}

func (w *deliveryWorker) Timeout(*river.Job[deliveryArgs]) time.Duration { return JobTimeout }

// Start starts working delivery jobs until Stop. River runs on the
// database's clock, not cfg.Now: its rescuer compares with the wall clock
// whatever it is given (riverqueue/river internal/maintenance
// job_rescuer.go), so a shifted clock would break rescue; the waits it is
// given are relative (JobSnooze).
func Start(ctx context.Context, cfg Config) (*Queue, error) {
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	d := &Deliverer{
		Store: cfg.Store, Client: NewClient(cfg.AllowPrivate), Now: cfg.Now, Logger: logger, Metrics: cfg.Metrics,
		Schedule: cfg.Schedule, gate: newGate(cfg.Load),
	}
	if d.Schedule == nil {
		d.Schedule = DefaultSchedule
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &deliveryWorker{deliverer: d}); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	queues := map[string]river.QueueConfig{db.WebhookJobQueue: {MaxWorkers: cmp.Or(cfg.Workers, DefaultWorkers)}}
	for _, jobs := range cfg.Also {
		if err := jobs.AddWorkers(workers); err != nil {
			return nil, fmt.Errorf("queue: %w", err)
		}
		queues[jobs.Queue()] = jobs.QueueConfig()
	}
	poll := cmp.Or(cfg.PollInterval, DefaultPollInterval)
	client, err := river.NewClient(cfg.Store.QueueDriver(), &river.Config{
		Queues:               queues,
		Workers:              workers,
		FetchCooldown:        min(poll, 25*time.Millisecond),
		FetchPollInterval:    poll,
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: RescueAfter,
		Logger:               slog.New(warnings{logger.Handler()}).With("component", "river"),
	})
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("webhooks: start queue: %w", err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q := &Queue{client: client, store: cfg.Store, logger: logger, cancel: cancel, done: make(chan struct{})}
	go q.rescue(rctx)
	return q, nil
}

// rescue makes jobs cut off by a crash available again, at once and then
// every RescueEvery, until ctx ends.
func (q *Queue) rescue(ctx context.Context) {
	defer close(q.done)
	t := time.NewTicker(RescueEvery)
	defer t.Stop()
	for {
		n, err := q.store.RescueWebhookJobs(ctx, RescueAfter)
		switch {
		case err != nil && ctx.Err() == nil:
			q.logger.Warn("webhooks: rescue of stuck deliveries failed", "err", err)
		case n > 0:
			q.logger.Info("webhooks: deliveries cut off by a crash queued again", "jobs", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop stops taking new attempts and waits for the running ones until ctx
// ends, then cancels what still runs (its deliveries are attempted again
// later, here or on another instance). Stopping twice is fine.
func (q *Queue) Stop(ctx context.Context) error {
	var err error
	q.once.Do(func() {
		q.cancel()
		<-q.done
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
