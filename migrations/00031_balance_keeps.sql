-- +goose Up
-- A client's cancellation that the salon's refund policy keeps keeps of a
-- balance what it would keep of a card: the deposit. Each reservation now
-- carries what such a cancellation keeps of it (keeps: of a certificate,
-- the part that paid the booking's deposit; of a package, its visit when
-- the service asks a deposit, else nothing), and the booking's end spends
-- that part and releases the rest. It used to spend the whole reservation:
-- a certificate paying a 6 000 visit whose deposit is 1 000 lost 6 000 to a
-- cancellation five days ahead that a card would have lost 1 000 to.
ALTER TABLE balance_entries ADD COLUMN keeps bigint NOT NULL DEFAULT 0;

-- The reservations still live keep what the rule above keeps of them,
-- from their booking's service as it stands (a deposit in major units;
-- a certificate's units are minor).
UPDATE balance_entries e SET keeps = CASE WHEN b.kind = 'package' THEN CASE WHEN s.deposit > 0 THEN -e.delta ELSE 0 END
                                          ELSE LEAST(-e.delta, (s.deposit * 100)::bigint) END
FROM balances b, bookings k, services s
WHERE e.type = 'reserve' AND b.id = e.balance_id AND k.id = e.booking_id AND s.id = k.service_id
  AND k.status IN ('pending', 'confirmed');

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION balance_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.type NOT IN ('credit', 'reserve', 'spend', 'release', 'refund') THEN
        RAISE EXCEPTION 'balance entry type % is unknown', NEW.type
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_type_check', TABLE = 'balance_entries';
    END IF;
    -- credits and releases add, a spend moves nothing, reservations and
    -- refunds take; only a reservation keeps anything, at most itself
    IF NOT ((NEW.type IN ('credit', 'release') AND NEW.delta > 0 AND NEW.keeps = 0) OR (NEW.type = 'spend' AND NEW.delta = 0 AND NEW.keeps = 0)
            OR (NEW.type = 'reserve' AND NEW.delta < 0 AND NEW.keeps BETWEEN 0 AND -NEW.delta)
            OR (NEW.type = 'refund' AND NEW.delta < 0 AND NEW.keeps = 0)) THEN
        RAISE EXCEPTION 'a % entry cannot have delta % keeping %', NEW.type, NEW.delta, NEW.keeps
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_check', TABLE = 'balance_entries';
    END IF;
    IF (NEW.type IN ('reserve', 'spend', 'release')) <> (NEW.booking_id IS NOT NULL) THEN
        RAISE EXCEPTION 'reserve, spend and release entries, and only they, belong to a booking'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_check1', TABLE = 'balance_entries';
    END IF;
    UPDATE balances SET remaining = remaining + NEW.delta WHERE id = NEW.balance_id AND salon_id = NEW.salon_id
    RETURNING remaining INTO NEW.balance_after;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'balance % of salon % does not exist', NEW.balance_id, NEW.salon_id USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;

-- A booking's end settles each of its reservations: completed or no-show
-- spends it; cancelled releases it, except what the transaction says the
-- policy keeps (salon.balance_keep = 'on'): that part is spent (a spend
-- entry) and the rest released (a release entry of the rest).
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION booking_balance_settled() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    spend boolean := NEW.status IN ('completed', 'no_show')
                     OR coalesce(current_setting('salon.balance_keep', true), '') = 'on';
BEGIN
    INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id, actor)
    SELECT r.balance_id, r.salon_id, CASE WHEN spend THEN 'spend' ELSE 'release' END,
           CASE WHEN spend THEN 0 ELSE -r.delta END, r.booking_id, coalesce(current_setting('salon.actor', true), '')
    FROM balance_entries r
    WHERE r.booking_id = NEW.id AND r.type = 'reserve'
      AND NOT EXISTS (SELECT 1 FROM balance_entries x WHERE x.balance_id = r.balance_id AND x.booking_id = r.booking_id
                      AND x.type IN ('spend', 'release'))
    ORDER BY r.balance_id;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION balance_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.type NOT IN ('credit', 'reserve', 'spend', 'release', 'refund') THEN
        RAISE EXCEPTION 'balance entry type % is unknown', NEW.type
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_type_check', TABLE = 'balance_entries';
    END IF;
    IF NOT ((NEW.type IN ('credit', 'release') AND NEW.delta > 0) OR (NEW.type = 'spend' AND NEW.delta = 0)
            OR (NEW.type IN ('reserve', 'refund') AND NEW.delta < 0)) THEN
        RAISE EXCEPTION 'a % entry cannot have delta %', NEW.type, NEW.delta
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_check', TABLE = 'balance_entries';
    END IF;
    IF (NEW.type IN ('reserve', 'spend', 'release')) <> (NEW.booking_id IS NOT NULL) THEN
        RAISE EXCEPTION 'reserve, spend and release entries, and only they, belong to a booking'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_check1', TABLE = 'balance_entries';
    END IF;
    UPDATE balances SET remaining = remaining + NEW.delta WHERE id = NEW.balance_id AND salon_id = NEW.salon_id
    RETURNING remaining INTO NEW.balance_after;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'balance % of salon % does not exist', NEW.balance_id, NEW.salon_id USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
ALTER TABLE balance_entries DROP COLUMN keeps;
