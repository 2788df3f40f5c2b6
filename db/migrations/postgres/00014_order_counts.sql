-- +goose Up
-- order_counts holds the number and value (unit_price * quantity) of the
-- orders by state and currency ('' for none), so the console's dashboard
-- reads a few hundred rows at most instead of every order (issue 30: a sum
-- over orders is a full scan whatever the statistics). Triggers keep it
-- exact, in the same transaction as the orders, whatever statement wrote
-- them (the store's order paths, the single-statement order, a currency
-- adopted at start).
--
-- Like pet_counts (migrations 00005, 00013), it is split into 64 slots so
-- that concurrent orders do not queue on one row: a statement that moved
-- orders between (state, currency) takes a slot of order_count_slots once
-- per transaction, the first from pg_backend_pid() % 64 on that no other
-- transaction holds (FOR NO KEY UPDATE SKIP LOCKED), keeps it to the commit
-- (petstore.order_slot) and writes its moves to that slot's rows. Only the
-- slot's holder writes them, so nobody waits for a count row, and nobody
-- waits for a slot while fewer than 64 transactions hold one; the slot is
-- not catalog_changes' (00013): completing an order changes no stock, and
-- must not make the storefront render its pages anew. Readers sum the slots.
-- A slot is held by its row lock alone: taking it writes no new version of
-- the row, so the slots leave nothing behind for a vacuum.
CREATE TABLE order_count_slots (
    slot INTEGER PRIMARY KEY
);
INSERT INTO order_count_slots (slot) SELECT s FROM generate_series(0, 63) AS s;

CREATE TABLE order_counts (
    slot     INTEGER NOT NULL,
    state    TEXT    NOT NULL,
    currency TEXT    NOT NULL,
    n        BIGINT  NOT NULL,
    value    BIGINT  NOT NULL,
    PRIMARY KEY (slot, state, currency)
);

-- order_counts_slot takes the transaction's slot of order_count_slots,
-- once per transaction, and returns it.
-- +goose StatementBegin
CREATE FUNCTION order_counts_slot() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    s integer := NULLIF(current_setting('petstore.order_slot', true), '')::integer;
    home integer := pg_backend_pid() % 64;
BEGIN
    IF s IS NOT NULL THEN
        RETURN s;
    END IF;
    SELECT slot INTO s FROM order_count_slots
    ORDER BY (slot - home + 64) % 64
    LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED;
    IF s IS NULL THEN
        s := home;
        PERFORM 1 FROM order_count_slots WHERE slot = s FOR NO KEY UPDATE;
    END IF;
    PERFORM set_config('petstore.order_slot', s::text, true);
    RETURN s;
END
$$;
-- +goose StatementEnd

-- count_orders_statement adds a statement's net moves of orders to the
-- transaction's slot: -1 and the value for each old row, +1 and the value
-- for each new row, by (state, currency). A statement that moved none (a
-- ship date changed) takes no slot.
-- +goose StatementBegin
CREATE FUNCTION count_orders_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moves jsonb;
    s integer;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT jsonb_agg(m) INTO moves FROM (
            SELECT state, COALESCE(currency, '') AS currency, count(*) AS n, sum(unit_price * quantity) AS value
            FROM new_rows GROUP BY state, COALESCE(currency, '')) AS m;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT jsonb_agg(m) INTO moves FROM (
            SELECT state, COALESCE(currency, '') AS currency, -count(*) AS n, -sum(unit_price * quantity) AS value
            FROM old_rows GROUP BY state, COALESCE(currency, '')) AS m;
    ELSE
        SELECT jsonb_agg(m) INTO moves FROM (
            SELECT state, currency, sum(d) AS n, sum(d * v) AS value FROM (
                SELECT state, COALESCE(currency, '') AS currency, -1 AS d, unit_price * quantity AS v FROM old_rows
                UNION ALL
                SELECT state, COALESCE(currency, ''), 1, unit_price * quantity FROM new_rows
            ) AS d GROUP BY state, currency HAVING sum(d) <> 0 OR sum(d * v) <> 0) AS m;
    END IF;
    IF moves IS NULL THEN
        RETURN NULL;
    END IF;
    s := order_counts_slot();
    INSERT INTO order_counts AS c (slot, state, currency, n, value)
    SELECT s, m.state, m.currency, m.n, m.value
    FROM jsonb_to_recordset(moves) AS m(state text, currency text, n bigint, value bigint)
    ON CONFLICT (slot, state, currency) DO UPDATE SET n = c.n + EXCLUDED.n, value = c.value + EXCLUDED.value;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- PostgreSQL allows transition tables only on triggers of one event each.
CREATE TRIGGER orders_counts_insert AFTER INSERT ON orders
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_orders_statement();
CREATE TRIGGER orders_counts_update AFTER UPDATE ON orders
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_orders_statement();
CREATE TRIGGER orders_counts_delete AFTER DELETE ON orders
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_orders_statement();

-- The triggers exist before the count, and creating them locked out writes
-- to orders until this migration commits: no order is missed or counted
-- twice.
INSERT INTO order_counts (slot, state, currency, n, value)
SELECT 0, state, COALESCE(currency, ''), count(*), COALESCE(sum(unit_price * quantity), 0)
FROM orders GROUP BY state, COALESCE(currency, '');

-- +goose Down
DROP TRIGGER orders_counts_delete ON orders;
DROP TRIGGER orders_counts_update ON orders;
DROP TRIGGER orders_counts_insert ON orders;
DROP FUNCTION count_orders_statement();
DROP FUNCTION order_counts_slot();
DROP TABLE order_counts;
DROP TABLE order_count_slots;
