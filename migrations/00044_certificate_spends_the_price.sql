-- +goose Up
-- A booking paid with a certificate follows its master's price when it is
-- moved (as any booking does), and its visit, made or missed, spends at
-- most that price, less what its deposits paid online, of what it
-- reserved: the rest goes back to the certificate with the same
-- settlement (a release beside the spend), so a move to a cheaper master
-- gives the difference back.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION booking_balance_settled() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    done boolean := NEW.status IN ('completed', 'no_show');
    keep boolean := coalesce(current_setting('salon.balance_keep', true), '') = 'on';
BEGIN
    INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id, actor)
    SELECT r.balance_id, r.salon_id, x.type, x.delta, r.booking_id, coalesce(current_setting('salon.actor', true), '')
    FROM balance_entries r
    JOIN balances bal ON bal.id = r.balance_id
    -- (A certificate spends at most what the deposits paid online left
    -- of the visit's price: one moved to a cheaper master gives the rest
    -- back.)
    CROSS JOIN LATERAL (SELECT CASE WHEN done AND bal.kind = 'certificate'
                                    THEN LEAST(-r.delta, GREATEST(
                                        (SELECT round(sum(vb.price) * 100)::bigint FROM bookings vb
                                         WHERE vb.id = NEW.visit_id OR vb.visit_of = NEW.visit_id)
                                        - (SELECT COALESCE(round(sum(ps.amount - ps.refunded) * 100), 0)::bigint FROM payment_sessions ps
                                           WHERE ps.booking_id = NEW.visit_id AND ps.status IN ('completed', 'refunding', 'refunded')), 0))
                                    WHEN done THEN -r.delta WHEN keep THEN r.keeps ELSE 0 END AS kept) k
    CROSS JOIN LATERAL (VALUES ('spend', 0::bigint, k.kept > 0), ('release', -r.delta - k.kept, -r.delta - k.kept > 0)) x(type, delta, due)
    WHERE r.booking_id = NEW.id AND r.type = 'reserve' AND x.due
      AND NOT EXISTS (SELECT 1 FROM balance_entries y WHERE y.balance_id = r.balance_id AND y.booking_id = r.booking_id
                      AND y.type IN ('spend', 'release'))
    ORDER BY r.balance_id, x.type DESC;
    INSERT INTO balance_settlements (salon_id, sale_id, entry_id, booking_id, units)
    SELECT s.salon_id, s.id, e.id, e.booking_id, -r.delta - COALESCE(g.delta, 0)
    FROM balance_entries e
    JOIN balance_sales s ON s.balance_id = e.balance_id
    JOIN balance_entries r ON r.booking_id = e.booking_id AND r.type = 'reserve' AND r.balance_id = e.balance_id
    LEFT JOIN balance_entries g ON g.booking_id = e.booking_id AND g.type = 'release' AND g.balance_id = e.balance_id
    WHERE e.booking_id = NEW.id AND e.type = 'spend' AND s.receipt IS NOT NULL AND s.external_id IS NOT NULL
      AND -r.delta - COALESCE(g.delta, 0) > 0
    ORDER BY e.id
    ON CONFLICT (entry_id) DO NOTHING;
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
    INSERT INTO balance_settlements (salon_id, sale_id, entry_id, booking_id, units)
    SELECT s.salon_id, s.id, e.id, e.booking_id, -r.delta - COALESCE(g.delta, 0)
    FROM balance_entries e
    JOIN balance_sales s ON s.balance_id = e.balance_id
    JOIN balance_entries r ON r.booking_id = e.booking_id AND r.type = 'reserve' AND r.balance_id = e.balance_id
    LEFT JOIN balance_entries g ON g.booking_id = e.booking_id AND g.type = 'release' AND g.balance_id = e.balance_id
    WHERE e.booking_id = NEW.id AND e.type = 'spend' AND s.receipt IS NOT NULL AND s.external_id IS NOT NULL
      AND -r.delta - COALESCE(g.delta, 0) > 0
    ORDER BY e.id
    ON CONFLICT (entry_id) DO NOTHING;
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
