-- +goose Up
-- A salon's SMS are counted against its caps from the moment one passes
-- them (counted_at), not when the provider took it: sends in flight are
-- counted too, so that sends at once cannot pass a cap together (they
-- take turns under the salon's lock as they are counted).
ALTER TABLE messages ADD COLUMN counted_at timestamptz;
UPDATE messages SET counted_at = sent_at WHERE channel = 'sms' AND sent_at IS NOT NULL AND NOT to_master;
DROP INDEX messages_sms_sent;
DROP INDEX messages_sms_to;
CREATE INDEX messages_sms_to ON messages (salon_id, recipient, counted_at) WHERE counted_at IS NOT NULL;
CREATE INDEX messages_sms_counted ON messages (salon_id, counted_at) WHERE counted_at IS NOT NULL;

-- A refund's money paid back, read again from its own audit row (the
-- row of the same transaction): 00050 took any refund's of the balance.
UPDATE balance_entries e SET paid_back = COALESCE((SELECT (a.new ->> 'paid_back')::bigint FROM audit_log a
    WHERE a.entity = 'balance' AND a.action = 'refund' AND a.entity_id = e.balance_id AND a.salon_id = e.salon_id
      AND a.created_at = e.created_at AND (a.new ->> 'paid_back')::bigint > 0 LIMIT 1), e.paid_back)
WHERE e.type = 'refund' AND e.paid_back IS NOT NULL;

-- +goose Down
DROP INDEX messages_sms_counted;
DROP INDEX messages_sms_to;
CREATE INDEX messages_sms_to ON messages (salon_id, recipient, sent_at) WHERE channel = 'sms' AND sent_at IS NOT NULL;
CREATE INDEX messages_sms_sent ON messages (salon_id, sent_at) WHERE channel = 'sms' AND sent_at IS NOT NULL;
ALTER TABLE messages DROP COLUMN counted_at;
