-- +goose Up
-- What the desk paid back in money for a refund of a balance sold in the
-- salon (minor units), on the refund's own entry: the balance's page and
-- the day's payments say it after the refund, as the refund's form did
-- before it. Refunds made before are read back from the audit log.
ALTER TABLE balance_entries ADD COLUMN paid_back bigint CHECK (paid_back IS NULL OR paid_back > 0 AND type = 'refund');
UPDATE balance_entries e SET paid_back = (a.new ->> 'paid_back')::bigint
FROM audit_log a
WHERE e.type = 'refund' AND a.entity = 'balance' AND a.action = 'refund' AND a.entity_id = e.balance_id
  AND a.salon_id = e.salon_id AND (a.new ->> 'paid_back')::bigint > 0;
CREATE INDEX balance_entries_salon_day ON balance_entries (salon_id, created_at) WHERE type IN ('credit', 'refund');

-- +goose Down
DROP INDEX balance_entries_salon_day;
ALTER TABLE balance_entries DROP COLUMN paid_back;
