-- +goose Up
-- catalog_changes counts the committed changes to what the catalog and
-- inventory GETs show (pets, their categories, stock), so a reader that
-- sees the same version sees the same rows (SPEC §2 conditional requests).
-- Triggers bump it, so no write path can forget to. SQLite has one writer
-- at a time: one slot is enough (PostgreSQL's copy has 64).
CREATE TABLE catalog_changes (
    slot    INTEGER PRIMARY KEY,
    version INTEGER NOT NULL
);
INSERT INTO catalog_changes (slot, version) VALUES (0, 0);

-- +goose StatementBegin
CREATE TRIGGER pets_catalog_insert AFTER INSERT ON pets
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER pets_catalog_update AFTER UPDATE ON pets
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER pets_catalog_delete AFTER DELETE ON pets
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER categories_catalog_insert AFTER INSERT ON categories
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER categories_catalog_update AFTER UPDATE ON categories
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER categories_catalog_delete AFTER DELETE ON categories
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER inventory_catalog_insert AFTER INSERT ON inventory
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER inventory_catalog_update AFTER UPDATE ON inventory
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER inventory_catalog_delete AFTER DELETE ON inventory
BEGIN UPDATE catalog_changes SET version = version + 1; END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER inventory_catalog_delete;
DROP TRIGGER inventory_catalog_update;
DROP TRIGGER inventory_catalog_insert;
DROP TRIGGER categories_catalog_delete;
DROP TRIGGER categories_catalog_update;
DROP TRIGGER categories_catalog_insert;
DROP TRIGGER pets_catalog_delete;
DROP TRIGGER pets_catalog_update;
DROP TRIGGER pets_catalog_insert;
DROP TABLE catalog_changes;
