-- +goose Up
-- Usernames are unique letter case aside ("Admin" beside "admin" is one
-- user's name twice): username_key holds the name in one case, under a
-- unique index. The store writes it for every new user (db.usernameKey);
-- here it is lower(), which on SQLite folds A to Z only, as PostgreSQL's
-- migration does: the same key for any name of those letters.
-- Users already named alike keep their names and their sign-ins (nobody
-- is renamed or locked out): the oldest of them holds the key, the others
-- none (a unique index takes any number of NULLs), and no new name like
-- theirs is taken.
ALTER TABLE staff_users ADD COLUMN username_key TEXT;
UPDATE staff_users SET username_key = lower(username)
    WHERE id = (SELECT min(s.id) FROM staff_users s WHERE lower(s.username) = lower(staff_users.username));
CREATE UNIQUE INDEX staff_users_username_nocase ON staff_users (username_key);

-- +goose Down
DROP INDEX staff_users_username_nocase;
ALTER TABLE staff_users DROP COLUMN username_key;
