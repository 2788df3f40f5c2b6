-- +goose Up
-- Pet photos (SPEC §14): both sizes of every photo, re-encoded JPEG, kept
-- in the database so any instance serves any photo. Their display order
-- is the order of pets.photos (migration 00006), written in the same
-- transaction. The ETags are hashes of the bytes, made at upload.
CREATE TABLE photos (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id       INTEGER   NOT NULL REFERENCES pets (id),
    width        INTEGER   NOT NULL CHECK (width > 0),
    height       INTEGER   NOT NULL CHECK (height > 0),
    large        BLOB      NOT NULL,
    large_etag   TEXT      NOT NULL,
    thumb_width  INTEGER   NOT NULL CHECK (thumb_width > 0),
    thumb_height INTEGER   NOT NULL CHECK (thumb_height > 0),
    thumb        BLOB      NOT NULL,
    thumb_etag   TEXT      NOT NULL,
    created_at   TIMESTAMP NOT NULL
);
CREATE INDEX photos_pet ON photos (pet_id);

-- +goose Down
DROP TABLE photos;
