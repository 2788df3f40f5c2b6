package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Delivery states of SPEC §15.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// DeliveryStatuses are the states a delivery list filters on.
var DeliveryStatuses = []string{DeliveryPending, DeliverySucceeded, DeliveryFailed}

// EventWebhookTest is the type of the event POST /webhooks/{id}/test
// sends, to that endpoint only; it has no row in events (id 0).
const EventWebhookTest = "webhook.test"

// Why the store disables an endpoint (Webhook.DisabledReason).
const (
	ReasonGone    = "The endpoint answered 410 Gone."
	ReasonFailing = "Every delivery failed for 3 days."
)

// WebhookFailingLimit is how long an endpoint may fail every attempt
// before the store disables it.
const WebhookFailingLimit = 72 * time.Hour

// WebhookDeliveryRetention is how long housekeeping keeps deliveries.
const WebhookDeliveryRetention = 30 * 24 * time.Hour

// Attempt errors of SPEC §15 (WebhookAttempt.Error).
const (
	AttemptTimeout        = "timeout"
	AttemptConnection     = "connection"
	AttemptTLS            = "tls"
	AttemptDNS            = "dns"
	AttemptRefusedAddress = "refused_address"
	AttemptRedirect       = "redirect"
	AttemptHTTPStatus     = "http_status"
)

// WebhookDelivery is one event on its way to one endpoint.
type WebhookDelivery struct {
	ID        int64  `db:"id" json:"id"`
	WebhookID int64  `db:"webhook_id" json:"-"`
	EventID   int64  `db:"event_id" json:"eventId"`
	EventType string `db:"event_type" json:"eventType"`
	// EventData is the event's data as on the event stream; EventAt when
	// the event was made.
	EventData string           `db:"event_data" json:"-"`
	EventAt   time.Time        `db:"event_at" json:"-"`
	Status    string           `db:"status" json:"status"`
	Attempts  []WebhookAttempt `db:"-" json:"attempts"`
	// NextAttemptAt is set while pending.
	NextAttemptAt *time.Time `db:"next_attempt_at" json:"nextAttemptAt,omitempty"`
	// ResponseSnippet is the first KiB of the last answer, as text.
	ResponseSnippet *string   `db:"response_snippet" json:"responseSnippet,omitempty"`
	CreatedAt       time.Time `db:"created_at" json:"createdAt"`
	// Generation counts the retries staff asked for: a job of an older
	// generation does nothing.
	Generation int64 `db:"generation" json:"-"`
	// Traceparent is the span of the change that caused the delivery (its
	// event's, SPEC §21), or of the staff request of a test; nil when
	// tracing was off. Read by PrepareWebhookAttempt only.
	Traceparent *string `db:"traceparent" json:"-"`
}

// WebhookAttempt is one try of a delivery.
type WebhookAttempt struct {
	DeliveryID int64     `db:"delivery_id" json:"-"`
	At         time.Time `db:"at" json:"at"`
	DurationMs int64     `db:"duration_ms" json:"durationMs"`
	HTTPStatus *int      `db:"http_status" json:"httpStatus,omitempty"`
	Error      *string   `db:"error" json:"error,omitempty"`
}

// Body is the request body of the delivery (SPEC §15): the event as
// {"id","type","createdAt","data"}.
func (d *WebhookDelivery) Body() ([]byte, error) {
	b, err := json.Marshal(struct {
		ID        int64           `json:"id"`
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	}{d.EventID, d.EventType, d.EventAt.UTC(), json.RawMessage(d.EventData)})
	if err != nil {
		return nil, fmt.Errorf("encode delivery %d: %w", d.ID, err)
	}
	return b, nil
}

// MessageID is the delivery's webhook-id: the same on every attempt.
func (d *WebhookDelivery) MessageID() string { return strconv.FormatInt(d.ID, 10) }

const deliveryCols = `id, webhook_id, event_id, event_type, event_data, event_at, status, generation, next_attempt_at, response_snippet, created_at`

// DeliveryFilter selects an endpoint's deliveries, newest first.
type DeliveryFilter struct {
	WebhookID int64
	Status    string // "" for any
	Page      Page
}

