-- +goose Up
-- A sale whose refunds paid back its whole price (one made by hand at the
-- provider for more than was owed, and recorded as shown) leaves nothing
-- to spend: what a booking held then, given back when the booking ends,
-- is refunded at once, with no money (the buyer has it), rather than
-- spendable again by the code.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION booking_balance_settled() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    done boolean := NEW.status IN ('completed', 'no_show');
    keep boolean := coalesce(current_setting('salon.balance_keep', true), '') = 'on';
BEGIN
    INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id, actor)
    SELECT r.balance_id, r.salon_id, x.type, x.delta, r.booking_id, coalesce(current_setting('salon.actor', true), '')
    FROM balance_entries r
    CROSS JOIN LATERAL (SELECT CASE WHEN done THEN -r.delta WHEN keep THEN r.keeps ELSE 0 END AS kept) k
    CROSS JOIN LATERAL (VALUES ('spend', 0::bigint, k.kept > 0), ('release', -r.delta - k.kept, -r.delta - k.kept > 0)) x(type, delta, due)
    WHERE r.booking_id = NEW.id AND r.type = 'reserve' AND x.due
      AND NOT EXISTS (SELECT 1 FROM balance_entries y WHERE y.balance_id = r.balance_id AND y.booking_id = r.booking_id
                      AND y.type IN ('spend', 'release'))
    ORDER BY r.balance_id, x.type DESC;
    -- What came back to a balance whose sale was paid back in full.
    INSERT INTO balance_entries (balance_id, salon_id, type, delta, actor)
    SELECT b.id, b.salon_id, 'refund', -b.remaining, 'given back to a sale paid back in full'
    FROM balances b JOIN balance_sales s ON s.balance_id = b.id
    WHERE b.id IN (SELECT r.balance_id FROM balance_entries r WHERE r.booking_id = NEW.id AND r.type = 'reserve')
      AND s.refunded >= s.price AND b.remaining > 0
    ORDER BY b.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION booking_balance_settled() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    done boolean := NEW.status IN ('completed', 'no_show');
    keep boolean := coalesce(current_setting('salon.balance_keep', true), '') = 'on';
BEGIN
    INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id, actor)
    SELECT r.balance_id, r.salon_id, x.type, x.delta, r.booking_id, coalesce(current_setting('salon.actor', true), '')
    FROM balance_entries r
    CROSS JOIN LATERAL (SELECT CASE WHEN done THEN -r.delta WHEN keep THEN r.keeps ELSE 0 END AS kept) k
    CROSS JOIN LATERAL (VALUES ('spend', 0::bigint, k.kept > 0), ('release', -r.delta - k.kept, -r.delta - k.kept > 0)) x(type, delta, due)
    WHERE r.booking_id = NEW.id AND r.type = 'reserve' AND x.due
      AND NOT EXISTS (SELECT 1 FROM balance_entries y WHERE y.balance_id = r.balance_id AND y.booking_id = r.booking_id
                      AND y.type IN ('spend', 'release'))
    ORDER BY r.balance_id, x.type DESC;
    RETURN NULL;
END $$;
-- +goose StatementEnd
