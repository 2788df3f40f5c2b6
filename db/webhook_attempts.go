package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// WebhookSend is what one attempt of a delivery needs: the delivery, where
// it goes and the secrets that sign it.
type WebhookSend struct {
	Delivery WebhookDelivery
	URL      string
	// Secrets sign the attempt: the current one first, then the one
	// rotated out while it still signs.
	Secrets []string
	// Attempts is how many attempts were made before this one.
	Attempts int
}

// PrepareWebhookAttempt reads what an attempt of generation of delivery id
// needs. It returns nil when there is nothing to send: the delivery (or
// its endpoint) is gone, a retry made a newer generation, or it is no
// longer pending. A delivery to an endpoint disabled meanwhile fails here,
// without an attempt.
func (s *Store) PrepareWebhookAttempt(ctx context.Context, id, generation int64) (*WebhookSend, error) {
	var r struct {
		WebhookDelivery
		URL            string     `db:"url"`
		Enabled        bool       `db:"enabled"`
		Secret         string     `db:"secret"`
		OldSecret      *string    `db:"old_secret"`
		OldSecretUntil *time.Time `db:"old_secret_until"`
		Attempts       int        `db:"attempts"`
	}
	err := s.get(ctx, &r, `SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.event_data, d.event_at, d.status, d.generation,
			d.next_attempt_at, d.response_snippet, d.created_at, d.traceparent, w.url, w.enabled, w.secret, w.old_secret, w.old_secret_until,
			(SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts
		FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("prepare attempt: %w", err)
	}
	if r.Status != DeliveryPending || r.Generation != generation {
		return nil, nil
	}
	if !r.Enabled {
		_, err := s.exec(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = NULL
			WHERE id = $2 AND generation = $3 AND status = $4`, DeliveryFailed, id, generation, DeliveryPending)
		if err != nil {
			return nil, fmt.Errorf("fail delivery of a disabled webhook: %w", err)
		}
		return nil, nil
	}
	w := Webhook{ID: r.WebhookID, Secret: r.Secret, OldSecret: r.OldSecret, OldSecretUntil: r.OldSecretUntil}
	if err := s.openWebhook(&w); err != nil {
		return nil, fmt.Errorf("prepare attempt: %w", err)
	}
	return &WebhookSend{Delivery: r.WebhookDelivery, URL: r.URL, Secrets: w.Secrets(s.Now().UTC()), Attempts: r.Attempts}, nil
}

// WebhookAttemptResult is an attempt made and what it decided.
type WebhookAttemptResult struct {
	DeliveryID, WebhookID, Generation int64
	Attempt                           WebhookAttempt
	// Snippet is the first KiB of the answer, nil when there was none.
	Snippet *string
	// Status is the delivery's state after the attempt; NextAttemptAt is
	// when the next attempt is due, while pending.
	Status        string
	NextAttemptAt *time.Time
	// Gone: the endpoint answered 410 and is disabled at once.
	Gone bool
}

// RecordWebhookAttempt writes an attempt and its outcome in one
// transaction: the attempt always; the delivery's state only while no
// retry made a newer generation; the endpoint's failing streak, which
// disables it on a 410 or after WebhookFailingLimit of failures. It
// returns the reason when this attempt disabled the endpoint, else "".
func (s *Store) RecordWebhookAttempt(ctx context.Context, r WebhookAttemptResult) (string, error) {
	return inTx(ctx, s, func(tx *Tx) (string, error) {
		a := r.Attempt
		_, err := tx.exec(ctx, `INSERT INTO webhook_attempts (delivery_id, at, duration_ms, http_status, error) VALUES ($1, $2, $3, $4, $5)`,
			r.DeliveryID, a.At, a.DurationMs, a.HTTPStatus, a.Error)
		if err != nil {
			return "", fmt.Errorf("record attempt: %w", err)
		}
		_, err = tx.exec(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, response_snippet = COALESCE($3, response_snippet)
		WHERE id = $4 AND generation = $5`, r.Status, r.NextAttemptAt, r.Snippet, r.DeliveryID, r.Generation)
		if err != nil {
			return "", fmt.Errorf("record delivery: %w", err)
		}
		reason, err := tx.recordStreak(ctx, r)
		if err != nil {
			return "", err
		}
		return reason, nil
	})
}

// recordStreak keeps an endpoint's failing streak: a success ends it, a
// failure starts it when none runs, and a 410 or a streak of
// WebhookFailingLimit disables the endpoint. Each statement matches the
// row only when it changes something, so attempts that change nothing
// (the usual case) take no lock on the endpoint's row.
func (tx *Tx) recordStreak(ctx context.Context, r WebhookAttemptResult) (string, error) {
	at := r.Attempt.At
	if r.Status == DeliverySucceeded {
		_, err := tx.exec(ctx, `UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, r.WebhookID)
		if err != nil {
			return "", fmt.Errorf("record streak: %w", err)
		}
		return "", nil
	}
	if _, err := tx.exec(ctx, `UPDATE webhooks SET failing_since = $1 WHERE id = $2 AND failing_since IS NULL`, at, r.WebhookID); err != nil {
		return "", fmt.Errorf("record streak: %w", err)
	}
	q, args := `UPDATE webhooks SET enabled = $1, disabled_reason = $2 WHERE id = $3 AND enabled AND failing_since <= $4`,
		[]any{false, ReasonFailing, r.WebhookID, at.Add(-WebhookFailingLimit)}
	if r.Gone {
		q, args = `UPDATE webhooks SET enabled = $1, disabled_reason = $2 WHERE id = $3 AND enabled`, args[:3]
		args[1] = ReasonGone
	}
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return "", fmt.Errorf("disable webhook: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", nil
	}
	return args[1].(string), nil
}
