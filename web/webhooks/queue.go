package webhooks

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"petstore/db"
	"petstore/web"
	"petstore/web/queue"
)

// The River job of a delivery: one attempt, args {"deliveryId",
// "generation"}.
const (
	JobKind  = "webhook_delivery"
	JobQueue = "webhooks"
)

// Timing of the deliveries. An attempt takes at most AttemptTimeout, and
// its job at most JobTimeout with its wait at the gate and the writing of
// its outcome; a job still running queue.RescueGrace after that was cut
// off by a crash and is made available again (web/queue), so a killed
// instance's delivery is attempted again within about JobTimeout +
// queue.RescueGrace + queue.RescueEvery + the poll interval of the attempt
// it cut off.
const (
	JobTimeout = gateWait + AttemptTimeout + recordTimeout
	// DefaultWorkers is how many attempts one instance makes at once.
	DefaultWorkers = 100
)

// Config is what New builds the deliveries from.
type Config struct {
	Store *db.Store
	// Now is the one clock (attempt times, webhook-timestamp). River keeps
	// its own schedule on the database's clock: see queue.Queue.Start.
	Now    func() time.Time
	Logger *slog.Logger
	// AllowPrivate lets deliveries reach loopback and private addresses
	// (PETSTORE_WEBHOOK_ALLOW_PRIVATE: development and tests).
	AllowPrivate bool
	// Metrics, when set, counts attempts.
	Metrics *Metrics
	// Schedule overrides DefaultSchedule (tests shorten it).
	Schedule []time.Duration
	// Workers overrides DefaultWorkers.
	Workers int
	// Load, when set, is the instance's requests in flight: attempts give
	// way to them while the instance is busy (gate).
	Load *web.Load
	// Tracer, when set, makes a span of each attempt (SPEC §21); nil is
	// tracing off.
	Tracer trace.TracerProvider
}

// Deliveries is the kind of job that delivers webhooks (SPEC §15). Its jobs
// come from committed events through the relay (a delivery per subscribed
// endpoint, and its job), and from staff: a test event (Test) and one more
// attempt (Retry).
type Deliveries struct {
	store     *db.Store
	queue     *queue.Queue
	deliverer *Deliverer
}

// deliveryArgs are a delivery job's args.
type deliveryArgs struct {
	DeliveryID int64 `json:"deliveryId"`
	Generation int64 `json:"generation"`
}

// Kind is the River kind of the delivery jobs.
func (deliveryArgs) Kind() string { return JobKind }

// New registers the deliveries with q: their queue, their worker and the
// jobs they make of committed events.
func New(q *queue.Queue, cfg Config) (*Deliveries, error) {
	d := &Deliverer{
		Store: cfg.Store, Client: NewClient(cfg.AllowPrivate), Now: cfg.Now, Logger: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		Metrics: cfg.Metrics, Schedule: cfg.Schedule, gate: newGate(cfg.Load), Tracer: tracerOf(cfg.Tracer),
	}
	if d.Schedule == nil {
		d.Schedule = DefaultSchedule
	}
	w := &Deliveries{store: cfg.Store, queue: q, deliverer: d}
	err := queue.Register(q, queue.Kind{
		Queue: JobQueue, Workers: cmp.Or(cfg.Workers, DefaultWorkers), Timeout: JobTimeout, FromEvents: w.fromEvents,
		Cancelled: cancelled,
	}, w.work)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return w, nil
}

// work makes one attempt of a delivery; while the delivery stays pending
// its job is snoozed until the next attempt is due. River's own retries
// (and attempt count) are left to failures to record an attempt, such as
// the database going away.
func (w *Deliveries) work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	pending, wait, err := w.deliverer.Attempt(ctx, job.Args.DeliveryID, job.Args.Generation)
	if err != nil {
		return err
	}
	if pending {
		return river.JobSnooze(max(wait, 0))
	}
	return nil
}

// fromEvents makes the deliveries of a batch of committed events, and
// returns their jobs (queue.Kind.FromEvents).
func (w *Deliveries) fromEvents(ctx context.Context, b *db.RelayBatch) ([]river.JobArgs, error) {
	jobs, err := b.CreateWebhookDeliveries(ctx)
	if err != nil {
		return nil, err
	}
	return jobArgs(jobs), nil
}

// Test queues a webhook.test event to one endpoint and returns its
// delivery. Errors: not_found, webhook_disabled.
func (w *Deliveries) Test(ctx context.Context, webhookID int64) (*db.WebhookDelivery, error) {
	return w.store.QueueWebhookTest(ctx, webhookID, w.enqueue)
}

// Retry queues one more attempt of a delivery now, whatever its state, and
// returns it pending. Errors: not_found, webhook_disabled.
func (w *Deliveries) Retry(ctx context.Context, webhookID, id int64) (*db.WebhookDelivery, error) {
	return w.store.RetryWebhookDelivery(ctx, webhookID, id, w.enqueue)
}

// cancelled fails the delivery of a job staff cancelled on the Jobs page
// (queue.Kind.Cancelled): no attempt of it comes any more.
func cancelled(ctx context.Context, jt *db.JobTx, args []byte) error {
	var a deliveryArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return fmt.Errorf("webhooks: job args: %w", err)
	}
	return jt.StopWebhookDelivery(ctx, a.DeliveryID, a.Generation)
}

// enqueue inserts the jobs of deliveries in tx (db.EnqueueDeliveries).
func (w *Deliveries) enqueue(ctx context.Context, tx *sql.Tx, jobs []db.DeliveryJob) error {
	return w.queue.InsertTx(ctx, tx, jobArgs(jobs)...)
}

// TracerName names the attempts' spans.
const TracerName = "petstore/web/webhooks"

// tracerOf is tp's tracer of attempts, a no-op one when tp is nil.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(TracerName)
}

func jobArgs(jobs []db.DeliveryJob) []river.JobArgs {
	args := make([]river.JobArgs, len(jobs))
	for i, j := range jobs {
		args[i] = deliveryArgs{DeliveryID: j.DeliveryID, Generation: j.Generation}
	}
	return args
}
