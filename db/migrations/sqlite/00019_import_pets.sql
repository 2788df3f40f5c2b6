-- +goose Up
-- A catalog import (SPEC §18) writes its pets in short transactions, each
-- a batch of rows, and they stay invisible until the import succeeds:
-- written with deleted_at set (every reader already skips such pets and
-- categories, every counter leaves them out) and import_id naming the
-- import; the import's last transaction clears deleted_at of all of them
-- at once. A failed import deletes them. An import is one event,
-- catalog.imported, not one pet.created per row: a program that needs the
-- rows lists them with GET /api/pets?importId=, which the index serves.
-- Pets and categories made any other way have no import_id.
ALTER TABLE pets ADD COLUMN import_id BIGINT;
CREATE INDEX pets_import ON pets (import_id, id) WHERE import_id IS NOT NULL;
ALTER TABLE categories ADD COLUMN import_id BIGINT;
CREATE INDEX categories_import ON categories (import_id) WHERE import_id IS NOT NULL;

-- The import's last transaction shows its pets with one UPDATE; on SQLite
-- the per-row triggers would bump the catalog's counter and pet_counts
-- once per pet, under the only writer. They skip that change (a pet of an
-- import going from hidden to live: nothing else clears deleted_at), and
-- the transaction counts the import's pets once, grouped
-- (db.publishImport). PostgreSQL's triggers count per statement already.
DROP TRIGGER pets_catalog_update;
-- +goose StatementBegin
CREATE TRIGGER pets_catalog_update AFTER UPDATE ON pets
WHEN NOT (old.import_id IS NOT NULL AND old.deleted_at IS NOT NULL AND new.deleted_at IS NULL)
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
DROP TRIGGER pets_counts_update;
-- +goose StatementBegin
CREATE TRIGGER pets_counts_update AFTER UPDATE OF category_id, status, deleted_at ON pets
WHEN (old.category_id <> new.category_id OR old.status <> new.status
     OR (old.deleted_at IS NULL) <> (new.deleted_at IS NULL))
     AND NOT (old.import_id IS NOT NULL AND old.deleted_at IS NOT NULL AND new.deleted_at IS NULL)
BEGIN
    UPDATE pet_counts SET n = n - 1
    WHERE old.deleted_at IS NULL AND category_id = old.category_id AND status = old.status;
    INSERT INTO pet_counts (category_id, status, n) SELECT new.category_id, new.status, 1 WHERE new.deleted_at IS NULL
    ON CONFLICT (category_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER pets_counts_update;
-- +goose StatementBegin
CREATE TRIGGER pets_counts_update AFTER UPDATE OF category_id, status, deleted_at ON pets
WHEN old.category_id <> new.category_id OR old.status <> new.status
     OR (old.deleted_at IS NULL) <> (new.deleted_at IS NULL)
BEGIN
    UPDATE pet_counts SET n = n - 1
    WHERE old.deleted_at IS NULL AND category_id = old.category_id AND status = old.status;
    INSERT INTO pet_counts (category_id, status, n) SELECT new.category_id, new.status, 1 WHERE new.deleted_at IS NULL
    ON CONFLICT (category_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
DROP TRIGGER pets_catalog_update;
-- +goose StatementBegin
CREATE TRIGGER pets_catalog_update AFTER UPDATE ON pets
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
DROP INDEX categories_import;
ALTER TABLE categories DROP COLUMN import_id;
DROP INDEX pets_import;
ALTER TABLE pets DROP COLUMN import_id;
