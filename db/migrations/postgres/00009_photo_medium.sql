-- +goose Up
-- A middle size of every photo, 800 px on its longest side, for the pages'
-- srcset: a pet page shows its photo some 500 px wide, where the 400 px
-- thumbnail is too coarse and the 1600 px large size four times the bytes.
-- Photos stored before it have none (NULL): their medium address serves
-- the large size, and the pages offer them without it. (00008 is left to
-- the webhooks' migration.)
ALTER TABLE photos ADD COLUMN medium BYTEA;
ALTER TABLE photos ADD COLUMN medium_etag TEXT;
ALTER TABLE photos ADD COLUMN medium_width INTEGER CHECK (medium_width > 0);
ALTER TABLE photos ADD COLUMN medium_height INTEGER CHECK (medium_height > 0);
-- JPEG does not compress: keep the bytes out of line without trying.
ALTER TABLE photos ALTER COLUMN medium SET STORAGE EXTERNAL;

-- +goose Down
ALTER TABLE photos DROP COLUMN medium_height;
ALTER TABLE photos DROP COLUMN medium_width;
ALTER TABLE photos DROP COLUMN medium_etag;
ALTER TABLE photos DROP COLUMN medium;
