-- +goose Up
-- A login attempt is counted before its password is hashed: its rows (one
-- per throttle key, the e-mail's and the address's) are written first, as
-- failures, and removed when the password turns out right or is never
-- checked. The id tells one attempt's rows from another's at the same
-- instant.
ALTER TABLE login_failures ADD COLUMN attempt bigint NOT NULL DEFAULT 0;
CREATE SEQUENCE login_attempts;

-- +goose Down
DROP SEQUENCE login_attempts;
ALTER TABLE login_failures DROP COLUMN attempt;