// FindWebhookDeliveries lists an endpoint's deliveries newest first, with
// their attempts. Errors: not_found (no such endpoint), validation_failed
// (an unknown status).
func (s *Store) FindWebhookDeliveries(ctx context.Context, f DeliveryFilter) ([]*WebhookDelivery, bool, error) {
	if f.Status != "" && !slices.Contains(DeliveryStatuses, f.Status) {
		return nil, false, Invalid("status", "must be one of pending, succeeded, failed")
	}
	if _, err := s.FindWebhookByID(ctx, f.WebhookID); err != nil {
		return nil, false, err
	}
	var w where
	w.add("webhook_id = " + w.arg(f.WebhookID))
	if f.Status != "" {
		w.add("status = " + w.arg(f.Status))
	}
	tail := f.Page.newestFirst(&w, "id")
	ds, more, err := selectPageWith[*WebhookDelivery](ctx, s.stmts.SelectOnce, "deliveries", f.Page,
		`SELECT `+deliveryCols+` FROM webhook_deliveries`+w.String()+tail, w.args...)
	if err != nil {
		return nil, false, err
	}
	return ds, more, s.fillAttempts(ctx, ds...)
}

// FindWebhookDelivery returns one delivery of an endpoint with its
// attempts. Errors: not_found.
func (s *Store) FindWebhookDelivery(ctx context.Context, webhookID, id int64) (*WebhookDelivery, error) {
	d, err := findOne[WebhookDelivery](ctx, s.get, "delivery", notFound("Delivery", id),
		`SELECT `+deliveryCols+` FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2`, id, webhookID)
	if err != nil {
		return nil, err
	}
	return d, s.fillAttempts(ctx, d)
}

// fillAttempts sets Attempts on ds, oldest first.
func (s *Store) fillAttempts(ctx context.Context, ds ...*WebhookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	var w where
	ids := make([]int64, len(ds))
	byID := map[int64]*WebhookDelivery{}
	for i, d := range ds {
		ids[i] = d.ID
		d.Attempts = []WebhookAttempt{}
		byID[d.ID] = d
	}
	w.add("delivery_id IN " + in(&w, ids))
	var as []WebhookAttempt
	err := s.stmts.SelectOnce(ctx, &as, `SELECT delivery_id, at, duration_ms, http_status, error FROM webhook_attempts`+w.String()+` ORDER BY id`, w.args...)
	if err != nil {
		return fmt.Errorf("find attempts: %w", err)
	}
	for _, a := range as {
		d := byID[a.DeliveryID]
		d.Attempts = append(d.Attempts, a)
	}
	return nil
}

// DeliveryJob names the job of an attempt of a delivery: the delivery and
// its generation (each retry staff ask for makes a new one, and a job of
// an older generation does nothing).
type DeliveryJob struct {
	DeliveryID int64
	Generation int64
}

// EnqueueDeliveries inserts the jobs of deliveries in tx, the transaction
// that made them pending (web/webhooks: River's InsertManyTx).
type EnqueueDeliveries func(ctx context.Context, tx *sql.Tx, jobs []DeliveryJob) error

// CreateWebhookDeliveries makes the deliveries of the batch's events and
// returns their jobs, for the relay to queue in the batch's transaction:
// one delivery per event and enabled endpoint subscribed to its type (or
// to "*") that was made (or enabled again) before the event was committed.
func (b *RelayBatch) CreateWebhookDeliveries(ctx context.Context) ([]DeliveryJob, error) {
	var ids []int64
	err := b.tx.sel(ctx, &ids, `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, event_data, event_at, status, next_attempt_at, created_at, traceparent)
		SELECT w.id, e.id, e.type, e.data, e.created_at, $1, e.created_at, e.created_at, e.traceparent
		FROM events e JOIN webhooks w ON w.enabled AND e.id > w.after_event_id
		WHERE e.id > $2 AND e.id <= $3
			AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.webhook_id = w.id AND s.event_type IN (e.type, $4))
		ORDER BY e.id, w.id
		RETURNING id`, DeliveryPending, b.From, b.To, WebhookAnyEvent)
	if err != nil {
		return nil, fmt.Errorf("create deliveries: %w", err)
	}
	jobs := make([]DeliveryJob, len(ids))
	for i, id := range ids {
		jobs[i] = DeliveryJob{DeliveryID: id}
	}
	return jobs, nil
}

