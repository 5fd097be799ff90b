-- +goose Up
-- A refund's POST is recorded before it is made (refund_posted_at), under
-- the key it is made with and only while the provider remembers that key.
-- A key is renewed only once the last POST under it is older than the
-- longest a POST can take: a POST still on its way when the provider's
-- refunds are looked for (before a renewal) has landed by the next look,
-- and is found then instead of being made a second time.
ALTER TABLE balance_sales ADD COLUMN refund_posted_at timestamptz;
ALTER TABLE payment_sessions ADD COLUMN refund_posted_at timestamptz;

-- 00029 took when a sale's refund was asked from its updated_at, which
-- every check of the sale moves on: a refund asked days ago looked asked
-- lately, and was asked again under a key the provider may have
-- forgotten. A sale's refund is decided in the transaction that writes its
-- balance's refund entry: that entry's time is when it was asked. (Taken
-- only when earlier: a key renewed since was asked later, and an earlier
-- time only has the refund looked for at the provider sooner.) A payment
-- session's refund has no such entry (the deposit ledger's is written when
-- the refund is made), so it is left as 00029 made it: a session's checks
-- do not move its updated_at, which is when its refund began (or when the
-- provider cancelled it, after which only staff ask it again, under a new
-- key asked from then).
UPDATE balance_sales s SET refund_asked_at = e.at
FROM (SELECT balance_id, max(created_at) AS at FROM balance_entries WHERE type = 'refund' GROUP BY balance_id) e
WHERE s.status = 'refunding' AND e.balance_id = s.balance_id AND (s.refund_asked_at IS NULL OR e.at < s.refund_asked_at);

-- +goose Down
ALTER TABLE payment_sessions DROP COLUMN refund_posted_at;
ALTER TABLE balance_sales DROP COLUMN refund_posted_at;
