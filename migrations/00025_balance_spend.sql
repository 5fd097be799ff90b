-- +goose Up
-- What a booking reserved of a balance is settled when the booking ends,
-- in the transaction that ends it, whichever path does (a cancellation by
-- anyone, an expired hold, the day's completion, a no-show): completed or
-- no-show spends it; cancelled releases it, unless the transaction says
-- the salon's policy keeps it (salon.balance_keep = 'on': a client's late
-- cancellation under the refund policy), which spends it. Each is an entry
-- of the ledger, once per booking and balance (balance_entries_once).

-- One entry of a type per booking and balance, found by the booking.
DROP INDEX balance_entries_once;
CREATE UNIQUE INDEX balance_entries_once ON balance_entries (booking_id, type, balance_id) WHERE booking_id IS NOT NULL;
-- The ledger is read by balance, in order: the primary key serves it.
ALTER TABLE balance_entries DROP CONSTRAINT balance_entries_pkey, ADD PRIMARY KEY (balance_id, id);
DROP INDEX balance_entries_balance;
-- Every reservation updates its balance's row: room on the page keeps the
-- updates HOT (no index entries for a new version of the row).
ALTER TABLE balances SET (fillfactor = 70);

-- An entry applies itself to its balance before it is inserted (a BEFORE
-- trigger runs at once; an AFTER one is queued to the statement's end), and
-- that update is also the check that the balance exists, so the entry's
-- foreign key (a second look at the same row) goes. The balance's row lock
-- is taken here: every entry of a balance is serialized on it.
ALTER TABLE balance_entries DROP CONSTRAINT balance_entries_balance_id_fkey;
DROP TRIGGER balance_entry_applied ON balance_entries;
-- Each entry carries what its balance had left after it (a running
-- balance: the ledger reads as a statement, and a booking's reservation
-- returns what is left with its insert).
ALTER TABLE balance_entries ADD COLUMN balance_after bigint;
ALTER TABLE balance_entries DISABLE TRIGGER balance_entry_immutable;
UPDATE balance_entries e SET balance_after = r.after
FROM (SELECT id, sum(delta) OVER (PARTITION BY balance_id ORDER BY id) AS after FROM balance_entries) r WHERE r.id = e.id;
ALTER TABLE balance_entries ENABLE TRIGGER balance_entry_immutable;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION balance_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE balances SET remaining = remaining + NEW.delta WHERE id = NEW.balance_id AND salon_id = NEW.salon_id
    RETURNING remaining INTO NEW.balance_after;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'balance % of salon % does not exist', NEW.balance_id, NEW.salon_id USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER balance_entry_applied BEFORE INSERT ON balance_entries FOR EACH ROW EXECUTE FUNCTION balance_entry_applied();
-- A balance goes with its entries (as the foreign key's cascade did).
-- +goose StatementBegin
CREATE FUNCTION balance_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM balance_entries WHERE balance_id = OLD.id;
    RETURN OLD;
END $$;
-- +goose StatementEnd
CREATE TRIGGER balance_deleted BEFORE DELETE ON balances FOR EACH ROW EXECUTE FUNCTION balance_deleted();

-- +goose StatementBegin
CREATE FUNCTION booking_balance_settled() RETURNS trigger LANGUAGE plpgsql AS $$
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
-- +goose StatementEnd
CREATE TRIGGER booking_balance_settled AFTER UPDATE OF status ON bookings FOR EACH ROW
    WHEN (OLD.status IN ('pending', 'confirmed') AND NEW.status NOT IN ('pending', 'confirmed'))
    EXECUTE FUNCTION booking_balance_settled();

-- +goose Down
DROP TRIGGER balance_deleted ON balances;
DROP FUNCTION balance_deleted();
DROP TRIGGER balance_entry_applied ON balance_entries;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION balance_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE balances SET remaining = remaining + NEW.delta WHERE id = NEW.balance_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER balance_entry_applied AFTER INSERT ON balance_entries FOR EACH ROW EXECUTE FUNCTION balance_entry_applied();
ALTER TABLE balance_entries DROP COLUMN balance_after;
ALTER TABLE balance_entries ADD FOREIGN KEY (balance_id) REFERENCES balances ON DELETE CASCADE;
DROP TRIGGER booking_balance_settled ON bookings;
DROP FUNCTION booking_balance_settled();
ALTER TABLE balances RESET (fillfactor);
CREATE INDEX balance_entries_balance ON balance_entries (balance_id, id);
ALTER TABLE balance_entries DROP CONSTRAINT balance_entries_pkey, ADD PRIMARY KEY (id);
DROP INDEX balance_entries_once;
CREATE UNIQUE INDEX balance_entries_once ON balance_entries (balance_id, booking_id, type) WHERE booking_id IS NOT NULL;
