-- +goose Up
-- Tracing (issue 43, SPEC §21): the W3C traceparent of the change that
-- wrote an event, NULL when tracing is off or the change ran outside a
-- span. The relay copies it onto the work the event causes (a webhook
-- delivery, an email), whose attempt links to it and sends it on.
ALTER TABLE events ADD COLUMN traceparent TEXT NULL;
ALTER TABLE webhook_deliveries ADD COLUMN traceparent TEXT NULL;
ALTER TABLE emails ADD COLUMN traceparent TEXT NULL;

-- +goose Down
ALTER TABLE emails DROP COLUMN traceparent;
ALTER TABLE webhook_deliveries DROP COLUMN traceparent;
ALTER TABLE events DROP COLUMN traceparent;
