-- +goose Up
-- pet_counts holds the number of live pets by category and status, so the
-- console's catalog page and dashboard read a few rows per category
-- instead of counting every pet (issue 17). Triggers keep it exact, in the
-- same transaction as the pet. Like catalog_changes, it is split into 64
-- slots, one picked by the writing connection, and written at commit, so
-- concurrent orders do not queue on one row; a slot's rows are written only
-- under the row lock of the same slot of catalog_changes, which every pet
-- write takes at commit anyway, so two writers never take count rows in
-- opposite orders (no deadlocks). Readers sum the slots.
CREATE TABLE pet_counts (
    category_id BIGINT  NOT NULL,
    status      TEXT    NOT NULL,
    slot        INTEGER NOT NULL,
    n           BIGINT  NOT NULL,
    PRIMARY KEY (category_id, status, slot)
);

-- +goose StatementBegin
CREATE FUNCTION count_pets() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s integer := pg_backend_pid() % 64;
BEGIN
    PERFORM 1 FROM catalog_changes WHERE slot = s FOR NO KEY UPDATE;
    IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL THEN
        INSERT INTO pet_counts AS c (category_id, status, slot, n) VALUES (OLD.category_id, OLD.status, s, -1)
        ON CONFLICT (category_id, status, slot) DO UPDATE SET n = c.n - 1;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL THEN
        INSERT INTO pet_counts AS c (category_id, status, slot, n) VALUES (NEW.category_id, NEW.status, s, 1)
        ON CONFLICT (category_id, status, slot) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER pets_counts_insert_delete AFTER INSERT OR DELETE ON pets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION count_pets();
CREATE CONSTRAINT TRIGGER pets_counts_update AFTER UPDATE ON pets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.category_id <> NEW.category_id OR OLD.status <> NEW.status
          OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION count_pets();

-- The triggers exist before the count, and creating them locked out writes
-- to pets until this migration commits: no pet is missed or counted twice.
INSERT INTO pet_counts (category_id, status, slot, n)
SELECT category_id, status, 0, count(*) FROM pets WHERE deleted_at IS NULL GROUP BY category_id, status;

-- +goose Down
DROP TRIGGER pets_counts_update ON pets;
DROP TRIGGER pets_counts_insert_delete ON pets;
DROP FUNCTION count_pets();
DROP TABLE pet_counts;
