-- +goose Up
-- Settlement receipts (54-FZ) of balances sold online. A certificate sold
-- with a receipt was receipted as an advance, a package as the full
-- prepayment of its services; what a visit then uses of it (a spend entry:
-- the visit completed or missed, or a cancellation the policy keeps) is
-- settled by a receipt of its own against the sale's payment, as a
-- deposit's is (payment_sessions.settlement_sent_at). One row per spend
-- entry of such a sale, written in the transaction that spends: units is what the spend used (visits, or minor units).
-- The sweep prices it (amount: the money it settles, 0 for nothing left to
-- settle, the sale refunded; NULL: not priced yet), in the order of the
-- spends, and writes the receipt then, sent as it is under the key
-- settle-entry-ENTRY however often it is sent; sent_at once the provider
-- took it; error once it refused it (not sent again: staff see it).
CREATE TABLE balance_settlements (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id    bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    sale_id     bigint NOT NULL REFERENCES balance_sales ON DELETE CASCADE,
    entry_id    bigint NOT NULL UNIQUE, -- the spend's balance_entries.id
    booking_id  bigint NOT NULL,
    units       bigint NOT NULL CHECK (units > 0),
    amount      bigint CHECK (amount >= 0),
    receipt     jsonb,
    sent_at     timestamptz,
    error       text,
    lease_until timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((amount > 0) = (receipt IS NOT NULL)),
    CHECK (amount > 0 OR (sent_at IS NULL AND error IS NULL))
);
CREATE INDEX balance_settlements_sale ON balance_settlements (sale_id, entry_id);
-- What the sweep has to do: price, or send.
CREATE INDEX balance_settlements_due ON balance_settlements (id)
    WHERE sent_at IS NULL AND error IS NULL AND (amount IS NULL OR amount > 0);

-- A spend of a balance whose sale has a receipt is due a settlement,
-- written where spends are: by the trigger that settles a booking's
-- reservations when it ends (not by a trigger on every ledger entry, which
-- a booking's reservation would pay for). What a spend used is what was
-- reserved less what the same settlement gave back.
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

-- The spends made before are due theirs too (as 00012 made the deposits'
-- of visits completed before it due).
INSERT INTO balance_settlements (salon_id, sale_id, entry_id, booking_id, units)
SELECT s.salon_id, s.id, e.id, e.booking_id, -r.delta - COALESCE(g.delta, 0)
FROM balance_entries e
JOIN balance_sales s ON s.balance_id = e.balance_id
JOIN balance_entries r ON r.booking_id = e.booking_id AND r.type = 'reserve' AND r.balance_id = e.balance_id
LEFT JOIN balance_entries g ON g.booking_id = e.booking_id AND g.type = 'release' AND g.balance_id = e.balance_id
WHERE e.type = 'spend' AND s.receipt IS NOT NULL AND s.external_id IS NOT NULL
  AND -r.delta - COALESCE(g.delta, 0) > 0
ORDER BY e.id;

-- +goose Down
-- A settlement sent is the only record that its receipt went to the
-- provider (and from it to the tax service): dropped, the Up would make
-- every past spend due again and send its receipt a second time. So the
-- rollback refuses while one exists.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM balance_settlements WHERE sent_at IS NOT NULL) THEN
        RAISE EXCEPTION 'balance_settlements holds receipts already sent: rolling back would send them again'
            USING ERRCODE = 'object_in_use',
                  HINT = 'keep this migration, or record elsewhere which spends were settled before rolling it back';
    END IF;
END $$;
-- +goose StatementEnd
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
DROP TABLE balance_settlements;
