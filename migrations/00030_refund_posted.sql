-- +goose Up
-- A refund's POST is recorded before it is made (refund_posted_at), under
-- the key it is made with and only while the provider remembers that key.
-- A key is renewed only once the last POST under it is older than the
-- longest a POST can take: a POST still on its way when the provider's
-- refunds are looked for (before a renewal) has landed by the next look,
-- and is found then instead of being made a second time.
ALTER TABLE balance_sales ADD COLUMN refund_posted_at timestamptz;
ALTER TABLE payment_sessions ADD COLUMN refund_posted_at timestamptz;

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN refund_posted_at;
ALTER TABLE balance_sales DROP COLUMN refund_posted_at;
