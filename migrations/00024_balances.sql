-- +goose Up
-- Prepaid balances: packages (N visits of a service, or of any of a set,
-- for one client) and gift certificates (an amount, for whoever holds the
-- code). A balance is the sum of its ledger: every credit, reservation,
-- spend, release and refund is an entry, never an edit; remaining is kept
-- equal to that sum by the entries' trigger, and can never go below zero
-- (a CHECK: an entry that would overdraw is refused, whatever path writes
-- it).

CREATE TABLE balances (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id    bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('package', 'certificate')),
    -- the SHA-256 of the code (the credential); the code itself is shown
    -- once, when issued, and printed or sent to its holder
    code_hash   bytea NOT NULL UNIQUE,
    code_hint   text NOT NULL, -- its last characters, for the panel
    client_id   bigint,        -- a package's client (a certificate is its holder's)
    service_ids bigint[] NOT NULL DEFAULT '{}', -- a package's services: a visit of any of them
    -- units: a package's visits, a certificate's minor units of money
    total       bigint NOT NULL CHECK (total > 0),
    remaining   bigint NOT NULL DEFAULT 0 CHECK (remaining >= 0),
    expires_on  date,          -- the last day it is good for (salon-local)
    paid_via    text NOT NULL DEFAULT 'salon' CHECK (paid_via IN ('salon', 'online')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (salon_id, client_id) REFERENCES clients (salon_id, id),
    CHECK ((kind = 'package') = (client_id IS NOT NULL)),
    CHECK (kind = 'package' OR service_ids = '{}')
);
CREATE INDEX balances_client ON balances (salon_id, client_id) WHERE client_id IS NOT NULL;

-- The ledger. delta is what the entry adds to remaining: a credit adds
-- (the sale), a reservation takes (a booking holds a visit or an amount),
-- a release gives it back (the booking cancelled), a spend consumes what
-- was reserved (the visit took place: nothing moves), a refund takes what
-- is left (paid back). One entry of a kind per booking.
CREATE TABLE balance_entries (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    balance_id bigint NOT NULL REFERENCES balances ON DELETE CASCADE,
    salon_id   bigint NOT NULL,
    type       text NOT NULL CHECK (type IN ('credit', 'reserve', 'spend', 'release', 'refund')),
    delta      bigint NOT NULL,
    booking_id bigint,
    actor      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (CASE type WHEN 'credit' THEN delta > 0 WHEN 'release' THEN delta > 0 WHEN 'spend' THEN delta = 0
                     ELSE delta < 0 END),
    CHECK ((type IN ('reserve', 'spend', 'release')) = (booking_id IS NOT NULL))
);
CREATE UNIQUE INDEX balance_entries_once ON balance_entries (balance_id, booking_id, type) WHERE booking_id IS NOT NULL;
CREATE INDEX balance_entries_balance ON balance_entries (balance_id, id);

-- +goose StatementBegin
CREATE FUNCTION balance_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE balances SET remaining = remaining + NEW.delta WHERE id = NEW.balance_id;
    RETURN NULL;
END $$;

CREATE FUNCTION balance_entry_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'balance entries are never changed: add an entry instead' USING ERRCODE = 'restrict_violation';
END $$;
-- +goose StatementEnd
CREATE TRIGGER balance_entry_applied AFTER INSERT ON balance_entries FOR EACH ROW EXECUTE FUNCTION balance_entry_applied();
CREATE TRIGGER balance_entry_immutable BEFORE UPDATE ON balance_entries FOR EACH ROW EXECUTE FUNCTION balance_entry_immutable();

-- +goose Down
DROP TABLE balance_entries;
DROP FUNCTION balance_entry_immutable();
DROP FUNCTION balance_entry_applied();
DROP TABLE balances;
