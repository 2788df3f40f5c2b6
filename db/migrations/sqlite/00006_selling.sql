-- +goose Up
-- Selling (SPEC §14): prices in minor units, pet profiles, photos, the
-- price snapshot of every order, and the storefront's checkouts with the
-- buyer's contact details. Existing pets cost 0.00 (no fee) and existing
-- orders record 0.00; their currency is filled in by the store at its
-- next start (Store.AdoptCurrency), as only it knows PETSTORE_CURRENCY.
ALTER TABLE pets ADD COLUMN price INTEGER NOT NULL DEFAULT 0 CHECK (price >= 0);
ALTER TABLE pets ADD COLUMN description TEXT;
ALTER TABLE pets ADD COLUMN breed TEXT;
ALTER TABLE pets ADD COLUMN birth_date TEXT;
-- photos is the pet's photos in display order, as JSON (db.Photos).
ALTER TABLE pets ADD COLUMN photos TEXT NOT NULL DEFAULT '[]';

CREATE TABLE checkouts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    shopper_id TEXT      NOT NULL,
    name       TEXT      NOT NULL,
    email      TEXT      NOT NULL,
    -- email_key is the address lower-cased, what a lookup compares.
    email_key  TEXT      NOT NULL,
    phone      TEXT,
    created_at TIMESTAMP NOT NULL
);

ALTER TABLE orders ADD COLUMN unit_price INTEGER NOT NULL DEFAULT 0 CHECK (unit_price >= 0);
ALTER TABLE orders ADD COLUMN currency TEXT;
ALTER TABLE orders ADD COLUMN checkout_id INTEGER REFERENCES checkouts (id);
CREATE INDEX orders_checkout ON orders (checkout_id);
-- The dashboard sums today's orders and the open ones.
CREATE INDEX orders_created ON orders (created_at);
CREATE INDEX orders_open ON orders (id) WHERE state = 'open';
-- Orders still without a currency, for Store.AdoptCurrency at each start.
CREATE INDEX orders_no_currency ON orders (id) WHERE currency IS NULL;

-- +goose Down
DROP INDEX orders_no_currency;
DROP INDEX orders_open;
DROP INDEX orders_created;
DROP INDEX orders_checkout;
ALTER TABLE orders DROP COLUMN checkout_id;
ALTER TABLE orders DROP COLUMN currency;
ALTER TABLE orders DROP COLUMN unit_price;
DROP TABLE checkouts;
ALTER TABLE pets DROP COLUMN photos;
ALTER TABLE pets DROP COLUMN birth_date;
ALTER TABLE pets DROP COLUMN breed;
ALTER TABLE pets DROP COLUMN description;
ALTER TABLE pets DROP COLUMN price;
