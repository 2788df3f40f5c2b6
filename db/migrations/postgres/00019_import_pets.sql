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

-- +goose Down
DROP INDEX categories_import;
ALTER TABLE categories DROP COLUMN import_id;
DROP INDEX pets_import;
ALTER TABLE pets DROP COLUMN import_id;
