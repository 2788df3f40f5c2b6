-- +goose Up
-- A catalog import is one event, catalog.imported (SPEC §18), not one
-- pet.created per row: a program that needs the rows lists them with
-- GET /api/pets?importId=, which this column and its index serve. Pets
-- made any other way have none.
ALTER TABLE pets ADD COLUMN import_id BIGINT;
CREATE INDEX pets_import ON pets (import_id, id) WHERE import_id IS NOT NULL;

-- +goose Down
DROP INDEX pets_import;
ALTER TABLE pets DROP COLUMN import_id;
