-- +goose Up
-- The sandbox's payment page speaks the payer's language, as a payment
-- asks it to (YooKassa's confirmation.locale).
ALTER TABLE sandbox_payments ADD COLUMN locale text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sandbox_payments DROP COLUMN locale;
