-- +goose Up
-- Issue 45: jobs enter the queue through one door, River's client (web/queue).
-- The triggers of 00008, which made each event's webhook deliveries and
-- wrote their River jobs into river_job's columns by hand in the event's
-- own transaction, go: the relay (db/event_relay.go, run by web/queue)
-- turns committed events into deliveries and their jobs after the commit,
-- in batches, and moves its position past them in the same transaction.
-- SQLite has one writer: the relay's starting point below is exact.
DROP TRIGGER events_webhook_deliveries;
DROP TRIGGER webhook_deliveries_job;
DROP TRIGGER webhook_deliveries_retry_job;

-- The relay's position: every event up to after_event_id has been turned
-- into its jobs. One row.
CREATE TABLE event_relay (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    after_event_id INTEGER NOT NULL
);
INSERT INTO event_relay (id, after_event_id) SELECT 1, COALESCE(MAX(id), 0) FROM events;

-- An endpoint gets the events after the newest committed when it was made
-- or enabled again, as it did when the trigger matched endpoints in the
-- event's transaction: the relay may come to an older event later.
ALTER TABLE webhooks ADD COLUMN after_event_id INTEGER NOT NULL DEFAULT 0;

-- +goose Down
-- The triggers are not made again: they wrote River's columns by hand.
-- Going back before this migration takes 00008's Down and Up.
ALTER TABLE webhooks DROP COLUMN after_event_id;
DROP TABLE event_relay;
