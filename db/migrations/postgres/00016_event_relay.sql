-- +goose Up
-- Issue 45: jobs enter the queue through one door, River's client (web/queue).
-- The triggers of 00008, which made each event's webhook deliveries and
-- wrote their River jobs into river_job's columns by hand in the event's
-- own transaction, go: the relay (db/event_relay.go, run by web/queue)
-- turns committed events into deliveries and their jobs after the commit,
-- in batches, and moves its position past them in the same transaction.
-- Dropping the events trigger first locks events until this migration
-- commits, so the relay's starting point is exact: every event up to it got
-- its deliveries from the trigger, every later one gets them from the relay.
DROP TRIGGER events_webhook_deliveries ON events;
DROP FUNCTION webhook_deliveries_for_events();
DROP TRIGGER webhook_deliveries_jobs ON webhook_deliveries;
DROP FUNCTION webhook_delivery_jobs();
DROP TRIGGER webhook_deliveries_retry_job ON webhook_deliveries;
DROP FUNCTION webhook_delivery_retry_job();

-- The relay's position: every event up to after_event_id has been turned
-- into its jobs. One row; its lock makes one relay at a time per store.
CREATE TABLE event_relay (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    after_event_id BIGINT NOT NULL
);
INSERT INTO event_relay (id, after_event_id) SELECT 1, COALESCE(MAX(id), 0) FROM events;

-- An endpoint gets the events after the newest committed when it was made
-- or enabled again, as it did when the trigger matched endpoints in the
-- event's transaction: the relay may come to an older event later.
ALTER TABLE webhooks ADD COLUMN after_event_id BIGINT NOT NULL DEFAULT 0;

-- +goose Down
-- The triggers are not made again: they wrote River's columns by hand.
-- Going back before this migration takes 00008's Down and Up.
ALTER TABLE webhooks DROP COLUMN after_event_id;
DROP TABLE event_relay;
