-- +goose Up
-- A refund (a sale's, a deposit's) is followed by the provider's id once
-- it answers: a pending refund is read, never asked again, for the
-- provider forgets an idempotence key after a day and the same request
-- under it then makes a second refund. When it was asked under its key is
-- kept too: one never answered for nearly a day is looked for on the
-- payment before it is asked again, under a new key.
ALTER TABLE balance_sales ADD COLUMN refund_id text, ADD COLUMN refund_asked_at timestamptz;
UPDATE balance_sales SET refund_asked_at = updated_at WHERE refund_key IS NOT NULL;
ALTER TABLE payment_sessions ADD COLUMN refund_id text, ADD COLUMN refund_asked_at timestamptz;
UPDATE payment_sessions SET refund_asked_at = updated_at WHERE refund_key IS NOT NULL;

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN refund_asked_at, DROP COLUMN refund_id;
ALTER TABLE balance_sales DROP COLUMN refund_asked_at, DROP COLUMN refund_id;
