-- +goose Up
-- When a client's page last had a payment checked with the provider: a
-- page read again and again (or by someone with its link) asks the
-- provider at most every few seconds.
ALTER TABLE payment_sessions ADD COLUMN client_checked_at timestamptz;

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN client_checked_at;
