-- +goose Up
-- The form that puts an offer on sale carries a one-time key, as the
-- desk's sale form does: the same form sent twice (a second click, a
-- refresh) puts one offer on sale.
ALTER TABLE balance_offers ADD COLUMN request_key text;
CREATE UNIQUE INDEX balance_offers_request ON balance_offers (salon_id, request_key) WHERE request_key IS NOT NULL;

-- +goose Down
DROP INDEX balance_offers_request;
ALTER TABLE balance_offers DROP COLUMN request_key;
