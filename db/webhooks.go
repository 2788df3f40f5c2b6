package db

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of SPEC §15.
const (
	// MaxWebhooks is how many endpoints one store may have.
	MaxWebhooks = 20
	// MaxWebhookURLLen bounds an endpoint's URL.
	MaxWebhookURLLen = 2000
	// WebhookSecretPrefix starts every signing secret (Standard Webhooks).
	WebhookSecretPrefix = "whsec_"
	// WebhookOldSecretTTL is how long a rotated-out secret keeps signing
	// beside the new one.
	WebhookOldSecretTTL = 24 * time.Hour
	// WebhookAnyEvent subscribes an endpoint to every event type.
	WebhookAnyEvent = "*"
)

// Error codes of webhooks (SPEC §15), both 409.
const (
	// ETooManyWebhooks refuses a webhook past MaxWebhooks.
	ETooManyWebhooks = "too_many_webhooks"
	// EWebhookDisabled refuses a test or a retry to a disabled endpoint:
	// enable it first.
	EWebhookDisabled = "webhook_disabled"
)

// EventTypes are the event types of SPEC §8 an endpoint may subscribe to.
var EventTypes = []string{
	EventPetCreated, EventPetUpdated, EventPetDeleted, EventInventoryUpdated,
	EventOrderCreated, EventOrderUpdated, EventOrderCompleted, EventOrderCancelled,
	EventCatalogImported,
}

// Webhook is an endpoint the store pushes events to. Its secret is never
// shown but when made (create, rotate).
type Webhook struct {
	ID          int64    `db:"id" json:"id"`
	URL         string   `db:"url" json:"url"`
	Events      []string `db:"-" json:"events"`
	Description string   `db:"description" json:"description,omitempty"`
	Enabled     bool     `db:"enabled" json:"enabled"`
	// DisabledReason says why the store disabled the endpoint (a 410, three
	// days of failures); nil when enabled or disabled by staff.
	DisabledReason *string   `db:"disabled_reason" json:"disabledReason,omitempty"`
	CreatedAt      time.Time `db:"created_at" json:"createdAt"`

	Secret         string     `db:"secret" json:"-"`
	OldSecret      *string    `db:"old_secret" json:"-"`
	OldSecretUntil *time.Time `db:"old_secret_until" json:"-"`
	FailingSince   *time.Time `db:"failing_since" json:"-"`
}

// Secrets are the secrets that sign at now: the current one, then the one
// rotated out while it still signs.
func (w *Webhook) Secrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.OldSecret != nil && w.OldSecretUntil != nil && now.Before(*w.OldSecretUntil) {
		out = append(out, *w.OldSecret)
	}
	return out
}

// NewWebhook is the body of POST /webhooks.
type NewWebhook struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Description *string   `json:"description"`
}

// WebhookUpdate is the body of PATCH /webhooks/{id}: fields left out keep
// their value.
type WebhookUpdate struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Description *string   `json:"description"`
	Enabled     *bool     `json:"enabled"`
}

// CheckWebhook says why a webhook (create: a new one) or a change to one
// would be refused, as CreateWebhook and UpdateWebhook would, without
// writing anything: a form that finds problems of its own shows the
// store's beside them (EValidationFailed, with details).
func CheckWebhook(u WebhookUpdate, create bool) error {
	if u.Events != nil {
		events := slices.Clone(*u.Events)
		u.Events = &events
	}
	return u.validate(create)
}

// validate checks the fields present (all of a new webhook's are required
// but the description) and normalises the event list.
func (u *WebhookUpdate) validate(create bool) error {
	var p Problems
	switch {
	case u.URL != nil:
		checkWebhookURL(&p, *u.URL)
	case create:
		p.Add("url", "is required")
	}
	switch {
	case u.Events != nil:
		*u.Events = checkWebhookEvents(&p, *u.Events)
	case create:
		p.Add("events", "is required")
	}
	if u.Description != nil {
		trimDescription(&p, "description", u.Description, MaxDescriptionLen)
	}
	return p.Err()
}

