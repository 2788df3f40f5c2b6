-- +goose Up
-- catalog_changes counts the committed changes to what the catalog and
-- inventory GETs show (pets, their categories, stock): the sum of its
-- versions grows with every such commit, so a reader that sees the same sum
-- sees the same rows (SPEC §2 conditional requests). Triggers bump it, so
-- no write path can forget to. The counter is split into 64 slots, one
-- picked by the writing connection, so concurrent writers (orders) do not
-- queue on one row; the bumps are deferred to the commit, so a writer
-- holds its slot only while committing and never waits for a slot while
-- holding one (no deadlocks with the row locks of pets).
CREATE TABLE catalog_changes (
    slot    INTEGER PRIMARY KEY,
    version BIGINT  NOT NULL
);
INSERT INTO catalog_changes (slot, version) SELECT s, 0 FROM generate_series(0, 63) AS s;

-- +goose StatementBegin
CREATE FUNCTION bump_catalog_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalog_changes SET version = version + 1 WHERE slot = pg_backend_pid() % 64;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER pets_catalog_changes AFTER INSERT OR UPDATE OR DELETE ON pets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_catalog_changes();
CREATE CONSTRAINT TRIGGER categories_catalog_changes AFTER INSERT OR UPDATE OR DELETE ON categories
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_catalog_changes();
CREATE CONSTRAINT TRIGGER inventory_catalog_changes AFTER INSERT OR UPDATE OR DELETE ON inventory
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_catalog_changes();

-- +goose Down
DROP TRIGGER inventory_catalog_changes ON inventory;
DROP TRIGGER categories_catalog_changes ON categories;
DROP TRIGGER pets_catalog_changes ON pets;
DROP FUNCTION bump_catalog_changes();
DROP TABLE catalog_changes;
