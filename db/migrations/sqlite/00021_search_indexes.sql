-- +goose Up
-- Finding things in the console (issue 42, SPEC §10): an order by its
-- buyer's name, email or phone, each by its prefix, case aside.
--
-- name_key is the buyer's name folded (the store writes db.foldName; here
-- lower(), which on SQLite folds A to Z only: a name written before this
-- migration with other capitals is found by its lower-case ASCII letters
-- and those capitals as written). phone_key is the phone's digits alone, so
-- "+49 (30) 1234" is found by "4930" or "+49 30". email_key (00006) is
-- the address lower-cased already.
--
-- Each key's index is read as a range (key >= q AND key < q + U+10FFFF):
-- SQLite's BINARY collation orders UTF-8 by code point, so the range is
-- exactly the keys that start with q.
ALTER TABLE checkouts ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
ALTER TABLE checkouts ADD COLUMN phone_key TEXT NOT NULL DEFAULT '';
UPDATE checkouts SET name_key = lower(name),
    phone_key = replace(replace(replace(replace(replace(COALESCE(phone, ''), ' ', ''), '+', ''), '-', ''), '(', ''), ')', '');
CREATE INDEX checkouts_name_key ON checkouts (name_key);
CREATE INDEX checkouts_email_key ON checkouts (email_key);
CREATE INDEX checkouts_phone_key ON checkouts (phone_key);

-- The audit log's action filter is a prefix ("webhook." finds every
-- webhook change): audit_log_action (00010) serves it as a range.

-- +goose Down
DROP INDEX checkouts_phone_key;
DROP INDEX checkouts_email_key;
DROP INDEX checkouts_name_key;
ALTER TABLE checkouts DROP COLUMN phone_key;
ALTER TABLE checkouts DROP COLUMN name_key;
