-- +goose Up
-- The one-time key of the panel's form that last gave a balance a new code
-- (its page's "Make a new code"): the same form sent again (a refresh, Back
-- and the button again) makes no second code, which would kill the one
-- just handed to the client.
ALTER TABLE balances ADD COLUMN code_key text;

-- +goose Down
ALTER TABLE balances DROP COLUMN code_key;
