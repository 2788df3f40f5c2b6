-- +goose Up
-- Issue 27, SPEC §18: the cost of a write grows linearly with its rows.
-- Migrations 00003 and 00005 kept catalog_changes and pet_counts with
-- DEFERRED per-row triggers: a transaction of N pets updated its one slot
-- row of catalog_changes N times and each of its pet_counts rows about as
-- often, and every update walked the growing chain of that row's versions
-- (N²: 200,000 pets in one INSERT … SELECT took over 7 minutes), and left
-- N dead versions that every counter read then scanned until a vacuum.
-- Here per-statement triggers with transition tables aggregate instead,
-- and a transaction writes each counter row once whatever its size:
--   - catalog_changes: the first statement of a transaction that changed
--     rows of pets, categories or inventory bumps the transaction's slot;
--     its later statements do not (readers only see commits, and one bump
--     per commit is enough for "same sum, same rows").
--   - pet_counts: each statement adds its net moves, summed by (category,
--     status) from its transition tables, to a transaction-local tally
--     (petstore.count_deltas), and one deferred trigger on the slot's
--     update applies the tally at commit, one upsert per (category,
--     status) it moved. A rolled-back transaction or savepoint drops its
--     tally with its writes (set_config(..., true) follows them).
-- So a transaction leaves one version of its slot and of each count row
-- it moved, and the counter read scans a bounded table between vacuums.
--
-- Lock order. The deferred triggers took the slot at commit, after every
-- pet row lock, so a slot holder never waited. Here the slot is taken at
-- the end of the transaction's first catalog statement and kept to the
-- commit, so a transaction that then locks pet or inventory rows (an order
-- of many lines, a bulk edit, a cancel) holds a slot while it may wait for
-- a row: with the slot fixed by pg_backend_pid() % 64, two connections of
-- the same slot could deadlock (A: slot S, waits for pet P; B: pet P,
-- waits for slot S). So the slot is no longer fixed: catalog_changed()
-- takes the first slot, from pg_backend_pid() % 64 on, that no other
-- transaction holds (FOR NO KEY UPDATE SKIP LOCKED), and the transaction
-- remembers it (petstore.catalog_slot) so its later statements take no
-- other. A writer thus never waits for a slot while fewer than 64
-- transactions hold one (each instance's pool is far smaller); pet_counts
-- rows of a slot are written only by the slot's holder, so nobody waits
-- for them either; the only waits left are the pet and inventory row locks
-- the store's flows took before, in the order they took them before. Only
-- if all 64 slots are held does a writer wait for its own (pg_backend_pid()
-- % 64); a deadlock is then possible and PostgreSQL reports it (40P01) to
-- one of the two, whose write fails whole.
-- Nothing may SET CONSTRAINTS ... IMMEDIATE: the tally must be applied at
-- the commit, after the transaction's last statement.

-- catalog_changed bumps the transaction's slot of catalog_changes, once
-- per transaction, and returns the slot.
-- +goose StatementBegin
CREATE FUNCTION catalog_changed() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    s integer := NULLIF(current_setting('petstore.catalog_slot', true), '')::integer;
    home integer := pg_backend_pid() % 64;
BEGIN
    IF s IS NOT NULL THEN
        RETURN s;
    END IF;
    SELECT slot INTO s FROM catalog_changes
    ORDER BY (slot - home + 64) % 64
    LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED;
    IF s IS NULL THEN
        s := home;
    END IF;
    UPDATE catalog_changes SET version = version + 1 WHERE slot = s;
    PERFORM set_config('petstore.catalog_slot', s::text, true);
    RETURN s;
END
$$;
-- +goose StatementEnd

-- bump_catalog_changes_statement marks the transaction changed for a
-- statement on pets, categories or inventory that changed rows (its
-- transition table is named changed_rows whatever the event).
-- +goose StatementBegin
CREATE FUNCTION bump_catalog_changes_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed_rows) THEN
        PERFORM catalog_changed();
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- tally_pet_counts adds a statement's net moves of live pets to the
-- transaction's tally: -1 for each old row that was live, +1 for each new
-- row that is live, summed by (category, status). An UPDATE that left a
-- pet's category, status and liveness as they were nets zero for it, which
-- is what the old trigger's WHEN meant; sums that net zero are dropped.
-- +goose StatementBegin
CREATE FUNCTION tally_pet_counts(moves jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('petstore.count_deltas', (
        SELECT COALESCE(jsonb_object_agg(k, n), '{}')::text FROM (
            SELECT k, sum(n) AS n FROM (
                SELECT key AS k, value::bigint AS n
                FROM jsonb_each_text(COALESCE(NULLIF(current_setting('petstore.count_deltas', true), ''), '{}')::jsonb)
                UNION ALL
                SELECT key, value::bigint FROM jsonb_each_text(moves)
            ) AS both_tallies GROUP BY k HAVING sum(n) <> 0
        ) AS merged), true);
END
$$;
-- +goose StatementEnd

-- count_pets_statement marks the transaction changed and tallies the
-- moves of a statement on pets that changed rows. Tally keys are
-- "category_id|status" (a status never holds "|").
-- +goose StatementBegin
CREATE FUNCTION count_pets_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moves jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
        SELECT jsonb_object_agg(category_id || '|' || status, n) INTO moves FROM (
            SELECT category_id, status, count(*) AS n FROM new_rows WHERE deleted_at IS NULL
            GROUP BY category_id, status) AS m;
    ELSIF TG_OP = 'DELETE' THEN
        IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
        SELECT jsonb_object_agg(category_id || '|' || status, n) INTO moves FROM (
            SELECT category_id, status, -count(*) AS n FROM old_rows WHERE deleted_at IS NULL
            GROUP BY category_id, status) AS m;
    ELSE
        IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
        SELECT jsonb_object_agg(category_id || '|' || status, n) INTO moves FROM (
            SELECT category_id, status, sum(d) AS n FROM (
                SELECT category_id, status, -1 AS d FROM old_rows WHERE deleted_at IS NULL
                UNION ALL
                SELECT category_id, status, 1 AS d FROM new_rows WHERE deleted_at IS NULL
            ) AS d GROUP BY category_id, status HAVING sum(d) <> 0) AS m;
    END IF;
    PERFORM catalog_changed();
    IF moves IS NOT NULL THEN
        PERFORM tally_pet_counts(moves);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- apply_pet_counts writes the transaction's tally to its slot's rows of
-- pet_counts at the commit: the deferred trigger on the slot's one bump.
-- +goose StatementBegin
CREATE FUNCTION apply_pet_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tally jsonb := NULLIF(current_setting('petstore.count_deltas', true), '')::jsonb;
BEGIN
    IF tally IS NULL OR tally = '{}' THEN
        RETURN NULL;
    END IF;
    INSERT INTO pet_counts AS c (category_id, status, slot, n)
    SELECT split_part(key, '|', 1)::bigint, split_part(key, '|', 2), NEW.slot, value::bigint
    FROM jsonb_each_text(tally)
    ON CONFLICT (category_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    PERFORM set_config('petstore.count_deltas', '', true);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER pets_counts_update ON pets;
DROP TRIGGER pets_counts_insert_delete ON pets;
DROP TRIGGER pets_catalog_changes ON pets;
DROP TRIGGER categories_catalog_changes ON categories;
DROP TRIGGER inventory_catalog_changes ON inventory;

CREATE CONSTRAINT TRIGGER catalog_changes_apply_pet_counts AFTER UPDATE ON catalog_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION apply_pet_counts();
-- PostgreSQL allows transition tables only on plain (not constraint)
-- triggers of one event each: three per table.
CREATE TRIGGER pets_changes_insert AFTER INSERT ON pets
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_pets_statement();
CREATE TRIGGER pets_changes_update AFTER UPDATE ON pets
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_pets_statement();
CREATE TRIGGER pets_changes_delete AFTER DELETE ON pets
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_pets_statement();
CREATE TRIGGER categories_changes_insert AFTER INSERT ON categories
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_changes_statement();
CREATE TRIGGER categories_changes_update AFTER UPDATE ON categories
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_changes_statement();
CREATE TRIGGER categories_changes_delete AFTER DELETE ON categories
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_changes_statement();
CREATE TRIGGER inventory_changes_insert AFTER INSERT ON inventory
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_changes_statement();
CREATE TRIGGER inventory_changes_update AFTER UPDATE ON inventory
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_changes_statement();
CREATE TRIGGER inventory_changes_delete AFTER DELETE ON inventory
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_changes_statement();

-- +goose Down
DROP TRIGGER inventory_changes_delete ON inventory;
DROP TRIGGER inventory_changes_update ON inventory;
DROP TRIGGER inventory_changes_insert ON inventory;
DROP TRIGGER categories_changes_delete ON categories;
DROP TRIGGER categories_changes_update ON categories;
DROP TRIGGER categories_changes_insert ON categories;
DROP TRIGGER pets_changes_delete ON pets;
DROP TRIGGER pets_changes_update ON pets;
DROP TRIGGER pets_changes_insert ON pets;
DROP TRIGGER catalog_changes_apply_pet_counts ON catalog_changes;
DROP FUNCTION apply_pet_counts();
DROP FUNCTION count_pets_statement();
DROP FUNCTION tally_pet_counts(jsonb);
DROP FUNCTION bump_catalog_changes_statement();
DROP FUNCTION catalog_changed();
CREATE CONSTRAINT TRIGGER pets_catalog_changes AFTER INSERT OR UPDATE OR DELETE ON pets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_catalog_changes();
CREATE CONSTRAINT TRIGGER categories_catalog_changes AFTER INSERT OR UPDATE OR DELETE ON categories
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_catalog_changes();
CREATE CONSTRAINT TRIGGER inventory_catalog_changes AFTER INSERT OR UPDATE OR DELETE ON inventory
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_catalog_changes();
CREATE CONSTRAINT TRIGGER pets_counts_insert_delete AFTER INSERT OR DELETE ON pets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION count_pets();
CREATE CONSTRAINT TRIGGER pets_counts_update AFTER UPDATE ON pets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.category_id <> NEW.category_id OR OLD.status <> NEW.status
          OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION count_pets();
