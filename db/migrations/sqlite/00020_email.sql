-- +goose Up
-- Email (SPEC §19); the PostgreSQL migration of the same number says why. The relay makes each email from committed order events
-- (db/email_relay.go) in its batch's transaction, with its River job; the
-- row keeps the rendered message, so the console shows what was sent.
CREATE TABLE shop_settings (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    name           TEXT NOT NULL DEFAULT 'Pet store',
    pickup_address TEXT NOT NULL DEFAULT '',
    reply_to       TEXT NOT NULL DEFAULT ''
);
INSERT INTO shop_settings (id) VALUES (1);

-- A staff user's own address and whether they want an email per new
-- storefront checkout (their Account page).
ALTER TABLE staff_users ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE staff_users ADD COLUMN notify_orders BOOLEAN NOT NULL DEFAULT FALSE;

-- One row per email. dedupe_key names what caused it (placed:<checkout>,
-- staff:<checkout>:<staff>, cancelled:<order>, ready:<order>): a checkout
-- whose events fall in two relay batches still makes one email.
-- generation counts resends: a job of an older one does nothing.
CREATE TABLE emails (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    kind            TEXT        NOT NULL,
    dedupe_key      TEXT        NOT NULL UNIQUE,
    from_name       TEXT        NOT NULL DEFAULT '',
    reply_to        TEXT        NOT NULL DEFAULT '',
    to_name         TEXT        NOT NULL DEFAULT '',
    to_addr         TEXT        NOT NULL,
    subject         TEXT        NOT NULL,
    text_body       TEXT        NOT NULL,
    html_body       TEXT        NOT NULL,
    message_id      TEXT        NOT NULL,
    status          TEXT        NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'kept')),
    generation      INTEGER     NOT NULL DEFAULT 0,
    tries           INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP  ,
    bodies_dropped  BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at      TIMESTAMP   NOT NULL,
    sent_at         TIMESTAMP  
);
CREATE INDEX emails_status ON emails (status, id);
CREATE INDEX emails_kind ON emails (kind, id);
CREATE INDEX emails_created ON emails (created_at);

-- Each try of an email: the SMTP answer (code and text) or the error.
CREATE TABLE email_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    email_id    INTEGER     NOT NULL REFERENCES emails (id) ON DELETE CASCADE,
    at          TIMESTAMP   NOT NULL,
    duration_ms INTEGER     NOT NULL,
    outcome     TEXT        NOT NULL CHECK (outcome IN ('sent', 'temporary', 'permanent', 'kept')),
    smtp_code   INTEGER,
    answer      TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX email_attempts_email ON email_attempts (email_id, id);

-- +goose Down
DROP TABLE email_attempts;
DROP TABLE emails;
ALTER TABLE staff_users DROP COLUMN notify_orders;
ALTER TABLE staff_users DROP COLUMN email;
DROP TABLE shop_settings;
