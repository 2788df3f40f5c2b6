-- +goose Up
-- Issue 27, SPEC §18: the cost of a write grows linearly with its rows.
-- Migrations 00003 and 00005 kept catalog_changes and pet_counts with
-- DEFERRED per-row triggers: a transaction of N pets updated its one slot
-- row of catalog_changes N times and each of its pet_counts rows about as
-- often, and every update walked the growing chain of that row's versions
-- (N²: 200,000 pets in one INSERT … SELECT took over 7 minutes), and left
-- N dead versions that every counter read then scanned until a vacuum.
-- Here per-statement triggers with transition tables aggregate instead: a
-- statement that changed rows bumps its slot of catalog_changes once and
-- each pet_counts (category, status, slot) row it moved once, so a
-- transaction leaves one version of each per statement, not per row.
--
-- Lock order. The deferred triggers took the slot at commit, after every
-- pet row lock, so a slot holder never waited. A statement trigger runs at
-- the end of each statement and keeps the slot's row lock to the commit,
-- so a transaction that then locks pet or inventory rows (an order of many
-- lines, a bulk edit, a cancel) would hold a slot while waiting for a row:
-- with the slot fixed by pg_backend_pid() % 64, two connections of the
-- same slot could deadlock (A: slot S, waits for pet P; B: pet P, waits
-- for slot S). So the slot is no longer fixed: catalog_slot() takes the
-- first slot, from pg_backend_pid() % 64 on, that no other transaction
-- holds (FOR NO KEY UPDATE SKIP LOCKED), and the transaction keeps it in a
-- transaction-local setting (petstore.catalog_slot) for its later
-- statements, whose lock on it is its own. A writer thus never waits for
-- a slot while fewer than 64 transactions hold one (each instance's pool is
-- far smaller); pet_counts rows of a slot are written only by the slot's
-- holder, so nobody waits for them either; the only waits left are the
-- pet and inventory row locks the store's flows took before. Only if all
-- 64 slots are held does a writer wait for its own (pg_backend_pid() % 64),
-- as before; a deadlock is then possible and PostgreSQL reports it (40P01)
-- to one of the two, whose write fails whole.
-- A savepoint rolled back undoes the setting and the lock together.

-- +goose StatementBegin
CREATE FUNCTION catalog_slot() RETURNS integer LANGUAGE plpgsql AS $$
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
        PERFORM 1 FROM catalog_changes WHERE slot = s FOR NO KEY UPDATE;
    END IF;
    PERFORM set_config('petstore.catalog_slot', s::text, true);
    RETURN s;
END
$$;
-- +goose StatementEnd

-- bump_catalog_changes_statement bumps the transaction's slot once for a
-- statement on pets, categories or inventory that changed rows (its
-- transition table is named changed_rows whatever the event).
-- +goose StatementBegin
CREATE FUNCTION bump_catalog_changes_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed_rows) THEN
        UPDATE catalog_changes SET version = version + 1 WHERE slot = catalog_slot();
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- count_pets_statement bumps the slot and applies a statement's net moves
-- of live pets to pet_counts: -1 for each old row that was live, +1 for
-- each new row that is live, summed by (category, status). An UPDATE that
-- left a pet's category, status and liveness as they were nets zero for
-- it, which is what the old trigger's WHEN meant; sums that net zero are
-- not written.
-- +goose StatementBegin
CREATE FUNCTION count_pets_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
        s := catalog_slot();
        UPDATE catalog_changes SET version = version + 1 WHERE slot = s;
        INSERT INTO pet_counts AS c (category_id, status, slot, n)
        SELECT category_id, status, s, count(*) FROM new_rows WHERE deleted_at IS NULL
        GROUP BY category_id, status
        ON CONFLICT (category_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
        s := catalog_slot();
        UPDATE catalog_changes SET version = version + 1 WHERE slot = s;
        INSERT INTO pet_counts AS c (category_id, status, slot, n)
        SELECT category_id, status, s, -count(*) FROM old_rows WHERE deleted_at IS NULL
        GROUP BY category_id, status
        ON CONFLICT (category_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
        s := catalog_slot();
        UPDATE catalog_changes SET version = version + 1 WHERE slot = s;
        INSERT INTO pet_counts AS c (category_id, status, slot, n)
        SELECT category_id, status, s, sum(d) FROM (
            SELECT category_id, status, -1 AS d FROM old_rows WHERE deleted_at IS NULL
            UNION ALL
            SELECT category_id, status, 1 AS d FROM new_rows WHERE deleted_at IS NULL
        ) AS moves
        GROUP BY category_id, status HAVING sum(d) <> 0
        ON CONFLICT (category_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER pets_counts_update ON pets;
DROP TRIGGER pets_counts_insert_delete ON pets;
DROP TRIGGER pets_catalog_changes ON pets;
DROP TRIGGER categories_catalog_changes ON categories;
DROP TRIGGER inventory_catalog_changes ON inventory;

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
DROP FUNCTION count_pets_statement();
DROP FUNCTION bump_catalog_changes_statement();
DROP FUNCTION catalog_slot();
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
