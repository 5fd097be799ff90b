-- +goose Up
-- A sale in the panel carries its form's one-time key: the same form sent
-- twice (a refresh, a second click) sells one balance, not two.
ALTER TABLE balances ADD COLUMN request_key text;
CREATE UNIQUE INDEX balances_request ON balances (salon_id, request_key) WHERE request_key IS NOT NULL;

-- +goose Down
DROP INDEX balances_request;
ALTER TABLE balances DROP COLUMN request_key;
