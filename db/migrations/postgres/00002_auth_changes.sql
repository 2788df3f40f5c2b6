-- +goose Up
-- auth_changes holds one counter, bumped in the same transaction as every
-- change that affects authentication or bans (keys created, changed or
-- revoked; bans started or lifted). Caches of keys and bans remember the
-- counter they were filled at and are used only while it is unchanged, so
-- a committed change applies to the very next request on every instance.
CREATE TABLE auth_changes (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT  NOT NULL
);
INSERT INTO auth_changes (id, version) VALUES (1, 0);

-- staff_sessions are the console's sign-ins: the cookie carries a random
-- id, the table its SHA-256, so signing out ends the sign-in everywhere.
CREATE TABLE staff_sessions (
    id            TEXT      PRIMARY KEY,
    staff_user_id BIGINT    NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX staff_sessions_expires ON staff_sessions (expires_at);

-- +goose Down
DROP TABLE staff_sessions;
DROP TABLE auth_changes;
