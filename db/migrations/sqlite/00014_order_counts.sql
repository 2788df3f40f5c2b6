-- +goose Up
-- order_counts holds the number and value (unit_price * quantity) of the
-- orders by state and currency ('' for none), so the console's dashboard
-- reads a few rows instead of every order (issue 30). Triggers keep it
-- exact, in the same transaction as the orders. SQLite has one writer at a
-- time: one row per state and currency (PostgreSQL's copy is split into
-- slots).
CREATE TABLE order_counts (
    state    TEXT    NOT NULL,
    currency TEXT    NOT NULL,
    n        INTEGER NOT NULL,
    value    INTEGER NOT NULL,
    PRIMARY KEY (state, currency)
);

-- +goose StatementBegin
CREATE TRIGGER orders_counts_insert AFTER INSERT ON orders BEGIN
    INSERT INTO order_counts (state, currency, n, value)
    VALUES (new.state, COALESCE(new.currency, ''), 1, new.unit_price * new.quantity)
    ON CONFLICT (state, currency) DO UPDATE SET n = n + 1, value = value + excluded.value;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER orders_counts_update AFTER UPDATE OF state, currency, unit_price, quantity ON orders
WHEN old.state <> new.state OR old.currency IS NOT new.currency
     OR old.unit_price <> new.unit_price OR old.quantity <> new.quantity
BEGIN
    UPDATE order_counts SET n = n - 1, value = value - old.unit_price * old.quantity
    WHERE state = old.state AND currency = COALESCE(old.currency, '');
    INSERT INTO order_counts (state, currency, n, value)
    VALUES (new.state, COALESCE(new.currency, ''), 1, new.unit_price * new.quantity)
    ON CONFLICT (state, currency) DO UPDATE SET n = n + 1, value = value + excluded.value;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER orders_counts_delete AFTER DELETE ON orders BEGIN
    UPDATE order_counts SET n = n - 1, value = value - old.unit_price * old.quantity
    WHERE state = old.state AND currency = COALESCE(old.currency, '');
END;
-- +goose StatementEnd

INSERT INTO order_counts (state, currency, n, value)
SELECT state, COALESCE(currency, ''), count(*), COALESCE(sum(unit_price * quantity), 0)
FROM orders WHERE true GROUP BY state, COALESCE(currency, '');

-- +goose Down
DROP TRIGGER orders_counts_delete;
DROP TRIGGER orders_counts_update;
DROP TRIGGER orders_counts_insert;
DROP TABLE order_counts;