// checkWebhookURL records why raw cannot be an endpoint: an absolute http
// or https URL with a host, no user info, at most MaxWebhookURLLen.
func checkWebhookURL(p *Problems, raw string) {
	if utf8.RuneCountInString(raw) > MaxWebhookURLLen {
		p.Add("url", "must be at most %d characters", MaxWebhookURLLen)
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || hasControl(raw) || strings.ContainsAny(raw, " \t"):
		p.Add("url", "must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		p.Add("url", "must be an absolute http or https URL")
	case u.Host == "" || u.Hostname() == "":
		p.Add("url", "must name a host")
	case u.User != nil:
		p.Add("url", "must not hold user info (a name or password before @)")
	}
}

// checkWebhookEvents records why events cannot be a subscription and
// returns them sorted without repeats: a non-empty list of SPEC §8's
// types, or ["*"] alone.
func checkWebhookEvents(p *Problems, events []string) []string {
	out := slices.Compact(slices.Sorted(slices.Values(events)))
	switch {
	case len(out) == 0:
		p.Add("events", "must name at least one event type, or \"*\"")
	case slices.Contains(out, WebhookAnyEvent) && len(out) > 1:
		p.Add("events", "\"*\" already means every event type: send it alone")
	}
	for _, e := range out {
		if e != WebhookAnyEvent && !slices.Contains(EventTypes, e) {
			p.Add("events", "%q is not an event type; use one of %s, or \"*\"", e, strings.Join(EventTypes, ", "))
			break
		}
	}
	return out
}

// newWebhookSecret makes a Standard Webhooks secret: whsec_ and the
// base64 of 32 random bytes, which are the HMAC key.
func newWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

const webhookCols = `id, url, description, enabled, disabled_reason, created_at, secret, old_secret, old_secret_until, failing_since`

// webhookLockSpace ("WHKS") is the PostgreSQL advisory lock that
// serialises creating webhooks, so two at once cannot both pass the cap.
const webhookLockSpace = 0x57484b53

// CreateWebhook adds an endpoint, enabled, and returns it with its secret
// (Webhook.Secret), shown this once. Errors: validation_failed,
// too_many_webhooks.
func (s *Store) CreateWebhook(ctx context.Context, in NewWebhook) (*Webhook, error) {
	u := WebhookUpdate{URL: in.URL, Events: in.Events, Description: in.Description}
	if err := u.validate(true); err != nil {
		return nil, err
	}
	secret, err := newWebhookSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.seal(purposeWebhookSecret, secret)
	if err != nil {
		return nil, fmt.Errorf("create webhook: %w", err)
	}
	return inTx(ctx, s, func(tx *Tx) (*Webhook, error) {
		if tx.dialect() == DialectPostgres {
			if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock($1)`, webhookLockSpace); err != nil {
				return nil, fmt.Errorf("lock webhooks: %w", err)
			}
		}
		var n int
		if err := tx.get(ctx, &n, `SELECT count(*) FROM webhooks`); err != nil {
			return nil, fmt.Errorf("count webhooks: %w", err)
		}
		if n >= MaxWebhooks {
			return nil, Errorf(ETooManyWebhooks, "A store has at most %d webhooks: delete one first.", MaxWebhooks)
		}
		w := &Webhook{URL: *u.URL, Events: *u.Events, Enabled: true, CreatedAt: tx.now, Secret: secret}
		if u.Description != nil {
			w.Description = *u.Description
		}
		// It gets the events committed from now on (RelayBatch.CreateWebhookDeliveries).
		err := tx.get(ctx, &w.ID, `INSERT INTO webhooks (url, description, enabled, secret, created_at, after_event_id)
			VALUES ($1, $2, $3, $4, $5, (SELECT COALESCE(MAX(id), 0) FROM events)) RETURNING id`,
			w.URL, w.Description, true, sealed, w.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("create webhook: %w", err)
		}
		if err := tx.subscribe(ctx, w.ID, w.Events); err != nil {
			return nil, err
		}
		if err := tx.audit(AuditWebhookCreate, TargetID(auditTargetWebhook, w.ID), diff(nil, w.auditFields())); err != nil {
			return nil, err
		}
		return w, nil
	})
}

// subscribe makes events the endpoint's subscription.
func (tx *Tx) subscribe(ctx context.Context, id int64, events []string) error {
	if _, err := tx.exec(ctx, `DELETE FROM webhook_subscriptions WHERE webhook_id = $1`, id); err != nil {
		return fmt.Errorf("subscribe webhook: %w", err)
	}
	for _, e := range events {
		if _, err := tx.exec(ctx, `INSERT INTO webhook_subscriptions (webhook_id, event_type) VALUES ($1, $2)`, id, e); err != nil {
			return fmt.Errorf("subscribe webhook: %w", err)
		}
	}
	return nil
}

// FindWebhooks lists every endpoint by id (there are at most MaxWebhooks).
func (s *Store) FindWebhooks(ctx context.Context) ([]*Webhook, error) {
	var ws []*Webhook
	if err := s.stmts.SelectOnce(ctx, &ws, `SELECT `+webhookCols+` FROM webhooks ORDER BY id`); err != nil {
		return nil, fmt.Errorf("find webhooks: %w", err)
	}
	for _, w := range ws {
		if err := s.openWebhook(w); err != nil {
			return nil, fmt.Errorf("find webhooks: %w", err)
		}
	}
	return ws, s.fillSubscriptions(ctx, ws...)
}

// FindWebhookByID returns one endpoint. Errors: not_found.
func (s *Store) FindWebhookByID(ctx context.Context, id int64) (*Webhook, error) {
	w, err := findOne[Webhook](ctx, s.get, "webhook", notFound("Webhook", id), `SELECT `+webhookCols+` FROM webhooks WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if err := s.openWebhook(w); err != nil {
		return nil, fmt.Errorf("find webhook: %w", err)
	}
	return w, s.fillSubscriptions(ctx, w)
}

// fillSubscriptions sets Events on ws.
func (s *Store) fillSubscriptions(ctx context.Context, ws ...*Webhook) error {
	if len(ws) == 0 {
		return nil
	}
	var rows []struct {
		WebhookID int64  `db:"webhook_id"`
		EventType string `db:"event_type"`
	}
	if err := s.stmts.SelectOnce(ctx, &rows, `SELECT webhook_id, event_type FROM webhook_subscriptions ORDER BY webhook_id, event_type`); err != nil {
		return fmt.Errorf("find subscriptions: %w", err)
	}
	byID := map[int64]*Webhook{}
	for _, w := range ws {
		w.Events = []string{}
		byID[w.ID] = w
	}
	for _, r := range rows {
		if w := byID[r.WebhookID]; w != nil {
			w.Events = append(w.Events, r.EventType)
		}
	}
	return nil
}

// UpdateWebhook changes an endpoint. Enabling it clears why the store
// disabled it and its failing streak. Errors: validation_failed, not_found.
func (s *Store) UpdateWebhook(ctx context.Context, id int64, in WebhookUpdate) (*Webhook, error) {
	if err := in.validate(false); err != nil {
		return nil, err
	}
	return s.changeWebhook(ctx, id, AuditWebhookUpdate, func(tx *Tx, w *Webhook) error {
		if in.URL != nil {
			w.URL = *in.URL
		}
		if in.Description != nil {
			w.Description = *in.Description
		}
		enabling := in.Enabled != nil && *in.Enabled && !w.Enabled
		if in.Enabled != nil && *in.Enabled != w.Enabled {
			w.Enabled, w.DisabledReason, w.FailingSince = *in.Enabled, nil, nil
		}
		_, err := tx.exec(ctx, `UPDATE webhooks SET url = $1, description = $2, enabled = $3, disabled_reason = $4, failing_since = $5 WHERE id = $6`,
			w.URL, w.Description, w.Enabled, w.DisabledReason, w.FailingSince, id)
		if err != nil {
			return fmt.Errorf("update webhook: %w", err)
		}
		if enabling {
			// Enabled again, it gets the events committed from now on, not
			// those of while it was disabled that the relay has yet to reach.
			if _, err := tx.exec(ctx, `UPDATE webhooks SET after_event_id = (SELECT COALESCE(MAX(id), 0) FROM events) WHERE id = $1`, id); err != nil {
				return fmt.Errorf("update webhook: %w", err)
			}
		}
		if in.Events != nil {
			w.Events = *in.Events
			return tx.subscribe(ctx, id, *in.Events)
		}
		return nil
	})
}

// RotateWebhookSecret gives an endpoint a new secret and returns the
// endpoint with it; the old one signs beside it for WebhookOldSecretTTL.
// Errors: not_found.
func (s *Store) RotateWebhookSecret(ctx context.Context, id int64) (*Webhook, error) {
	secret, err := newWebhookSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.seal(purposeWebhookSecret, secret)
	if err != nil {
		return nil, fmt.Errorf("rotate secret: %w", err)
	}
	return s.changeWebhook(ctx, id, AuditWebhookRotate, func(tx *Tx, w *Webhook) error {
		until := tx.now.Add(WebhookOldSecretTTL)
		old := w.Secret
		sealedOld, err := s.seal(purposeWebhookOldSecret, old)
		if err != nil {
			return fmt.Errorf("rotate secret: %w", err)
		}
		w.OldSecret, w.OldSecretUntil, w.Secret = &old, &until, secret
		_, err = tx.exec(ctx, `UPDATE webhooks SET old_secret = $1, old_secret_until = $2, secret = $3 WHERE id = $4`,
			sealedOld, w.OldSecretUntil, sealed, id)
		if err != nil {
			return fmt.Errorf("rotate secret: %w", err)
		}
		return nil
	})
}

// changeWebhook runs change on endpoint id, locked, in one transaction,
// audits it as action (the fields that changed; a secret never is one) and
// returns the endpoint as changed. Errors: not_found, and change's.
func (s *Store) changeWebhook(ctx context.Context, id int64, action string, change func(tx *Tx, w *Webhook) error) (*Webhook, error) {
	w, err := inTx(ctx, s, func(tx *Tx) (*Webhook, error) {
		q := `SELECT ` + webhookCols + ` FROM webhooks WHERE id = $1`
		if tx.dialect() == DialectPostgres {
			q += ` FOR UPDATE`
		}
		w, err := findOne[Webhook](ctx, tx.get, "webhook", notFound("Webhook", id), q, id)
		if err != nil {
			return nil, err
		}
		if err := s.openWebhook(w); err != nil {
			return nil, fmt.Errorf("change webhook: %w", err)
		}
		if err := tx.webhookEvents(ctx, w); err != nil {
			return nil, err
		}
		before := w.auditFields()
		if err := change(tx, w); err != nil {
			return nil, err
		}
		if err := tx.audit(action, TargetID(auditTargetWebhook, id), diff(before, w.auditFields())); err != nil {
			return nil, err
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return w, s.fillSubscriptions(ctx, w)
}

// DeleteWebhook removes an endpoint with its deliveries; their queued
// jobs find nothing to do. Errors: not_found.
func (s *Store) DeleteWebhook(ctx context.Context, id int64) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		var before fields
		if audited(ctx) {
			w, err := findOne[Webhook](ctx, tx.get, "webhook", notFound("Webhook", id), `SELECT `+webhookCols+` FROM webhooks WHERE id = $1`, id)
			if err != nil {
				return err
			}
			if err := tx.webhookEvents(ctx, w); err != nil {
				return err
			}
			before = w.auditFields()
		}
		res, err := tx.exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("delete webhook: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("Webhook", id)
		}
		if err := tx.audit(AuditWebhookDelete, TargetID(auditTargetWebhook, id), diff(before, nil)); err != nil {
			return err
		}
		return nil
	})
}

// webhookEvents sets w.Events from its subscriptions, read in the
// transaction (for the audit entry of a change).
func (tx *Tx) webhookEvents(ctx context.Context, w *Webhook) error {
	w.Events = []string{}
	if err := tx.SelectContext(ctx, &w.Events, `SELECT event_type FROM webhook_subscriptions WHERE webhook_id = $1 ORDER BY event_type`, w.ID); err != nil {
		return fmt.Errorf("find subscriptions: %w", err)
	}
	return nil
}
