-- +goose Up
-- A deposit's settlement receipt is sent by one replica at a time, as a
-- balance's is (balance_settlements.lease_until): the replica that takes
-- it holds it until then, and another sweep skips it meanwhile.
ALTER TABLE payment_sessions ADD COLUMN settlement_lease_until timestamptz;

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN settlement_lease_until;
