-- +goose Up
-- When the client's time to pay ended (the booking's hold when the session
-- was claimed): an unpaid session is written off only a day after it, and
-- only while the provider still says pending (see booking's payments).
ALTER TABLE payment_sessions ADD COLUMN hold_until timestamptz;
UPDATE payment_sessions s SET hold_until = COALESCE(b.hold_expires_at, s.created_at)
    FROM bookings b WHERE b.id = s.booking_id;
ALTER TABLE payment_sessions ALTER COLUMN hold_until SET NOT NULL;
-- When we first learned the provider holds the client's money: the client
-- hears once that money which came too late is released.
ALTER TABLE payment_sessions ADD COLUMN held_at timestamptz;
UPDATE payment_sessions SET held_at = updated_at WHERE status IN ('authorized', 'completed', 'refunding', 'refunded');

-- A booking receives its deposit once, whichever of its sessions brought
-- it (one per session and kind was already unique).
CREATE UNIQUE INDEX ledger_one_deposit ON ledger_entries (booking_id) WHERE entry_type = 'deposit_received';

-- Why each change of a session's state was made (a provider's answer, a
-- decision of ours, a person's action): the payment's history as staff
-- read it.
ALTER TABLE payment_events ADD COLUMN detail text NOT NULL DEFAULT '';
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION payment_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO payment_events (session_id, from_status, to_status) VALUES (NEW.id, NULL, NEW.status);
    ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
        INSERT INTO payment_events (session_id, from_status, to_status, detail)
        VALUES (NEW.id, OLD.status, NEW.status, COALESCE(NEW.last_error, ''));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION payment_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO payment_events (session_id, from_status, to_status) VALUES (NEW.id, NULL, NEW.status);
    ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
        INSERT INTO payment_events (session_id, from_status, to_status) VALUES (NEW.id, OLD.status, NEW.status);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
ALTER TABLE payment_events DROP COLUMN detail;
DROP INDEX ledger_one_deposit;
ALTER TABLE payment_sessions DROP COLUMN held_at;
ALTER TABLE payment_sessions DROP COLUMN hold_until;
