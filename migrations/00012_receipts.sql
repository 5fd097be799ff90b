-- +goose Up
-- Fiscal receipts (54-FZ), sent through YooKassa when YOOKASSA_RECEIPTS is
-- on: what the salon's receipts say. vat_code and tax_system_code are
-- YooKassa's codes (1: no VAT; tax systems 1..6, NULL: not given).
ALTER TABLE salons ADD COLUMN receipt_vat_code integer NOT NULL DEFAULT 1 CHECK (receipt_vat_code BETWEEN 1 AND 12);
ALTER TABLE salons ADD COLUMN receipt_tax_system integer CHECK (receipt_tax_system BETWEEN 1 AND 6);
-- what the receipt calls the service ('' : the service's own name)
ALTER TABLE salons ADD COLUMN receipt_item text NOT NULL DEFAULT '' CHECK (length(receipt_item) <= 128);

-- The receipt a payment was created with (sent again as it was on a
-- retry, and the base of its refund's and settlement's receipts), and
-- when the settlement receipt of a completed visit was sent.
ALTER TABLE payment_sessions ADD COLUMN receipt jsonb;
ALTER TABLE payment_sessions ADD COLUMN settlement_sent_at timestamptz;
CREATE INDEX payment_sessions_unsettled ON payment_sessions (booking_id)
    WHERE status = 'completed' AND receipt IS NOT NULL AND settlement_sent_at IS NULL;

-- +goose Down
DROP INDEX payment_sessions_unsettled;
ALTER TABLE payment_sessions DROP COLUMN settlement_sent_at;
ALTER TABLE payment_sessions DROP COLUMN receipt;
ALTER TABLE salons DROP COLUMN receipt_item;
ALTER TABLE salons DROP COLUMN receipt_tax_system;
ALTER TABLE salons DROP COLUMN receipt_vat_code;
