-- +goose Up
-- A failed sign-in is made by someone not signed in: its actor is
-- anonymous (the username typed is the entry's data), never the staff user
-- whose name was typed.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('staff', 'key', 'cli', 'anonymous'));

-- +goose Down
UPDATE audit_log SET actor_type = 'staff' WHERE actor_type = 'anonymous';
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('staff', 'key', 'cli'));
