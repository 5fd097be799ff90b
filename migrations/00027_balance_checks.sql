-- +goose Up
-- The balances' and entries' invariants, checked where they can change and
-- nowhere else. PostgreSQL evaluates every CHECK of a table on each row a
-- statement writes, whichever columns it sets, and re-reads each check's
-- stored expression per statement to do so (about 14 µs each): a booking
-- paying with a package wrote one entry and updated one balance, and paid
-- for eleven checks, ten of them on columns it never touches. The entry's
-- shape is now checked by the entry's trigger, which runs on every entry
-- anyway, and the balance's by a trigger on the columns that carry it, so
-- a reservation (an update of remaining alone) checks only remaining: the
-- one invariant it can break, and still a CHECK (balances_remaining_check,
-- which the code reads as "overdrawn"). A violation is still a
-- check_violation (23514), naming the constraint it replaces.

ALTER TABLE balances
    DROP CONSTRAINT balances_kind_check,
    DROP CONSTRAINT balances_total_check,
    DROP CONSTRAINT balances_paid_via_check,
    DROP CONSTRAINT balances_check,
    DROP CONSTRAINT balances_check1;
ALTER TABLE balance_entries
    DROP CONSTRAINT balance_entries_type_check,
    DROP CONSTRAINT balance_entries_check,
    DROP CONSTRAINT balance_entries_check1;

-- +goose StatementBegin
CREATE FUNCTION balance_checked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind NOT IN ('package', 'certificate') THEN
        RAISE EXCEPTION 'balance kind % is neither package nor certificate', NEW.kind
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balances_kind_check', TABLE = 'balances';
    END IF;
    IF NOT NEW.total > 0 THEN
        RAISE EXCEPTION 'balance total % is not positive', NEW.total
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balances_total_check', TABLE = 'balances';
    END IF;
    IF NEW.paid_via NOT IN ('salon', 'online') THEN
        RAISE EXCEPTION 'balance paid via % is neither salon nor online', NEW.paid_via
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balances_paid_via_check', TABLE = 'balances';
    END IF;
    IF (NEW.kind = 'package') <> (NEW.client_id IS NOT NULL) THEN
        RAISE EXCEPTION 'a package has a client, a certificate has none'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balances_check', TABLE = 'balances';
    END IF;
    IF NEW.kind <> 'package' AND NEW.service_ids <> '{}' THEN
        RAISE EXCEPTION 'only a package has services'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balances_check1', TABLE = 'balances';
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION balance_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.type NOT IN ('credit', 'reserve', 'spend', 'release', 'refund') THEN
        RAISE EXCEPTION 'balance entry type % is unknown', NEW.type
            USING ERRCODE = 'check_violation', CONSTRAINT = 'balance_entries_type_check', TABLE = 'balance_entries';
    END IF;
    -- credits and releases add, a spend moves nothing, reservations and refunds take
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
CREATE TRIGGER balance_checked BEFORE INSERT OR UPDATE OF kind, total, paid_via, client_id, service_ids ON balances
    FOR EACH ROW EXECUTE FUNCTION balance_checked();

-- +goose Down
DROP TRIGGER balance_checked ON balances;
DROP FUNCTION balance_checked();
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
ALTER TABLE balance_entries
    ADD CONSTRAINT balance_entries_type_check CHECK (type IN ('credit', 'reserve', 'spend', 'release', 'refund')),
    ADD CONSTRAINT balance_entries_check CHECK (CASE type WHEN 'credit' THEN delta > 0 WHEN 'release' THEN delta > 0
                                                         WHEN 'spend' THEN delta = 0 ELSE delta < 0 END),
    ADD CONSTRAINT balance_entries_check1 CHECK ((type IN ('reserve', 'spend', 'release')) = (booking_id IS NOT NULL));
ALTER TABLE balances
    ADD CONSTRAINT balances_kind_check CHECK (kind IN ('package', 'certificate')),
    ADD CONSTRAINT balances_total_check CHECK (total > 0),
    ADD CONSTRAINT balances_paid_via_check CHECK (paid_via IN ('salon', 'online')),
    ADD CONSTRAINT balances_check CHECK ((kind = 'package') = (client_id IS NOT NULL)),
    ADD CONSTRAINT balances_check1 CHECK (kind = 'package' OR service_ids = '{}');
