-- +goose Up
-- Why the provider refused a settlement receipt: it is not sent again by
-- itself (staff see it among what needs attention).
ALTER TABLE payment_sessions ADD COLUMN settlement_error text;

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN settlement_error;
