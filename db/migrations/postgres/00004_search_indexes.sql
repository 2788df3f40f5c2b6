-- +goose NO TRANSACTION
-- +goose Up
-- Reads whose cost does not grow with the catalog (issue 17). Built with
-- CREATE INDEX CONCURRENTLY, outside a transaction, so adding them to a
-- large catalog does not block writes to pets meanwhile. Each index is
-- dropped first: a concurrent build that fails leaves an invalid index
-- behind, and goose runs this file again on the next start.
--
-- pg_trgm lives in public, named in full: tests run with search_path set to
-- a schema of their own that is dropped afterwards, and the extension
-- belongs to the database, not to one schema.
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;

-- "name contains q" (name_key LIKE '%q%') for q of three characters or more.
DROP INDEX CONCURRENTLY IF EXISTS pets_name_trgm;
CREATE INDEX CONCURRENTLY pets_name_trgm ON pets USING gin (name_key public.gin_trgm_ops);

-- Filtered lists walk these in id order and stop after a page.
DROP INDEX CONCURRENTLY IF EXISTS pets_status_id;
CREATE INDEX CONCURRENTLY pets_status_id ON pets (status, id) WHERE deleted_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS pets_category_id;
CREATE INDEX CONCURRENTLY pets_category_id ON pets (category_id, id);
DROP INDEX CONCURRENTLY IF EXISTS pets_category_status_id;
CREATE INDEX CONCURRENTLY pets_category_status_id ON pets (category_id, status, id) WHERE deleted_at IS NULL;
-- pets_category_id serves everything pets_category did.
DROP INDEX CONCURRENTLY IF EXISTS pets_category;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS pets_category ON pets (category_id);
DROP INDEX CONCURRENTLY IF EXISTS pets_category_status_id;
DROP INDEX CONCURRENTLY IF EXISTS pets_category_id;
DROP INDEX CONCURRENTLY IF EXISTS pets_status_id;
DROP INDEX CONCURRENTLY IF EXISTS pets_name_trgm;
