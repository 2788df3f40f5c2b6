-- +goose Up
-- The staff team and the audit log (SPEC §16). Every staff user there is
-- already is an admin: the first-start admin and anyone made at the command
-- line ran the shop alone until now.
ALTER TABLE staff_users ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'clerk'));

-- One row per change, written in the same transaction as the change. actor
-- is who made it (staff user, API key or the command line), target what it
-- changed, changes a JSON object of field -> [before, after]. Nothing but
-- housekeeping (after 400 days) updates or deletes a row.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TIMESTAMP   NOT NULL,
    actor_type  TEXT        NOT NULL CHECK (actor_type IN ('staff', 'key', 'cli')),
    actor_id    TEXT        NOT NULL DEFAULT '',
    actor_name  TEXT        NOT NULL DEFAULT '',
    action      TEXT        NOT NULL,
    target_type TEXT        NOT NULL DEFAULT '',
    target_id   TEXT        NOT NULL DEFAULT '',
    changes     TEXT        NOT NULL DEFAULT '{}',
    request_id  TEXT        NOT NULL DEFAULT '',
    ip          TEXT        NOT NULL DEFAULT ''
);
-- Newest first by id; the filters each have an index that keeps that order.
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_actor ON audit_log (actor_type, actor_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);

-- +goose Down
DROP TABLE audit_log;
ALTER TABLE staff_users DROP COLUMN role;
