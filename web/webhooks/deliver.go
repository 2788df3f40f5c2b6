package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"petstore/db"
	"petstore/web"
	"petstore/web/queue"
)

// Deliverer makes one attempt of a delivery and records what it decided:
// the rules of SPEC §15 without the queue that schedules them.
type Deliverer struct {
	Store  *db.Store
	Client *http.Client
	// Now is the one clock: the attempt's time, its webhook-timestamp.
	Now func() time.Time
	// Schedule is the wait after each failed attempt (DefaultSchedule).
	Schedule []time.Duration
	Logger   *slog.Logger
	// Metrics, when set, counts outcomes and times attempts.
	Metrics *Metrics
	// spread jitters each wait; nil is jitter.
	spread func(time.Duration) time.Duration
	// Tracer makes each attempt's span, linked to the change that caused
	// the delivery; nil makes none.
	Tracer trace.Tracer
	// gate holds attempts back while the instance is busy (nil: never).
	gate *gate
}

// recordTimeout bounds writing an attempt's outcome, which goes on when
// the attempt's own context ended (a shutdown cancelling it).
const recordTimeout = 5 * time.Second

// Attempt makes an attempt of generation of delivery id, when there is one
// to make, and records it. It returns whether the delivery is still
// pending and, if so, how long until the next attempt.
func (d *Deliverer) Attempt(ctx context.Context, id, generation int64) (pending bool, wait time.Duration, err error) {
	send, err := d.Store.PrepareWebhookAttempt(ctx, id, generation)
	if err != nil || send == nil {
		return false, 0, err
	}
	if !d.gate.admit(ctx, d.Now().Sub(send.Delivery.EventAt)) {
		// The instance is busy: no attempt now, the job waits in the queue.
		return true, busySnooze, nil
	}
	body, err := send.Delivery.Body()
	if err != nil {
		return false, 0, err
	}
	now := d.Now().UTC()
	msg := message{url: send.URL, id: send.Delivery.MessageID(), timestamp: now.Unix(), body: body}
	msg.signature = Sign(send.Secrets, msg.id, msg.timestamp, body)
	var span trace.Span
	if d.Tracer != nil {
		ctx, span, msg.traceparent = web.StartCaused(ctx, d.Tracer, "webhook.attempt", send.Delivery.Traceparent,
			attribute.Int64("petstore.webhook.id", send.Delivery.WebhookID), attribute.Int64("petstore.webhook.delivery_id", id),
			attribute.String("petstore.event.type", send.Delivery.EventType))
		defer span.End()
	}
	a := post(ctx, d.Client, msg)
	if span != nil {
		if a.status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", a.status))
		}
		if a.err != "" {
			span.SetStatus(codes.Error, a.err)
		}
	}
	if ctx.Err() != nil && a.err != "" {
		// Cut off by the queue stopping, not by the attempt's own
		// deadline: no verdict on the endpoint. The job runs again.
		return true, 0, nil
	}
	spread := d.spread
	if spread == nil {
		spread = jitter
	}
	dec := decide(a, send.Attempts, d.Schedule, spread)
	res := db.WebhookAttemptResult{
		DeliveryID: id, WebhookID: send.Delivery.WebhookID, Generation: generation,
		Attempt: db.WebhookAttempt{At: now, DurationMs: a.duration.Milliseconds()},
		Snippet: a.snippet, Status: dec.status, Gone: dec.gone,
	}
	if a.status != 0 {
		res.Attempt.HTTPStatus = &a.status
	}
	if a.err != "" {
		res.Attempt.Error = &a.err
	}
	if dec.status == db.DeliveryPending {
		next := now.Add(dec.retry)
		res.NextAttemptAt = &next
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	reason, err := d.Store.RecordWebhookAttempt(rctx, res)
	if err != nil {
		return false, 0, fmt.Errorf("delivery %d: %w", id, err)
	}
	d.Metrics.attempted(dec.status, a.duration)
	if dec.status == db.DeliveryPending && !a.ok() {
		// Another attempt is to come: the job is snoozed, not failed, so
		// its failure is noted for the console's Jobs page.
		queue.RecordFailure(ctx, send.Attempts+1, a.describe())
	}
	if reason != "" {
		d.Logger.Warn("webhook disabled", "webhookId", send.Delivery.WebhookID, "reason", reason, "url", send.URL)
	}
	return dec.status == db.DeliveryPending, dec.retry, nil
}

// describe says what went wrong with an attempt, for staff: the error and
// the answer's status, if any ("http_status 500").
func (a answer) describe() string {
	if a.status != 0 {
		return a.err + " " + strconv.Itoa(a.status)
	}
	return a.err
}
