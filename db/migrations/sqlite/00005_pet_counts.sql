-- +goose Up
-- pet_counts holds the number of live pets by category and status, so the
-- console's catalog page and dashboard read a few rows per category
-- instead of counting every pet (issue 17). Triggers keep it exact, in the
-- same transaction as the pet. SQLite has one writer at a time: one row per
-- category and status (PostgreSQL's copy is split into slots).
CREATE TABLE pet_counts (
    category_id INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (category_id, status)
);

-- +goose StatementBegin
CREATE TRIGGER pets_counts_insert AFTER INSERT ON pets WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO pet_counts (category_id, status, n) VALUES (new.category_id, new.status, 1)
    ON CONFLICT (category_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

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

-- +goose StatementBegin
CREATE TRIGGER pets_counts_delete AFTER DELETE ON pets WHEN old.deleted_at IS NULL BEGIN
    UPDATE pet_counts SET n = n - 1 WHERE category_id = old.category_id AND status = old.status;
END;
-- +goose StatementEnd

INSERT INTO pet_counts (category_id, status, n)
SELECT category_id, status, count(*) FROM pets WHERE deleted_at IS NULL GROUP BY category_id, status;

-- +goose Down
DROP TRIGGER pets_counts_delete;
DROP TRIGGER pets_counts_update;
DROP TRIGGER pets_counts_insert;
DROP TABLE pet_counts;
