-- +goose Up
-- A failed sign-in is made by someone not signed in: its actor is
-- anonymous (the username typed is the entry's data), never the staff user
-- whose name was typed. SQLite cannot change a CHECK constraint: the table
-- is copied into one with the new constraint, its AUTOINCREMENT counter
-- too (ids are never reused, even of entries housekeeping deleted).
CREATE TABLE audit_log_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TIMESTAMP   NOT NULL,
    actor_type  TEXT        NOT NULL CHECK (actor_type IN ('staff', 'key', 'cli', 'anonymous')),
    actor_id    TEXT        NOT NULL DEFAULT '',
    actor_name  TEXT        NOT NULL DEFAULT '',
    action      TEXT        NOT NULL,
    target_type TEXT        NOT NULL DEFAULT '',
    target_id   TEXT        NOT NULL DEFAULT '',
    changes     TEXT        NOT NULL DEFAULT '{}',
    request_id  TEXT        NOT NULL DEFAULT '',
    ip          TEXT        NOT NULL DEFAULT ''
);
INSERT INTO audit_log_new (id, at, actor_type, actor_id, actor_name, action, target_type, target_id, changes, request_id, ip)
    SELECT id, at, actor_type, actor_id, actor_name, action, target_type, target_id, changes, request_id, ip FROM audit_log;
DELETE FROM sqlite_sequence WHERE name = 'audit_log_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'audit_log_new', seq FROM sqlite_sequence WHERE name = 'audit_log';
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_actor ON audit_log (actor_type, actor_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);

-- +goose Down
CREATE TABLE audit_log_old (
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
INSERT INTO audit_log_old (id, at, actor_type, actor_id, actor_name, action, target_type, target_id, changes, request_id, ip)
    SELECT id, at, CASE actor_type WHEN 'anonymous' THEN 'staff' ELSE actor_type END, actor_id, actor_name, action, target_type, target_id, changes, request_id, ip FROM audit_log;
DELETE FROM sqlite_sequence WHERE name = 'audit_log_old';
INSERT INTO sqlite_sequence (name, seq) SELECT 'audit_log_old', seq FROM sqlite_sequence WHERE name = 'audit_log';
DROP TABLE audit_log;
ALTER TABLE audit_log_old RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_actor ON audit_log (actor_type, actor_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);
