-- +goose Up
-- Reads whose cost does not grow with the catalog (issue 17).
--
-- pets_fts indexes every pet's name_key (already case-folded in Go) by
-- trigrams, so "name contains q" for q of three characters or more reads
-- the pets that contain q's trigrams instead of every pet. It is an
-- external-content table over pets: it stores the index only, and the
-- triggers below keep it in step in the same transaction as the pet.
-- case_sensitive 1: name_key is folded already, and folding it again with
-- SQLite's own rules could disagree with Go's.
CREATE VIRTUAL TABLE pets_fts USING fts5(
    name_key,
    content = 'pets',
    content_rowid = 'id',
    tokenize = 'trigram case_sensitive 1'
);

-- +goose StatementBegin
CREATE TRIGGER pets_fts_insert AFTER INSERT ON pets BEGIN
    INSERT INTO pets_fts (rowid, name_key) VALUES (new.id, new.name_key);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER pets_fts_update AFTER UPDATE OF name_key ON pets BEGIN
    INSERT INTO pets_fts (pets_fts, rowid, name_key) VALUES ('delete', old.id, old.name_key);
    INSERT INTO pets_fts (rowid, name_key) VALUES (new.id, new.name_key);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER pets_fts_delete AFTER DELETE ON pets BEGIN
    INSERT INTO pets_fts (pets_fts, rowid, name_key) VALUES ('delete', old.id, old.name_key);
END;
-- +goose StatementEnd

INSERT INTO pets_fts (pets_fts) VALUES ('rebuild');

-- Filtered lists walk these in id order (SQLite appends the rowid to every
-- index) and stop after a page, instead of scanning pets.
CREATE INDEX pets_status ON pets (status) WHERE deleted_at IS NULL;
CREATE INDEX pets_category_status ON pets (category_id, status) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX pets_category_status;
DROP INDEX pets_status;
DROP TRIGGER pets_fts_delete;
DROP TRIGGER pets_fts_update;
DROP TRIGGER pets_fts_insert;
DROP TABLE pets_fts;
