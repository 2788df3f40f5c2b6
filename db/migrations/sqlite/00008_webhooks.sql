-- +goose Up
-- Webhooks (SPEC §15); see the PostgreSQL migration of the same number for
-- the why of each table. Deliveries and their River jobs are made by the
-- triggers below in the SAME transaction as the event they carry.
CREATE TABLE webhooks (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    url              TEXT      NOT NULL,
    description      TEXT      NOT NULL DEFAULT '',
    enabled          BOOLEAN   NOT NULL DEFAULT TRUE,
    secret           TEXT      NOT NULL,
    old_secret       TEXT,
    old_secret_until TIMESTAMP,
    disabled_reason  TEXT,
    failing_since    TIMESTAMP,
    created_at       TIMESTAMP NOT NULL
);

CREATE TABLE webhook_subscriptions (
    webhook_id INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type TEXT    NOT NULL,
    PRIMARY KEY (webhook_id, event_type)
);

CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id       INTEGER   NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id         INTEGER   NOT NULL,
    event_type       TEXT      NOT NULL,
    event_data       TEXT      NOT NULL,
    event_at         TIMESTAMP NOT NULL,
    status           TEXT      NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    generation       INTEGER   NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMP,
    response_snippet TEXT,
    created_at       TIMESTAMP NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_webhook_status ON webhook_deliveries (webhook_id, status, id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER   NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    at          TIMESTAMP NOT NULL,
    duration_ms INTEGER   NOT NULL,
    http_status INTEGER,
    error       TEXT
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- +goose StatementBegin
CREATE TRIGGER events_webhook_deliveries AFTER INSERT ON events
WHEN EXISTS (SELECT 1 FROM webhooks WHERE enabled)
BEGIN
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, event_data, event_at, status, next_attempt_at, created_at)
    SELECT w.id, new.id, new.type, new.data, new.created_at, 'pending', new.created_at, new.created_at
    FROM webhooks w
    WHERE w.enabled AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.webhook_id = w.id AND s.event_type IN (new.type, '*'))
    ORDER BY w.id;
END;
-- +goose StatementEnd

-- The River job of each delivery, and of each retry asked for; the columns
-- are those of River's river_job (v0.51, SQLite driver), its times in the
-- format that driver compares as text. River's SQLite migrations that
-- rebuild river_job rename it, and SQLite renames it in these triggers
-- too: db.Migrate runs River's migrations before these, and a River upgrade
-- that rebuilds river_job needs these triggers made again after it.
-- +goose StatementBegin
CREATE TRIGGER webhook_deliveries_job AFTER INSERT ON webhook_deliveries
BEGIN
    INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, created_at)
    VALUES (jsonb_object('deliveryId', new.id, 'generation', new.generation), 'webhook_delivery', 25, 'webhooks',
        'available', datetime('now', 'subsec'), datetime('now', 'subsec'));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER webhook_deliveries_retry_job AFTER UPDATE OF generation ON webhook_deliveries
WHEN new.generation <> old.generation
BEGIN
    INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, created_at)
    VALUES (jsonb_object('deliveryId', new.id, 'generation', new.generation), 'webhook_delivery', 25, 'webhooks',
        'available', datetime('now', 'subsec'), datetime('now', 'subsec'));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER webhook_deliveries_retry_job;
DROP TRIGGER webhook_deliveries_job;
DROP TRIGGER events_webhook_deliveries;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_subscriptions;
DROP TABLE webhooks;
