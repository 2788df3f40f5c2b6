-- +goose Up
-- Staff accounts (SPEC §16): a one-time password to replace at the next
-- sign-in, disabling, the last sign-in, and two-factor sign-in (TOTP).
-- totp_last_step is the last 30-second step whose code was accepted, so a
-- code is accepted once (a conditional UPDATE decides, race-free). The
-- recovery codes are kept as SHA-256 hashes, each used at most once.
ALTER TABLE staff_users ADD COLUMN must_change_password BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE staff_users ADD COLUMN disabled_at TIMESTAMP;
ALTER TABLE staff_users ADD COLUMN last_sign_in_at TIMESTAMP;
ALTER TABLE staff_users ADD COLUMN totp_secret TEXT;
ALTER TABLE staff_users ADD COLUMN totp_enabled_at TIMESTAMP;
ALTER TABLE staff_users ADD COLUMN totp_last_step BIGINT;

CREATE TABLE staff_recovery_codes (
    staff_user_id INTEGER   NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
    code_hash     TEXT      NOT NULL,
    used_at       TIMESTAMP,
    PRIMARY KEY (staff_user_id, code_hash)
);
CREATE INDEX staff_sessions_user ON staff_sessions (staff_user_id);

-- +goose Down
DROP INDEX staff_sessions_user;
DROP TABLE staff_recovery_codes;
ALTER TABLE staff_users DROP COLUMN totp_last_step;
ALTER TABLE staff_users DROP COLUMN totp_enabled_at;
ALTER TABLE staff_users DROP COLUMN totp_secret;
ALTER TABLE staff_users DROP COLUMN last_sign_in_at;
ALTER TABLE staff_users DROP COLUMN disabled_at;
ALTER TABLE staff_users DROP COLUMN must_change_password;
