-- +goose Up
-- A sale's refund is followed by the provider's id once it answers (a
-- pending refund is read, never asked again: the provider forgets an
-- idempotence key after a day, and the same request under it then makes a
-- second refund), and by when it was asked under its key (one never
-- answered for nearly a day is looked for on the payment before it is
-- asked again under a new key).
ALTER TABLE balance_sales ADD COLUMN refund_id text, ADD COLUMN refund_asked_at timestamptz;
UPDATE balance_sales SET refund_asked_at = updated_at WHERE refund_key IS NOT NULL;

-- +goose Down
ALTER TABLE balance_sales DROP COLUMN refund_asked_at, DROP COLUMN refund_id;
