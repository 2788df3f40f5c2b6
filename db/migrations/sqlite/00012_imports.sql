-- +goose Up
-- Catalog imports (SPEC §18). An import is a CSV file uploaded whole,
-- validated while its bytes are written to import_chunks (about 1 MiB a
-- row, in order of seq), then written to the catalog by a job that reads
-- the chunks back; the chunks go in the transaction that writes the pets.
-- errors is a JSON array of the Error detail shape ({field, message}).
-- The actor columns are who started it, for the audit entry the job
-- writes on their behalf.
CREATE TABLE imports (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    status      TEXT        NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    row_count   BIGINT      NOT NULL DEFAULT 0,
    processed   BIGINT      NOT NULL DEFAULT 0,
    errors      TEXT        NOT NULL DEFAULT '[]',
    created_at  TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    actor_type  TEXT        NOT NULL,
    actor_id    TEXT        NOT NULL DEFAULT '',
    actor_name  TEXT        NOT NULL DEFAULT '',
    request_id  TEXT        NOT NULL DEFAULT '',
    ip          TEXT        NOT NULL DEFAULT ''
);
-- One import queued or running per store: every such row has the same
-- value (true) in this index, so a second one is a unique violation.
CREATE UNIQUE INDEX imports_one_active ON imports ((status IN ('queued', 'running'))) WHERE status IN ('queued', 'running');

CREATE TABLE import_chunks (
    import_id INTEGER NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (import_id, seq)
);

-- +goose Down
DROP TABLE import_chunks;
DROP TABLE imports;
