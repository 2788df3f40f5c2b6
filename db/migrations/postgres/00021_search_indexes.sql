-- +goose Up
-- Finding things in the console (issue 42, SPEC §10): an order by its
-- buyer's name, email or phone, each by its prefix, case aside.
--
-- name_key is the buyer's name folded (the store writes db.foldName; here
-- lower()). phone_key is the phone's digits alone, so "+49 (30) 1234" is
-- found by "4930" or "+49 30". email_key (00006) is the address
-- lower-cased already.
--
-- Each key's index is read as a range (key >= q AND key < q + U+10FFFF)
-- under the "C" collation, which orders UTF-8 by code point: under a
-- language's collation a range is not the keys that start with q.
ALTER TABLE checkouts ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
ALTER TABLE checkouts ADD COLUMN phone_key TEXT NOT NULL DEFAULT '';
UPDATE checkouts SET name_key = lower(name),
    phone_key = replace(replace(replace(replace(replace(COALESCE(phone, ''), ' ', ''), '+', ''), '-', ''), '(', ''), ')', '');
CREATE INDEX checkouts_name_key ON checkouts (name_key COLLATE "C");
CREATE INDEX checkouts_email_key ON checkouts (email_key COLLATE "C");
CREATE INDEX checkouts_phone_key ON checkouts (phone_key COLLATE "C");

-- The audit log's action filter is a prefix ("webhook." finds every
-- webhook change), read as a range under "C" as above.
CREATE INDEX audit_log_action_prefix ON audit_log (action COLLATE "C", id);
DROP INDEX audit_log_action;

-- +goose Down
CREATE INDEX audit_log_action ON audit_log (action, id);
DROP INDEX audit_log_action_prefix;
DROP INDEX checkouts_phone_key;
DROP INDEX checkouts_email_key;
DROP INDEX checkouts_name_key;
ALTER TABLE checkouts DROP COLUMN phone_key;
ALTER TABLE checkouts DROP COLUMN name_key;
