-- +goose Up
-- The whole schema of SPEC 1.0.0. Timestamps are UTC; names keep a lower-cased
-- copy (name_key, folded in Go) so case-insensitive search and uniqueness
-- behave the same on SQLite and PostgreSQL.
CREATE TABLE categories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT      NOT NULL,
    name_key    TEXT      NOT NULL,
    description TEXT,
    created_at  TIMESTAMP NOT NULL,
    deleted_at  TIMESTAMP
);
CREATE UNIQUE INDEX categories_name_key ON categories (name_key) WHERE deleted_at IS NULL;

CREATE TABLE pets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT      NOT NULL,
    name_key    TEXT      NOT NULL,
    category_id INTEGER   NOT NULL REFERENCES categories (id),
    status      TEXT      NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    deleted_at  TIMESTAMP
);
CREATE INDEX pets_category ON pets (category_id);

CREATE TABLE inventory (
    pet_id     INTEGER PRIMARY KEY REFERENCES pets (id),
    quantity   INTEGER   NOT NULL CHECK (quantity >= 0),
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT      NOT NULL,
    prefix     TEXT      NOT NULL,
    hash       TEXT      NOT NULL UNIQUE,
    role       TEXT      NOT NULL CHECK (role IN ('customer', 'staff')),
    plan       TEXT      NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
    per_minute INTEGER   NOT NULL CHECK (per_minute > 0),
    per_day    INTEGER   NOT NULL CHECK (per_day > 0),
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP
);

CREATE TABLE orders (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id       INTEGER   NOT NULL REFERENCES pets (id),
    quantity     INTEGER   NOT NULL CHECK (quantity > 0),
    ship_date    TIMESTAMP,
    state        TEXT      NOT NULL CHECK (state IN ('open', 'complete', 'cancelled')),
    api_key_id   INTEGER REFERENCES api_keys (id),
    shopper_id   TEXT,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
CREATE INDEX orders_pet_state ON orders (pet_id, state);
CREATE INDEX orders_api_key ON orders (api_key_id);
CREATE INDEX orders_shopper ON orders (shopper_id);

CREATE TABLE bans (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    subject    TEXT      NOT NULL,
    started_at TIMESTAMP NOT NULL,
    ends_at    TIMESTAMP NOT NULL,
    lifted_at  TIMESTAMP
);
CREATE INDEX bans_subject ON bans (subject, ends_at);

CREATE TABLE idempotency_keys (
    owner        TEXT      NOT NULL,
    key          TEXT      NOT NULL,
    request_hash TEXT      NOT NULL,
    status       INTEGER,
    content_type TEXT,
    location     TEXT,
    body         BLOB,
    created_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT      NOT NULL,
    data       TEXT      NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE staff_users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT      NOT NULL UNIQUE,
    password_hash TEXT      NOT NULL,
    created_at    TIMESTAMP NOT NULL
);

CREATE TABLE login_failures (
    username  TEXT      NOT NULL,
    client_ip TEXT      NOT NULL,
    at        TIMESTAMP NOT NULL
);
CREATE INDEX login_failures_lookup ON login_failures (username, client_ip, at);

-- +goose Down
DROP TABLE login_failures;
DROP TABLE staff_users;
DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE bans;
DROP TABLE orders;
DROP TABLE api_keys;
DROP TABLE inventory;
DROP TABLE pets;
DROP TABLE categories;
