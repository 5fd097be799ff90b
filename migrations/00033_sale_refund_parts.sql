-- +goose Up
-- A sale refunded in parts. What is left of a balance sold online is paid
-- back through the provider; what a booking held at that moment is not
-- left, and comes back to the balance when the booking is cancelled: it
-- is then refundable in turn, as a refund of its own (a part), under a key
-- of its own. refunded is what of the price the sale's refunds have paid
-- back so far (refund_amount stays the last one's); refunds how many were
-- made. A sale is 'refunded' once its last refund is made, and may be
-- refunded again while its balance has anything to give back.
ALTER TABLE balance_sales
    ADD COLUMN refunded bigint NOT NULL DEFAULT 0,
    ADD COLUMN refunds integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT balance_sales_refunded_le_price CHECK (refunded BETWEEN 0 AND price);
UPDATE balance_sales SET refunded = LEAST(COALESCE(refund_amount, price), price), refunds = 1 WHERE status = 'refunded';

-- +goose Down
ALTER TABLE balance_sales DROP CONSTRAINT balance_sales_refunded_le_price, DROP COLUMN refunds, DROP COLUMN refunded;