// QueueWebhookTest queues a webhook.test event to one endpoint and returns
// its delivery; enqueue inserts its job in the same transaction. Errors:
// not_found, webhook_disabled.
func (s *Store) QueueWebhookTest(ctx context.Context, webhookID int64, enqueue EnqueueDeliveries) (*WebhookDelivery, error) {
	var d *WebhookDelivery
	err := s.onEnabledWebhook(ctx, webhookID, func(tx *Tx) error {
		next := tx.now
		d = &WebhookDelivery{WebhookID: webhookID, EventType: EventWebhookTest, EventData: fmt.Sprintf(`{"webhookId":%d}`, webhookID),
			EventAt: tx.now, Status: DeliveryPending, NextAttemptAt: &next, CreatedAt: tx.now, Attempts: []WebhookAttempt{}}
		err := tx.get(ctx, &d.ID, `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, event_data, event_at, status, next_attempt_at, created_at, traceparent)
			VALUES ($1, 0, $2, $3, $4, $5, $4, $4, $6) RETURNING id`, webhookID, d.EventType, d.EventData, tx.now, d.Status, Traceparent(ctx))
		if err != nil {
			return fmt.Errorf("queue test: %w", err)
		}
		if err := enqueue(ctx, tx.Tx.Tx, []DeliveryJob{{DeliveryID: d.ID}}); err != nil {
			return fmt.Errorf("queue test: %w", err)
		}
		// The change is a new delivery: its id, from none.
		return tx.audit(AuditWebhookTest, TargetID(auditTargetWebhook, webhookID), Changes{"delivery": {nil, d.ID}})
	})
	return d, err
}

// RetryWebhookDelivery queues one more attempt of a delivery now, whatever
// its state, and returns it pending. A new generation gets a new job
// (enqueue, in the same transaction); a job of the older one does nothing.
// Errors: not_found, webhook_disabled.
func (s *Store) RetryWebhookDelivery(ctx context.Context, webhookID, id int64, enqueue EnqueueDeliveries) (*WebhookDelivery, error) {
	err := s.onEnabledWebhook(ctx, webhookID, func(tx *Tx) error {
		var before string
		err := tx.get(ctx, &before, `SELECT status FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2`, id, webhookID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("Delivery", id)
		}
		if err != nil {
			return fmt.Errorf("find delivery: %w", err)
		}
		var generation int64
		err = tx.get(ctx, &generation, `UPDATE webhook_deliveries SET generation = generation + 1, status = $1, next_attempt_at = $2
			WHERE id = $3 AND webhook_id = $4 RETURNING generation`, DeliveryPending, tx.now, id, webhookID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("Delivery", id)
		}
		if err != nil {
			return fmt.Errorf("retry delivery: %w", err)
		}
		if err := enqueue(ctx, tx.Tx.Tx, []DeliveryJob{{DeliveryID: id, Generation: generation}}); err != nil {
			return fmt.Errorf("retry delivery: %w", err)
		}
		ch := Changes{}
		ch.Set("status", before, DeliveryPending)
		return tx.audit(AuditWebhookRetry, TargetID(auditTargetDelivery, id), ch)
	})
	if err != nil {
		return nil, err
	}
	return s.FindWebhookDelivery(ctx, webhookID, id)
}

// onEnabledWebhook runs fn in a transaction once it found the endpoint
// enabled. Errors: not_found, webhook_disabled, and fn's.
func (s *Store) onEnabledWebhook(ctx context.Context, webhookID int64, fn func(tx *Tx) error) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		var enabled bool
		err := tx.get(ctx, &enabled, `SELECT enabled FROM webhooks WHERE id = $1`, webhookID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return notFound("Webhook", webhookID)
		case err != nil:
			return fmt.Errorf("find webhook: %w", err)
		case !enabled:
			return Errorf(EWebhookDisabled, "Webhook %d is disabled: enable it first.", webhookID)
		}
		if err := fn(tx); err != nil {
			return err
		}
		return nil
	})
}

// PurgeWebhookDeliveries deletes deliveries (with their attempts) older
// than WebhookDeliveryRetention.
func (s *Store) PurgeWebhookDeliveries(ctx context.Context) (int64, error) {
	return s.purge(ctx, "webhook_deliveries", "created_at < $1", s.Now().UTC().Add(-WebhookDeliveryRetention))
}

// CountPendingWebhookDeliveries is how many deliveries wait for an
// attempt (the metrics' gauge).
func (s *Store) CountPendingWebhookDeliveries(ctx context.Context) (int64, error) {
	var n int64
	if err := s.get(ctx, &n, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`); err != nil {
		return 0, fmt.Errorf("count pending deliveries: %w", err)
	}
	return n, nil
}
